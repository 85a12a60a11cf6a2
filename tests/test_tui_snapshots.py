"""The viewer's look, pinned at 80x24 and 140x40 (update with: pytest --snapshot-update)."""

from __future__ import annotations

import pytest

from traceinsight.tui import get_app

from tui_runs import RUNS_DIR, load_committed, no_steps_run, sample_run

SMALL, WIDE = (80, 24), (140, 40)


async def settle(pilot) -> None:
    """The overview's figures are computed in a worker thread after the first frame: wait."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_overview(snap_compare, size):
    assert snap_compare(get_app(sample_run()), terminal_size=size, run_before=settle)


def test_overview_light(snap_compare):
    assert snap_compare(get_app(sample_run(), theme="textual-light"), terminal_size=SMALL,
                        run_before=settle)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_compare(snap_compare, size):
    assert snap_compare(get_app(sample_run()), press=["c"], terminal_size=size, run_before=settle)


def test_mode_detail(snap_compare):
    assert snap_compare(get_app(sample_run()), press=["enter"], terminal_size=SMALL,
                        run_before=settle)


def test_mode_steps(snap_compare):
    async def show_steps(pilot):
        await settle(pilot)
        await pilot.press("down", "enter")
        pilot.app.screen.query_one("TabbedContent").active = "tab-steps"
    assert snap_compare(get_app(sample_run()), run_before=show_steps, terminal_size=SMALL)


def test_no_steps(snap_compare):
    assert snap_compare(get_app(no_steps_run()), terminal_size=SMALL, run_before=settle)


# The small real Conv1D run committed by the capture work: its figures are fixed, so is its look.
# When the attribution rules change these figures, review the new look and --snapshot-update.
needs_conv1d = pytest.mark.skipif(not (RUNS_DIR / "conv1d" / "run.json").is_file(),
                                  reason="tests/data/runs/conv1d not present")


@needs_conv1d
@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_conv1d_overview(snap_compare, size):
    assert snap_compare(get_app(load_committed("conv1d")), terminal_size=size, run_before=settle)


@needs_conv1d
def test_conv1d_compare(snap_compare):
    assert snap_compare(get_app(load_committed("conv1d")), press=["c"], terminal_size=WIDE,
                        run_before=settle)
