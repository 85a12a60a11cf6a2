"""The step timing of ``run`` / ``profile()``'s agent for steps marked per call (a tf.function, a
Keras per-call method, a ``--step-function``), without TensorFlow: a step is the loop's
iteration, from its call's start to the next step call's start, so what the loop does between
calls (its input fetch, the rest of its body) is in the step, as the loop's own timer around
``next(iterator)`` and the call would say. The agent's clock is a fake one the test advances, its
step marker a fake ``Trace`` that records when it is entered and exited; the real captures that
check the same against a script's own perf_counter are in tests/test_run.py."""

from __future__ import annotations

import json
import os
import time
import types
from pathlib import Path

import pytest

from traceinsight.capture import script
from traceinsight.capture.hook import agent as agent_mod
from traceinsight.model import Timing
from traceinsight.stepsource import StepSpan

from xspace_builder import Space


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def advance(self, s: float) -> None:
        self.t += s


class FakeTF:
    """What the agent uses of TensorFlow: the step marker (records its enter / exit times)."""

    def __init__(self, clock: Clock) -> None:
        self.markers: list[dict] = []
        tf = self

        class Trace:
            def __init__(self, name, step_num, _r):
                self.rec = {"step_num": step_num, "enter": None, "exit": None}
                tf.markers.append(self.rec)

            def __enter__(self):
                self.rec["enter"] = clock()

            def __exit__(self, *exc):
                self.rec["exit"] = clock()

        self.profiler = types.SimpleNamespace(experimental=types.SimpleNamespace(Trace=Trace))

    def executing_eagerly(self) -> bool:
        return True


class FakeSession:
    """``compat.LocalTrace`` as far as the agent's thread uses it."""

    def __init__(self) -> None:
        self.stopped = False
        self.error = None

    def stop(self) -> None:
        self.stopped = True

    def path(self) -> str:
        return "trace.xplane.pb"


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(agent_mod, "time", types.SimpleNamespace(
        perf_counter=c, sleep=time.sleep, time=time.time))
    return c


def _agent(tmp_path: Path, clock: Clock, skip: int = 1000, steps: int = 3,
           traced: bool = False) -> agent_mod.Agent:
    a = agent_mod.Agent({"result": str(tmp_path / "agent.json"), "logdir": str(tmp_path),
                         "levels": {}, "skip_steps": skip, "steps": steps})
    a.tf = FakeTF(clock)
    if traced:
        # a session that records from the start (its start and the calibration are not this
        # test's: they are TensorFlow's)
        a.session = FakeSession()
        a.start_asked = True
        a.started.set()
        a._cal_state = 2                                  # noqa: SLF001
        a._enabled = lambda: True                         # type: ignore[method-assign]
    return a


def _finish_untraced(a: agent_mod.Agent, out: Path, skip: int, steps: int) -> dict:
    """The mode ``run`` makes of the agent's record, as if untraced (the steps from
    ``skip_steps`` on are the median's): its timings.json."""
    rec = script.RecordedMode(
        mode="train", into=None, out=out, name="run", stem="train",
        settings={"skip_steps": skip, "steps": steps, "step_function": None, "trace_ms": None,
                  "max_trace_ms": 30000},
        workload={"path": "train.py", "name": "train", "kind": "script", "doc": None},
        command="traceinsight run -- python train.py", entry={"command": "python train.py"})
    state = a.state(exiting=True)
    state["trace"] = {}
    rec.finish(0, res=state)
    return json.loads((rec.mode_path / "timings.json").read_text())


def _loop(a: agent_mod.Agent, clock: Clock, n: int, fetch_s: float, call_s: float,
          rest_s: float = 0.0) -> None:
    """A custom loop of ``n`` iterations: fetch the batch, call the step function, the rest of
    the body."""
    step = a.step_wrapper(lambda: clock.advance(call_s))
    for _ in range(n):
        clock.advance(fetch_s)
        step()
        clock.advance(rest_s)


def test_a_step_is_the_loops_iteration_and_the_last_call_is_none(tmp_path, clock):
    a = _agent(tmp_path, clock)
    _loop(a, clock, 6, fetch_s=0.030, call_s=0.001, rest_s=0.002)
    # every step so far: call k's start to call k+1's start, the fetch and the body included
    assert a.steps_s == pytest.approx([0.033] * 5)
    assert a.step_nums == [0, 1, 2, 3, 4]
    assert a.iterating and a.open is not None      # the sixth call's iteration is still open
    a.close_open()                                  # the script ends: it has no next call
    assert a.steps_s == pytest.approx([0.033] * 5) and a.unended == 1 and a.open is None
    state = a.state()
    assert state["step_calls"] == {"<lambda>": 6} and state["unended_iterations"] == 1
    assert state["step_kinds"] == {"python function": 6}


def test_calls_nested_in_a_step_call_are_not_steps(tmp_path, clock):
    a = _agent(tmp_path, clock)
    inner = a.step_wrapper(lambda: clock.advance(0.001))

    def outer_fn():
        inner()
        inner()
    outer = a.step_wrapper(outer_fn)
    for _ in range(4):
        clock.advance(0.010)
        outer()
    a.close_open()
    assert a.steps_s == pytest.approx([0.012] * 3) and a.kinds == {"python function": 4}


def test_the_agents_work_between_iterations_is_in_neither(tmp_path, clock, monkeypatch):
    """The result file's write at a call's entry (between two iterations, on the script's thread)
    takes its time after one iteration's end and before the next one's start."""
    a = _agent(tmp_path, clock)
    real_save = a.save
    writes = []

    def slow_save(exiting=False):
        writes.append(clock())
        clock.advance(0.004)      # a slow disk
        real_save(exiting)
    monkeypatch.setattr(a, "save", slow_save)
    _loop(a, clock, 10, fetch_s=0.020, call_s=0.001)
    a.close_open()
    assert len(writes) > 1, "the result file was not written between iterations"
    assert a.steps_s == pytest.approx([0.021] * 9)
    assert json.loads((tmp_path / "agent.json").read_text())["steps_s"]


def test_an_iteration_the_agents_thread_worked_in_is_kept_out_of_the_median(tmp_path, clock):
    """The agent's thread runs beside the script: an iteration during which it worked (here: one
    pass of its loop, woken as a start or stop would wake it) is recorded as disturbed, and the
    mode's untraced steps leave it out."""
    a = _agent(tmp_path, clock, skip=1)
    a.start_asked = a.stop_asked = True     # nothing to start or stop: its thread only wakes
    a.started.set()
    a.saved.set()
    step = a.step_wrapper(lambda: clock.advance(0.001))
    for i in range(6):
        clock.advance(0.010)
        step()
        if i == 3:
            gen = a._work_gen                          # noqa: SLF001
            a._ask()                                   # noqa: SLF001
            deadline = time.monotonic() + 10
            while a._work_gen < gen + 2 and time.monotonic() < deadline:   # noqa: SLF001
                time.sleep(0.001)
            assert a._work_gen >= gen + 2              # noqa: SLF001
    a.close_open()
    assert a.disturbed == [3]
    t = _finish_untraced(a, tmp_path, skip=1, steps=3)
    assert t["step_nums"] == [1, 2, 4] and t["step_span"] == "iteration"
    assert t["step_calls"] == ["<lambda>"] and t["details"]["unended_iterations"] == 1


def test_the_traced_window_is_whole_iterations_and_stops_after_the_last(tmp_path, clock):
    """Each traced iteration's marker is entered at its call's start and exited at the next
    call's start; the stop is asked once the window's last iteration has ended (at the next
    call's entry), so the iteration then begun is not traced; the markers touch, never overlap."""
    a = _agent(tmp_path, clock, skip=0, steps=3, traced=True)
    entries = []
    step = a.step_wrapper(lambda: clock.advance(0.001))
    for _ in range(6):
        clock.advance(0.010)
        entries.append(clock())
        step()
    assert a.saved.wait(10)        # the agent's thread stopped the session
    a.close_open()
    markers = a.tf.markers
    assert [m["step_num"] for m in markers] == [0, 1, 2]
    assert [(m["enter"], m["exit"]) for m in markers] == [
        (entries[k], entries[k + 1]) for k in range(3)]
    assert a.traced == [True, True, True, False, False]
    assert a.trace["traced_steps"] == 3


def test_a_script_that_ends_inside_the_window_leaves_its_last_iteration_unrecorded(tmp_path,
                                                                                  clock):
    """The loop ends inside the window: its last call's iteration has no end, so it is no step,
    and its marker is never exited (TensorFlow would record it as a step when it stops); the
    trace's markers are the agent's traced steps."""
    a = _agent(tmp_path, clock, skip=0, steps=5, traced=True)
    _loop(a, clock, 3, fetch_s=0.010, call_s=0.001)
    a.at_exit()
    assert a.traced == [True, True] and a.unended == 1
    assert [m["exit"] is not None for m in a.tf.markers] == [True, True, False]
    assert not a._unended_markers               # noqa: SLF001 - released once the session stopped


class FakeModel:
    callbacks_seen: list = []

    def train_on_batch(self, clock):
        clock.advance(0.002)

    def test_on_batch(self, clock):
        clock.advance(0.001)

    def predict_on_batch(self, clock):
        clock.advance(0.001)

    def predict(self, clock):
        self.train_on_batch(clock)     # its inner calls are no steps

    def evaluate(self, clock):
        self.test_on_batch(clock)

    def fit(self, clock, callbacks=None):
        for b in range(3):
            clock.advance(0.005)       # the batch's fetch: before its begin, not in the step
            for c in callbacks:
                c.on_train_batch_begin(b)
            clock.advance(0.004)
            for c in callbacks:
                c.on_train_batch_end(b, {})


def test_keras_per_call_methods_are_iterations_and_fit_batches_are_unchanged(tmp_path, clock):
    a = _agent(tmp_path, clock)

    class Callback:
        pass
    keras = types.SimpleNamespace(Model=type("Model", (FakeModel,), {}),
                                  callbacks=types.SimpleNamespace(Callback=Callback))
    a._wrap_keras(keras)                           # noqa: SLF001
    m = keras.Model()
    for _ in range(4):
        clock.advance(0.010)
        m.train_on_batch(clock)
    # a fit after the loop: the loop's last call has no next call (its iteration is dropped),
    # and fit's batches are steps from their begin to their end, as before
    m.fit(clock)
    assert a.steps_s == pytest.approx([0.012] * 3 + [0.004] * 3)
    assert a.unended == 1 and a.kinds == {"train_on_batch": 4, "fit batch": 3}
    assert StepSpan.of_kinds(a.kinds) is StepSpan.MIXED


def test_step_span_of_the_kinds():
    assert StepSpan.of_kinds({"tf.function": 3}) is StepSpan.ITERATION
    assert StepSpan.of_kinds({"tf.function": 3, "predict": 1}) is StepSpan.ITERATION
    assert StepSpan.of_kinds({"fit batch": 3}) is StepSpan.BATCH
    assert StepSpan.of_kinds({"marked step": 3}) is StepSpan.MARKED
    assert StepSpan.of_kinds({}) is None


def test_the_steps_note_says_a_step_is_the_loops_iteration():
    import numpy as np

    from traceinsight.analysis.steps import spanned_rule
    rule = "step markers 'train traceinsight' (step_num)"
    t = Timing(steps_s=np.zeros(0), step_span=StepSpan.ITERATION, step_calls=("train_step",))
    assert spanned_rule(rule, t).startswith(
        rule + ": each step is one iteration of the loop: from one train_step call to the next")
    assert spanned_rule(rule, Timing(steps_s=np.zeros(0), step_span=StepSpan.BATCH)) == rule
    assert spanned_rule(rule, None) == rule


def test_hand_marked_steps_drop_the_open_iteration(tmp_path, clock):
    a = _agent(tmp_path, clock)
    _loop(a, clock, 3, fetch_s=0.010, call_s=0.001)
    a.manual = True
    assert a.mark("marked step")
    clock.advance(0.007)
    a.mark("marked step")
    assert a.steps_s == pytest.approx([0.011, 0.011, 0.007]) and a.unended == 1
    assert os.path.exists(tmp_path / "agent.json")


class Pipeline:
    """A producer that runs on while the loop waits (a tf.data pipeline's threads): a batch is
    ready ``every_s`` after the previous one, so a loop that pauses finds the next ones ready."""

    def __init__(self, clock: Clock, every_s: float) -> None:
        self.clock, self.every_s = clock, every_s
        self.ready = clock()

    def fetch(self) -> None:
        self.ready += self.every_s
        if self.ready > self.clock():
            self.clock.t = self.ready       # wait for it
        else:
            self.ready = max(self.ready, self.clock() - 2 * self.every_s)   # a buffer of 2


def test_the_iterations_right_after_a_pause_of_the_agent_are_not_in_the_median(tmp_path, clock,
                                                                               monkeypatch):
    """The agent pauses the loop at a call's entry (here: a slow write of its record, 60 ms);
    its input pipeline runs on meanwhile, so the next iterations find their batches ready and
    are shorter than the loop's own: those that begin within the pause's length after it are
    kept out of the median (disturbed), the rest are the pipeline's 10 ms."""
    a = _agent(tmp_path, clock)
    pipe = Pipeline(clock, 0.010)
    real_save = a.save
    paused = []

    def slow_save(exiting=False):
        if len(a.steps_s) == 8:
            paused.append(a.next_step)      # the iteration that begins after the pause
            clock.advance(0.060)
        real_save(exiting)
    monkeypatch.setattr(a, "save", slow_save)
    monkeypatch.setattr(agent_mod, "SAVE_S", 0.0)
    step = a.step_wrapper(lambda: clock.advance(0.001))
    for _ in range(20):
        pipe.fetch()
        step()
    a.close_open()
    assert paused == [8]
    by_num = dict(zip(a.step_nums, a.steps_s))
    assert by_num[8] < 0.005 and by_num[9] < 0.005      # batches ready: the pause's effect
    assert a.disturbed and a.disturbed[0] == 8 and 9 in a.disturbed
    kept = [s for n, s in by_num.items() if n not in a.disturbed]
    assert kept == pytest.approx([0.010] * len(kept))


def test_the_window_begins_once_the_loop_has_settled_from_the_profilers_start(tmp_path, clock,
                                                                              monkeypatch):
    """The traced blocks of the calibration (40 ms, at the window's first iteration's entry,
    with the session recording) pause the loop: the iterations that find their batches ready
    after it are recorded by the session but not marked; the window's marked iterations are
    the loop's own 10 ms."""
    a = _agent(tmp_path, clock, skip=2, steps=3, traced=True)
    a._cal_state = 1                                      # noqa: SLF001
    a.cal_untraced = [0.001]

    def traced_blocks(kind):
        clock.advance(0.040)
        return [0.001]
    monkeypatch.setattr(a, "_calibration", traced_blocks)
    pipe = Pipeline(clock, 0.010)
    step = a.step_wrapper(lambda: clock.advance(0.001))
    for _ in range(14):
        pipe.fetch()
        step()
    assert a.saved.wait(10)
    a.close_open()
    traced = [s for s, t in zip(a.steps_s, a.traced) if t]
    assert len(traced) == 3 and traced == pytest.approx([0.010] * 3)
    first = a.traced.index(True)
    assert first > 2 and a.trace["started_before_step"] == first
    assert a.cal_traced == [0.001]


def test_iteration_markers_touch_and_split_what_crosses_their_edge(tmp_path):
    """The trace of two loop iterations as the agent marks them: each marker from a train_step
    call's start to the next's (they touch, never nest: two steps, not folded into one), the
    call first, then the iterator's wait for the next batch, split into its categories. A Python
    frame of the next call's wrapper, opened before the edge and closed after it (a
    python-tracer trace; ``run``'s own traces have none), is neither lost nor counted twice: the
    markers are kept out of the nesting, and the frame, crossing the next call's TraceMe, is
    too, its time each step's python on its side of the edge."""
    from traceinsight.analysis.mode import analyze_mode
    from traceinsight.model import CATEGORIES
    from traceinsight.stepsource import StepSource
    sp = Space()
    sp.task_environment(python_level=1)
    main = sp.host().line("python")
    for k in range(2):
        t = 100 * k
        main.event(agent_mod.STEP_MARKER, t, 100, step_num=5 + k, _r=1)
        main.event("train_step", t + 2, 20, tf_function_call="notTraced-nonXla")
        main.event("KernelAndDeviceFunc::Run", t + 5, 15)
        main.event("EagerLocalExecute: IteratorGetNext", t + 30, 60)
        main.event("IteratorGetNextOp::DoCompute", t + 31, 58)
        main.event("Iterator::Root", t + 32, 56)
    main.event("$agent.py:900 __call__", 95, 10)     # the wrapper of the call at 100
    m = analyze_mode("m", [sp.write(tmp_path / "h.xplane.pb")])
    assert m.step_source is StepSource.MARKERS_STEP_NUM
    assert m.steps["step_num"].tolist() == [5, 6]
    assert m.steps["wall_ms"].tolist() == pytest.approx([0.1, 0.1])
    # by hand, each step (µs): the call's kernel run 15 op, the rest of the call (3 + 2) and of
    # the iterator's eager execute (1 + 1) dispatch, the iterator's compute 58 input (waiting on
    # tf.data), the rest python: 2 before the call, 8 between it and the fetch, 10 after the
    # fetch (the frame across the edge lies there, 5 on each side: no event of its own)
    for k in range(2):
        got = {c: round(float(m.steps[c].iloc[k]) * 1e3, 6) for c in CATEGORIES
               if m.steps[c].iloc[k]}
        assert got == {"op": 15, "dispatch": 7, "input": 58, "python": 20}


def test_a_write_short_beside_the_iteration_leaves_every_iteration_in_the_median(tmp_path, clock,
                                                                                 monkeypatch):
    """A write of the agent's record at every call's entry (1 ms, between 100 ms iterations):
    under ``PAUSE_SHARE`` of an iteration, so no iteration is kept out for it, and none holds
    its time."""
    a = _agent(tmp_path, clock)
    real_save = a.save

    def save(exiting=False):
        clock.advance(0.001)
        real_save(exiting)
    monkeypatch.setattr(a, "save", save)
    monkeypatch.setattr(agent_mod, "SAVE_S", 0.0)
    _loop(a, clock, 8, fetch_s=0.099, call_s=0.001)
    a.close_open()
    # (the write before the first call's iteration has no iteration to be measured against)
    assert a.steps_s == pytest.approx([0.100] * 7) and a.disturbed in ([], [0])


def test_the_traced_calls_arguments_are_recorded_for_the_retrace_table(tmp_path, clock):
    """A tf.function step call's positional arguments are recorded as ``capture`` records the
    inputs it feeds (``loading.SignatureLog``), for the traced window's calls only (the untraced
    steps carry none of that work); a call with keyword arguments is not recorded (an input
    signature binds positional ones); timings.json holds them where one function made the
    steps, and the retrace table's signature is read from them."""
    import numpy as np

    from traceinsight.analysis.retraces import input_signature, signature_changes
    from traceinsight.capture.loading import SignatureLog

    def calls(a, n, kwargs=None):
        for i in range(n):
            clock.advance(0.010)
            if a.call_step("tf.function", "train_step"):
                a.log_args("train_step", (np.zeros((4 + i % 3, 8), np.float32), 0.1 / (i + 1)),
                           kwargs or {})
            clock.advance(0.001)

    (tmp_path / "u").mkdir()
    untraced = _agent(tmp_path / "u", clock)
    untraced._signature_log = SignatureLog                 # noqa: SLF001
    calls(untraced, 5)
    assert untraced.state()["input_signatures"] == {}

    a = _agent(tmp_path, clock, skip=0, steps=50, traced=True)
    a._signature_log = SignatureLog                        # noqa: SLF001
    calls(a, 6)
    calls(a, 2, kwargs={"training": True})
    recorded = a.state()["input_signatures"]["train_step"]
    assert recorded["steps"] == 6 and len(recorded["distinct"]) == 6
    assert input_signature(recorded) == \
        "[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([], tf.float32)]"
    assert [(c["argument"], c["kind"]) for c in signature_changes(recorded)] == \
        [(1, "shape"), (2, "python")]
    a.close_open()
    t = _finish_untraced(a, tmp_path, skip=0, steps=50)
    assert t["input_signatures"] == json.loads(json.dumps(recorded))
