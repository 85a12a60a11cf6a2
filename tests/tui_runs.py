"""Runs for the TUI tests: the hand-made sample, edge cases, a large run, and committed real runs."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from traceinsight.derive import complete
from traceinsight.model import ModeResult, Run
from traceinsight.testing import make_mode, sample_run

RUNS_DIR = Path(__file__).parent / "data" / "runs"


WAIT_S = 120       # for one event; a generous bound (a loaded machine), never a sleep


async def settle(pilot) -> None:
    """Wait until the overview shows every figure, drawn. Each wait is for the event itself,
    never for idle rounds or sleeps: the overview screen pushed (the app's screen-change signal;
    a loading app pushes it once its worker has loaded the run), its figures shown (the
    worker's ``FiguresReady`` handled: ``OverviewScreen.figures_shown``), every worker done, and
    then the screen drawn (``wait_for_refresh``: its callback runs after the screen has handled
    its messages and painted with nothing left to lay out). The mode table measures its new
    column widths in that same handler (``ModeTable.fill``), so the frame has them.

    A load that fails (``load_error``) shows no overview: settle returns (at once when the
    error is recorded already, else when the wait for the overview runs out)."""
    from traceinsight.tui.overview import OverviewScreen
    app = pilot.app

    def overview() -> OverviewScreen | None:
        return next((s for s in app.screen_stack if isinstance(s, OverviewScreen)), None)

    if overview() is None and getattr(app, "load_error", None) is None:
        pushed = asyncio.Event()
        app.screen_change_signal.subscribe(
            app, lambda screen: pushed.set() if isinstance(screen, OverviewScreen) else None,
            immediate=True)
        try:
            await asyncio.wait_for(pushed.wait(), WAIT_S)
        except TimeoutError:
            if getattr(app, "load_error", None) is None:
                raise TimeoutError(f"the overview did not appear in {WAIT_S} s") from None
        finally:
            app.screen_change_signal.unsubscribe(app)
    screen = overview()
    if screen is None:      # the load failed
        return
    try:
        await asyncio.wait_for(screen.figures_shown.wait(), WAIT_S)
    except TimeoutError:
        raise TimeoutError(f"the overview's figures did not arrive in {WAIT_S} s") from None
    await app.workers.wait_for_complete()
    if screen.is_current:
        await screen.wait_for_refresh()


async def _shown(pilot, screen_type, what: str) -> None:
    """Wait until ``screen_type`` is the screen and its worker has posted its figures."""
    for _ in range(1000):
        if isinstance(pilot.app.screen, screen_type) and not pilot.app.screen.pending:
            break
        await pilot.pause(0.01)
    else:
        raise TimeoutError(f"{what} did not arrive in 10 s")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def compared(pilot) -> None:
    """Wait until the compare screen shows its comparison (posted by a worker thread)."""
    from traceinsight.tui.compare import CompareScreen
    await _shown(pilot, CompareScreen, "the comparison")


async def open_compare(pilot) -> None:
    await settle(pilot)
    await pilot.press("c")
    await compared(pilot)


def one_mode_run() -> Run:
    m = make_mode("eager", {"op": 4.0, "python": 3.0, "dispatch": 1.0},
                  ops=[("Conv2D", "Conv2D", "main", 1, 2.5)])
    return complete(Run(path=None, name="one-mode", modes={"eager": m}))


def failed_only_run() -> Run:
    m = ModeResult(name="eager", status="failed", error="RuntimeError: out of memory")
    return complete(Run(path=None, name="all-failed", modes={"eager": m}))


def no_steps_run() -> Run:
    """A trace without step markers: no steps, no breakdown, no timing; ops still there."""
    m = make_mode("trace", {"op": 1.0}, ops=[("MatMul", "MatMul", "main", 1, 1.0)])
    m = replace(m, steps=pd.DataFrame(), breakdown=pd.DataFrame(), timing=None, first_step=None,
                step_rule="", notes=("no step markers found: the trace has no 'train' events",))
    return complete(Run(path=None, name="no-steps", modes={"trace": m}, source="traces"))


def large_run(n_ops: int = 300_000) -> Run:
    """One mode with hundreds of thousands of distinct ops (the table must stay lazy)."""
    base = make_mode("eager", {"op": 5.0, "python": 2.0})
    rng = np.random.default_rng(1)
    self_ms = np.sort(rng.exponential(0.01, n_ops))[::-1]
    ops = pd.DataFrame({"op": [f"model/layer_{i}/MatMul" for i in range(n_ops)],
                        "type": np.where(np.arange(n_ops) % 3, "MatMul", "AddV2"),
                        "thread": "main", "calls_per_step": 1.0, "self_ms_per_step": self_ms})
    ops["share"] = ops["self_ms_per_step"] / ops["self_ms_per_step"].sum()
    return complete(Run(path=None, name="large", modes={"eager": replace(base, ops=ops)}))


def multi_host_run(tmp_path: Path) -> Run:
    """The three-host logdir of tests/hosts_data.py (w2 the straggler, by its input), loaded."""
    from hosts_data import three_hosts

    import traceinsight
    return traceinsight.load(three_hosts(tmp_path / "logdir"), use_cache=False)


async def open_hosts(pilot) -> None:
    """From the overview, the hosts screen, once its worker has posted the comparison."""
    from traceinsight.tui.hosts import HostsScreen
    await settle(pilot)
    await pilot.press("h")
    await _shown(pilot, HostsScreen, "the hosts")


@functools.cache
def _load_committed(name: str) -> Run:
    import traceinsight
    return traceinsight.load(RUNS_DIR / name)


def load_committed(name: str) -> Run:
    """A committed run loaded once per test session (runs are frozen; the app only reads them),
    handed out as a fresh Run each time: the figures a Run memoises (summary, comparisons,
    findings) are then computed by each app in its worker, as a user's viewer does, instead of
    arriving before the first layout because an earlier test computed them."""
    import dataclasses
    return dataclasses.replace(_load_committed(name))


def committed_runs() -> list[Path]:
    """Real small runs committed by the capture work (empty until they land)."""
    if not RUNS_DIR.is_dir():
        return []
    return sorted(p for p in RUNS_DIR.iterdir() if (p / "run.json").is_file())


__all__ = ["settle", "compared", "open_compare", "sample_run", "one_mode_run", "failed_only_run",
           "no_steps_run", "large_run", "committed_runs", "load_committed", "multi_host_run",
           "open_hosts"]
