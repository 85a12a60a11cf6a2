"""The attribution rules: which TensorFlow trace event owns which category.

One table, read top to bottom; the first rule whose pattern matches an event's name gives the event's
own category. Every rule is tested in tests/test_rules.py. How the categories combine along the nesting
(the innermost event owns the time; some categories are inherited by everything inside them):

* ``compile``, ``input``, ``op``, ``tracing`` and ``dispatch`` are inherited by nested events that have
  no rule of their own, and a stronger one (``INHERIT_PRIORITY``) also wins over a nested event's own
  rule: everything inside ``tf.constant`` is input (its ``_EagerConst`` kernel included), everything
  inside a kernel run is op, everything inside XLA compilation is compile; inside a *traced*
  tf.function call the Python being traced is tracing, while compilation and kernels keep their own.
* Python-tracer frames (``$file:line function``) take the category of the TensorFlow event around them
  (so the python-traced pass attributes like the host pass), else ``python``.
* Main-thread time covered by no event, and the step markers' own time, is ``python``.
* An event no rule matches is ``other`` (reported by name) unless a category is inherited.
"""

from __future__ import annotations

import re

from traceinsight.analysis.names import (
    BACKEND_COMPILE_AND_LOAD,
    BLOCK_UNTIL_READY,
    BUFFER_ASSIGN,
    CONVERT_TO_TENSOR,
    CPU_COMPILER,
    CPU_EXECUTABLE,
    DEVICE_COMPILER,
    EAGER,
    EAGER_CONST_EXECUTE,
    EAGER_COPY_TO_DEVICE,
    EAGER_EXECUTE,
    EAGER_EXECUTE_NAMED,
    EAGER_KERNEL_EXECUTE,
    EAGER_LOCAL_EXECUTE,
    EAGER_LOCAL_EXECUTE_OP,
    EAGER_OPERATION,
    EAGER_REMOTE_EXECUTE,
    EXECUTOR,
    EXECUTOR_STATE,
    FLOAT_NORMALIZATION,
    FUNCTION_RUN,
    FUSION_COMPILER,
    GET_OR_CREATE_KERNEL,
    GPU_COMPILER,
    GPU_EXECUTABLE,
    GRAPH_BUILDING,
    HLO_END,
    INFERENCE,
    IR_EMITTER,
    ITERATOR,
    ITERATOR_GET_NEXT,
    JAX_DISPATCH,
    JAX_INPUT,
    JIT_COMPILER,
    KERNEL_AND_DEVICE_FUNC,
    KERNEL_RUN,
    LOWER_JAXPR_TO_MODULE,
    LOWER_SHARDING_COMPUTATION,
    MEMCPY_H2D,
    MEMORY_ALLOCATION,
    MEMORY_DEALLOCATION,
    MLIR_NAMESPACE,
    NVPTX_COMPILER,
    PJIT_FUNCTION,
    PJRT,
    PJRT_AWAIT,
    PJRT_C,
    PJRT_CPU_COMPILE,
    PYTHON_FRAME,
    SESSION_RUN,
    TENSOR_HANDLE,
    TF_CONSTANT,
    TF_FUNCTION_PHASE,
    TF_PREFIX,
    TFE,
    TFE_PY,
    THREADPOOL_LISTENER,
    THUNK_EMITTER,
    THUNK_EXECUTE,
    TRACE_TO_JAXPR,
    TRACE_TO_JAXPR_DYNAMIC,
    VALIDATE_INPUT,
    XLA_COMPIL,
    XLA_COMPILE_OP,
    XLA_NAMESPACE,
    XLA_PASS_NAMES,
    traced_call,
)
from traceinsight.model import CATEGORIES

CAT = {name: i for i, name in enumerate(CATEGORIES)}
OP, DISPATCH, TRACING, COMPILE, INPUT, PYTHON, OTHER = (CAT[c] for c in CATEGORIES)
UNKNOWN = -2      # no rule: inherit, else "other"
PYFRAME = -3      # python tracer frame: inherit, else "python"
IGNORE = -4       # zero-length bookkeeping events (they own no time); inherit like UNKNOWN

# Stronger categories win over weaker ones nested inside them; 0 = not inherited.
INHERIT_PRIORITY = {COMPILE: 5, INPUT: 4, OP: 3, TRACING: 2, DISPATCH: 1, PYTHON: 0, OTHER: 0}
# Everything inside graph building is tracing, whatever it is (e.g. convert_to_tensor of constants
# while a function is traced): stronger than any category.
GRAPH_BUILDING_PRIORITY = 6
# An XLA launch (``__inference_f:__inference_f``) that compiles (holds compile events) is compile
# itself, and so is every nested event without a rule of its own (HLO passes such as
# ``simplification``); its executable run (``CpuExecutable::...``) keeps ``op``.
XLA_LAUNCH_PATTERN = f"^{re.escape(INFERENCE)}.*:{re.escape(INFERENCE)}"
XLA_LAUNCH = re.compile(XLA_LAUNCH_PATTERN)

# An HLO pass / pipeline name by its shape: lowercase words joined by ``-``, ``_`` or spaces
# (``while-loop-simplifier``, ``simplification after layout assignment``). Used only for top-level
# events before the first XLA executable run of their thread, in a trace that compiles (attribute).
PASS_SHAPE = re.compile(r"^[a-z][a-z0-9]*(?:[-_ ][a-z0-9]+)+$")
# Events of an XLA executable running: compilation is over on that thread once one is seen.
XLA_RUN = re.compile(f"^({re.escape(CPU_EXECUTABLE)}|{re.escape(GPU_EXECUTABLE)}|{XLA_LAUNCH_PATTERN[1:]})")

# Step markers: traceinsight.analysis.steps.STEP_MARKER (steps are windows, not categories).

# A graph op run by the executor: ``scope/name:OpType`` (exactly one colon, no spaces).
GRAPH_OP_PATTERN = r"^[^$:\s][^:\s]*:[A-Za-z_][A-Za-z0-9_]*$"

# (kind, pattern, category, why). kind: "exact" | "prefix" | "regex" | "set" (a name in the named
# frozenset of NAME_SETS).
RULES: list[tuple[str, str, str, str]] = [
    # --- XLA compilation
    ("prefix", JIT_COMPILER, "compile", "XLA JIT compilation of a jit_compile function"),
    ("prefix", CPU_COMPILER, "compile", "XLA CPU backend (RunBackend, CompileCpuExecutable)"),
    ("prefix", GPU_COMPILER, "compile", "XLA GPU backend"),
    ("prefix", NVPTX_COMPILER, "compile", "XLA GPU backend (PTX)"),
    ("prefix", FUSION_COMPILER, "compile", "XLA CPU fusion codegen"),
    ("prefix", XLA_COMPIL, "compile", "XlaCompiler / XlaCompilationCache / XlaCompileOnDemand"),
    ("exact", XLA_COMPILE_OP, "compile", "tf2xla compile op"),
    ("prefix", DEVICE_COMPILER, "compile", "TF's XLA device compiler cache"),
    ("prefix", XLA_NAMESPACE, "compile", "XLA HLO passes and compilation"),
    ("prefix", THUNK_EMITTER, "compile", "XLA thunk emission (CPU and GPU backends)"),
    ("prefix", IR_EMITTER, "compile", "XLA LLVM IR emission"),
    ("prefix", BUFFER_ASSIGN, "compile", "XLA buffer assignment"),
    ("prefix", MLIR_NAMESPACE, "compile", "MLIR pass manager inside XLA codegen"),
    ("set", "XLA_PASS_NAMES", "compile",
     "HLO pass / pipeline names without a family prefix (analysis/names.py: `layout-assignment`,"
     " `algsimp`, `simplification`, ...)"),
    ("regex", r"^[A-Z][A-Za-z0-9]*Pass$", "compile", "an MLIR codegen pass (`LowerTensorsPass`)"),
    ("prefix", FLOAT_NORMALIZATION, "compile", "XLA float-normalization passes"),
    # (no `/`, not ending in a single `:Type`: never a graph op ``scope/name:Type``)
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:autotun)", "compile", "XLA GPU autotuning"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:algorithm.?picker)", "compile",
     "XLA GPU autotuning (GEMM / convolution algorithm pickers)"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:llvm)", "compile", "XLA LLVM code generation"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:ptx)", "compile", "XLA GPU PTX code generation"),
    # --- tf.function tracing
    ("exact", GRAPH_BUILDING, "tracing", "graph building of a tf.function trace"),
    ("prefix", TF_FUNCTION_PHASE, "tracing", "other tf.function tracing phases"),
    # --- input conversion and copies
    ("exact", CONVERT_TO_TENSOR, "input", "Python value -> tensor conversion"),
    ("exact", TF_CONSTANT, "input", "tf.constant (numpy/Python argument conversion)"),
    ("exact", EAGER_CONST_EXECUTE, "input",
     "places a converted value as a tensor: runs only for a conversion (also inside the C fast path)"),
    ("exact", MEMCPY_H2D, "input", "host-to-device copy (GPU traces)"),
    ("prefix", ITERATOR_GET_NEXT, "input", "waiting on a tf.data iterator"),
    ("prefix", ITERATOR, "input", "tf.data pipeline stage"),
    ("exact", EAGER_COPY_TO_DEVICE, "dispatch",
     "input handle placement; counted as input only on traces with an accelerator device plane"),
    # --- kernels running
    ("exact", KERNEL_RUN, "op", "an eager kernel or a graph function running"),
    ("exact", FUNCTION_RUN, "op", "graph function executor"),
    ("exact", SESSION_RUN, "op",
     "TF1 Session.run: the main thread waits for the graph's executor (as for a tf.function run)"),
    ("prefix", EXECUTOR_STATE, "op", "graph executor scheduling"),
    ("prefix", EXECUTOR, "op", "graph executor bookkeeping (ExecutorPropagateOutputs, ...)"),
    ("prefix", CPU_EXECUTABLE, "op", "XLA CPU executable running"),
    ("prefix", GPU_EXECUTABLE, "op", "XLA GPU executable running"),
    ("exact", BLOCK_UNTIL_READY, "op", "waiting for an XLA executable's threads"),
    ("regex", XLA_LAUNCH_PATTERN, "op", "an XLA-compiled function's launch"),
    ("prefix", HLO_END, "op", "end marker of an XLA HLO op"),
    ("prefix", THREADPOOL_LISTENER, "op", "thread-pool bookkeeping inside kernels"),
    ("regex", GRAPH_OP_PATTERN, "op", "a graph op `scope/name:OpType`"),
    # --- the eager runtime
    ("prefix", TFE_PY, "dispatch", "Python -> C eager fast path / execute"),
    ("prefix", TFE, "dispatch", "eager C API (handle deletion, ...)"),
    ("exact", EAGER_EXECUTE, "dispatch", "eager op dispatch"),
    ("prefix", EAGER_EXECUTE_NAMED, "dispatch", "eager op dispatch, named after its op (TF before 2.12)"),
    ("prefix", EAGER_LOCAL_EXECUTE, "dispatch", "local eager execution (placement, cache lookup)"),
    ("prefix", EAGER_REMOTE_EXECUTE, "dispatch", "remote eager execution"),
    ("exact", EAGER_KERNEL_EXECUTE, "dispatch", "eager kernel launch"),
    ("exact", VALIDATE_INPUT, "dispatch", "eager input checks"),
    ("prefix", TENSOR_HANDLE, "dispatch", "tensor handle bookkeeping"),
    ("prefix", GET_OR_CREATE_KERNEL, "dispatch", "eager kernel cache"),
    ("prefix", EAGER_OPERATION, "dispatch", "eager op construction"),
    # --- JAX (jax.profiler traces: the jit dispatch path, tracing / lowering, PJRT compile)
    ("exact", TRACE_TO_JAXPR_DYNAMIC, "tracing", "JAX tracing a Python function into a jaxpr"),
    ("exact", LOWER_SHARDING_COMPUTATION, "tracing", "JAX lowering a jaxpr to StableHLO"),
    ("exact", LOWER_JAXPR_TO_MODULE, "tracing", "JAX lowering a jaxpr to a StableHLO module"),
    ("exact", BACKEND_COMPILE_AND_LOAD, "compile", "JAX handing a lowered module to XLA to compile"),
    ("prefix", PJRT_CPU_COMPILE, "compile", "XLA CPU compile through PJRT"),
    ("prefix", PJIT_FUNCTION, "dispatch", "a call of a jitted function (JAX's C++ dispatch path)"),
    ("set", "JAX_DISPATCH", "dispatch",
     "JAX / PJRT argument handling around an executable run (`ParseArguments`, `shard_args`, ...)"),
    ("set", "JAX_INPUT", "input", "numpy / Python values put on the device (`DevicePut`, ...)"),
    ("prefix", THUNK_EXECUTE, "op", "an XLA CPU executable running (and the wait for it)"),
    ("exact", PJRT_AWAIT, "op", "waiting for an executable's results"),
    # --- zero-length bookkeeping (own no time)
    ("exact", MEMORY_ALLOCATION, "ignore", "allocator event (zero length)"),
    ("exact", MEMORY_DEALLOCATION, "ignore", "allocator event (zero length)"),
]

# Names only TensorFlow writes: a trace holding none of them (nor tf.function call stats) is not a
# TensorFlow trace (a JAX or PyTorch trace, say) and is refused with a clear message.
_TF_PREFIXES = (TFE, EAGER, KERNEL_AND_DEVICE_FUNC, TF_PREFIX, INFERENCE, EXECUTOR_STATE, ITERATOR_GET_NEXT)
_TF_EXACT = (CONVERT_TO_TENSOR, FUNCTION_RUN)
TF_EVIDENCE = re.compile("^(" + "|".join([re.escape(p) for p in _TF_PREFIXES]
                                         + [re.escape(n) + "$" for n in _TF_EXACT]) + ")")

# Names only JAX writes (its jit dispatch path and tracing): with device work, what makes a trace
# without TensorFlow events analysable.
_JAX_PREFIXES = (PJIT_FUNCTION, TRACE_TO_JAXPR, PJRT, PJRT_C)
_JAX_EXACT = (LOWER_SHARDING_COMPUTATION, BACKEND_COMPILE_AND_LOAD)
JAX_EVIDENCE = re.compile("^(" + "|".join([re.escape(p) for p in _JAX_PREFIXES]
                                          + [re.escape(n) + "$" for n in _JAX_EXACT]) + ")")

NAME_SETS = {"XLA_PASS_NAMES": XLA_PASS_NAMES, "JAX_DISPATCH": JAX_DISPATCH, "JAX_INPUT": JAX_INPUT}

_KIND_CODE = {"ignore": IGNORE}


def _code(category: str) -> int:
    return _KIND_CODE.get(category, CAT.get(category, UNKNOWN))


def own_category(name: str, has_device_plane: bool = False) -> int:
    """The category code an event name gets by itself (before nesting and stats are considered)."""
    if name.startswith(PYTHON_FRAME):
        return PYFRAME
    if has_device_plane and name == EAGER_COPY_TO_DEVICE:
        return INPUT
    for kind, pattern, category, _ in RULES:
        if (kind == "exact" and name == pattern) or (kind == "prefix" and name.startswith(pattern)) \
                or (kind == "regex" and re.search(pattern, name)) \
                or (kind == "set" and name in NAME_SETS[pattern]):
            return _code(category)
    return UNKNOWN


def function_call_category(tf_function_call: str) -> int:
    """Category of a tf.function call event from its ``tf_function_call`` stat: tracing when the call
    traced a new graph (``names.traced_call``), else dispatch."""
    return TRACING if traced_call(tf_function_call) else DISPATCH


def op_of_name(name: str) -> tuple[str, str] | None:
    """(op, type) when the event name itself names an op, else None.

    ``EagerLocalExecute: Conv2D`` -> ("Conv2D", "Conv2D"); a graph-function run
    ``EagerLocalExecute: __inference_f_72`` -> ("__inference_f_72", "tf.function");
    ``scope/conv:_MklNativeFusedConv2D`` -> ("scope/conv", "_MklNativeFusedConv2D").
    """
    if name.startswith(EAGER_LOCAL_EXECUTE_OP):
        op = name[len(EAGER_LOCAL_EXECUTE_OP):]
        return op, ("tf.function" if op.startswith(INFERENCE) else op)
    if name.startswith(PYTHON_FRAME) or name.startswith(HLO_END):
        return None
    if re.match(GRAPH_OP_PATTERN, name) and not name.startswith(INFERENCE):
        op, _, op_type = name.rpartition(":")
        return op, op_type
    return None


def hlo_type(hlo_op: str) -> str:
    """``convolution.1`` -> ``convolution``; ``broadcast_add_fusion`` -> ``fusion``."""
    base = re.sub(r"\.\d+$", "", hlo_op)
    return "fusion" if base.endswith("fusion") else base
