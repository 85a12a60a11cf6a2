"""Keys a new user tries first: ← / → move between a mode's tabs from its table; h, s and / on
the overview say where they act instead of doing nothing; an input keeps its ← / →."""

from __future__ import annotations

import asyncio
import functools

from textual.widgets import Input, TabbedContent

from traceinsight.derive import complete
from traceinsight.tui import get_app
from traceinsight.tui.mode import ModeScreen
from traceinsight.tui.overview import OverviewScreen

from tui_runs import sample_run, settle

SIZE = (100, 30)


def pilot_test(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        asyncio.run(fn(*args, **kwargs))
    return wrapper


@pilot_test
async def test_arrows_move_between_a_modes_tabs_without_tab_first():
    app = get_app(sample_run())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, ModeScreen)
        tabs = app.screen.query_one(TabbedContent)
        assert tabs.active == "tab-categories"
        await pilot.press("right")
        await pilot.pause()
        assert tabs.active == "tab-ops"
        await pilot.press("right", "right")
        await pilot.pause()
        assert tabs.active == "tab-retraces"
        await pilot.press("left")
        await pilot.pause()
        assert tabs.active == "tab-python"


@pilot_test
async def test_the_filter_input_keeps_its_arrows():
    app = get_app(sample_run())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "slash", "m", "a", "t")
        field = app.focused
        assert isinstance(field, Input) and field.value == "mat"
        await pilot.press("left", "left", "x")
        await pilot.pause()
        assert field.value == "mxat"
        assert app.screen.query_one(TabbedContent).active == "tab-ops"


@pilot_test
async def test_overview_keys_that_act_elsewhere_say_where():
    app = get_app(sample_run())       # one host: no hosts screen
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, said in (("h", "multi-host"), ("s", "sorts"), ("slash", "filters")):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen)
            shown = [n.message for n in app._notifications]
            assert any(said in m for m in shown), (key, shown)


CHANGES = ("every one of the 12 calls traced a new graph; tracing_count 1→12: one function traced "
           "for new input signatures (shapes, dtypes or Python values): argument x changed shape "
           "(8, 32) → (9, 32) → (10, 32) → (11, 32); argument training changed value False → True; "
           "the Python int n changed 1 → 2 → 3; pass tensors of one shape, or reduce_retracing=True, "
           "or an input_signature with None dimensions")


@pilot_test
async def test_what_changed_is_shown_whole_at_80_by_24():
    from traceinsight.model import Run
    from traceinsight.testing import make_mode
    mode = make_mode("loop", {"op": 1.0, "tracing": 2.0},
                     retraces=[("train_step", 12, 12, 240.0, 0.0, CHANGES)])
    app = get_app(complete(Run(None, "r", {"loop": mode})))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter", "right", "right", "right")
        await pilot.pause(0.3)
        assert app.screen.query_one(TabbedContent).active == "tab-retraces"
        strips = app.screen._compositor.render_strips()
        shown = " ".join(" ".join("".join(s.text for s in strip).split()) for strip in strips)
        assert " ".join(CHANGES.split()) in shown
