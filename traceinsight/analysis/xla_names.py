"""Names of XLA compilation events that carry no family prefix: HLO pass and pipeline names
(``HloPassPipeline`` opens a TraceMe named after each pass, ``pass->name()`` in
xla/hlo/pass/hlo_pass_pipeline.cc) and MLIR codegen passes. Nested inside a compile event they are
compile by inheritance already; this list makes them compile where the trace holds them without
their parent (a host trace that started in the middle of a long first-step compilation).

Collected from real TF 2.21 / XLA CPU compilations (tools/make_attribution_traces.py, the ``xla``
modes of tests/data); MLIR passes (``...Pass``), ``ThunkEmitter::*`` and ``mlir::*`` are matched by
family in rules.RULES instead.
"""

XLA_PASS_NAMES = frozenset({
    'CSE', 'Canonicalizer', 'Codegen', 'ConvertVectorToSCF', 'HLO passes after layout assignment',
    'HLO passes through layout assignment', 'Inliner', 'LoopInvariantCodeMotion',
    'LowerVectorMultiReduction', 'RunInvariantCheckers', 'SplitModule', 'SubbytePacker pipeline',
    'SymbolDCE', 'after layout assignment', 'algsimp', 'all-reduce-promotion',
    'all_to_all_decomposer', 'batch-dot-simplification', 'batched_gather_scatter_normalizer',
    'batchnorm_expander', 'bitcast_dtypes_expander', 'broadcast_canonicalizer', 'call-inliner',
    'change-op-data-type', 'cholesky_expander', 'comparison-expander', 'conditional-canonicalizer',
    'conditional-to-select', 'constant_folding', 'convolution-canonicalization',
    'convolution-group-converter', 'copy-insertion', 'cpu-all-reduce-combiner',
    'cpu-parallel-task-assigner', 'cse', 'cse_barrier_expander', 'dce', 'dot-library-passes',
    'dot-library-rewriter', 'dot_decomposer', 'dynamic-dimension-simplifier',
    'dynamic-index-splitter', 'dynamic_padder', 'eigh_expander', 'flatten-call-graph',
    'float-normalization-bf16', 'float-normalization-f4e2m1fn', 'float-normalization-f8e3m4',
    'float-normalization-f8e4m3', 'float-normalization-f8e4m3b11fnuz',
    'float-normalization-f8e4m3fn', 'float-normalization-f8e4m3fnuz', 'float-normalization-f8e5m2',
    'float-normalization-f8e5m2fnuz', 'float-normalization-f8e8m0fnu', 'float-normalization-s4',
    'float-normalization-u4', 'fusion', 'fusion-wrapper', 'gather_expander', 'gather_simplifier',
    'hlo normalization', 'layout-assignment', 'literal-canonicalizer', 'logistic-expander',
    'map-inline', 'operand_upcaster', 'optimize_input_output_buffer_alias',
    'post_scatter_expansion_simplification', 'qr_expander', 'reduce-decomposer',
    'reduce-window-resizer', 'reduce-window-rewriter', 'reshape-decomposer', 'reshape-mover',
    'result_caster', 'rng-bit-generator-expander', 'rng-expander', 'scatter_expander',
    'scatter_simplifier', 'select_and_scatter_expander', 'shape-canonicalizer', 'sharding-removal',
    'sharding-remover', 'simplification', 'simplification after layout assignment',
    'simplify-conditional', 'simplify-sorts', 'simplify-while-loops', 'small-while-loop-hoisting',
    'stochastic_convert_decomposer', 'sub-byte-size-setter', 'topk-decomposer', 'topk-rewriter',
    'transpose-folding', 'tree_reduction_rewriter', 'triangular_solve_expander',
    'tuple-simplifier', 'while-loop-constant-sinking', 'while-loop-invariant-code-motion',
    'while-loop-trip-count-annotator', 'zero_sized_hlo_elimination',
})
