"""Attribution on real TF 2.21 traces committed under tests/data/runs (tools/make_test_data.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from traceinsight.analysis import rules
from traceinsight.analysis.attribute import attribute
from traceinsight.analysis.events import load_files
from traceinsight.analysis.results import op_totals
from traceinsight.model import CATEGORIES


def test_every_step_is_fully_attributed(real_runs):
    n_steps = 0
    for run in real_runs.values():
        for m in run.ok_modes():
            s = m.steps
            assert len(s) > 0, (run.name, m.name)
            total = s[list(CATEGORIES)].sum(axis=1)
            np.testing.assert_allclose(total, s["wall_ms"], rtol=0.01)  # the contract: within 1 %
            assert (s[list(CATEGORIES)] >= -1e-9).all().all()
            n_steps += len(s)
    assert n_steps > 100


def test_eager_is_python_and_dispatch_bound_function_is_not(real_runs):
    conv = real_runs["conv1d"]
    eager = conv.modes["eager"].category_medians()
    function = conv.modes["function"].category_medians()
    overhead_e = eager["python"] + eager["dispatch"]
    overhead_f = function["python"] + function["dispatch"]
    assert overhead_e > 5 * overhead_f
    # eager converts its numpy input every step (tf.constant); the function converts it once per call too,
    # but the eager model's layers add more conversions
    assert eager["input"] > 0
    assert conv.modes["eager"].steady_steps["wall_ms"].median() > \
        2 * conv.modes["function"].steady_steps["wall_ms"].median()


def test_retracing_function_traces_on_every_call(real_runs):
    run = real_runs["retracing"]
    fn = run.modes["function"]
    r = fn.retraces.set_index("function").loc["step"]
    n_steps = len(fn.steps)
    # inputs(i) feeds a new Python float every step: every call of the function is a new trace
    assert r["calls"] == n_steps and r["traced_calls"] == n_steps
    assert r["tracing_ms"] > 0
    assert fn.category_medians()["tracing"] > fn.category_medians()["op"]
    assert run.modes["eager"].retraces.empty  # eager never traces
    assert run.modes["eager"].category_medians()["tracing"] == 0


@pytest.mark.parametrize("run_name", ["conv1d", "costly-loop"])
def test_xla_compiles_only_in_the_first_step(real_runs, run_name):
    xla = real_runs[run_name].modes["xla"]
    s = xla.steps
    assert bool(s["first"].iloc[0])
    assert s["compile"].iloc[0] > 1.0  # ms: XLA compiles the function in its first call
    assert (s["compile"].iloc[1:] == 0).all()
    assert xla.first_step["compile"] > 0
    assert xla.breakdown.loc["compile", "median"] == 0


def test_function_traces_once_in_the_first_step(real_runs):
    fn = real_runs["conv1d"].modes["function"]
    s = fn.steps
    assert s["tracing"].iloc[0] > 1.0 and (s["tracing"].iloc[1:] == 0).all()
    r = fn.retraces.iloc[0]
    assert (r["traced_calls"], r["changes"].startswith("traced once")) == (1, True)


def test_costly_loop_is_many_small_ops(real_runs):
    eager = real_runs["costly-loop"].modes["eager"]
    matmul = eager.ops[(eager.ops["op"] == "MatMul") & (eager.ops["thread"] == "main")].iloc[0]
    assert matmul["calls_per_step"] == 99  # the guide's loop: 99 tf.matmul per step


def test_hotspots_are_scaled_to_the_host_pass(real_runs):
    eager = real_runs["conv1d"].modes["eager"]
    assert not eager.hotspots.empty
    assert any("scaled by" in n for n in eager.notes)
    # self times of all frames cannot exceed the host pass's python time per step
    assert eager.hotspots["self_ms"].sum() <= eager.category_medians()["python"] * 1.0001
    assert set(eager.hotspots["group"]) <= {"user", "keras", "tensorflow", "traceinsight", "other"}
    assert "keras" in set(eager.hotspots["group"])


def test_recorded_profiler_options_match_requested(real_runs):
    for run in real_runs.values():
        for m in run.ok_modes():
            host = m.profile_options["host"]
            assert host["recorded"]["host_tracer_level"] == 3
            assert host.get("ok", True)
            if "python" in m.profile_options:
                assert m.profile_options["python"]["recorded"]["python_tracer_level"] == 1


def test_op_self_time_matches_xprof_framework_op_stats(real_runs, tmp_path):
    """Cross-check the graph ops' self time against XProf's own converter on the same trace."""
    raw_to_tool_data = pytest.importorskip("xprof.convert.raw_to_tool_data")
    import shutil
    src = [p for p in real_runs["conv1d"].modes["function"].trace_paths if "/host/" in p]
    files = []
    for p in src:  # XProf writes cache files beside the trace: work on a copy
        dst = tmp_path / Path(p).name
        shutil.copy(p, dst)
        files.append(str(dst))
    data = json.loads(raw_to_tool_data.xspace_to_tool_data(files, "framework_op_stats", {})[0])
    table = data[0] if isinstance(data, list) else data
    cols = [c["id"] for c in table["cols"]]
    rows = [dict(zip(cols, [c.get("v") for c in r["c"]])) for r in table["rows"]]
    xprof = {r["operation"]: r["total_self_time"] for r in rows if r["type"] != "IDLE"}
    a = attribute(load_files(files))
    mine = op_totals(a, np.array([a.table.start.min()]),
                           np.array([a.table.end.max() + 1])).to_pandas()
    mine = mine[mine["thread"] == "worker"].groupby("op")["self_ps"].sum() / 1e6  # µs
    compared = 0
    for op, xt in xprof.items():
        if xt > 50 and op in mine.index:
            assert mine[op] == pytest.approx(xt, rel=0.05), op
            compared += 1
    assert compared >= 5


def test_window_sums_agree_with_clipping_every_segment(real_runs):
    """category_time (native.window_sums) against the plain formula: every segment clipped to every
    window, on steps, on windows cutting through segments, and on overlapping windows."""
    for run_name, mode in (("conv1d", "eager"), ("costly-loop", "xla"), ("retracing", "function")):
        path = [p for p in real_runs[run_name].modes[mode].trace_paths if "/host/" in p]
        a = attribute(load_files(path))
        ws, we = a.step_start, a.step_end
        mid = (ws + we) // 2
        for t0, t1 in ((ws, we), (mid[:-1], mid[1:]), (ws[:-2], we[2:])):
            got = a.category_time(t0, t1)
            b = a.timeline.times()
            overlap = np.clip(np.minimum(b[1:][None, :], t1[:, None])
                              - np.maximum(b[:-1][None, :], t0[:, None]), 0, None)
            want = np.stack([overlap[:, a.seg_cat == c].sum(axis=1)
                             for c in range(len(CATEGORIES))], axis=1)
            want[:, rules.PYTHON] = (t1 - t0) - np.delete(want, rules.PYTHON, axis=1).sum(axis=1)
            np.testing.assert_array_equal(got, want)


def _emit(times: list[int], owners: list[int], at: int, who: int) -> None:
    """A change of owner at ``at``: at one instant only the last change is kept."""
    if times and times[-1] == at:
        owners[-1] = who
    else:
        times.append(at)
        owners.append(who)


def test_timeline_owners_are_the_innermost_open_main_thread_event(real_runs):
    """The timeline keeps no owner per segment: an end hands the time to the ended event's parent
    (the nesting's). Against a plain stack sweep of the main thread's events of positive length
    kept in the nesting: the same instants, owners and categories (python where none is open),
    on real passes (python-traced eager, XLA, tf.function)."""
    for run_name, mode in (("conv1d", "eager"), ("costly-loop", "xla"), ("retracing", "function")):
        path = [p for p in real_runs[run_name].modes[mode].trace_paths if "/host/" in p]
        a = attribute(load_files(path))
        t = a.table
        rows = t.line_rows(a.main_line)
        times: list[int] = []
        owners: list[int] = []
        stack: list[int] = []
        for e in range(rows.start, rows.stop):
            if t.end[e] <= t.start[e] or a.outside[e]:
                continue
            while stack and t.end[stack[-1]] <= t.start[e]:
                top = stack.pop()
                _emit(times, owners, int(t.end[top]), stack[-1] if stack else -1)
            _emit(times, owners, int(t.start[e]), e)
            stack.append(e)
        while stack:
            top = stack.pop()
            _emit(times, owners, int(t.end[top]), stack[-1] if stack else -1)
        tl = a.timeline
        assert len(tl.syn_t) == 0   # no synthetic cut in these passes: the sweep's own timeline
        np.testing.assert_array_equal(tl.times(), times)
        np.testing.assert_array_equal(tl.owners(), owners[:-1])
        own = np.array(owners[:-1], dtype=np.int64)
        want_cat = np.where(own >= 0, a.cat[np.maximum(own, 0)], rules.PYTHON)
        relabelled = tl.cat != want_cat      # (input conversions in the fast path: input)
        assert (tl.cat[relabelled] == rules.INPUT).all()


def test_hotspot_groups_come_from_the_capture_record_not_this_machine(real_runs, monkeypatch):
    """The python tracer names files by base name only; a captured run carries the workload
    process's own map, so grouping does not depend on what is installed where it is analysed."""
    from conftest import RUNS

    import traceinsight
    from traceinsight.analysis import hotspots
    monkeypatch.setattr(hotspots, "_package_files", lambda: {})  # as if nothing were installed
    again = traceinsight.load(RUNS / "conv1d", use_cache=False)
    for name, mode in real_runs["conv1d"].modes.items():
        assert list(again.modes[name].hotspots["group"]) == list(mode.hotspots["group"])
    groups = set(real_runs["conv1d"].modes["eager"].hotspots["group"])
    assert {"keras", "tensorflow"} <= groups


def test_hotspots_swept_are_the_per_event_paths(monkeypatch):
    """The hotspots table from the C sweep of the main thread (``native.frame_sweep``) equals the
    per-event path it falls back to (owned-time column, ``frame_sums``, the issuers' columns), on
    every committed python-tracer pass, value for value."""
    from traceinsight.analysis import hotspots, native
    from traceinsight.analysis.results import steps_table
    files = sorted(Path(__file__).parent.glob("data/runs/*/*/python/plugins/profile/*/*.xplane.pb"))
    assert len(files) >= 5
    compared = 0
    for f in files:
        a = attribute(load_files([f]))
        steps = steps_table(a)
        swept = hotspots.hotspots_table(a, steps)
        with monkeypatch.context() as m:
            m.setattr(native, "frame_sweep", lambda *args, **kwargs: None)
            per_event = hotspots.hotspots_table(a, steps)
        assert swept.columns == per_event.columns
        for c in swept.columns:
            np.testing.assert_array_equal(np.asarray(swept[c]), np.asarray(per_event[c]), err_msg=c)
        compared += len(swept)
    assert compared > 100
