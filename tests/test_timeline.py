"""One step's timeline (analysis/timeline.py, tui/timeline.py): rows and bars checked against a
synthetic trace whose events are placed by hand, the step choice against the steps' wall times,
and the viewer screen on a committed real run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis import timeline as tl
from traceinsight.analysis.mode import analyze_trace
from traceinsight.columns import Columns
from traceinsight.errors import TraceinsightError
from traceinsight.model import CATEGORIES

from xspace_builder import US, Space

RUNS = Path(__file__).parent / "data" / "runs"
OP, DISPATCH, INPUT, PYTHON = (CATEGORIES.index(c) for c in ("op", "dispatch", "input", "python"))


def three_steps() -> Space:
    """Three marked steps of 100, 300 and 200 µs; the eager op in step 2 is placed by hand, a
    worker thread runs a kernel inside it."""
    sp = Space()
    sp.task_environment()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1, _r=1)
    main.event("train", 100, 300, step_num=2, _r=1)
    main.event("TFE_Py_FastPathExecute_C", 110, 100)          # 110..210: dispatch around
    main.event("EagerExecute", 120, 80, eager_op="MatMul", is_func=0)
    main.event("EagerLocalExecute: MatMul", 121, 78)
    main.event("KernelAndDeviceFunc::Run", 130, 60)           # 130..190: op
    main.event("tf.constant", 250, 20)                         # 250..270: input
    main.event("EagerExecute", 252, 10, eager_op="_EagerConst")
    main.event("EagerLocalExecute: _EagerConst", 253, 8)
    main.event("KernelAndDeviceFunc::Run", 254, 6)
    main.event("train", 400, 200, step_num=3, _r=1)
    worker = h.line("tf_Compute/1")
    worker.event("model/MatMul:MatMul", 140, 40)
    return sp


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = three_steps().write(tmp_path_factory.mktemp("t") / "h.xplane.pb")
    return analyze_trace([path])


def test_the_step_chosen_is_the_one_asked_for(trace):
    # wall times 100, 300, 200 µs; none is a first step (numbered from 1, no tracing)
    assert tl.step_timeline(trace, "median").step_num == 3
    assert tl.step_timeline(trace, "slowest").step_num == 2
    assert tl.step_timeline(trace, 1).step_num == 1
    assert tl.step_timeline(trace, "first").step_num == 1     # no first step marked: the earliest
    with pytest.raises(TraceinsightError, match="no step 9"):
        tl.step_timeline(trace, 9)
    with pytest.raises(TraceinsightError, match="one of"):
        tl.step_timeline(trace, "fastest")


def test_rows_hold_the_events_placed_by_hand(trace):
    t = tl.step_timeline(trace, 2)
    assert (t.start_ps, t.end_ps) == (100 * US, 400 * US)
    assert t.wall_ms == pytest.approx(0.3)
    by_label = {r.label: r for r in t.rows}
    cats = by_label["python · categories"]
    # the main thread's exclusive timeline tiles the step: python 100..110, dispatch to 130, op to
    # 190, dispatch to 210, python to 250, input to 270, python to 400
    assert cats.kind == "categories"
    assert (cats.start_ps / US).tolist() == [100, 110, 130, 190, 210, 250, 270]
    assert (cats.end_ps / US).tolist() == [110, 130, 190, 210, 250, 270, 400]
    assert cats.category.tolist() == [PYTHON, DISPATCH, OP, DISPATCH, PYTHON, INPUT, PYTHON]
    # the categories row adds up to the step, and so does the steps table's split of it
    assert int((cats.end_ps - cats.start_ps).sum()) == t.end_ps - t.start_ps
    assert sum(t.categories.values()) == pytest.approx(t.wall_ms)
    assert t.categories["op"] == pytest.approx(0.06)
    # nesting depths of the main thread: the step marker is kept out of the nesting
    assert by_label["python · crossing"].names == ("train",)
    top = by_label["python"]
    assert set(top.names) >= {"TFE_Py_FastPathExecute_C", "tf.constant"}
    kernel = [r for r in t.rows if r.label.startswith("python ·") and "KernelAndDeviceFunc::Run" in r.names]
    assert kernel, [r.label for r in t.rows]
    # the worker's kernel, in its own row, op
    w = by_label["tf_Compute/1"]
    assert w.names == ("model/MatMul:MatMul",) and w.category.tolist() == [OP]
    assert (w.start_ps / US).tolist() == [140] and (w.end_ps / US).tolist() == [180]
    # rows of other steps' events are not drawn
    assert tl.step_timeline(trace, 1).rows[0].label == "python · categories"
    assert "tf_Compute/1" not in {r.label for r in tl.step_timeline(trace, 1).rows}


def test_neighbours_and_the_view(trace):
    t = tl.step_timeline(trace, 2)
    assert tl.neighbour_step(t, 1) == 3 and tl.neighbour_step(t, -1) == 1
    assert tl.neighbour_step(tl.step_timeline(trace, 3), 1) is None
    assert tl.view_window(t, 1.0, 0.5) == (t.start_ps, t.end_ps)
    v0, v1 = tl.view_window(t, 2.0, 0.0)           # zoomed at the start: kept inside the step
    assert (v0, v1) == (t.start_ps, t.start_ps + t.duration_ps // 2)
    v0, v1 = tl.view_window(t, 4.0, 1.0)
    assert v1 == t.end_ps and v1 - v0 == t.duration_ps // 4


def test_cells_show_the_event_covering_most_and_keep_short_ones():
    row = tl.TimelineRow("r", "events", 0, np.array([0, 30, 31], dtype=np.int64),
                         np.array([30, 31, 100], dtype=np.int64), np.array([OP, DISPATCH, PYTHON]),
                         ("a", "b", "c"))
    # ten cells of 10: cell 3 (30..40) holds b (1) and c (9): c covers most
    assert tl.cells(row, 0, 100, 10) == [0, 0, 0, 2, 2, 2, 2, 2, 2, 2]
    # zoomed on 30..32: b takes the first cell, c the second
    assert tl.cells(row, 30, 32, 2) == [1, 2]
    # an event narrower than a cell still shows where nothing else covers the cell
    lone = tl.TimelineRow("r", "events", 0, np.array([55], dtype=np.int64), np.array([56], dtype=np.int64),
                          np.array([OP]), ("x",))
    assert tl.cells(lone, 0, 100, 10) == [None] * 5 + [0] + [None] * 4


def test_choose_step_skips_first_and_cut_steps():
    steps = Columns({"step_num": np.array([0, 1, 2, 3]), "wall_ms": np.array([900.0, 1.0, 3.0, 50.0]),
                     "first": np.array([True, False, False, False]),
                     "partial": np.array([False, False, False, True])})
    assert tl.choose_step(steps, "slowest") == 2      # not the first (900) nor the cut one (50)
    assert tl.choose_step(steps, "median") == 1       # lower median of 1.0, 3.0
    assert tl.choose_step(steps, "first") == 0


def test_a_committed_mode_draws_and_zooms():
    from traceinsight.tui.timeline import draw
    run = traceinsight.load(RUNS / "conv1d")
    mode = run.modes["eager"]
    t = tl.step_timeline(tl.pass_analysis(mode), "median")
    assert not t.first and t.rows and t.rows[0].kind == "categories"
    # the categories row tiles the step exactly
    cats = t.rows[0]
    assert int((cats.end_ps - cats.start_ps).sum()) == t.duration_ps
    whole = draw(t, 1.0, 0.5, 120).plain.splitlines()
    assert len(whole[1]) == 120 and whole[1].startswith("python · categories")
    zoomed = draw(t, 8.0, 0.5, 120).plain
    assert "one column" in zoomed and zoomed != "\n".join(whole)
    # each bar begins with its category's letter: the categories stay apart without colour
    from traceinsight.present import CATEGORY_GLYPHS
    from traceinsight.tui.timeline import LABEL_WIDTH
    assert len(set(CATEGORY_GLYPHS.values())) == len(CATEGORIES) == len(CATEGORY_GLYPHS)
    v0, v1 = tl.view_window(t, 1.0, 0.5)
    shown = tl.cells(cats, v0, v1, 120 - LABEL_WIDTH - 1)
    starts = [c for c, k in enumerate(shown) if k is not None and (c == 0 or shown[c - 1] != k)]
    assert starts
    for c in starts:
        category = CATEGORIES[int(cats.category[shown[c]])]
        assert whole[1][LABEL_WIDTH + 1 + c] == CATEGORY_GLYPHS[category]
    with pytest.raises(TraceinsightError, match="no python pass|passes present"):
        tl.pass_files(mode, "device")


def test_the_viewer_opens_a_timeline_from_a_mode():
    import asyncio

    from traceinsight.tui import get_app
    from traceinsight.tui.mode import ModeScreen
    from traceinsight.tui.timeline import TimelineScreen, TimelineView

    from tui_runs import load_committed, settle

    async def drive() -> None:
        run = load_committed("conv1d")
        app = get_app(run)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            app.show_mode("function")
            await pilot.pause()
            await pilot.press("l")
            assert isinstance(app.screen, TimelineScreen)

            async def loaded() -> tl.StepTimeline:
                await app.workers.wait_for_complete()
                await pilot.pause()
                view = app.screen.query_one(TimelineView)
                assert view.timeline is not None, app.screen.error
                return view.timeline

            t = await loaded()
            assert t.which == "median steady step"
            await pilot.press("w")
            slowest = await loaded()
            assert slowest.which == "slowest steady step" and slowest.wall_ms >= t.wall_ms
            view = app.screen.query_one(TimelineView)
            await pilot.press("plus", "plus")
            assert view.zoom == 4.0
            await pilot.press("right", "0")
            assert (view.zoom, view.centre) == (1.0, 0.5)
            await pilot.press("1")
            first = await loaded()
            assert first.step_num == t.steps[0]
            await pilot.press("n")
            assert (await loaded()).step_num == t.steps[1]
            await pilot.press("escape")
            assert isinstance(app.screen, ModeScreen)

    asyncio.run(drive())
