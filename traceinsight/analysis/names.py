"""Every trace name the analysis reads, in one table: event names, stat names (and the few stat values
it decides on), plane and line names, each with what it means and the traces it was seen in.

Analysis modules import their names from here and write no trace name as a literal
(tests/test_names.py fails on one, and on a name here that no module reads). A TensorFlow version
that renames an event changes this table (and, where the new name means something new, the rule
that reads it): nothing else.

``seen`` lists the committed traces (tests/data) that hold the name; tests/test_names.py checks
each claim against them. TensorFlow 2.17 - 2.20 have no committed trace; ``note`` says what else was
checked, or that nothing holds the name (then it comes from TensorFlow's, XLA's or XProf's source,
as its meaning says). Where a name's version matters to the analysis, the note says which versions
write it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    EVENT = "event"                   # an event's name, exactly
    EVENT_PREFIX = "event prefix"     # every event name that starts with it
    STAT = "stat"                     # a stat's name (of an event or of a plane)
    STAT_VALUE = "stat value"         # a stat's value, or the start or end of one, that decides something
    PLANE = "plane"
    PLANE_PREFIX = "plane prefix"
    LINE = "line"                     # a line (a thread, or one of XProf's derived lines)
    LINE_PREFIX = "line prefix"


class Source(enum.Enum):
    """A committed trace (tests/data) the table's claims are checked against."""
    TF_2_12_1 = "TF 2.12.1"
    TF_2_13_1 = "TF 2.13.1"
    TF_2_14_1 = "TF 2.14.1"
    TF_2_15_1 = "TF 2.15.1"
    TF_2_16_2 = "TF 2.16.2"
    TF_2_21_0 = "TF 2.21.0"
    TF_GPU_DEMO = "TF on GPUs (tensorflow/profiler's demo, version not recorded)"
    JAX_0_8_ROCM = "JAX 0.8 (ROCm GPU)"
    JAX_0_10_CPU = "JAX 0.10.2 (Keras 3, CPU)"
    JAX_TPU = "JAX on TPU v6e (XProf's test trace, version not recorded)"


@dataclass(frozen=True)
class TraceName:
    """One trace name the analysis reads: the name, its kind, what it means and the committed
    traces that hold it."""

    name: str
    kind: Kind
    means: str                       # what it is, and what the analysis makes of it
    seen: tuple[Source, ...]         # the committed traces that hold it
    note: str = ""                   # versions beyond the committed traces, or why none holds it

    @property
    def versions(self) -> str:
        """The versions it was seen in, in words."""
        said = ", ".join(s.value for s in self.seen) or "no committed trace"
        return f"{said}; {self.note}" if self.note else said


_TABLE: list[TraceName] = []


def _add(name: str, kind: Kind, means: str, seen: tuple[Source, ...], note: str = "") -> str:
    _TABLE.append(TraceName(name, kind, means, seen, note))
    return name


def _family(kind: Kind, means: str, members: dict[str, tuple[Source, ...]], note: str = "") -> frozenset[str]:
    """Names that mean the same thing, read as a set: one entry each."""
    for name, seen in members.items():
        _add(name, kind, means, seen, note)
    return frozenset(members)


ALL_TF = (Source.TF_2_12_1, Source.TF_2_13_1, Source.TF_2_14_1, Source.TF_2_15_1, Source.TF_2_16_2,
          Source.TF_2_21_0)
TF_2_21 = (Source.TF_2_21_0,)

# --- TensorFlow's eager runtime and tf.function (host, the calling thread)
TFE_PY = _add("TFE_Py_", Kind.EVENT_PREFIX,
              "the Python -> C eager fast path and execute calls (``TFE_Py_FastPathExecute_C``, "
              "``TFE_Py_ExecuteCancelable``): dispatch; the thread calling them most is the Python main "
              "thread", ALL_TF)
TFE = _add("TFE_", Kind.EVENT_PREFIX, "TensorFlow's eager C API (``TFE_DeleteTensorHandle``, ...): dispatch",
           ALL_TF)
TFE_FAST_PATH = _add("TFE_Py_FastPathExecute_C", Kind.EVENT,
                     "the Python -> C fast path of an eager op; a conversion's ``EagerLocalExecute: "
                     "_EagerConst`` can run inside it", ALL_TF)
EAGER = _add("Eager", Kind.EVENT_PREFIX, "any eager runtime event: evidence that a trace is TensorFlow's",
             ALL_TF)
EAGER_EXECUTE = _add("EagerExecute", Kind.EVENT,
                     "eager op dispatch (its op in the ``eager_op`` stat): dispatch", ALL_TF)
EAGER_EXECUTE_NAMED = _add("EagerExecute: ", Kind.EVENT_PREFIX,
                           "eager dispatch named after its op (``EagerExecute: "
                           "__inference_train_function_N``): dispatch", (),
                           "written by TensorFlow before 2.12 (a 2023 TF 2.1x Keras fit trace); 2.12+ "
                           "write ``EagerExecute`` with an ``eager_op`` stat")
EAGER_LOCAL_EXECUTE = _add("EagerLocalExecute", Kind.EVENT_PREFIX,
                           "local eager execution (placement, kernel cache lookup): dispatch", ALL_TF)
EAGER_LOCAL_EXECUTE_OP = _add("EagerLocalExecute: ", Kind.EVENT_PREFIX,
                              "``EagerLocalExecute: <op>``: the event names the op it runs (a graph "
                              "function: ``__inference_f_N``)", ALL_TF)
EAGER_CONST_EXECUTE = _add("EagerLocalExecute: _EagerConst", Kind.EVENT,
                           "places a converted Python / numpy value as a tensor: input (also inside the C "
                           "fast path)", ALL_TF)
EAGER_CONST = _add("_EagerConst", Kind.STAT_VALUE,
                   "the ``eager_op`` of a conversion (``tf.constant`` / ``convert_to_tensor`` of a Python "
                   "or numpy value)", ALL_TF)
EAGER_REMOTE_EXECUTE = _add("EagerRemoteExecute", Kind.EVENT_PREFIX, "remote eager execution: dispatch", (),
                            "not in any committed trace (no remote worker recorded)")
EAGER_KERNEL_EXECUTE = _add("EagerKernelExecute", Kind.EVENT,
                            "the eager kernel launch around ``KernelAndDeviceFunc::Run``: dispatch. In a "
                            "trace without ``KernelAndDeviceFunc::Run`` nothing is inside it on the "
                            "calling thread, and its whole time is the kernel or graph function running: "
                            "op (``attribute._kernel_runs_without_event``)", ALL_TF,
                            "a trace without ``KernelAndDeviceFunc::Run``: a 2023 TF 2.1x Keras fit trace "
                            "(before 2.12)")
KERNEL_RUN = _add("KernelAndDeviceFunc::Run", Kind.EVENT,
                  "an eager kernel or a graph function running, inside every ``EagerKernelExecute``: op. "
                  "Its absence says the trace's TensorFlow writes none (before 2.12)", ALL_TF)
KERNEL_AND_DEVICE_FUNC = _add("KernelAndDeviceFunc::", Kind.EVENT_PREFIX,
                              "the kernel-and-device runtime: evidence that a trace is TensorFlow's", ALL_TF)
VALIDATE_INPUT = _add("ValidateInputTypeAndPlacement", Kind.EVENT, "eager input checks: dispatch", ALL_TF)
EAGER_COPY_TO_DEVICE = _add("EagerCopyToDevice", Kind.EVENT,
                            "input handle placement: dispatch, input on traces with an accelerator device "
                            "plane", ALL_TF)
TENSOR_HANDLE = _add("TensorHandle::", Kind.EVENT_PREFIX, "tensor handle bookkeeping: dispatch", ALL_TF)
GET_OR_CREATE_KERNEL = _add("GetOrCreateKernelAndDevice", Kind.EVENT_PREFIX,
                            "the eager kernel cache: dispatch", (), "not in any committed trace")
EAGER_OPERATION = _add("EagerOperation", Kind.EVENT_PREFIX, "eager op construction: dispatch", (),
                       "not in any committed trace")
INFERENCE = _add("__inference_", Kind.EVENT_PREFIX,
                 "a tf.function's graph function: ``EagerLocalExecute: __inference_f_N`` runs it, "
                 "``__inference_f_N:__inference_f_N`` is an XLA-compiled one's launch, "
                 "``__inference_step_503`` names the user's function ``step``", ALL_TF)
TF_PREFIX = _add("tf.", Kind.EVENT_PREFIX,
                 "TensorFlow's own Python TraceMes (``tf.constant``, ``tf.function-*``): evidence that a "
                 "trace is TensorFlow's", ALL_TF)
GRAPH_BUILDING = _add("tf.function-graph_building", Kind.EVENT,
                      "graph building of a tf.function trace: tracing, whatever runs inside it", ALL_TF)
TF_FUNCTION_PHASE = _add("tf.function-", Kind.EVENT_PREFIX, "the other tf.function tracing phases: tracing",
                         ALL_TF)
CONVERT_TO_TENSOR = _add("convert_to_tensor", Kind.EVENT, "a Python value converted to a tensor: input",
                         ALL_TF)
TF_CONSTANT = _add("tf.constant", Kind.EVENT, "``tf.constant`` (numpy / Python argument conversion): input",
                   ALL_TF)

# --- The graph executor (tf.function, TF1 Session.run)
FUNCTION_RUN = _add("FunctionRun", Kind.EVENT, "the graph function executor: op",
                    ALL_TF + (Source.TF_GPU_DEMO,))
SESSION_RUN = _add("SessionRun", Kind.EVENT,
                   "TF1 ``Session.run``: the main thread waits for the graph's executor: op", ALL_TF)
EXECUTOR_STATE = _add("ExecutorState::", Kind.EVENT_PREFIX, "graph executor scheduling: op",
                      ALL_TF + (Source.TF_GPU_DEMO,),
                      "``ExecutorState::ProcessAsync::Start`` / ``::Done`` appear only in some versions' "
                      "traces (the committed 2.15.1, 2.16.2, 2.21.0 ones): the prefix places them all")
EXECUTOR_PROCESS = _add("ExecutorState::Process", Kind.EVENT,
                        "the executor running a graph's ops on a ``tf_Compute`` thread",
                        ALL_TF + (Source.TF_GPU_DEMO,))
EXECUTOR = _add("Executor", Kind.EVENT_PREFIX,
                "graph executor bookkeeping (``ExecutorPropagateOutputs``, ...): op",
                ALL_TF + (Source.TF_GPU_DEMO,))
EXECUTOR_PROPAGATE = _add("ExecutorPropagateOutputs", Kind.EVENT, "the executor passing an op's outputs on",
                          ALL_TF + (Source.TF_GPU_DEMO,))
THREADPOOL_LISTENER = _add("ThreadpoolListener::", Kind.EVENT_PREFIX,
                           "zero-length thread-pool bookkeeping inside kernels: op",
                           (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,),
                           "README's version table lists it for 2.17 - 2.20 too (from captures that are not "
                           "committed); none of the committed 2.12.1 - 2.16.2 traces holds it")

# --- XLA compilation and execution (TensorFlow's jit_compile, JAX)
JIT_COMPILER = _add("JitCompiler::", Kind.EVENT_PREFIX,
                    "XLA JIT compilation of a jit_compile function: compile",
                    (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
                    "TF 2.20 and 2.21 write ``JitCompiler::Compile`` (checked on 2.20.0 and 2.21.0, "
                    "capture/compat.py); TF 2.12 - 2.16 write no compile event at all (compile is then "
                    "derived, analysis/xla_compile.py)")
CPU_COMPILER = _add("CpuCompiler::", Kind.EVENT_PREFIX,
                    "the XLA CPU backend (``RunBackend``, ``CompileCpuExecutable``): compile",
                    (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
                    "TF 2.18, 2.20 and 2.21 write it (capture/compat.py); 2.12 - 2.16 none")
GPU_COMPILER = _add("GpuCompiler::", Kind.EVENT_PREFIX, "the XLA GPU backend: compile", (),
                    "not in any committed trace")
NVPTX_COMPILER = _add("NVPTXCompiler::", Kind.EVENT_PREFIX, "the XLA GPU backend's PTX step: compile", (),
                      "not in any committed trace")
FUSION_COMPILER = _add("FusionCompiler::", Kind.EVENT_PREFIX,
                       "XLA CPU fusion codegen (codegen threads): compile",
                       (Source.TF_2_21_0, Source.JAX_0_10_CPU,))
XLA_COMPIL = _add("XlaCompil", Kind.EVENT_PREFIX,
                  "``XlaCompiler`` / ``XlaCompilationCache`` / ``XlaCompileOnDemand``: compile", (),
                  "not in any committed trace")
XLA_COMPILE_OP = _add("XlaCompile", Kind.EVENT, "the tf2xla compile op: compile", (),
                      "not in any committed trace")
DEVICE_COMPILER = _add("DeviceCompiler::", Kind.EVENT_PREFIX,
                       "TensorFlow's XLA device compiler cache: compile", (), "not in any committed trace")
XLA_NAMESPACE = _add("xla::", Kind.EVENT_PREFIX, "XLA HLO passes and compilation: compile", (),
                     "not in any committed trace")
THUNK_EMITTER = _add("ThunkEmitter::", Kind.EVENT_PREFIX,
                     "XLA thunk emission (CPU and GPU backends): compile",
                     (Source.TF_2_21_0, Source.JAX_0_10_CPU,))
IR_EMITTER = _add("IrEmitter", Kind.EVENT_PREFIX, "XLA LLVM IR emission: compile", (),
                  "not in any committed trace")
BUFFER_ASSIGN = _add("BufferAssign", Kind.EVENT_PREFIX, "XLA buffer assignment: compile", (),
                     "not in any committed trace")
MLIR_NAMESPACE = _add("mlir::", Kind.EVENT_PREFIX, "the MLIR pass manager inside XLA codegen: compile",
                      (Source.TF_2_21_0, Source.JAX_0_10_CPU,))
FLOAT_NORMALIZATION = _add("float-normalization-", Kind.EVENT_PREFIX,
                           "XLA float-normalization passes: compile",
                           (Source.TF_2_21_0, Source.JAX_0_10_CPU,))
CPU_EXECUTABLE = _add("CpuExecutable::", Kind.EVENT_PREFIX, "an XLA CPU executable running: op",
                      (Source.TF_2_21_0,))
GPU_EXECUTABLE = _add("GpuExecutable::", Kind.EVENT_PREFIX, "an XLA GPU executable running: op",
                      (Source.JAX_0_8_ROCM,))
BLOCK_UNTIL_READY = _add("BlockUntilReady", Kind.EVENT, "waiting for an XLA executable's threads: op",
                         (Source.TF_2_21_0,))
HLO_END = _add("end: ", Kind.EVENT_PREFIX, "the end marker of an XLA HLO op: op",
               (Source.TF_2_21_0, Source.JAX_0_10_CPU,))
THUNK_EXECUTE = _add("ThunkExecutor::Execute", Kind.EVENT_PREFIX,
                     "an XLA CPU executable running, and the wait for it (a name holding ``wait``): op",
                     (Source.TF_2_21_0, Source.JAX_0_10_CPU,))

# --- Input: copies and tf.data
MEMCPY = _add("Memcpy", Kind.EVENT_PREFIX, "a device copy (GPU traces): not compute", (Source.TF_GPU_DEMO,))
MEMCPY_H2D = _add("MemcpyH2D", Kind.EVENT, "a host-to-device copy (GPU traces): input", (Source.TF_GPU_DEMO,))
MEMCPY_D2H = _add("MemcpyD2H", Kind.EVENT, "a device-to-host copy (GPU traces)", (Source.TF_GPU_DEMO,))
MEMCPY_D2D = _add("MemcpyD2D", Kind.EVENT_PREFIX, "a device-to-device copy", (), "not in any committed trace")
MEMCPY_P2P = _add("MemcpyP2P", Kind.EVENT_PREFIX, "a peer-to-peer copy between devices", (),
                  "not in any committed trace")
MEMSET = _add("Memset", Kind.EVENT_PREFIX, "a device memset", (), "not in any committed trace")
ITERATOR_GET_NEXT = _add("IteratorGetNext", Kind.EVENT_PREFIX,
                         "waiting on a tf.data iterator (an event, and the op type of a graph op "
                         "``...:IteratorGetNext``): input", ALL_TF + (Source.TF_GPU_DEMO,))
ITERATOR = _add("Iterator::", Kind.EVENT_PREFIX,
                "a tf.data pipeline stage, named by its path from the root "
                "(``Iterator::Root::Prefetch::...``): input", ALL_TF + (Source.TF_GPU_DEMO,))
ITERATOR_ROOT = _add("Iterator::Root", Kind.EVENT, "the root stage of a tf.data pipeline", ALL_TF)
TF_DATA_PARALLELISM = _add("parallelism", Kind.STAT,
                           "a parallel tf.data stage's parallelism when its element was asked for: "
                           "its ``num_parallel_calls``, or autotune's choice then (a map that "
                           "``map_and_batch_fusion`` fused into ``MapAndBatch`` without "
                           "``num_parallel_calls``: 1)", ALL_TF + (Source.JAX_TPU,),
                           "JAX's TPU trace holds a stat of this name too (not on a tf.data stage)")
TF_DATA_AUTOTUNE = _add("autotune", Kind.STAT,
                        "whether a tf.data stage's parallelism or buffer is autotuned (``true`` / "
                        "``false``, a ref value)", ALL_TF)

# --- Zero-length bookkeeping
MEMORY_ALLOCATION = _add("MemoryAllocation", Kind.EVENT,
                         "an allocator event (zero length; stats ``bytes_allocated``, "
                         "``peak_bytes_in_use``, ``requested_bytes``): owns no time",
                         ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
MEMORY_DEALLOCATION = _add("MemoryDeallocation", Kind.EVENT, "an allocator event (zero length): owns no time",
                           ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))

# --- Python tracer
PYTHON_FRAME = _add("$", Kind.EVENT_PREFIX,
                    "a Python tracer frame, ``$<file>:<line> <function>`` or ``$<module> <builtin>`` "
                    "(python_tracer_level 1)", ALL_TF + (Source.JAX_0_8_ROCM,),
                    "2.12.1 - 2.16.2: the stock ``eager_python`` traces (2.12 and 2.13 write a thread's "
                    "frames on an unnamed line of their own, read as the thread's: "
                    "``events.thread_lines``); 2.21.0: tests/data/runs")

# --- Step markers
STEP_MARKER_TRAIN = _add("train", Kind.EVENT_PREFIX,
                         "a step marker ``train…`` (``tf.profiler.experimental.Trace('train', "
                         "step_num=...)``; Keras 2's TensorBoard callback marks ``train`` around its "
                         "``train_function``): XProf's step markers", ALL_TF + (Source.JAX_0_10_CPU,))
STEP_MARKER_TEST = _add("test", Kind.EVENT_PREFIX, "a step marker ``test…``: XProf's step markers", (),
                        "not in any committed trace")
TRACE_CONTEXT = _add("TraceContext", Kind.EVENT, "a step marker XProf recognizes", (),
                     "not in any committed trace")
PROFILED_BATCH = _add("Profiled batch", Kind.EVENT,
                      "Keras 3's TensorBoard callback's step marker around its ``multi_step_on_iterator`` "
                      "function (TF 2.16+)", (Source.TF_2_16_2, Source.TF_2_21_0,))

# --- Stats of host events
TF_FUNCTION_CALL = _add("tf_function_call", Kind.STAT,
                        "a tf.function call event's kind: ``traced-nonXla``, ``notTraced-nonXla``, "
                        "``traced-xla``, ``notTraced-xla``, ``eager`` (run_functions_eagerly), "
                        "``concrete``", ALL_TF)
TRACED = _add("traced", Kind.STAT_VALUE,
              "the prefix of a ``tf_function_call`` value of a call that traced a new graph "
              "(``traced-nonXla``, ``traced-xla``); read through ``traced_call`` only", ALL_TF)
XLA_CALL = _add("-xla", Kind.STAT_VALUE,
                "the suffix of a ``tf_function_call`` value of a jit_compile function's call "
                "(``traced-xla``, ``notTraced-xla``); read through ``xla_call`` only", ALL_TF,
                "checked as the values ``traced-xla`` / ``notTraced-xla``")
TRACING_COUNT = _add("tracing_count", Kind.STAT, "how many graphs the called tf.function has traced so far",
                     ALL_TF)
STEP_NUM = _add("step_num", Kind.STAT,
                "a step marker's step number (also the steps table's column, which carries it)",
                ALL_TF + (Source.JAX_0_10_CPU,))
R_STAT = _add("_r", Kind.STAT, "a root TraceMe of a step (``Trace(..., _r=1)``)",
              ALL_TF + (Source.JAX_0_10_CPU,))
SCRIPT_STEP_MARKER = _add(
    "train traceinsight", Kind.EVENT,
    "the step marker of ``traceinsight run`` / ``profile()`` / the Keras callback (a ``train…`` "
    "marker with step_num, as XProf expects): where a trace holds it, it alone marks the steps, "
    "not the ``train`` markers Keras 2's fit puts around each batch, around it and past the "
    "traced window (TensorFlow keeps no stat of its own choosing on a marker to tell them apart)",
    (), "written by this version's run / profile() / callback; no committed trace was made by them")
EAGER_OP = _add("eager_op", Kind.STAT, "the op an ``EagerExecute`` dispatches", ALL_TF)
IS_FUNC = _add("is_func", Kind.STAT, "1 when an ``EagerExecute`` runs a graph function", ALL_TF)
TF_OP = _add("tf_op", Kind.STAT, "the TF op a device kernel ran for (``XlaModule:`` for JAX kernels)",
             ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
XLA_MODULE_OP = _add("XlaModule:", Kind.STAT_VALUE,
                     "a JAX kernel's ``tf_op``: its framework op is then the ``name`` stat",
                     (Source.JAX_0_8_ROCM,))
HLO_OP = _add("hlo_op", Kind.STAT,
              "the HLO instruction an XLA op event runs (``convolution.1``, ``broadcast_add_fusion``)",
              (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
HLO_MODULE = _add("hlo_module", Kind.STAT, "the HLO module an XLA op event belongs to",
                  (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,))
HLO_CATEGORY = _add("hlo_category", Kind.STAT, "XLA's category of a TPU op", (Source.JAX_TPU,))
BYTES_ALLOCATED = _add("bytes_allocated", Kind.STAT, "an allocator event's bytes allocated",
                       ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
PEAK_BYTES_IN_USE = _add("peak_bytes_in_use", Kind.STAT, "an allocator's peak bytes in use",
                         ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
REQUESTED_BYTES = _add("requested_bytes", Kind.STAT, "the bytes an allocation asked for (negative: freed)",
                       ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
GROUP_ID = _add("group_id", Kind.STAT, "TF's step grouping of device events (XProf's ``group_events``)",
                (Source.TF_GPU_DEMO,))
LONG_NAME = _add("long_name", Kind.STAT, "an event's long name (decoded for the event table)", (),
                 "not in any committed trace")
LEVEL_0 = _add("level 0", Kind.STAT, "a device kernel's annotation (its TF op), in the GPU demo trace",
               (Source.TF_GPU_DEMO,))
ANNOTATION = _add("annotation", Kind.STAT, "a device kernel's annotation stack ``outer::inner#shape=...#``",
                  (Source.TF_GPU_DEMO,))
STEP_NAME = _add("step_name", Kind.STAT, "the step a derived ``Steps`` line event stands for",
                 (Source.TF_GPU_DEMO,))
NAME_STAT = _add("name", Kind.STAT,
                 "a JAX kernel's framework op (the primitive's name stack, ``jit(f)/dot_general``)",
                 ALL_TF + (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,))
DEVICE_DURATION_PS = _add("device_duration_ps", Kind.STAT, "a TPU op's duration on the device's own clock",
                          (Source.JAX_TPU,))
CORRELATION_ID = _add("correlation_id", Kind.STAT,
                      "a device kernel and the host-side launch that made it (CUPTI, ROCm)",
                      (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))

# --- Stats of planes
PROFILE_OPTIONS = _add("profile_options", Kind.STAT,
                       "the serialized ``ProfileOptions`` a capture really used (plane ``Task Environment``)",
                       (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
                       "TF 2.21 only among TF's: 2.12 - 2.16, 2.18 and 2.20 record none (checked; 2.17 and "
                       "2.19 taken to be alike: ``compat.records_profile_options``)")
PROFILE_START_TIME = _add("profile_start_time", Kind.STAT, "the profile's start (ns)",
                          (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
PROFILE_STOP_TIME = _add("profile_stop_time", Kind.STAT, "the profile's stop (ns)",
                         (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
DEVICE_TYPE_STRING = _add("device_type_string", Kind.STAT, "a device plane's device type (TPU)",
                          (Source.JAX_TPU,))
DEVICE_VENDOR = _add("device_vendor", Kind.STAT, "a GPU plane's vendor", (Source.JAX_0_8_ROCM,))
CORE_COUNT = _add("core_count", Kind.STAT, "a GPU plane's core count",
                  (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))
COMPUTE_CAP_MAJOR = _add("compute_cap_major", Kind.STAT, "a GPU plane's compute capability (major)",
                         (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))
COMPUTE_CAP_MINOR = _add("compute_cap_minor", Kind.STAT, "a GPU plane's compute capability (minor)",
                         (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))
MEMORY_SIZE = _add("memory_size", Kind.STAT, "a GPU plane's memory size",
                   (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))
CLOCK_RATE = _add("clock_rate", Kind.STAT, "a GPU plane's clock rate",
                  (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM,))
HLO_PROTO = _add("Hlo Proto", Kind.STAT, "an HLO module's proto, kept in the ``/host:metadata`` plane",
                 ALL_TF + (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))

# --- Planes
HOST_PLANE = _add("/host:", Kind.PLANE_PREFIX,
                  "a host plane (``/host:CPU``, ``/host:CUPTI``, ``/host:metadata``)",
                  ALL_TF + (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
HOST_METADATA = _add("/host:metadata", Kind.PLANE, "XLA's metadata plane: the HLO protos",
                     ALL_TF + (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
DEVICE_PLANE = _add("/device:", Kind.PLANE_PREFIX, "a device plane (``/device:GPU:N``, ``/device:TPU:N``)",
                    (Source.TF_GPU_DEMO, Source.JAX_0_8_ROCM, Source.JAX_TPU,))
TPU_PLANE = _add("/device:TPU:", Kind.PLANE_PREFIX, "a TPU core's plane", (Source.JAX_TPU,))
TASK_ENVIRONMENT = _add("Task Environment", Kind.PLANE,
                        "the plane of the profile's own stats (``profile_options``, start and stop times)",
                        (Source.TF_2_21_0, Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))

# --- Lines (threads) of the host plane
PYTHON_LINE = _add("python", Kind.LINE, "the Python main thread's line (named after the thread)",
                   ALL_TF + (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,))
MAIN_THREAD_LINE = _add("MainThread", Kind.LINE, "the Python main thread's line, as some writers name it", (),
                        "not in any committed trace")
PYTHON3_LINE = _add("python3", Kind.LINE, "the Python main thread's line, as some writers name it",
                    (Source.TF_GPU_DEMO,))
TF_DATA_LINE = _add("tf_data", Kind.LINE_PREFIX, "tf.data's own threads (a pipeline's work, not compute)",
                    ALL_TF + (Source.TF_GPU_DEMO,))

# --- XProf's derived lines of a device plane (written when XProf preprocessed a trace)
STEPS_LINE = _add("Steps", Kind.LINE, "one event per step per device", (Source.TF_GPU_DEMO,))
TF_OPS_LINE = _add("TensorFlow Ops", Kind.LINE, "the TF op each kernel ran for", (Source.TF_GPU_DEMO,))
TF_NAME_SCOPE_LINE = _add("TensorFlow Name Scope", Kind.LINE, "derived: TF name scopes",
                          (Source.TF_GPU_DEMO,))
XLA_MODULES_LINE = _add("XLA Modules", Kind.LINE, "derived: XLA modules", (Source.JAX_TPU,))
XLA_OPS_LINE = _add("XLA Ops", Kind.LINE, "derived: XLA ops (on a TPU plane, the ops the device ran)",
                    (Source.JAX_TPU,))
XLA_TRACEME_LINE = _add("XLA TraceMe", Kind.LINE, "derived: XLA TraceMes", (Source.JAX_TPU,))
LAUNCH_STATS_LINE = _add("Launch Stats", Kind.LINE, "derived: kernel launch statistics", (),
                         "not in any committed trace (named in XProf's xplane_schema)")
SOURCE_CODE_LINE = _add("Source code", Kind.LINE, "derived: source lines", (),
                        "not in any committed trace (named in XProf's xplane_schema)")
FRAMEWORK_NAME_SCOPE_LINE = _add("Framework Name Scope", Kind.LINE, "derived: framework name scopes", (),
                                 "not in any committed trace (named in XProf's xplane_schema)")
FRAMEWORK_OPS_LINE = _add("Framework Ops", Kind.LINE, "derived: framework ops", (),
                          "not in any committed trace (named in XProf's xplane_schema)")
SPARSECORE_STEPS_LINE = _add("SparseCore Steps", Kind.LINE, "derived: SparseCore steps", (),
                             "not in any committed trace (named in XProf's xplane_schema)")

# --- JAX (jax.profiler traces)
PJIT_FUNCTION = _add("PjitFunction(", Kind.EVENT_PREFIX,
                     "a call of a jitted function, ``PjitFunction(f)`` (JAX's C++ dispatch path): "
                     "dispatch, and a step where the trace has no marker",
                     (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,))
TRACE_TO_JAXPR = _add("trace_to_jaxpr", Kind.EVENT_PREFIX,
                      "JAX tracing a Python function: evidence that a trace is JAX's",
                      (Source.JAX_0_10_CPU, Source.JAX_TPU,))
TRACE_TO_JAXPR_DYNAMIC = _add("trace_to_jaxpr_dynamic", Kind.EVENT,
                              "JAX tracing a Python function into a jaxpr: tracing",
                              (Source.JAX_0_10_CPU, Source.JAX_TPU,))
LOWER_SHARDING_COMPUTATION = _add("lower_sharding_computation", Kind.EVENT,
                                  "JAX lowering a jaxpr to StableHLO: tracing",
                                  (Source.JAX_0_10_CPU, Source.JAX_TPU,))
LOWER_JAXPR_TO_MODULE = _add("lower_jaxpr_to_module", Kind.EVENT,
                             "JAX lowering a jaxpr to a StableHLO module: tracing", (),
                             "not in any committed trace")
BACKEND_COMPILE_AND_LOAD = _add("backend_compile_and_load", Kind.EVENT,
                                "JAX handing a lowered module to XLA to compile: compile",
                                (Source.JAX_0_10_CPU,))
PJRT_CPU_COMPILE = _add("PjRtCpuClient::Compile", Kind.EVENT_PREFIX, "XLA CPU compile through PJRT: compile",
                        (Source.JAX_0_10_CPU,))
PJRT = _add("PjRt", Kind.EVENT_PREFIX, "PJRT's events: evidence that a trace is JAX's",
            (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,))
PJRT_C = _add("PJRT_", Kind.EVENT_PREFIX, "PJRT's C API events: evidence that a trace is JAX's",
              (Source.JAX_0_8_ROCM,))
PJRT_AWAIT = _add("CommonPjRtBuffer::Await", Kind.EVENT, "waiting for an executable's results: op",
                  (Source.JAX_0_10_CPU,))

# --- GPU runtime calls on the host (CUDA, ROCm)
CUDA_CALL = _add("cuda", Kind.EVENT_PREFIX, "a CUDA runtime call (``cudaLaunchKernel``)", (),
                 "not in any committed trace")
CU_CALL = _add("cu", Kind.EVENT_PREFIX, "a CUDA driver call (``cuLaunchKernel``)", (Source.JAX_0_8_ROCM,))
HIP_CALL = _add("hip", Kind.EVENT_PREFIX, "a ROCm HIP call (``hipLaunchKernel``)", (Source.JAX_0_8_ROCM,))
HIP_MEMCPY = _add("hipMemcpy", Kind.EVENT_PREFIX,
                  "a ROCm copy call (``hipMemcpyHtoDAsync``): its kernel is a copy", (Source.JAX_0_8_ROCM,))
CU_MEMCPY = _add("cuMemcpy", Kind.EVENT_PREFIX, "a CUDA driver copy call (``cuMemcpyDtoH...``)", (),
                 "not in any committed trace")
CUDA_MEMCPY = _add("cudaMemcpy", Kind.EVENT_PREFIX, "a CUDA runtime copy call", (),
                   "not in any committed trace")


# --- Names read as sets
JAX_DISPATCH = _family(
    Kind.EVENT,
    "JAX / PJRT argument handling around an executable run (``ParseArguments``, ``shard_args``, ...): "
    "dispatch", {
    "AllocateOutputBuffersWithInputReuse": (Source.JAX_0_10_CPU,),
    "CommonPjRtClient::CreateOutputs": (Source.JAX_0_10_CPU,),
    "CommonPjRtLoadedExecutable::ExecutePrepare": (Source.JAX_0_10_CPU,),
    "ExecuteReplicated.__call__": (Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "Handle input event recording": (Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "Handle inputs": (Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "ParseArguments": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "PythonRefManager::CollectGarbage": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,),
    "Wait for donation holds": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "Wait for usage holds": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "shard_args": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,),
})
JAX_INPUT = _family(
    Kind.EVENT,
    "numpy / Python values put on the device (``DevicePut``, ...): input", {
    "BatchedCopyToDeviceWithSharding create batch": (Source.JAX_0_10_CPU,),
    "BatchedCopyToDeviceWithSharding create results": (Source.JAX_0_10_CPU,),
    "BatchedCopyToDeviceWithSharding: dispatch": (Source.JAX_0_10_CPU,),
    "DevicePut": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "DevicePutWithSharding": (Source.JAX_0_8_ROCM, Source.JAX_0_10_CPU,),
    "batched_copy_array_to_devices_with_sharding": (Source.JAX_0_10_CPU,),
    "batched_copy_array_to_devices_with_sharding: assemble device lists": (Source.JAX_0_10_CPU,),
})
EXECUTE_WAITS = _family(
    Kind.EVENT,
    "PJRT's call that runs an executable: its own time (no child event) while the executable's ops run on "
    "XLA's threads is waiting for them", {
    "CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice": (Source.JAX_0_10_CPU,),
    "PjRtCpuExecutable::ExecuteHelper": (),
    "PjRtStreamExecutorLoadedExecutable::ExecuteHelper": (Source.JAX_0_8_ROCM,),
}, "``PjRtCpuExecutable::ExecuteHelper`` is in no committed trace (not checked on a "
   "trace here)")
XLA_PASS_NAMES = _family(
    Kind.EVENT,
    "an HLO pass or pipeline, or an MLIR codegen pass, named without a family prefix (``HloPassPipeline`` "
    "opens a TraceMe named after each pass): compile", {
    "CSE": (Source.TF_2_21_0,),
    "Canonicalizer": (Source.TF_2_21_0,),
    "Codegen": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "ConvertVectorToSCF": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "HLO passes after layout assignment": (Source.TF_2_21_0,),
    "HLO passes through layout assignment": (Source.TF_2_21_0,),
    "Inliner": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "LoopInvariantCodeMotion": (Source.TF_2_21_0,),
    "LowerVectorMultiReduction": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "RunInvariantCheckers": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "SplitModule": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "SubbytePacker pipeline": (Source.TF_2_21_0,),
    "SymbolDCE": (Source.TF_2_21_0,),
    "after layout assignment": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "algsimp": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "all-reduce-promotion": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "all_to_all_decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "batch-dot-simplification": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "batched_gather_scatter_normalizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "batchnorm_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "bitcast_dtypes_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "broadcast_canonicalizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "call-inliner": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "change-op-data-type": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "cholesky_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "comparison-expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "conditional-canonicalizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "conditional-to-select": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "constant_folding": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "convolution-canonicalization": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "convolution-group-converter": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "copy-insertion": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "cpu-all-reduce-combiner": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "cpu-parallel-task-assigner": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "cse": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "cse_barrier_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "dce": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "dot-library-passes": (Source.TF_2_21_0,),
    "dot-library-rewriter": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "dot_decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "dynamic-dimension-simplifier": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "dynamic-index-splitter": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "dynamic_padder": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "eigh_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "flatten-call-graph": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "float-normalization-bf16": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f4e2m1fn": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e3m4": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e4m3": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e4m3b11fnuz": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e4m3fn": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e4m3fnuz": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e5m2": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e5m2fnuz": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-f8e8m0fnu": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-s4": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "float-normalization-u4": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "fusion": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "fusion-wrapper": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "gather_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "gather_simplifier": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "hlo normalization": (Source.TF_2_21_0,),
    "layout-assignment": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "literal-canonicalizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "logistic-expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "map-inline": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "operand_upcaster": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "optimize_input_output_buffer_alias": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "post_scatter_expansion_simplification": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "qr_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "reduce-decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "reduce-window-resizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "reduce-window-rewriter": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "reshape-decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "reshape-mover": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "result_caster": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "rng-bit-generator-expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "rng-expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "scatter_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "scatter_simplifier": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "select_and_scatter_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "shape-canonicalizer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "sharding-removal": (Source.TF_2_21_0,),
    "sharding-remover": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "simplification": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "simplification after layout assignment": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "simplify-conditional": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "simplify-sorts": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "simplify-while-loops": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "small-while-loop-hoisting": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "stochastic_convert_decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "sub-byte-size-setter": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "topk-decomposer": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "topk-rewriter": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "transpose-folding": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "tree_reduction_rewriter": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "triangular_solve_expander": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "tuple-simplifier": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "while-loop-constant-sinking": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "while-loop-invariant-code-motion": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
    "while-loop-trip-count-annotator": (Source.TF_2_21_0, Source.JAX_0_10_CPU,),
    "zero_sized_hlo_elimination": (Source.TF_2_21_0, Source.JAX_0_10_CPU, Source.JAX_TPU,),
}, "collected from real TF 2.21 / XLA CPU compilations (tools/make_attribution_traces.py, the ``xla`` "
   "modes of tests/data); inside a compile event they are compile by inheritance already, this set makes "
   "them compile where the trace holds them without their parent (a trace that started in the middle of "
   "a long first-step compile); MLIR passes (``...Pass``), ``ThunkEmitter::*`` and ``mlir::*`` are "
   "matched by family in rules.RULES instead")


# --- Sets the analysis reads as one
# the Python main thread's line, by the names writers give it
MAIN_THREAD_LINES = (PYTHON_LINE, MAIN_THREAD_LINE, PYTHON3_LINE)
# XProf's derived lines (they repeat the kernels' times: never summed as device work)
DERIVED_LINE_NAMES = frozenset({STEPS_LINE, TF_OPS_LINE, TF_NAME_SCOPE_LINE, XLA_MODULES_LINE, XLA_OPS_LINE,
                                XLA_TRACEME_LINE, LAUNCH_STATS_LINE, SOURCE_CODE_LINE, FRAMEWORK_NAME_SCOPE_LINE,
                                FRAMEWORK_OPS_LINE, SPARSECORE_STEPS_LINE})

TABLE: tuple[TraceName, ...] = tuple(_TABLE)


def traced_call(tf_function_call: object) -> bool:
    """Whether a tf.function call (its ``tf_function_call`` value) traced a new graph: the one place
    that decides it."""
    return str(tf_function_call).startswith(TRACED)


def xla_call(tf_function_call: object) -> bool:
    """Whether a tf.function call (its ``tf_function_call`` value) is a jit_compile function's."""
    return str(tf_function_call).endswith(XLA_CALL)
