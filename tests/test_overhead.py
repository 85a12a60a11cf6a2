"""The profiler's cost taken out of the breakdown (``analysis/overhead.py``), on synthetic traces
and timings whose right answers are computed by hand (times in µs), and on the committed runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder
from traceinsight.analysis.mode import analyze_mode
from traceinsight.analysis.overhead import correct
from traceinsight.derive import complete
from traceinsight.model import CATEGORIES, Calibration, CorrectionKind, Run, Timing
from traceinsight.report.data import report_data

from xspace_builder import Space

RUNS = Path(__file__).parent / "data" / "runs"
MS = 1e-3      # one µs in ms


def space(calibration: bool = True) -> Space:
    """Three identical 100 µs steps. Each: TFE_Py_FastPathExecute_C 10–50 (a root: python) around
    EagerExecute 15–45 around EagerLocalExecute 16–44 around the kernel 20–40 (op 20 µs, a
    zero-length MemoryAllocation at 30 inside it); tf.constant 60–70 (input 10 µs) around its
    EagerExecute 62–68 and kernel 63–66; a zero-length MemoryDeallocation at 80 in a gap; on a
    worker thread of the same host, an op 25–30.
    Exclusive split: op 20, dispatch 20, input 10, python 50.
    Where each event's recording cost lands (its parent's category; a zero-length one's instant;
    another thread's: the main thread's category at its instant): python 3 (the two roots, the
    deallocation in a gap), dispatch 3 (EagerExecute, EagerLocalExecute, the kernel: their parents
    are dispatch), op 2 (the allocation inside the kernel, the worker's op while the main thread
    is in the kernel), input 2 (tf.constant's EagerExecute and kernel). Before the steps, one
    calibration window 0–8 holding two calls of two events each: 2 events per call. An event on
    a line of another plane counts nowhere."""
    sp = Space()
    sp.task_environment()
    host = sp.host()
    main = host.line("python")
    worker = host.line("tf_Compute/1")
    if calibration:
        main.event(runfolder.CALIBRATION_MARKER, 0, 8)
        for t in (1, 4):
            main.event("TFE_Py_FastPathExecute_C", t, 2)
            main.event("EagerExecute", t + 0.5, 1, eager_op="AddV2", is_func=0)
    for i, t0 in enumerate((100, 200, 300)):
        main.event("train", t0, 100, step_num=i + 1, _r=1)
        main.event("TFE_Py_FastPathExecute_C", t0 + 10, 40)
        main.event("EagerExecute", t0 + 15, 30, eager_op="MatMul", is_func=0)
        main.event("EagerLocalExecute: MatMul", t0 + 16, 28)
        main.event("KernelAndDeviceFunc::Run", t0 + 20, 20)
        main.event("MemoryAllocation", t0 + 30, 0, bytes_allocated=1024)
        main.event("tf.constant", t0 + 60, 10)
        main.event("EagerExecute", t0 + 62, 6, eager_op="_EagerConst")
        main.event("KernelAndDeviceFunc::Run", t0 + 63, 3)
        main.event("MemoryDeallocation", t0 + 80, 0)
        worker.event("model/Relu:Relu", t0 + 25, 5)
    sp.plane("/host:CPU").line("tf_Compute/9").event("model/Relu:Relu", 125, 5)   # another plane
    return sp


def timing(untraced_us: float, calibration: Calibration | None) -> Timing:
    return Timing(steps_s=np.full(9, untraced_us * 1e-6), traced_steps_s=np.full(3, 100e-6),
                  calibration=calibration)


# calibration: 2 calls per block; untraced blocks 20 µs at best, traced 28 µs at best:
# 4 µs per call over 2 events = 2 µs per event
CAL = Calibration(calls=2, untraced_s=(25e-6, 20e-6, 22e-6), traced_s=(30e-6, 28e-6))


def mode_of(tmp_path, untraced_us=60.0, calibration=CAL, in_trace=True):
    path = space(in_trace).write(tmp_path / "h.xplane.pb")
    m = analyze_mode("m", [path], timing=timing(untraced_us, calibration))
    return complete(Run(path=None, name="r", modes={"m": m})).modes["m"]


def test_events_are_counted_where_their_cost_lands(tmp_path):
    m = mode_of(tmp_path)
    ev = m.tracer_events
    assert ev.per_step == {"op": 2.0, "dispatch": 3.0, "tracing": 0.0, "compile": 0.0,
                           "input": 2.0, "python": 3.0, "other": 0.0}
    assert ev.calibration_events == 2.0
    # the traced split, by hand
    traced = {c: round(v / MS, 6) for c, v in m.traced_category_means().items() if v}
    assert traced == {"op": 20.0, "dispatch": 20.0, "input": 10.0, "python": 50.0}


def test_calibrated_cost_comes_out_where_it_lands_and_the_rest_is_scaled_to_the_median(tmp_path):
    m = mode_of(tmp_path)
    c = m.correction
    assert c.kind is CorrectionKind.CALIBRATED
    assert c.per_event_us == pytest.approx(2.0)
    # 2 µs per event: op 2×2, dispatch 3×2, input 2×2, python 3×2 taken out
    assert {k: round(v / MS, 6) for k, v in c.event_cost.items() if v} == \
        {"op": 4.0, "dispatch": 6.0, "input": 4.0, "python": 6.0}
    # left: op 16, dispatch 14, input 6, python 44 = 80 µs; scaled to the 60 µs median (×0.75)
    assert c.scale == pytest.approx(0.75)
    user = m.category_means()
    expect = {"op": 12.0, "dispatch": 10.5, "input": 4.5, "python": 33.0}
    for k in CATEGORIES:
        assert user[k] / MS == pytest.approx(expect.get(k, 0.0), abs=1e-6)
    assert m.breakdown_ms == pytest.approx(m.median_ms) == pytest.approx(60.0 * MS)
    assert sum(m.category_shares().values()) == pytest.approx(1.0)
    assert "2.00 µs per event" in c.method


def test_without_a_calibration_the_traced_split_is_scaled_as_it_is(tmp_path):
    m = mode_of(tmp_path, untraced_us=40.0, calibration=None, in_trace=False)
    c = m.correction
    assert c.kind is CorrectionKind.PROPORTIONAL and c.per_event_us is None
    assert c.scale == pytest.approx(0.4)
    assert {k: round(v / MS, 6) for k, v in m.category_means().items() if v} == \
        {"op": 8.0, "dispatch": 8.0, "input": 4.0, "python": 20.0}
    assert "no calibration" in c.method


def test_a_calibration_that_measured_no_cost_is_said_so(tmp_path):
    # the traced blocks ran faster than the untraced ones (a busy machine): no cost measured
    busy = Calibration(calls=2, untraced_s=(40e-6,), traced_s=(30e-6,))
    c = mode_of(tmp_path, calibration=busy).correction
    assert c.kind is CorrectionKind.INCONCLUSIVE and c.per_event_us is None
    assert sum(c.user.values()) == pytest.approx(60.0 * MS)
    assert "measured no cost" in c.method


def test_a_cost_larger_than_a_category_empties_it_and_no_more(tmp_path):
    # 8 µs per event (16 µs per call over 2 events): op loses 16 of its 20, dispatch all 20
    # (24 landing), input all 10 (16 landing), python 24 of 50; left: op 4, python 26 = 30 µs,
    # scaled to the 45 µs median (×1.5)
    cal = Calibration(calls=2, untraced_s=(20e-6,), traced_s=(52e-6,))
    m = mode_of(tmp_path, untraced_us=45.0, calibration=cal)
    c = m.correction
    assert c.kind is CorrectionKind.CALIBRATED
    assert {k: round(v / MS, 6) for k, v in c.event_cost.items() if v} == \
        {"op": 16.0, "dispatch": 20.0, "input": 10.0, "python": 24.0}
    assert {k: round(v / MS, 6) for k, v in m.category_means().items() if v} == \
        {"op": 6.0, "python": 39.0}


def test_no_category_goes_below_zero_nor_above_the_step(tmp_path):
    # 100 µs per event: more than any category holds, so every category would be emptied: the
    # calibration is not credible, and the traced split is scaled as it is
    huge = Calibration(calls=2, untraced_s=(20e-6,), traced_s=(420e-6,))
    m = mode_of(tmp_path, untraced_us=30.0, calibration=huge)
    assert m.correction.kind is CorrectionKind.INCONCLUSIVE
    user = m.category_means()
    assert all(v >= 0 for v in user.values())
    assert all(v <= m.median_ms + 1e-12 for v in user.values())
    assert m.breakdown_ms == pytest.approx(m.median_ms)


def test_a_slower_untraced_step_scales_the_split_up(tmp_path):
    # the untraced timing ran slower than the traced pass (the machine changed between them):
    # nothing is taken out beyond the events, the split is scaled up to the median
    m = mode_of(tmp_path, untraced_us=200.0, calibration=None, in_trace=False)
    assert m.correction.scale == pytest.approx(2.0)
    assert m.breakdown_ms == pytest.approx(0.2)


def test_a_foreign_trace_is_drawn_as_traced(tmp_path):
    path = space(False).write(tmp_path / "h.xplane.pb")
    m = analyze_mode("m", [path])                    # no timing: not captured by traceinsight
    m = complete(Run(path=None, name="r", modes={"m": m}, source="traces")).modes["m"]
    assert m.correction.kind is CorrectionKind.TRACED
    assert m.category_means() == m.traced_category_means()
    assert m.category_medians() == m.traced_category_medians()
    assert "no untraced timing" in m.correction.method


def test_the_correction_travels_through_the_cache(tmp_path):
    from traceinsight.analysis import cache
    m = mode_of(tmp_path)
    back = cache.from_dict(cache.to_dict(m, ["k"]), ["k"], m.timing)
    assert back.tracer_events == m.tracer_events
    assert correct(back) == m.correction
    assert cache.timing_from_dict(cache.timing_to_dict(m.timing)) == m.timing


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
def test_every_committed_run_draws_its_untraced_step(name):
    """The committed runs (captured before the calibration): each mode's categories add up to its
    headline median, none larger than it, and the JSON report says so beside the traced figures."""
    run = traceinsight.load(RUNS / name, use_cache=False)
    doc = report_data(run)
    for m, e in zip(run.modes.values(), doc["modes"]):
        if not m.ok:
            continue
        assert m.correction.kind is CorrectionKind.PROPORTIONAL
        assert m.breakdown_ms == pytest.approx(m.median_ms, rel=1e-9)
        assert all(0 <= v <= m.median_ms for v in m.category_means().values())
        assert sum(m.traced_category_means().values()) == pytest.approx(m.traced_mean_ms, rel=1e-9)
        # the JSON keeps 6 significant digits
        assert e["category_total_ms"] == pytest.approx(e["median_ms"], rel=1e-5)
        assert sum(e["category_means"].values()) == pytest.approx(e["median_ms"], rel=1e-5)
        assert sum(e["traced_category_means"].values()) == pytest.approx(e["traced_step_mean_ms"], rel=1e-5)
        removed = e["correction"]["removed_ms"]
        for c in CATEGORIES:
            assert removed[c] == pytest.approx(e["traced_category_means"][c] - e["category_means"][c],
                                               abs=2e-4)   # two rounded figures


def test_conv1d_eager_python_is_no_longer_larger_than_the_step():
    m = traceinsight.load(RUNS / "conv1d").modes["eager"]
    assert m.traced_category_means()["python"] > m.median_ms       # as traced: the profiler's
    assert m.category_means()["python"] < m.median_ms


def test_a_copy_with_a_new_timing_gets_its_own_correction(tmp_path):
    """``dataclasses.replace(run, modes=...)`` computes the copy's figures: a mode given another
    untraced timing is drawn against it, never with the correction of the timing it had."""
    import dataclasses
    m = mode_of(tmp_path, calibration=None, in_trace=False)
    run = complete(Run(path=None, name="r", modes={"m": m}))
    t = m.timing
    slower = Timing(steps_s=t.steps_s * 2, traced_steps_s=t.traced_steps_s)
    copy = dataclasses.replace(run, modes={"m": m.replace(timing=slower)})
    assert copy.modes["m"].breakdown_ms == pytest.approx(2 * m.breakdown_ms)
    assert run.modes["m"].breakdown_ms == pytest.approx(m.median_ms)


class _Rows:
    """The parts of an event table that ``calibration_events`` reads: events sorted by (line,
    start), names by id."""

    def __init__(self, line, start, end, name, names):
        self.line, self.start, self.end, self.name, self.names = line, start, end, name, names

    def name_id(self, name):
        return self.names.index(name) if name in self.names else -1

    def line_rows(self, line):
        lo, hi = np.searchsorted(self.line, [line, line + 1])
        return slice(int(lo), int(hi))


@pytest.mark.parametrize("seed", range(40))
def test_calibration_events_count_the_main_threads_events_in_the_windows(seed):
    """Against the definition, event by event: the main thread's events other than the markers
    that start before the end of the last marker starting at or before them (markers may
    overlap, touch, be of zero length); other lines' events never count."""
    from types import SimpleNamespace

    from traceinsight.analysis.overhead import calibration_events
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    line = np.sort(rng.integers(0, 3, n)).astype(np.int16)
    start = rng.integers(0, 100, n)
    end = start + rng.integers(0, 20, n)
    name = rng.integers(0, 3, n).astype(np.int32)      # 0: the marker
    order = np.lexsort((-end, start, line))
    line, start, end, name = line[order], start[order], end[order], name[order]
    t = _Rows(line, start, end, name, [runfolder.CALIBRATION_MARKER, "a", "b"])
    a = SimpleNamespace(table=t, main_line=1)
    cal = Timing(steps_s=np.ones(3), calibration=Calibration(calls=2, untraced_s=(1.0,),
                                                             traced_s=(2.0,)))
    marks = [i for i in range(n) if line[i] == 1 and name[i] == 0]
    # in table order, by start (stable): of markers starting together, the last in the table
    ws = sorted(((start[i], end[i]) for i in marks), key=lambda w: w[0])
    inside = 0
    for i in range(n):
        if line[i] != 1 or name[i] == 0:
            continue
        last = [w for w in ws if w[0] <= start[i]]
        inside += bool(last) and start[i] < last[-1][1]
    want = inside / (len(marks) * 2) if marks and inside else None
    assert calibration_events(a, cal) == want
