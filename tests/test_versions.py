"""Stock traces of every TensorFlow version the tests hold (tests/data/versions/<tf>/<case>/, made by
tools/make_version_traces.py with TF's own profiler APIs, not by traceinsight): each loads and
analyses, its steps are found as that version's Keras marks them, its categories sum to every step,
the step markers agree with the perf_counter times the recording script took of the same steps, the
event names only some versions write are placed, and XLA compilation that a version writes no
event for is derived from the trace (labelled), never counted as op. No assertion names a CPU
kernel (oneDNN names graph ops differently on different CPUs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from traceinsight.analysis import rules, xla_compile
from traceinsight.analysis.cache import from_dict, to_dict
from traceinsight.analysis.events import load_files
from traceinsight.analysis.mode import analyze_mode
from traceinsight.cli import main
from traceinsight.model import CATEGORIES, CompileKind

from xspace_builder import Space

DATA = Path(__file__).parent / "data" / "versions"
VERSIONS = ("2.12.1", "2.13.1", "2.14.1", "2.15.1", "2.16.2", "2.21.0")
CASES = ("function", "xla", "fit", "session", "data")
ALL = [(v, c) for v in VERSIONS for c in CASES]
KERAS2 = ("2.12.1", "2.13.1", "2.14.1", "2.15.1")   # tf.keras is Keras 2: fit_one is recorded
MS = 1e-3  # one µs in ms (synthetic traces)


def _files(version: str, case: str) -> list[Path]:
    return sorted((DATA / version / case).rglob("*.xplane.pb"))


def _record(version: str, case: str) -> dict:
    return json.loads((DATA / version / case / "steps.json").read_text())


_MODES: dict = {}


def _mode(version: str, case: str):
    if (version, case) not in _MODES:
        _MODES[(version, case)] = analyze_mode(f"{version}/{case}", _files(version, case))
    return _MODES[(version, case)]


def _names(version: str, case: str) -> set[str]:
    t = load_files(_files(version, case))
    return {t.names[i] for i in np.unique(t.name).tolist()}


def test_every_version_and_case_is_committed():
    for version, case in ALL + [(v, "fit_one") for v in KERAS2]:
        assert len(_files(version, case)) == 1, (version, case)
        rec = _record(version, case)
        assert rec["tensorflow"] == version and rec["case"] == case
        # small: no python tracer
        assert _files(version, case)[0].stat().st_size < 300_000


@pytest.mark.parametrize("version,case", ALL)
def test_loads_analyses_and_categories_sum_to_each_step(version, case):
    m = _mode(version, case)
    assert m.ok, m.error
    assert m.host_events_recorded
    steps = m.table("steps")
    assert len(steps) >= 3
    assert m.step_rule.startswith("step markers ")
    total = sum(np.asarray(steps[c], dtype=float) for c in CATEGORIES)
    np.testing.assert_allclose(total, steps["wall_ms"], rtol=0, atol=1e-6)
    for c in CATEGORIES:
        assert (np.asarray(steps[c]) >= 0).all(), c
    # every event of these traces has a rule: no step holds time in "other", but for the XLA first
    # call's compile and setup where the version writes no compile event (not separable)
    excess = m.compile_estimate.excess_ms if m.compile_estimate is not None else 0.0
    assert float(np.sum(steps["other"])) == pytest.approx(excess, abs=1e-6)


@pytest.mark.parametrize("version,case", ALL)
def test_step_markers_match_the_scripts_own_step_times(version, case):
    """The step windows (TF's own markers) against time.perf_counter taken in the recording process
    inside the same steps: the marker holds the timed code plus the profiler's and callbacks' own
    cost around it."""
    steps = _mode(version, case).table("steps")
    timed = {s["step_num"]: s["ms"] for s in _record(version, case)["steps"]}
    assert set(steps["step_num"].tolist()) <= set(timed)
    for num, wall in zip(steps["step_num"].tolist(), steps["wall_ms"].tolist()):
        assert wall >= timed[num] - 0.05, (num, wall, timed[num])
        assert wall - timed[num] <= 1.0 + 0.1 * timed[num], (num, wall, timed[num])


@pytest.mark.parametrize("version", VERSIONS)
def test_keras_fit_steps_as_each_keras_marks_them(version):
    m = _mode(version, "fit")
    rec = _record(version, "fit")
    names = _names(version, "fit")
    nums = m.table("steps")["step_num"].tolist()
    # profile_batch (lo, hi) counts batches from 1: the profiled batches are 0-based lo-1 .. hi-1
    lo, hi = rec["profile_batch"]
    if rec["keras"].startswith("2."):
        # Keras 2: the fit loop's own "train" markers around train_function calls. The first
        # profiled batch's marker opened before the profiler started and the last one's closed
        # after it stopped: only the inner batches are in the trace
        assert "'train'" in m.step_rule
        assert "train_function" in names and "Profiled batch" not in names
        assert nums == list(range(lo, hi - 1))
    else:
        # Keras 3: the TensorBoard callback marks "Profiled batch" around multi_step_on_iterator
        assert "'Profiled batch'" in m.step_rule
        assert "multi_step_on_iterator" in names and "train_function" not in names
        assert nums == list(range(lo - 1, hi))
    # the first batches of fit (tracing) are outside the profile window: every step is steady
    assert not m.table("steps")["first"].any()


@pytest.mark.parametrize("version", KERAS2)
def test_one_profiled_keras_2_batch_is_its_function_call(version):
    """The TensorBoard callback profiling one Keras 2 batch records that batch's train_function call
    and no step marker: the call is the step, not the trace's whole span, and
    its wall agrees with the callback-side perf_counter of the same batch (which also holds
    Keras' own callbacks around the call: at most a little longer)."""
    m = _mode(version, "fit_one")
    rec = _record(version, "fit_one")
    assert m.ok and m.step_source.value == "tf_function_calls"
    assert "'train_function'" in m.step_rule
    steps = m.table("steps")
    assert len(steps) == 1
    batch = rec["profile_batch"][0] - 1        # profile_batch counts from 1
    timed = next(s["ms"] for s in rec["steps"] if s["step_num"] == batch)
    wall = float(steps["wall_ms"][0])
    assert 0.8 * timed <= wall <= timed + 0.05
    # the graph runs on executor threads while the calling thread waits: op, not dispatch (the
    # call's dispatch may hold the profiler's own start-up, which the callback runs in the batch)
    assert float(steps["op"][0]) > max(0.5 * wall, float(steps["dispatch"][0]))
    total = sum(float(steps[c][0]) for c in CATEGORIES)
    assert total == pytest.approx(wall, abs=1e-6)


def test_names_only_some_versions_write_are_placed():
    seen = {(v, c): _names(v, c) for v, c in ALL}
    listener = {k for k, names in seen.items()
                if any(n.startswith("ThreadpoolListener::") for n in names)}
    assert listener == {("2.21.0", c) for c in CASES}   # written by 2.21 only
    process_async = {k for k, names in seen.items()
                     if any(n.startswith("ExecutorState::ProcessAsync::") for n in names)}
    assert ("2.15.1", "data") in process_async and ("2.15.1", "fit") in process_async
    for names in seen.values():
        for n in names:
            if n.startswith(("ThreadpoolListener::", "ExecutorState::ProcessAsync::")):
                assert rules.own_category(n) == rules.OP, n
    for (v, c), names in seen.items():
        assert {n for n in names if "Compiler::" in n} == set() or (v, c) == ("2.21.0", "xla")


def test_tf1_session_steps_are_op_and_python():
    for version in VERSIONS:
        steps = _mode(version, "session").table("steps")
        steady = ~steps["first"]
        assert (steps["op"][steady] > 0).all()
        assert float(np.sum(steps["tracing"])) == 0.0 and float(np.sum(steps["compile"])) == 0.0


def test_tf_data_stall_is_input():
    """The pipeline's map sleeps 20 ms per element: once the first element's head start is used,
    the steps wait on it, and that wait is input (the step's compute is far shorter)."""
    for version in VERSIONS:
        steps = _mode(version, "data").table("steps")
        later = np.asarray(steps["step_num"]) >= 2
        assert (np.asarray(steps["input"])[later] > 10.0).all(), version
        assert (np.asarray(steps["input"])[later] > 0.5 * np.asarray(steps["wall_ms"])[later]).all()


# ---- XLA compilation without compile events --------------------------------------------------

NO_COMPILE_EVENTS = ("2.12.1", "2.13.1", "2.14.1", "2.15.1", "2.16.2")


@pytest.mark.parametrize("version", NO_COMPILE_EVENTS)
def test_xla_compile_not_separable_where_the_trace_writes_no_compile_event(version):
    """The first call's op time beyond the steady calls' is compile and the function's first-run
    setup, which the trace cannot split (their independent measure: tools/measure_xla_compile.py):
    it is other, labelled, never op and never a compile figure the trace cannot defend."""
    m = _mode(version, "xla")
    assert not any("Compiler::" in n for n in _names(version, "xla"))
    est = m.compile_estimate
    assert est is not None and est.kind is CompileKind.NOT_SEPARABLE
    (call,) = est.calls
    assert call.function == "train_step" and call.step_num == 0 and call.compile_ms is None
    steps = m.table("steps")
    first = steps.take(np.nonzero(steps["step_num"] == 0)[0])
    assert float(first["compile"][0]) == 0.0
    assert float(first["other"][0]) == pytest.approx(est.excess_ms, abs=1e-6)
    assert float(first["op"][0]) == pytest.approx(call.steady_op_ms, rel=0.05, abs=0.2)
    # against the recording script's perf_counter: the excess is inside the first step, past tracing
    timed0 = _record(version, "xla")["steps"][0]["ms"]
    assert 0 < est.excess_ms < timed0 - float(first["tracing"][0])
    assert any(n.startswith("compile not separable") for n in m.notes)


@pytest.mark.parametrize("version", NO_COMPILE_EVENTS)
def test_the_excess_moves_from_op_to_other_and_nothing_else(version, monkeypatch):
    after = _mode(version, "xla").table("steps")
    monkeypatch.setattr(xla_compile, "estimate",
                        lambda table, main, recorded, outside, tl, s, n: (tl, None))
    before = analyze_mode("before", _files(version, "xla")).table("steps")
    assert float(before["other"][0]) == 0.0      # what the trace alone gave: compile in op
    np.testing.assert_allclose(after["op"] + after["other"], before["op"], atol=1e-6)
    for c in ("dispatch", "tracing", "compile", "input", "python"):
        np.testing.assert_allclose(after[c], before[c], atol=1e-6)


def test_xla_compile_recorded_by_2_21_is_left_as_recorded():
    m = _mode("2.21.0", "xla")
    assert m.compile_estimate is None
    assert float(m.table("steps")["compile"][0]) > 0
    assert not any(n.startswith("compile not") for n in m.notes)


def test_the_excess_on_a_trace_that_records_compile_is_it_plus_setup(monkeypatch):
    """On TF 2.21's trace the compile events are the truth. With them read as op (as if the version
    wrote none), the first call's excess covers the recorded compilation and the call's other
    one-time setup, which the recorded trace shows as the first call's op beyond the steady op."""
    rec = _mode("2.21.0", "xla")
    recorded = rec.table("steps")
    real = rules.own_category
    monkeypatch.setattr(rules, "own_category", lambda n, dev=False: rules.OP
                        if real(n, dev) == rules.COMPILE else real(n, dev))
    hidden = analyze_mode("no compile events", _files("2.21.0", "xla"))
    est = hidden.compile_estimate
    assert est is not None and est.kind is CompileKind.NOT_SEPARABLE
    compile_ms, op0 = float(recorded["compile"][0]), float(recorded["op"][0])
    steady_op = float(np.median(recorded["op"][1:]))
    assert est.excess_ms == pytest.approx(compile_ms + op0 - steady_op, rel=0.02)
    assert compile_ms < est.excess_ms


def _xla_without_compile_events(later_calls: int) -> Space:
    sp = Space()
    main = sp.host().line("python")
    main.event("train", 0, 1000, step_num=0)
    main.event("f", 10, 980, tf_function_call="traced-xla", tracing_count=1)
    main.event("tf.function-graph_building", 20, 180)
    main.event("TFE_Py_ExecuteCancelable", 300, 680)
    main.event("EagerExecute", 310, 660)
    main.event("EagerLocalExecute: __inference_f_2", 320, 640)
    main.event("EagerKernelExecute", 330, 625)
    main.event("__inference_f_2:__inference_f_2", 340, 610)
    for i in range(later_calls):
        t = 1000 + 100 * i
        main.event("train", t, 100, step_num=i + 1)
        main.event("f", t + 10, 80, tf_function_call="notTraced-xla", tracing_count=1)
        main.event("TFE_Py_ExecuteCancelable", t + 20, 60)
        main.event("EagerExecute", t + 25, 50)
        main.event("EagerLocalExecute: __inference_f_2", t + 30, 40)
        main.event("EagerKernelExecute", t + 35, 30)
        main.event("__inference_f_2:__inference_f_2", t + 40, 20 + i)   # op 20, 21, 22 µs
    return sp


def _cats(m, i):
    steps = m.table("steps")
    return {c: round(float(steps[c][i]) / MS, 6) for c in CATEGORIES if steps[c][i]}


def test_not_separable_compile_by_hand(tmp_path):
    m = analyze_mode("x", [_xla_without_compile_events(3).write(tmp_path / "h.xplane.pb")])
    # first call: the launch's 610 µs of op, minus the median op of the later calls (21 µs) =
    # 589 µs of compile and first-run setup, unsplit: other, taken from the launch's start; 21 µs
    # stay op
    assert _cats(m, 0) == {"tracing": 370, "other": 589, "op": 21, "python": 20}
    assert _cats(m, 1) == {"dispatch": 60, "op": 20, "python": 20}
    est = m.compile_estimate
    assert est.kind is CompileKind.NOT_SEPARABLE and est.excess_ms == pytest.approx(589 * MS)
    assert est.derived_ms == 0.0
    (c,) = est.calls
    assert (c.first_op_ms, c.steady_op_ms, c.step_num) == (pytest.approx(610 * MS),
                                                          pytest.approx(21 * MS), 0)
    # the flag travels through the analysis cache's JSON
    back = from_dict(json.loads(json.dumps(to_dict(m, ["k"]))), ["k"], None)
    assert back is not None and back.compile_estimate == est
    assert back.compile_estimate.kind is est.kind is CompileKind.NOT_SEPARABLE   # typed, both ways
    # a damaged estimate in a cache file is not shown: the entry is analysed again
    for field, bad in (("compile_ms", "1e3"), ("first_op_ms", None), ("compile_ms", float("inf")),
                       ("step_num", 1.5), ("kind", "whatever")):
        data = json.loads(json.dumps(to_dict(m, ["k"])))
        (data["compile_estimate"] if field == "kind" else data["compile_estimate"]["calls"][0])[field] = bad
        assert from_dict(data, ["k"], None) is None, field


def test_compile_not_recorded_without_a_later_call(tmp_path):
    m = analyze_mode("x", [_xla_without_compile_events(0).write(tmp_path / "h.xplane.pb")])
    # nothing to compare with: the launch's time (compilation and run unsplit) is other, not op
    assert _cats(m, 0) == {"tracing": 370, "other": 610, "python": 20}
    est = m.compile_estimate
    assert est.kind == "not recorded" and est.calls[0].compile_ms is None
    assert est.label.startswith("compile not recorded")
    assert any(n.startswith("compile not recorded") for n in m.notes)


def test_analyze_labels_the_compile_not_separable(capsys):
    assert main(["analyze", str(DATA / "2.15.1" / "xla")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "note: compile not separable (the trace holds no XLA compile events)" in out
    assert main(["analyze", str(DATA / "2.21.0" / "xla")]) == 0
    assert "not separable" not in capsys.readouterr().out


# ---- TensorFlow before 2.12: a function's run has no event of its own on the calling thread ------

def _fit_call_before_2_12(with_run_event: bool = False, run_event_elsewhere: bool = False) -> Space:
    """One Keras 2 ``train_function`` call as a TF 2.1x (before 2.12) CPU trace from the TensorBoard
    callback holds it (one profiled batch: no ``train`` marker): the Python thread waits in
    ``EagerKernelExecute`` (nothing inside it) while the graph's ops run on ``tf_Compute`` threads
    under ``ExecutorState::Process``. ``with_run_event``: the same call as 2.12+ write it
    (``KernelAndDeviceFunc::Run`` inside ``EagerKernelExecute``); ``run_event_elsewhere``: a
    kernel run on another thread of the host, outside the call."""
    sp = Space()
    host = sp.host()
    main = host.line("python")
    main.event("batch_begin_callbacks", 0, 40)          # Keras' own Python around the call (no rule)
    main.event("train_function", 50, 1000, tf_function_call="notTraced-nonXla", tracing_count=1)
    main.event("TFE_Py_ExecuteCancelable", 60, 980)
    main.event("EagerExecute: __inference_train_function_1234", 70, 960)
    main.event("EagerLocalExecute: __inference_train_function_1234", 80, 940)
    main.event("ValidateInputTypeAndPlacement", 85, 5)
    main.event("EagerKernelExecute", 100, 900)
    if with_run_event:
        main.event("KernelAndDeviceFunc::Run", 110, 880)
    main.event("TFE_DeleteTensorHandle", 1030, 10)
    for k, t in enumerate((120, 400, 700)):
        ex = host.line(f"tf_Compute/{k}")
        ex.event("ExecutorState::Process", t, 250)
        ex.event(f"model/conv2d_{k}/Conv2D:Conv2D", t + 10, 230)
    main.event("batch_end_callbacks", 1060, 30)
    if run_event_elsewhere:
        host.line("python2").event("KernelAndDeviceFunc::Run", 5000, 10)
    return sp


def test_a_function_run_before_2_12_is_op_and_one_call_is_the_step(tmp_path):
    """By hand: the step is the one train_function call, 1000 µs (XProf takes the same), not the
    trace's 1090 µs span. Inside it the calling thread's wait in EagerKernelExecute, 900 µs, is the
    graph running: op, as KernelAndDeviceFunc::Run is where TF writes it; the rest is the call's
    dispatch (1000 - 900 = 100 µs: the call, the C API, EagerExecute, EagerLocalExecute,
    ValidateInputTypeAndPlacement, TFE_DeleteTensorHandle)."""
    m = analyze_mode("old", [_fit_call_before_2_12().write(tmp_path / "old" / "h.xplane.pb")])
    assert m.step_source.value == "tf_function_calls" and "'train_function'" in m.step_rule
    assert _cats(m, 0) == {"op": 900, "dispatch": 100}
    # the same call as 2.12+ write it: op 880 (the run event), dispatch 120
    new = analyze_mode("new", [_fit_call_before_2_12(True).write(tmp_path / "new" / "h.xplane.pb")])
    assert _cats(new, 0) == {"op": 880, "dispatch": 120}
    assert rules.own_category("EagerExecute: __inference_train_function_1234") == rules.DISPATCH


def test_kernel_execute_keeps_dispatch_where_the_version_writes_the_run_event(tmp_path):
    """In a trace that holds KernelAndDeviceFunc::Run (2.12+), an EagerKernelExecute with nothing
    inside it is not taken for a kernel run: the rule is for traces without the run event."""
    # another thread of the same host records a kernel run
    sp = _fit_call_before_2_12(run_event_elsewhere=True)
    m = analyze_mode("mixed", [sp.write(tmp_path / "h.xplane.pb")])
    steps = m.table("steps")
    assert float(steps["op"][0]) == 0.0


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_names_its_kernel_run(version):
    """The versions the table says write KernelAndDeviceFunc::Run do, in the function case."""
    assert rules.KERNEL_RUN in _names(version, "function")


# ---- messages and settings that differ between versions -------------------------------------------

def test_tf_use_legacy_keras_is_set_only_where_keras_is_keras_3(monkeypatch):
    """TF 2.15 with TF_USE_LEGACY_KERAS=1 and no tf_keras breaks tf.keras ("Keras cannot be
    imported"): a Keras 2 mode sets it only where ``keras`` is Keras 3 (TF 2.16+)."""
    from traceinsight.capture import compat
    for major, expected in ((2, None), (3, "1"), (None, "1")):
        monkeypatch.setattr(compat, "_keras_major", lambda major=major: major)
        env: dict[str, str] = {}
        compat.legacy_keras_env(env)
        assert env.get("TF_USE_LEGACY_KERAS") == expected, major


def test_a_function_modes_error_is_its_message_not_a_quoted_line():
    """The message TF 2.12 - 2.21 give an error raised while a tf.function traces (copied from
    2.12.1, 2.15.1 and 2.21.0: the same form) quotes the frames and then the error: the line shown
    is the error's type and message, not a quoted source line."""
    from traceinsight.capture.loading import one_line
    quoted = ValueError('in user code:\n\n    File "/w/model.py", line 7, in step  *\n        raise '
                        'ValueError("boom: the shapes do not fit")\n\n    ValueError: boom: the shapes '
                        'do not fit\n')
    assert one_line(quoted) == "ValueError: boom: the shapes do not fit"
    framed = ValueError('in user code:\n\n    File "/x/traceback_utils.py", line 153, in error_handler\n'
                        '        filtered_tb = _process_traceback_frames(e.__traceback__)\n\n'
                        "    ValueError: Dimensions must be equal, but are 2 and 3\n")
    assert one_line(framed) == "ValueError: Dimensions must be equal, but are 2 and 3"


def test_the_supported_range_is_said_as_compat_says_it():
    """compat.SUPPORTED_RANGE is the range's one wording: README's sections and pyproject.toml's
    comment say the same, and no other range is left there."""
    from traceinsight.capture import compat
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    for section in ("## I already have TensorFlow", "## Supported TensorFlow versions"):
        body = readme.split(section, 1)[1].split("\n## ", 1)[0]
        assert f"TensorFlow {compat.SUPPORTED_RANGE}" in body, section
    capture = (root / "docs" / "capture.md").read_text()
    assert f"TensorFlow {compat.SUPPORTED_RANGE} " in capture.split("The command runs as given", 1)[1][:200]
    pyproject = (root / "pyproject.toml").read_text()
    assert f"need none), {compat.SUPPORTED_RANGE}\n" in pyproject
    architecture = (root / "ARCHITECTURE.md").read_text()
    assert f"TF {compat.SUPPORTED_RANGE}, `SUPPORTED_RANGE`" in architecture
    old = {f"2.{n} - 2.21" for n in range(0, 30)} - {compat.SUPPORTED_RANGE}
    for text in (readme, capture, pyproject, architecture):
        assert not [o for o in old if o in text]


def _minor(version: str) -> tuple[int, int] | None:
    from traceinsight.capture import compat
    return compat.version_tuple(version)


def test_the_texts_and_lists_that_cannot_be_derived_span_compat_s_range():
    """What cannot read compat at run time agrees with it: README's version table runs from
    compat.OLDEST to compat.NEWEST, pyproject's comment lines do too and its ``cpu`` extra pins the
    newest, and the version lists of the tools and tests (tools/make_tf_envs.py, this file's
    committed traces, test_old_tf's oldest) start at OLDEST and end at NEWEST."""
    import re

    from traceinsight.capture import compat
    root = Path(__file__).resolve().parents[1]
    oldest, newest = (f"{v[0]}.{v[1]}" for v in (compat.OLDEST, compat.NEWEST))
    readme = (root / "README.md").read_text()
    table = readme.split("## Supported TensorFlow versions", 1)[1].split("\n## ", 1)[0]
    rows = [r.split("|")[1].strip() for r in table.splitlines() if re.match(r"^\| \d", r)]
    assert rows[0].split(" - ")[0] == oldest and rows[-1].split(" - ")[-1] == newest, rows
    pyproject = (root / "pyproject.toml").read_text()
    lines = re.findall(r"^#   TF (\S+)(?: - (\S+))? ", pyproject, re.M)
    assert lines[0][0] == oldest and (lines[-1][1] or lines[-1][0]) == newest, lines
    pin = re.search(r'^cpu = \["tensorflow-cpu==(\S+?)"', pyproject, re.M).group(1)
    assert _minor(pin) == compat.NEWEST
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_tf_envs", root / "tools" / "make_tf_envs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for versions in (tool.VERSIONS, VERSIONS):
        assert _minor(versions[0]) == compat.OLDEST and _minor(versions[-1]) == compat.NEWEST, versions
    old_tf = re.search(r'^OLDEST = "(\S+)"', (root / "tests" / "test_old_tf.py").read_text(), re.M).group(1)
    assert _minor(old_tf) == compat.OLDEST


PYTHON_TRACED = ("2.12.1", "2.13.1", "2.14.1", "2.15.1", "2.16.2")   # 2.21 drops the level asked


@pytest.mark.parametrize("version", PYTHON_TRACED)
def test_python_frames_stand_on_the_thread_that_ran_them(version):
    """The eager_python case: the python tracer on, one call of ``eager_step`` inside each marked
    step. 2.12 and 2.13 write the frames on an unnamed line of their own (the thread's id as a
    signed 32-bit int); read as the thread's, every step holds exactly one call, as the script
    made, and the frames come out as hotspots (before, 2.12 / 2.13 gave none)."""
    mode = _mode(version, "eager_python")
    steps = _record(version, "eager_python")["steps"]
    assert len(mode.steps) == len(steps)
    hot = mode.hotspots
    row = hot[hot["function"] == "eager_step"].iloc[0]
    assert row["calls_per_step"] == 1
    # the frame lies inside its step: its time is at most the step's, as the script timed it
    assert 0 < row["inclusive_ms"] <= max(s["ms"] for s in steps)


def test_a_thread_written_as_two_lines_is_read_as_one():
    """The unnamed line joins the named one whose id agrees modulo 2**32, and no other line."""
    from traceinsight.analysis.events import thread_lines
    heads = [(-914502589, 5, "", "", 3), (7, 1, "", "", 2), (3380464707, 1, "python", "", 4),
             (-5, 1, "", "", 1)]
    assert thread_lines(heads) == [[1], [0, 2], [3]]
