"""The viewer's look, pinned at 80x24 and 140x40 (update with: pytest --snapshot-update)."""

from __future__ import annotations

import pytest

from traceinsight.tui import get_app

from tui_runs import no_steps_run, sample_run

SMALL, WIDE = (80, 24), (140, 40)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_overview(snap_compare, size):
    assert snap_compare(get_app(sample_run()), terminal_size=size)


def test_overview_light(snap_compare):
    assert snap_compare(get_app(sample_run(), theme="textual-light"), terminal_size=SMALL)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_compare(snap_compare, size):
    assert snap_compare(get_app(sample_run()), press=["c"], terminal_size=size)


def test_mode_detail(snap_compare):
    assert snap_compare(get_app(sample_run()), press=["enter"], terminal_size=SMALL)


def test_mode_steps(snap_compare):
    async def show_steps(pilot):
        await pilot.press("down", "enter")
        pilot.app.screen.query_one("TabbedContent").active = "tab-steps"
    assert snap_compare(get_app(sample_run()), run_before=show_steps, terminal_size=SMALL)


def test_no_steps(snap_compare):
    assert snap_compare(get_app(no_steps_run()), terminal_size=SMALL)
