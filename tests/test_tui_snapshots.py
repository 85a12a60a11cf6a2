"""The viewer's look, pinned at 80x24 and 140x40 (update with: pytest --snapshot-update)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from traceinsight.tui import get_app

from tui_runs import (
    RUNS_DIR,
    load_committed,
    multi_host_run,
    no_steps_run,
    open_compare,
    open_hosts,
    sample_run,
    settle,
)

SMALL, WIDE = (80, 24), (140, 40)


@pytest.fixture(autouse=True)
def fixed_findings(monkeypatch):
    """The findings rules are another module with its own tests: these snapshots pin how the viewer
    shows findings, with two fixed ones, so a change of a rule's wording does not move them."""
    findings = [
        SimpleNamespace(rule="a", title="eager is Python/dispatch-bound: wrap the step in tf.function",
                        evidence="python + dispatch are most of the eager step", fix="tf.function(step)",
                        saving_ms=4.0, saving_basis="measured", modes=("eager",), severity="high",
                        rank=1),
        SimpleNamespace(rule="b", title="The profiler slowed traced steps", evidence="", fix="",
                        saving_ms=None, saving_basis="", modes=(), severity="info", rank=2),
    ]
    monkeypatch.setattr("traceinsight.findings.find", lambda run: findings)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_overview(snap_compare, size):
    assert snap_compare(get_app(sample_run()), terminal_size=size, run_before=settle)


def test_overview_light(snap_compare):
    assert snap_compare(get_app(sample_run(), theme="textual-light"), terminal_size=SMALL,
                        run_before=settle)


@pytest.mark.parametrize("size", [SMALL, WIDE], ids=["80x24", "140x40"])
def test_compare(snap_compare, size):
    assert snap_compare(get_app(sample_run()), terminal_size=size, run_before=open_compare)


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
    assert snap_compare(get_app(load_committed("conv1d")), terminal_size=WIDE,
                        run_before=open_compare)


def test_findings(snap_compare):
    async def open_findings(pilot):
        await settle(pilot)
        await pilot.press("f")
    assert snap_compare(get_app(sample_run()), run_before=open_findings, terminal_size=SMALL)


def test_python_hotspots(snap_compare):
    async def open_python(pilot):
        await settle(pilot)
        await pilot.press("enter")
        pilot.app.screen.query_one("TabbedContent").active = "tab-python"
    assert snap_compare(get_app(sample_run()), run_before=open_python, terminal_size=SMALL)


# A logdir of three hosts (tests/hosts_data.py): the overview says who the straggler is, and h
# opens the hosts screen. Single-host runs have neither (their snapshots above are unchanged).
def test_multi_host_overview(snap_compare, tmp_path):
    assert snap_compare(get_app(multi_host_run(tmp_path)), terminal_size=SMALL, run_before=settle)


def test_hosts_screen(snap_compare, tmp_path):
    assert snap_compare(get_app(multi_host_run(tmp_path)), terminal_size=WIDE,
                        run_before=open_hosts)
