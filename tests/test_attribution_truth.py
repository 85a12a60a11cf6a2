"""Attribution truth: each case on a synthetic
XSpace with a hand-computed answer (times in µs), and on a small real capture committed under
tests/data/attribution (tools/make_attribution_traces.py; workloads in
tests/workloads/attribution). Figures compared with independent measurements are in
tools/measure_attribution_truth.py; the tests check what the trace itself can prove (exact event
counts, which instants are which category, XProf's own op table), never a timing threshold."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis import rules
from traceinsight.analysis.attribute import attribute
from traceinsight.analysis.events import load_files
from traceinsight.analysis.mode import analyze_mode
from traceinsight.analysis.results import op_totals
from traceinsight.derive import complete
from traceinsight.findings import find
from traceinsight.model import CATEGORIES, Run
from traceinsight.testing import make_mode

from xspace_builder import Space

DATA = Path(__file__).parent / "data" / "attribution"
MS = 1e-3  # one µs in ms


def cats(mode, step_index=0):
    row = mode.steps.iloc[step_index]
    return {c: round(float(row[c]) / MS, 6) for c in CATEGORIES if row[c]}


def analyze(sp: Space, tmp_path):
    return analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])


@pytest.fixture(scope="module")
def runs():
    return {p.name: traceinsight.load(p, use_cache=False) for p in sorted(DATA.iterdir())
            if (p / "run.json").is_file()}


def host_trace(run, mode: str) -> list[str]:
    return [p for p in run.modes[mode].trace_paths if "/host/" in p]


def steady(a):
    """(start, end) of the steps after the first."""
    return a.step_start[1:], a.step_end[1:]


# ---- A. numpy conversion inside the C fast path is input ------------------------

def test_fast_path_copy_before_eager_const_is_input_synthetic(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("TFE_Py_FastPathExecute_C", 10, 80)
    main.event("EagerExecute", 40, 10, eager_op="_EagerConst")     # places the copied array
    main.event("EagerLocalExecute: _EagerConst", 41, 8)
    main.event("KernelAndDeviceFunc::Run", 42, 6)
    main.event("TFE_DeleteTensorHandle", 52, 2)
    main.event("EagerExecute", 56, 2, eager_op="_EagerConst")      # a second argument
    main.event("EagerLocalExecute: _EagerConst", 56.5, 1)
    main.event("EagerExecute", 60, 25, eager_op="Sum")
    main.event("EagerLocalExecute: Sum", 61, 23)
    main.event("KernelAndDeviceFunc::Run", 65, 15)
    m = analyze(sp, tmp_path)
    # input: the copy before the first _EagerConst (10..40) and before the second, from the end of
    # the previous child (54..56), plus both _EagerConst runs (41..49, 56.5..57.5): 30+8+2+1 = 41
    # dispatch: EagerExecute wrappers 2 + 1, fast path 50..52 and 58..60 and 85..90, handle
    # deletion 2, Sum's dispatch 25 - 15: 2+1+2+2+5+2+10 = 24; op: Sum's kernel 15; python 20
    assert cats(m) == {"input": 41, "dispatch": 24, "op": 15, "python": 20}


def test_fast_path_without_conversion_stays_dispatch_synthetic(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("TFE_Py_FastPathExecute_C", 10, 50)
    main.event("EagerExecute", 30, 20, eager_op="Sum")
    main.event("EagerLocalExecute: Sum", 31, 18)
    main.event("KernelAndDeviceFunc::Run", 35, 10)
    assert cats(analyze(sp, tmp_path)) == {"dispatch": 40, "op": 10, "python": 50}


def test_reduce_sum_of_numpy_converts_twice_real(runs):
    """tf.reduce_sum(x), x a 32 MiB numpy array, no axis: x is converted twice per step, once by
    rank(x) in Python (convert_to_tensor) and once inside the C fast path. Both are input; the
    fast path's own time before its _EagerConst child is the copy."""
    a = attribute(load_files(host_trace(runs["sum-numpy"], "eager")))
    t = a.table
    ws, we = steady(a)
    const = np.nonzero(t.name == t.name_id("EagerLocalExecute: _EagerConst"))[0]
    per_step = np.histogram(t.start[const], bins=np.r_[ws, we[-1]])[0]
    assert (per_step == 2).all()                                   # exact count: two conversions
    fp = t.name_id("TFE_Py_FastPathExecute_C")
    for c in const:
        ee = a.parent[c]
        if t.name[a.parent[ee]] != fp:
            continue
        gap0, gap1 = t.start[a.parent[ee]], t.start[ee]             # the fast path before it
        got = a.category_time(np.array([gap0]), np.array([gap1]))[0]
        assert got[rules.INPUT] == gap1 - gap0 > 0
    ct = a.category_time(ws, we)
    tensor = attribute(load_files(host_trace(runs["sum-tensor"], "eager")))
    ct_t = tensor.category_time(*steady(tensor))
    d_input = np.median(ct[:, rules.INPUT]) - np.median(ct_t[:, rules.INPUT])
    d_dispatch = np.median(ct[:, rules.DISPATCH]) - np.median(ct_t[:, rules.DISPATCH])
    # the difference the numpy input makes is input, not dispatch (before: mostly dispatch)
    assert d_input > 4 * d_dispatch


# ---- B. convert_to_tensor of a tensor is not input ------------------------------

def test_conversion_without_work_is_dispatch_synthetic(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("convert_to_tensor", 10, 4)                         # a tensor: returned unchanged
    main.event("convert_to_tensor", 20, 20)                        # a numpy array: converted
    main.event("tf.constant", 21, 18)
    main.event("EagerExecute", 30, 8, eager_op="_EagerConst")
    main.event("EagerLocalExecute: _EagerConst", 31, 6)
    main.event("tf.constant", 50, 5)                               # a cached scalar: no op run
    main.event("convert_to_tensor", 60, 10)                        # python frames only inside
    main.event("$tensor_conversion.py:40 convert", 61, 8)
    # input 20 (the real conversion); dispatch 4 + 5 + 10; python 100 - 39
    assert cats(analyze(sp, tmp_path)) == {"input": 20, "dispatch": 19, "python": 61}


def test_variable_read_in_a_conversion_is_not_input_synthetic(tmp_path):
    """TensorFlow 2.16 on wrap an eager op's variable argument's read in ``convert_to_tensor``
    (``tf.matmul(x, w)``, ``w`` a ``tf.Variable``): the ReadVariableOp that runs there is an op
    call, not an input conversion; a conversion that places a value (``_EagerConst``, found by its
    event's name or by its EagerExecute's ``eager_op`` stat, at any depth) stays input."""
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("convert_to_tensor", 10, 20)                        # w: a variable read
    main.event("TFE_Py_FastPathExecute_C", 11, 18)
    main.event("EagerExecute", 12, 16, eager_op="ReadVariableOp")
    main.event("EagerLocalExecute: ReadVariableOp", 13, 14)
    main.event("KernelAndDeviceFunc::Run", 15, 6)
    main.event("convert_to_tensor", 40, 20)                        # x: numpy, converted
    main.event("TFE_Py_FastPathExecute_C", 41, 18)
    main.event("EagerExecute", 42, 16, eager_op="_EagerConst")     # known by its stat only
    main.event("KernelAndDeviceFunc::Run", 45, 6)
    # input: the numpy conversion's 20 (its kernel run included: inside a conversion, input wins);
    # the read: its kernel 6 is op, the other 14 dispatch; python 100 - 40
    assert cats(analyze(sp, tmp_path)) == {"input": 20, "dispatch": 14, "op": 6, "python": 60}


def test_add_of_tensors_converts_nothing_real(runs):
    """tf.add(s, x) of two tensors, 300 times a step: 600 convert_to_tensor events per step, each
    returning its tensor unchanged (no op runs inside): no input at all."""
    m = runs["add-tensors"].modes["eager"]
    assert (m.steps[~m.steps["first"]]["input"] == 0).all()
    a = attribute(load_files(host_trace(runs["add-tensors"], "eager")))
    t = a.table
    conv = np.nonzero(t.name == t.name_id("convert_to_tensor"))[0]
    ws, we = steady(a)
    per_step = np.histogram(t.start[conv], bins=np.r_[ws, we[-1]])[0]
    assert (per_step == 600).all()
    has_child = np.isin(conv, a.parent)
    assert not has_child.any()
    assert (a.cat[conv] == rules.DISPATCH).all()
    assert "numpy-inputs" not in [f.rule for f in find(runs["add-tensors"])]


# ---- C. graph-mode tf.data waits beside independent compute ---------------------

def test_iterator_wait_beside_compute_synthetic(tmp_path):
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("step", 5, 90, tf_function_call="notTraced-nonXla")
    main.event("KernelAndDeviceFunc::Run", 10, 80)
    h.line("tf_data_iterator_get_next/1").event("IteratorGetNextOp::DoCompute", 15, 45)
    compute = h.line("tf_Compute/1")
    compute.event("model/a:MatMul", 12, 28)                        # the step's compute, 12..40
    compute.event("model/b:MatMul", 70, 15)
    # the pipeline's own ops (the map function) are not the step's compute
    h.line("tf_data_private_threadpool/1").event("map/x:MatMul", 20, 35)
    # the wait 15..60 minus the step's compute 12..40: 40..60 is input; the rest of the run is op
    assert cats(analyze(sp, tmp_path)) == {"input": 20, "op": 60, "dispatch": 10, "python": 10}


def test_iterator_wait_inside_a_loop_op_is_input_synthetic(tmp_path):
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("train_function", 5, 90, tf_function_call="notTraced-nonXla")
    main.event("KernelAndDeviceFunc::Run", 10, 80)
    # steps_per_execution: a While op runs the loop whose body pulls from the iterator; the While
    # and the call inside it hold the wait, they are not compute beside it
    h.line("tf_Compute/1").event("while:While", 11, 78)
    h.line("tf_Compute/2").event("while/body/call:StatefulPartitionedCall", 12, 76)
    h.line("tf_Compute/3").event("while/body/IteratorGetNext:IteratorGetNext", 15, 30)
    h.line("tf_Compute/4").event("while/body/call/dense/MatMul:MatMul", 50, 30)
    assert cats(analyze(sp, tmp_path)) == {"input": 30, "op": 50, "dispatch": 10, "python": 10}


def test_iterator_wait_beside_compute_real(runs):
    """data_overlap.py: the batch (4 matmuls in a sequential map) is made while the step's
    independent chain of 24 matmuls runs: the step waited on IteratorGetNext for a large part of
    each step, but its compute ran all along, so almost none of it is input. data_wait.py: the
    pipeline costs more than the chain: the wait after the chain is done is input."""
    for name, expect_input in (("data-overlap", False), ("data-wait", True)):
        a = attribute(load_files(host_trace(runs[name], "function")))
        t = a.table
        ws, we = steady(a)
        wait = np.nonzero(t.name == t.name_id("IteratorGetNextOp::DoCompute"))[0]
        wall = (we - ws).sum()
        waited = (t.end[wait] - t.start[wait]).sum()
        input_ps = a.category_time(ws, we)[:, rules.INPUT].sum()
        assert waited > 0.25 * wall                                # the overlap is there
        # input never exceeds the wait, and is the part after the step's last compute op
        assert input_ps <= waited
        if expect_input:
            assert input_ps > 0.25 * waited
        else:
            assert input_ps < 0.05 * waited
    fs = {f.rule: f for f in find(runs["data-wait"])}
    assert "input-bound" in fs and "numpy-inputs" not in fs
    assert "prefetch" in fs["input-bound"].fix and "num_parallel_calls" in fs["input-bound"].fix


# ---- D. op self time keeps the op's own ParallelFor -----------------------------

def test_worker_self_time_keeps_nested_execution_synthetic(tmp_path):
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 300, step_num=1)
    w = h.line("tf_Compute/1")
    w.event("ExecutorState::Process", 0, 210)
    w.event("model/pool:MaxPool", 10, 100)
    w.event("ParallelFor", 15, 90)                                 # MaxPool's own work
    w.event("ThreadpoolListener::Record", 20, 0)
    w.event("model/relu:Relu", 120, 30)
    w.event("model/call:PartitionedCall", 160, 40)
    w.event("ExecutorState::Process", 165, 30)
    w.event("model/inner:MatMul", 170, 20)                         # an op nested in an op
    m = analyze(sp, tmp_path)
    ops = m.ops.set_index("op")["self_ms_per_step"] / MS
    # MaxPool keeps its ParallelFor: 100; the call loses only the op inside it: 40 - 20
    assert ops.round(6).to_dict() == {"model/pool": 100, "model/relu": 30, "model/call": 20,
                                      "model/inner": 20}


def test_op_self_times_equal_xprof_framework_op_stats_real(runs, tmp_path):
    """maxpool.py in function mode: MaxPool's event holds a ParallelFor for most of its time.
    Every op's self time equals XProf's framework_op_stats on the same trace."""
    raw_to_tool_data = pytest.importorskip("xprof.convert.raw_to_tool_data")
    files = []
    for p in host_trace(runs["maxpool"], "function"):  # XProf writes caches beside the trace
        dst = tmp_path / Path(p).name
        shutil.copy(p, dst)
        files.append(str(dst))
    data = json.loads(raw_to_tool_data.xspace_to_tool_data(files, "framework_op_stats", {})[0])
    table = data[0] if isinstance(data, list) else data
    cols = [c["id"] for c in table["cols"]]
    rows = [dict(zip(cols, [c.get("v") for c in r["c"]])) for r in table["rows"]]
    xprof = {(r["operation"], r["type"]): (r["occurrences"], r["total_self_time"]) for r in rows
             if r["type"] != "IDLE"}
    a = attribute(load_files(files))
    mine = op_totals(a, np.array([a.table.start.min()]),
                           np.array([a.table.end.max() + 1])).to_pandas()
    mine = mine[mine["thread"] == "worker"].set_index(["op", "type"])
    assert ("MaxPool2d", "MaxPool") in xprof
    for key, (n, self_us) in xprof.items():
        assert mine.loc[key, "calls"] == n, key
        assert mine.loc[key, "self_ps"] / 1e6 == pytest.approx(self_us, rel=1e-3, abs=0.01), key


# ---- E. findings: input-bound for any mode on tf.data; conversions only where they happen ----

def test_input_bound_fires_for_a_function_mode_on_tf_data():
    it = ("IteratorGetNext", "IteratorGetNext", "worker", 1, 0.5)
    run = complete(Run(path=None, name="t", modes={"function": make_mode(
        "function", {"op": 2.0, "input": 7.5, "dispatch": 0.5}, ops=[it])}))
    rules_ = {f.rule: f for f in find(run)}
    assert "input-bound" in rules_ and "numpy-inputs" not in rules_
    assert "75 %" in rules_["input-bound"].evidence


def test_slicing_with_python_ints_is_named():
    ops = [("MatMul", "MatMul", "main", 99, 3.0), ("StridedSlice", "StridedSlice", "main", 99, 0.3),
           ("_EagerConst", "_EagerConst", "main", 297, 0.0)]
    run = complete(Run(path=None, name="t", modes={"eager": make_mode(
        "eager", {"op": 3.5, "input": 4.2, "dispatch": 3.1, "python": 3.3}, ops=ops)}))
    f = [f for f in find(run) if f.rule == "numpy-inputs"][0]
    assert f.title == "eager converts slice indices to tensors every step"
    assert "297 conversions per step" in f.evidence and "99 times per step" in f.evidence
    assert "tf.unstack" in f.fix


def test_slices_inside_keras_steps_are_not_the_users_to_unstack():
    """The same conversions and slices inside Keras' own train_on_batch: Keras' code, so the
    finding is about passing tensors, not about w[i]."""
    ops = [("MatMul", "MatMul", "main", 9, 3.0), ("StridedSlice", "StridedSlice", "main", 1, 0.3),
           ("_EagerConst", "_EagerConst", "main", 18, 0.0)]
    run = complete(Run(path=None, name="t", modes={"train_on_batch-eager": make_mode(
        "train_on_batch-eager", {"op": 3.5, "input": 4.2, "dispatch": 3.1, "python": 3.3}, ops=ops)}))
    f = [f for f in find(run) if f.rule == "numpy-inputs"][0]
    assert f.title == "train_on_batch-eager converts its inputs to tensors every step"
    assert "inside Keras' step" in f.evidence and "tf.unstack" not in f.fix
    assert "tf.convert_to_tensor" in f.fix


def test_copies_without_conversions_are_not_a_conversion_finding():
    ops = [("MemcpyH2D", "memcpy", "worker", 1, 2.0), ("Conv2D", "Conv2D", "main", 1, 1.0)]
    run = complete(Run(path=None, name="t", modes={"eager": make_mode(
        "eager", {"op": 3.0, "input": 2.0, "python": 1.0}, ops=ops)}))
    assert "numpy-inputs" not in [f.rule for f in find(run)]


def test_findings_on_real_runs(runs):
    numpy = [f for f in find(runs["sum-numpy"]) if f.rule == "numpy-inputs"]
    assert numpy and "2 conversions per step" in numpy[0].evidence
    assert "numpy-inputs" not in [f.rule for f in find(runs["sum-tensor"])]
    assert "input-bound" not in [f.rule for f in find(runs["data-overlap"])]


# ---- F. XLA compilation events are compile wherever they sit ---------------------

def test_compile_events_without_their_parent_synthetic(tmp_path):
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=0)
    # a trace that starts inside a compilation: the passes are top-level
    main.event("layout-assignment", 0, 10)                          # a listed HLO pass
    main.event("some-new-hlo-pass", 10, 10)                         # unlisted, pass-shaped
    main.event("ThunkEmitter::EmitKernel", 20, 5)
    main.event("LowerTensorsPass", 25, 5)
    main.event("late-annotation", 32, 3)                            # after the last compile event
    main.event("__inference_f_1:__inference_f_1", 40, 40)
    main.event("CpuExecutable::ExecuteAsyncOnStream", 42, 36)
    main.event("user-annotation", 85, 5)                            # after the first run
    m = analyze(sp, tmp_path)
    assert cats(m) == {"compile": 30, "op": 40, "other": 8, "python": 22}
    assert set(m.other["name"]) == {"late-annotation", "user-annotation"}


def test_every_compile_event_name_in_real_xla_traces_is_compile_on_its_own(runs):
    """In the real XLA first steps (maxpool, and the xla modes of tests/data/runs), every event
    nested in a compile event would be compile by itself too, at the top level of a trace that
    started mid-compilation: by a rule, or by the pass-name shape."""
    paths = host_trace(runs["maxpool"], "xla")
    paths += [str(p) for p in (Path(__file__).parent / "data" / "runs").glob(
        "*/xla/host/plugins/profile/*/*.xplane.pb")]
    seen = 0
    for p in paths:
        a = attribute(load_files([p]))
        t = a.table
        nested = a.parent >= 0
        inside = np.nonzero(nested & (a.cat == rules.COMPILE)
                            & (a.cat[np.maximum(a.parent, 0)] == rules.COMPILE))[0]
        for nid in np.unique(t.name[inside]):
            name = t.names[nid]
            if name.startswith("$"):
                continue
            own = rules.own_category(name)
            assert own == rules.COMPILE or (own == rules.UNKNOWN and rules.PASS_SHAPE.match(name)), \
                name
            seen += 1
        assert a.category_time(a.step_start[:1], a.step_end[:1])[0, rules.OTHER] == 0
    assert seen > 50


# ---- G. TF1 Session.run waits for the graph: op, as a tf.function run ------------

def test_session_run_is_op_synthetic(tmp_path):
    sp = Space()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1)
    main.event("SessionRun", 20, 70)
    main.event("ExecutorState::ScheduleReady", 22, 2)
    h.line("tf_Compute/1").event("a:MatMul", 25, 60)
    assert cats(analyze(sp, tmp_path)) == {"op": 70, "python": 30}


def test_v1_session_wait_is_op_like_the_function_run_real(runs):
    run = runs["costly-loop-v1"]
    v1, fn = run.modes["v1-session"], run.modes["function"]
    for m in (v1, fn):
        steady_steps = m.steps[~m.steps["first"]]
        assert (steady_steps["other"] == 0).all(), m.name
        assert (steady_steps["op"] > 0).all(), m.name
    # the graph's 99 MatMuls run on the executor in both
    for m in (v1, fn):
        w = m.ops[(m.ops["thread"] == "worker") & (m.ops["type"] == "MatMul")]
        assert w["calls_per_step"].sum() == pytest.approx(99), m.name


def test_passes_of_a_cut_compilation_are_compile_real():
    """xla-cut: a host trace shorter than XLA's first compilation (maxpool.py, --host-trace-ms
    300). The trace holds HLO passes whose enclosing compile events had not ended when it
    stopped: they sit at the top level of the main thread, and are compile, not other."""
    first = sorted((DATA / "xla-cut" / "xla" / "host").glob("plugins/profile/*/*.xplane.pb"))[0]
    a = attribute(load_files([first]))
    t = a.table
    top_passes = [i for i in np.nonzero((a.parent < 0) & (t.line == a.main_line))[0]
                  if t.names[t.name[i]] in rules.NAME_SETS["XLA_PASS_NAMES"]]
    assert len(top_passes) >= 3
    assert (a.cat[top_passes] == rules.COMPILE).all()
    b = a.timeline.times()
    whole = a.category_time(np.array([b[0]]), np.array([b[-1]]))[0]
    assert whole[rules.OTHER] == 0 and whole[rules.COMPILE] > 0
