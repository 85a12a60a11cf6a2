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

from traceinsight.analysis.xla_names import XLA_PASS_NAMES
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
GRAPH_BUILDING = "tf.function-graph_building"
# An XLA launch (``__inference_f:__inference_f``) that compiles (holds compile events) is compile
# itself, and so is every nested event without a rule of its own (HLO passes such as
# ``simplification``); its executable run (``CpuExecutable::...``) keeps ``op``.
XLA_LAUNCH = re.compile(r"^__inference_.*:__inference_")

# An HLO pass / pipeline name by its shape: lowercase words joined by ``-``, ``_`` or spaces
# (``while-loop-simplifier``, ``simplification after layout assignment``). Used only for top-level
# events before the first XLA executable run of their thread, in a trace that compiles (attribute).
PASS_SHAPE = re.compile(r"^[a-z][a-z0-9]*(?:[-_ ][a-z0-9]+)+$")
# Events of an XLA executable running: compilation is over on that thread once one is seen.
XLA_RUN = re.compile(r"^(CpuExecutable::|GpuExecutable::|__inference_.*:__inference_)")

# Step markers: traceinsight.analysis.steps.STEP_MARKER (steps are windows, not categories).

# A graph op run by the executor: ``scope/name:OpType`` (exactly one colon, no spaces).
GRAPH_OP_PATTERN = r"^[^$:\s][^:\s]*:[A-Za-z_][A-Za-z0-9_]*$"

# (kind, pattern, category, why). kind: "exact" | "prefix" | "regex" | "set" (a name in the named
# frozenset of NAME_SETS).
RULES: list[tuple[str, str, str, str]] = [
    # --- XLA compilation
    ("prefix", "JitCompiler::", "compile", "XLA JIT compilation of a jit_compile function"),
    ("prefix", "CpuCompiler::", "compile", "XLA CPU backend (RunBackend, CompileCpuExecutable)"),
    ("prefix", "GpuCompiler::", "compile", "XLA GPU backend"),
    ("prefix", "NVPTXCompiler::", "compile", "XLA GPU backend (PTX)"),
    ("prefix", "FusionCompiler::", "compile", "XLA CPU fusion codegen"),
    ("prefix", "XlaCompil", "compile", "XlaCompiler / XlaCompilationCache / XlaCompileOnDemand"),
    ("exact", "XlaCompile", "compile", "tf2xla compile op"),
    ("prefix", "DeviceCompiler::", "compile", "TF's XLA device compiler cache"),
    ("prefix", "xla::", "compile", "XLA HLO passes and compilation"),
    ("prefix", "ThunkEmitter::", "compile", "XLA thunk emission (CPU and GPU backends)"),
    ("prefix", "IrEmitter", "compile", "XLA LLVM IR emission"),
    ("prefix", "BufferAssign", "compile", "XLA buffer assignment"),
    ("prefix", "mlir::", "compile", "MLIR pass manager inside XLA codegen"),
    ("set", "XLA_PASS_NAMES", "compile",
     "HLO pass / pipeline names without a family prefix (analysis/xla_names.py: `layout-assignment`,"
     " `algsimp`, `simplification`, ...)"),
    ("regex", r"^[A-Z][A-Za-z0-9]*Pass$", "compile", "an MLIR codegen pass (`LowerTensorsPass`)"),
    ("prefix", "float-normalization-", "compile", "XLA float-normalization passes"),
    # (no `/`, not ending in a single `:Type`: never a graph op ``scope/name:Type``)
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:autotun)", "compile", "XLA GPU autotuning"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:algorithm.?picker)", "compile",
     "XLA GPU autotuning (GEMM / convolution algorithm pickers)"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:llvm)", "compile", "XLA LLVM code generation"),
    ("regex", r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:ptx)", "compile", "XLA GPU PTX code generation"),
    # --- tf.function tracing
    ("exact", "tf.function-graph_building", "tracing", "graph building of a tf.function trace"),
    ("prefix", "tf.function-", "tracing", "other tf.function tracing phases"),
    # --- input conversion and copies
    ("exact", "convert_to_tensor", "input", "Python value -> tensor conversion"),
    ("exact", "tf.constant", "input", "tf.constant (numpy/Python argument conversion)"),
    ("exact", "EagerLocalExecute: _EagerConst", "input",
     "places a converted value as a tensor: runs only for a conversion (also inside the C fast path)"),
    ("exact", "MemcpyH2D", "input", "host-to-device copy (GPU traces)"),
    ("prefix", "IteratorGetNext", "input", "waiting on a tf.data iterator"),
    ("prefix", "Iterator::", "input", "tf.data pipeline stage"),
    ("exact", "EagerCopyToDevice", "dispatch",
     "input handle placement; counted as input only on traces with an accelerator device plane"),
    # --- kernels running
    ("exact", "KernelAndDeviceFunc::Run", "op", "an eager kernel or a graph function running"),
    ("exact", "FunctionRun", "op", "graph function executor"),
    ("exact", "SessionRun", "op",
     "TF1 Session.run: the main thread waits for the graph's executor (as for a tf.function run)"),
    ("prefix", "ExecutorState::", "op", "graph executor scheduling"),
    ("prefix", "Executor", "op", "graph executor bookkeeping (ExecutorPropagateOutputs, ...)"),
    ("prefix", "CpuExecutable::", "op", "XLA CPU executable running"),
    ("prefix", "GpuExecutable::", "op", "XLA GPU executable running"),
    ("exact", "BlockUntilReady", "op", "waiting for an XLA executable's threads"),
    ("regex", r"^__inference_.*:__inference_", "op", "an XLA-compiled function's launch"),
    ("prefix", "end: ", "op", "end marker of an XLA HLO op"),
    ("prefix", "ThreadpoolListener::", "op", "thread-pool bookkeeping inside kernels"),
    ("regex", GRAPH_OP_PATTERN, "op", "a graph op `scope/name:OpType`"),
    # --- the eager runtime
    ("prefix", "TFE_Py_", "dispatch", "Python -> C eager fast path / execute"),
    ("prefix", "TFE_", "dispatch", "eager C API (handle deletion, ...)"),
    ("exact", "EagerExecute", "dispatch", "eager op dispatch"),
    ("prefix", "EagerExecute: ", "dispatch", "eager op dispatch, named after its op (TF before 2.12)"),
    ("prefix", "EagerLocalExecute", "dispatch", "local eager execution (placement, cache lookup)"),
    ("prefix", "EagerRemoteExecute", "dispatch", "remote eager execution"),
    ("exact", "EagerKernelExecute", "dispatch", "eager kernel launch"),
    ("exact", "ValidateInputTypeAndPlacement", "dispatch", "eager input checks"),
    ("prefix", "TensorHandle::", "dispatch", "tensor handle bookkeeping"),
    ("prefix", "GetOrCreateKernelAndDevice", "dispatch", "eager kernel cache"),
    ("prefix", "EagerOperation", "dispatch", "eager op construction"),
    # --- JAX (jax.profiler traces: the jit dispatch path, tracing / lowering, PJRT compile)
    ("exact", "trace_to_jaxpr_dynamic", "tracing", "JAX tracing a Python function into a jaxpr"),
    ("exact", "lower_sharding_computation", "tracing", "JAX lowering a jaxpr to StableHLO"),
    ("exact", "lower_jaxpr_to_module", "tracing", "JAX lowering a jaxpr to a StableHLO module"),
    ("exact", "backend_compile_and_load", "compile", "JAX handing a lowered module to XLA to compile"),
    ("prefix", "PjRtCpuClient::Compile", "compile", "XLA CPU compile through PJRT"),
    ("prefix", "PjitFunction(", "dispatch", "a call of a jitted function (JAX's C++ dispatch path)"),
    ("set", "JAX_DISPATCH", "dispatch",
     "JAX / PJRT argument handling around an executable run (`ParseArguments`, `shard_args`, ...)"),
    ("set", "JAX_INPUT", "input", "numpy / Python values put on the device (`DevicePut`, ...)"),
    ("prefix", "ThunkExecutor::Execute", "op", "an XLA CPU executable running (and the wait for it)"),
    ("exact", "CommonPjRtBuffer::Await", "op", "waiting for an executable's results"),
    # --- zero-length bookkeeping (own no time)
    ("exact", "MemoryAllocation", "ignore", "allocator event (zero length)"),
    ("exact", "MemoryDeallocation", "ignore", "allocator event (zero length)"),
]

# Event names that differ between TensorFlow versions, with the versions each is for: what the
# analysis reads differently because of them (the rules above place each name; this table says
# where a version's name changes what the name around it means). Checked on the stock traces of
# tests/data/versions/ (2.12.1 - 2.21.0) and on a public TF 2.1x Keras fit trace (2023, CPU, the
# TensorBoard callback) for the versions before 2.12. (name, versions, what it means)
VERSION_NAMES: list[tuple[str, str, str]] = [
    ("KernelAndDeviceFunc::Run", "2.12+ (written inside every EagerKernelExecute)",
     "the kernel or graph function running: op; the EagerKernelExecute around it keeps dispatch"),
    ("EagerKernelExecute", "before 2.12, in traces without KernelAndDeviceFunc::Run",
     "nothing inside it on the calling thread: its whole time is the kernel or the graph function "
     "running (the graph's ops on tf_Compute threads under ExecutorState::Process): op "
     "(attribute._kernel_runs_without_event)"),
    ("EagerExecute: <op>", "before 2.12 (2.12+: EagerExecute with an eager_op stat)",
     "eager dispatch named after its op: dispatch"),
    ("ExecutorState::ProcessAsync::Start / ::Done", "2.15", "graph executor: op"),
    ("ThreadpoolListener::*", "2.21", "thread-pool bookkeeping inside kernels: op"),
    ("JitCompiler::Compile, CpuCompiler::*, FusionCompiler::Compile",
     "2.18+ (CpuCompiler::*), 2.20+ (JitCompiler::Compile); none before 2.18",
     "XLA compile: compile; without them compile is derived (analysis/xla_compile.py)"),
    ("train / train_function", "Keras 2 (TF 2.12 - 2.15, tf_keras)",
     "the fit loop's step marker around its function; the TensorBoard callback records only the "
     "inner batches of profile_batch, one profiled batch as one train_function call"),
    ("Profiled batch / multi_step_on_iterator", "Keras 3 (TF 2.16+)",
     "the TensorBoard callback's step marker around its function"),
]
# The name whose absence from a trace says its TensorFlow runs kernels inside EagerKernelExecute
# with no event of their own (VERSION_NAMES).
KERNEL_RUN = "KernelAndDeviceFunc::Run"
KERNEL_EXECUTE = "EagerKernelExecute"

# Names only TensorFlow writes: a trace holding none of them (nor tf.function call stats) is not a
# TensorFlow trace (a JAX or PyTorch trace, say) and is refused with a clear message.
TF_EVIDENCE = re.compile(r"^(TFE_|Eager|KernelAndDeviceFunc::|tf\.|convert_to_tensor$|__inference_"
                         r"|ExecutorState::|FunctionRun$|IteratorGetNext)")

# Names only JAX writes (its jit dispatch path and tracing): with device work, what makes a trace
# without TensorFlow events analysable.
JAX_EVIDENCE = re.compile(r"^(PjitFunction\(|trace_to_jaxpr|lower_sharding_computation$"
                          r"|backend_compile_and_load$|PjRt|PJRT_)")
JAX_DISPATCH = frozenset({
    "ParseArguments", "shard_args", "Wait for donation holds", "Wait for usage holds",
    "CommonPjRtLoadedExecutable::ExecutePrepare", "Handle inputs", "Handle input event recording",
    "AllocateOutputBuffersWithInputReuse", "CommonPjRtClient::CreateOutputs",
    "PythonRefManager::CollectGarbage", "ExecuteReplicated.__call__"})
JAX_INPUT = frozenset({
    "DevicePut", "DevicePutWithSharding", "batched_copy_array_to_devices_with_sharding",
    "batched_copy_array_to_devices_with_sharding: assemble device lists",
    "BatchedCopyToDeviceWithSharding create batch", "BatchedCopyToDeviceWithSharding: dispatch",
    "BatchedCopyToDeviceWithSharding create results"})

NAME_SETS = {"XLA_PASS_NAMES": XLA_PASS_NAMES, "JAX_DISPATCH": JAX_DISPATCH, "JAX_INPUT": JAX_INPUT}

_KIND_CODE = {"ignore": IGNORE}


def _code(category: str) -> int:
    return _KIND_CODE.get(category, CAT.get(category, UNKNOWN))


def own_category(name: str, has_device_plane: bool = False) -> int:
    """The category code an event name gets by itself (before nesting and stats are considered)."""
    if name.startswith("$"):
        return PYFRAME
    if has_device_plane and name == "EagerCopyToDevice":
        return INPUT
    for kind, pattern, category, _ in RULES:
        if (kind == "exact" and name == pattern) or (kind == "prefix" and name.startswith(pattern)) \
                or (kind == "regex" and re.search(pattern, name)) \
                or (kind == "set" and name in NAME_SETS[pattern]):
            return _code(category)
    return UNKNOWN


def function_call_category(tf_function_call: str) -> int:
    """Category of a tf.function call event from its ``tf_function_call`` stat."""
    return TRACING if tf_function_call.startswith("traced") else DISPATCH


def op_of_name(name: str) -> tuple[str, str] | None:
    """(op, type) when the event name itself names an op, else None.

    ``EagerLocalExecute: Conv2D`` -> ("Conv2D", "Conv2D"); a graph-function run
    ``EagerLocalExecute: __inference_f_72`` -> ("__inference_f_72", "tf.function");
    ``scope/conv:_MklNativeFusedConv2D`` -> ("scope/conv", "_MklNativeFusedConv2D").
    """
    if name.startswith("EagerLocalExecute: "):
        op = name[len("EagerLocalExecute: "):]
        return op, ("tf.function" if op.startswith("__inference_") else op)
    if name.startswith("$") or name.startswith("end: "):
        return None
    if re.match(GRAPH_OP_PATTERN, name) and not name.startswith("__inference_"):
        op, _, op_type = name.rpartition(":")
        return op, op_type
    return None


def hlo_type(hlo_op: str) -> str:
    """``convolution.1`` -> ``convolution``; ``broadcast_add_fusion`` -> ``fusion``."""
    base = re.sub(r"\.\d+$", "", hlo_op)
    return "fusion" if base.endswith("fusion") else base
