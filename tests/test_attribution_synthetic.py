"""Attribution on synthetic XSpaces whose right answers are computed by hand (times in µs)."""

from __future__ import annotations

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis.mode import analyze_mode
from traceinsight.model import CATEGORIES
from traceinsight.retracecause import RetraceCause
from traceinsight.stepsource import StepSource

from xspace_builder import Space, session_path

MS = 1e-3  # one µs in ms


def cats(mode, step_index):
    row = mode.steps.iloc[step_index]
    return {c: round(float(row[c]) / MS, 6) for c in CATEGORIES if row[c]}


def eager_and_function_space() -> Space:
    sp = Space()
    sp.task_environment()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1, _r=1)
    main.event("TFE_Py_FastPathExecute_C", 10, 40)
    main.event("EagerExecute", 15, 30, eager_op="MatMul", is_func=0)
    main.event("EagerLocalExecute: MatMul", 16, 28)
    main.event("KernelAndDeviceFunc::Run", 20, 20)
    main.event("MemoryAllocation", 30, 0, bytes_allocated=1024)
    main.event("tf.constant", 60, 10)
    main.event("EagerExecute", 62, 6, eager_op="_EagerConst")
    main.event("EagerLocalExecute: _EagerConst", 62.5, 5)
    main.event("KernelAndDeviceFunc::Run", 63, 3)
    main.event("train", 100, 100, step_num=2, _r=1)
    main.event("f", 110, 80, tf_function_call="notTraced-nonXla", tracing_count=1)
    main.event("EagerExecute", 120, 60, eager_op="__inference_f_1", is_func=1)
    main.event("EagerLocalExecute: __inference_f_1", 121, 58)
    main.event("KernelAndDeviceFunc::Run", 125, 50)
    worker = h.line("tf_Compute/1")
    worker.event("ExecutorState::Process", 129, 44)
    worker.event("model/MatMul:MatMul", 130, 40)
    worker.event("MemoryAllocation", 131, 0)
    worker.event("model/Relu:Relu", 170, 2)
    return sp


@pytest.fixture(scope="module")
def eager_fn(tmp_path_factory):
    path = eager_and_function_space().write(tmp_path_factory.mktemp("a") / "h.xplane.pb")
    return analyze_mode("m", [path])


def test_exclusive_split_by_hand(eager_fn):
    # step 1: kernel 20; TFE_Py.. 40 minus the kernel = dispatch 20; tf.constant 10 (its
    # _EagerConst kernel included) = input; the rest of the 100 is python
    assert cats(eager_fn, 0) == {"op": 20, "dispatch": 20, "input": 10, "python": 50}
    # step 2: the graph function's run 50 is op; the call machinery around it 80 - 50 = dispatch
    assert cats(eager_fn, 1) == {"op": 50, "dispatch": 30, "python": 20}


def test_conservation_and_steps(eager_fn):
    s = eager_fn.steps
    assert list(s["step_num"]) == [1, 2]
    assert not s["first"].any()  # step numbers from 1, no tracing: no first step to set apart
    np.testing.assert_allclose(s[list(CATEGORIES)].sum(axis=1), s["wall_ms"], rtol=1e-12)
    assert eager_fn.breakdown.loc["op", "median"] == pytest.approx(35 * MS)
    assert eager_fn.breakdown.loc["total", "median"] == pytest.approx(100 * MS)
    assert "step markers 'train'" in eager_fn.step_rule
    assert eager_fn.step_source is StepSource.MARKERS_STEP_NUM


def test_ops_main_and_worker(eager_fn):
    ops = eager_fn.ops.set_index(["op", "thread"])
    assert ops.loc[("MatMul", "main"), "self_ms_per_step"] == pytest.approx(10 * MS)
    assert ops.loc[("MatMul", "main"), "calls_per_step"] == pytest.approx(0.5)
    assert ops.loc[("__inference_f_1", "main"), "type"] == "tf.function"
    assert ops.loc[("__inference_f_1", "main"), "self_ms_per_step"] == pytest.approx(25 * MS)
    # the _EagerConst kernel's time is input, not op: listed with its calls, no op time
    assert ops.loc[("_EagerConst", "main"), "self_ms_per_step"] == 0
    # worker threads: self time, never added to the step
    assert ops.loc[("model/MatMul", "worker"), "self_ms_per_step"] == pytest.approx(20 * MS)
    assert ops.loc[("model/MatMul", "worker"), "type"] == "MatMul"
    assert ops.loc[("model/Relu", "worker"), "self_ms_per_step"] == pytest.approx(1 * MS)
    worker_share = ops.xs("worker", level="thread")["share"].sum()
    assert worker_share == pytest.approx(1.0)


def test_zero_length_events_own_no_time(eager_fn):
    # MemoryAllocation inside the kernel is zero-length: the kernel keeps all 20 µs
    assert cats(eager_fn, 0)["op"] == 20
    assert eager_fn.other.empty


def test_event_crossing_a_step_edge_is_split(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("train", 100, 100, step_num=2)
    main.event("TFE_Py_ExecuteCancelable", 90, 20)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert cats(m, 0) == {"dispatch": 10, "python": 90}
    assert cats(m, 1) == {"dispatch": 10, "python": 90}


def test_no_markers_repeated_function_calls_are_steps(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    for t0 in (0, 50, 100):
        main.event("f", t0, 30, tf_function_call="notTraced-nonXla")
        main.event("KernelAndDeviceFunc::Run", t0 + 5, 20)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert "tf.function call" in m.step_rule
    assert m.step_source is StepSource.TF_FUNCTION_CALLS
    assert len(m.steps) == 3
    assert all(cats(m, i) == {"op": 20, "dispatch": 10} for i in range(3))


def test_step_source_travels_through_the_cache(tmp_path, eager_fn):
    import json

    from traceinsight.analysis.cache import from_dict, to_dict
    data = json.loads(json.dumps(to_dict(eager_fn, ["k"])))
    back = from_dict(data, ["k"], None)
    assert back is not None and back.step_source is StepSource.MARKERS_STEP_NUM
    # an entry without a step source, or with one this version does not know, is analysed again
    for bad in (None, "markers", 3):
        damaged = dict(data, step_source=bad)
        assert from_dict(damaged, ["k"], None) is None, bad
    del data["step_source"]
    assert from_dict(data, ["k"], None) is None


def test_no_markers_no_calls_one_window(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("TFE_Py_FastPathExecute_C", 10, 10)
    main.event("TFE_Py_FastPathExecute_C", 30, 20)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert "one step" in m.step_rule
    assert m.step_source is StepSource.WHOLE_TRACE
    assert cats(m, 0) == {"dispatch": 30, "python": 10}


def test_python_frames_inherit_the_tf_event_around_them_and_hotspots(tmp_path):
    sp = Space()
    sp.task_environment(python_level=1)
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("$model.py:10 step", 5, 90)
    main.event("$layer.py:20 __call__", 10, 50)
    main.event("TFE_Py_FastPathExecute_C", 20, 20)
    main.event("KernelAndDeviceFunc::Run", 25, 10)
    main.event("f", 60, 30, tf_function_call="notTraced-nonXla")
    main.event("$polymorphic_function.py:800 __call__", 62, 8)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")], user_files=frozenset({"model.py"}))
    assert cats(m, 0) == {"op": 10, "dispatch": 40, "python": 50}
    hs = m.hotspots.set_index("function")
    assert hs.loc["step", "self_ms"] == pytest.approx(10 * MS)
    assert hs.loc["step", "inclusive_ms"] == pytest.approx(40 * MS)
    assert hs.loc["step", "group"] == "user"
    assert hs.loc["__call__", "self_ms"].max() == pytest.approx(30 * MS)
    # the frame inside the tf.function call is dispatch, not python: no python self time
    poly = m.hotspots[m.hotspots["file"] == "polymorphic_function.py"]
    assert poly["self_ms"].iloc[0] == 0
    assert any("python tracer" in n for n in m.notes)


def xla_space() -> Space:
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 1000, step_num=0)
    main.event("f", 10, 980, tf_function_call="traced-xla", tracing_count=1)
    main.event("tf.function-graph_building", 20, 180)
    main.event("convert_to_tensor", 50, 10)
    main.event("TFE_Py_ExecuteCancelable", 300, 680)
    main.event("EagerExecute", 310, 660, eager_op="__inference_f_2", is_func=1)
    main.event("EagerLocalExecute: __inference_f_2", 320, 640)
    main.event("EagerKernelExecute", 330, 625)
    main.event("__inference_f_2:__inference_f_2", 340, 610)
    main.event("simplification", 350, 50)
    main.event("CpuCompiler::RunBackend", 400, 400)
    main.event("CpuExecutable::ExecuteAsyncOnStream", 800, 140)
    main.event("convolution.1", 810, 90, hlo_op="convolution.1", hlo_module="m")
    main.event("train", 1000, 100, step_num=1)
    main.event("f", 1010, 80, tf_function_call="notTraced-xla", tracing_count=1)
    main.event("TFE_Py_ExecuteCancelable", 1020, 60)
    main.event("EagerExecute", 1025, 50)
    main.event("EagerLocalExecute: __inference_f_2", 1030, 40)
    main.event("EagerKernelExecute", 1035, 30)
    main.event("__inference_f_2:__inference_f_2", 1040, 20)
    main.event("CpuExecutable::ExecuteAsyncOnStream", 1045, 10)
    return sp


def test_xla_first_call_tracing_compile_and_steady_call(tmp_path):
    m = analyze_mode("xla", [xla_space().write(tmp_path / "h.xplane.pb")])
    # first call: the traced call's own time, graph building (its convert_to_tensor included) and
    # the runtime around the launch are tracing (300 + 70); the compiling launch's own time, the HLO
    # pass and the backend are compile (20 + 50 + 400); the executable run is op (140)
    assert cats(m, 0) == {"tracing": 370, "compile": 470, "op": 140, "python": 20}
    assert cats(m, 1) == {"dispatch": 60, "op": 20, "python": 20}
    assert bool(m.steps["first"].iloc[0]) and not bool(m.steps["first"].iloc[1])
    assert m.first_step["compile"] == pytest.approx(470 * MS)
    assert m.breakdown.loc["compile", "median"] == 0  # compile only in the first step
    r = m.retraces.set_index("function").loc["f"]
    assert (r["calls"], r["traced_calls"]) == (2, 1)
    assert r["tracing_ms"] == pytest.approx(370 * MS)
    assert r["compile_ms"] == pytest.approx(470 * MS)
    # ops are per steady step: the first step's HLO run is not among them
    ops = m.ops.set_index(["op", "thread"])
    assert ("convolution.1", "main") not in ops.index
    assert ops.loc[("__inference_f_2", "main"), "self_ms_per_step"] == pytest.approx(20 * MS)


def test_unknown_events_are_other_by_name(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("SomeNewRuntimeThing", 10, 20)
    main.event("KernelAndDeviceFunc::Run", 15, 5)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert cats(m, 0) == {"other": 15, "op": 5, "python": 80}
    assert m.other.iloc[0]["name"] == "SomeNewRuntimeThing"
    assert m.other.iloc[0]["ms_per_step"] == pytest.approx(15 * MS)
    assert any("no attribution rule" in n for n in m.notes)


def test_several_hosts_are_kept_apart(tmp_path):
    for host, op_us in (("a", 20), ("b", 40)):
        sp = Space()
        main = sp.host().line("python")
        main.event("train", 0, 100, step_num=1)
        main.event("KernelAndDeviceFunc::Run", 10, op_us)
        sp.write(session_path(tmp_path, "run1", host=host))
    run = traceinsight.load(tmp_path)
    assert sorted(run.modes) == ["run1/a", "run1/b"]
    assert run.modes["run1/a"].category_medians()["op"] == pytest.approx(20 * MS)
    assert run.modes["run1/b"].category_medians()["op"] == pytest.approx(40 * MS)


def test_main_thread_is_the_marker_thread_and_other_threads_never_count(tmp_path):
    sp = Space()
    h = sp.host()
    busy = h.line("tf_Compute/7")
    busy.event("KernelAndDeviceFunc::Run", 0, 1000)  # longer than anything on the main thread
    main = h.line("MainThread")
    main.event("train", 0, 100, step_num=1)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert cats(m, 0) == {"python": 100}


def test_main_thread_waiting_on_tf_data_is_input(tmp_path):
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("train_function", 10, 80, tf_function_call="notTraced-nonXla")
    main.event("KernelAndDeviceFunc::Run", 20, 60)
    worker = h.line("tf_Compute/2")
    worker.event("IteratorGetNext:IteratorGetNext", 25, 15)   # 25..40: the step waits on tf.data
    worker.event("model/dense/MatMul:MatMul", 40, 35)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    # the function's run 20..80 is op except 25..40, when the input pipeline was working
    assert cats(m, 0) == {"op": 45, "input": 15, "dispatch": 20, "python": 20}


@pytest.mark.parametrize("counts,expected", [
    ((1, 2, 3), "one function traced for new input signatures"),
    ((1, 1, 1), "a new tf.function object is made for each call"),
])
def test_retrace_pattern_from_tracing_count(tmp_path, counts, expected):
    sp = Space()
    main = sp.host().line("python")
    for i, count in enumerate(counts):
        main.event("train", i * 100, 100, step_num=i + 1)
        main.event("g", i * 100 + 10, 50, tf_function_call="traced-nonXla", tracing_count=count)
        main.event("tf.function-graph_building", i * 100 + 20, 30)
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    r = m.retraces.iloc[0]
    assert (r["calls"], r["traced_calls"]) == (3, 3)
    assert r["tracing_ms"] == pytest.approx(3 * 50 * MS)
    assert expected in r["changes"]


def test_tracemes_opened_and_closed_in_other_python_frames(tmp_path):
    """`with Trace(...)`: the TraceMe starts inside __enter__'s frame and ends inside __exit__'s.
    The two frames are taken out of the nesting; the TraceMe keeps its category."""
    sp = Space()
    sp.task_environment(python_level=1)
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("$model.py:1 f", 0, 100)
    main.event("$trace.py:83 __enter__", 10, 10)
    main.event("tf.constant", 15, 45)
    main.event("EagerLocalExecute: _EagerConst", 28, 14)    # what places a converted value
    main.event("KernelAndDeviceFunc::Run", 30, 10)
    main.event("$trace.py:121 __exit__", 55, 15)
    path = sp.write(tmp_path / "h.xplane.pb")
    m = analyze_mode("m", [path], user_files=frozenset({"model.py"}))
    assert cats(m, 0) == {"input": 45, "python": 55}
    hs = m.hotspots.set_index("function")
    assert hs.loc["f", "self_ms"] == pytest.approx(55 * MS)
    from traceinsight.analysis.attribute import attribute
    from traceinsight.analysis.events import load_files
    a = attribute(load_files([path]))
    crossing = sorted(a.table.names[i] for i in a.table.name[a.crosser])
    assert crossing == ["$trace.py:121 __exit__", "$trace.py:83 __enter__"]


def test_gpu_trace_copies_are_input_and_kernels_are_listed(tmp_path):
    """A GPU trace: the main thread waits in a kernel run while a host-to-device copy and a kernel
    run on the device; EagerCopyToDevice copies there, so it is input."""
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("EagerExecute", 5, 90)
    main.event("EagerCopyToDevice", 6, 4)
    main.event("KernelAndDeviceFunc::Run", 20, 70)
    stream = sp.plane("/device:GPU:0").line("Stream #14(Compute)", timestamp_ns=0)
    stream.event("MemcpyH2D", 20, 30)
    stream.event("volta_sgemm_128x64_nn", 50, 35)
    m = analyze_mode("m", [sp.write(tmp_path / "gpu.xplane.pb")])
    # dispatch: EagerExecute 90 - copy 4 - kernel run 70 = 16; the run waits 30 on the copy (input)
    assert cats(m, 0) == {"input": 34, "op": 40, "dispatch": 16, "python": 10}
    # device work is in the device analysis (kernels by whole name), not among the host's ops
    assert "volta_sgemm_128x64_nn" not in set(m.ops["op"])
    k = m.kernels.iloc[0]
    assert (k["kernel"], k["calls"]) == ("volta_sgemm_128x64_nn", 1)
    assert k["ms_per_step"] == pytest.approx(35 * MS)
    d = m.device_steps.iloc[0]
    assert d["compute_ms"] == pytest.approx(35 * MS) and d["h2d_ms"] == pytest.approx(30 * MS)
    # busy 20..85 of the step's 0..100: idle 35
    assert d["idle_ms"] == pytest.approx(35 * MS)


def test_recorded_input_signatures_say_what_changed(tmp_path):
    """With the capture's log of the arguments fed to the step, the retrace row and the finding
    name what changed: shapes and Python values."""
    from traceinsight.findings import retrace_cause
    sp = Space()
    main = sp.host().line("python")
    for i in range(3):
        main.event("train", i * 100, 100, step_num=i + 1)
        main.event("step", i * 100 + 10, 50, tf_function_call="traced-nonXla", tracing_count=i + 1)
    signatures = {"steps": 30, "truncated": False, "distinct": [
        {"args": ["ndarray float32 shape (100,)", "Python float 0.0"], "first_step": 0, "steps": 1},
        {"args": ["ndarray float32 shape (200,)", "Python float 0.01"], "first_step": 1, "steps": 1},
        {"args": ["ndarray float32 shape (100,)", "Python float 0.02"], "first_step": 2, "steps": 1},
    ]}
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")], signatures=signatures)
    row = m.retraces.iloc[0]
    changes = row["changes"]
    assert "argument 1 shape changed ((100,), (200,))" in changes
    assert "argument 2 is a Python float: 3 distinct values" in changes
    assert row["cause"] == "shapes and python values"
    assert row["cause_detail"] == ("argument 1 shape changed ((100,), (200,)); "
                                   "argument 2 is a Python float: 3 distinct values")
    cause, fix = retrace_cause(RetraceCause.of(row["cause"]), row["cause_detail"], 3, 3)
    assert "every new shape and every new Python value" in cause
    assert "tf.constant" in fix and "reduce_retracing" in fix
    # only Python values
    only_py = {"steps": 3, "distinct": [{"args": ["Python float 0.0"]}, {"args": ["Python float 1.0"]}]}
    m = analyze_mode("m", [tmp_path / "h.xplane.pb"], signatures=only_py)
    row = m.retraces.iloc[0]
    assert row["cause"] == "python values"
    cause, fix = retrace_cause(RetraceCause.of(row["cause"]), row["cause_detail"], 3, 3)
    assert cause.startswith("Python values passed as arguments") and "tf.constant" in fix


def test_describe_arg_keys_like_tf_function():
    import numpy as np

    from traceinsight.capture.runner import describe_arg
    assert describe_arg(0.5) == "Python float 0.5"
    assert describe_arg(np.zeros((2, 3), np.float32)) == "ndarray float32 shape (2, 3)"
    assert describe_arg([1, 2]).startswith("list of 2: Python int 1")


def test_a_retraces_cause_is_decided_on_the_arguments_recorded_kinds():
    """The capture records each distinct argument signature as text (shown) and as kinds (data:
    ``capture.loading.arg_kind``); what changed is decided on the kinds. A run folder written
    before the kinds were recorded reads them back from the texts, with the same result."""
    import json
    from pathlib import Path

    import jsonschema

    from traceinsight.analysis.retraces import signature_changes
    from traceinsight.capture.loading import SignatureLog

    inputs = [(np.zeros((100,), np.float32), 0.5, "a"), (np.zeros((200,), np.float32), 1.5, "a"),
              (np.zeros((200,), np.int32), 2.5, object())]
    log = SignatureLog(lambda i: inputs[i])
    for i in range(len(inputs)):
        log(i)
    sig = json.loads(json.dumps(log.summary()))            # as timings.json holds it
    schema = json.loads((Path(__file__).resolve().parent.parent / "traceinsight" / "schemas"
                         / "timings.schema.json").read_text())
    jsonschema.validate({"input_signatures": sig}, {**schema, "required": []})
    typed = signature_changes(sig)
    assert [c["kind"] for c in typed] == ["shape", "python", "type"]
    assert typed[0]["text"] == ("argument 1 shape changed ((100,), (200,)) and dtype "
                                "(ndarray float32, ndarray int32)")
    before = {**sig, "distinct": [{k: v for k, v in d.items() if k != "kinds"} for d in sig["distinct"]]}
    assert signature_changes(before) == typed
    # texts that say nothing: the kinds still decide
    blind = {**sig, "distinct": [{**d, "args": [f"argument {j}.{p}" for p in range(len(d["args"]))]}
                                 for j, d in enumerate(sig["distinct"])]}
    assert [c["kind"] for c in signature_changes(blind)] == ["shape", "python", "type"]


def test_the_retrace_fix_gives_the_signature_every_recorded_input_fits():
    """From the recorded kinds of the arguments the capture fed: a dimension that varied is None,
    one that never did is kept, a rank that changed is unknown, a Python float is a float32 scalar
    (passed as tf.constant); nothing where an argument's kind or dtype does not allow one (the
    template fix then)."""
    from traceinsight.analysis.retraces import input_signature
    from traceinsight.capture.loading import arg_kind
    from traceinsight.findings import retrace_cause

    def fed(*calls):
        return {"distinct": [{"args": [str(a) for a in c], "kinds": [arg_kind(a) for a in c]}
                             for c in calls]}
    x = np.zeros
    assert input_signature(fed((x(100, np.float32), 0.0), (x(200, np.float32), 0.01))) == \
        "[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)]"
    assert input_signature(fed((x((8, 30), np.float64),), (x((16, 30), np.float64),))) == \
        "[tf.TensorSpec([None, 30], tf.float64)]"
    assert input_signature(fed((x((8, 30)),), (x(8),))) == "[tf.TensorSpec(None, tf.float64)]"
    assert input_signature(fed((3,), (4,))) == "[tf.TensorSpec([], tf.int32)]"
    assert input_signature(fed((x(3, np.float32),), (x(3, np.int32),))) == ""   # dtype changed
    assert input_signature(fed((object(),), (object(),))) == ""
    assert input_signature(fed((None,), (None,))) == ""
    # a run folder that recorded the texts only: no signature, the template fix
    assert input_signature({"distinct": [{"args": ["ndarray float32 shape (100,)"]},
                                         {"args": ["ndarray float32 shape (200,)"]}]}) == ""
    # a dtype from a run folder is data: never written into the snippet unless a plain name
    forged = {"distinct": [{"args": ["a"], "kinds": [{"kind": "array", "dtype": "x); evil(",
                                                     "shape": [1]}]},
                           {"args": ["b"], "kinds": [{"kind": "array", "dtype": "x); evil(",
                                                     "shape": [2]}]}]}
    assert input_signature(forged) == ""
    cause, fix = retrace_cause(RetraceCause.SHAPES, "argument 1 shape changed", 3, 3,
                               "[tf.TensorSpec([None], tf.float32)]")
    assert "input_signature=[tf.TensorSpec([None], tf.float32)]" in fix and "def step(x)" in fix
    # without a record of the arguments: the signature's form, no shape made up for it
    template = retrace_cause(RetraceCause.SHAPES, "", 3, 3)[1]
    assert "input_signature=[tf.TensorSpec(shape, dtype), ...]" in template and "30" not in template
    # the traced function's own name where it is an identifier; a name from the trace that is
    # not one is never written into the code
    assert "def train_step(x): ..." in retrace_cause(RetraceCause.SHAPES, "", 3, 3, "",
                                                     "train_step")[1]
    assert "def step(x)" in retrace_cause(RetraceCause.SHAPES, "", 3, 3, "", "f(); evil()")[1]
    assert "train_step(x, tf.constant(lr))" in retrace_cause(RetraceCause.PYTHON_VALUES, "", 3, 3,
                                                             "", "train_step")[1]
