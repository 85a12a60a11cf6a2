"""The first screen: one row per mode, and the categories of every mode on one scale."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from traceinsight import present as fmt
from traceinsight.finding import Finding
from traceinsight.model import CorrectionKind, Run
from traceinsight.stats import VsFastest
from traceinsight.tui.bars import BarRow, CategoryBars, legend
from traceinsight.tui.mode_table import ModeTable


class Viewer(Protocol):
    """What the overview asks of the app that shows it (``tui.app.TraceinsightApp``), named here
    so that the screen does not import the app that imports it."""

    multi_host: bool

    def summary(self) -> Any: ...
    def findings(self) -> tuple[list[Finding], str | None]: ...
    def show_mode(self, name: str) -> None: ...

TOP_FINDINGS = 3


def run_title(run: Run) -> Text:
    env = run.environment
    bits = [fmt.safe(run.name)]
    workload = run.manifest.get("workload", {})
    if workload.get("path"):
        bits.append(fmt.safe(Path(str(workload["path"])).name))
    if env.get("tensorflow"):      # run.json is data: escaped like any name
        bits.append(f"TF {fmt.safe(env['tensorflow'], 40)}")
    if env.get("keras"):
        bits.append(f"Keras {fmt.safe(env['keras'], 40)}")
    if env.get("cores"):
        bits.append(f"{fmt.safe(env['cores'], 20)} cores")
    if run.source != "run":
        bits.append("foreign traces: one mode per trace")
    return Text(" · ".join(bits), style="bold", no_wrap=True, overflow="ellipsis")


# the bars' heading by how the modes were drawn (``present.drawn_basis``)
BARS_HEADING = {
    fmt.DrawnBasis.UNTRACED: "Where the time goes (ms per untraced step by category, the "
                             "profiler's cost taken out; one scale)",
    fmt.DrawnBasis.TRACED: "Where the time goes (ms per traced step by category, the profiler's "
                           "cost inside: no untraced timing was captured; one scale)",
    fmt.DrawnBasis.MIXED: "Where the time goes (ms per step by category: untraced, the "
                          "profiler's cost taken out, where the mode was timed untraced, else "
                          "traced; one scale)"}


def bar_rows(run: Run) -> list[BarRow]:
    rows = []
    for m in run.modes.values():
        if not m.ok:
            rows.append(BarRow(fmt.safe(m.name), None,
                               f"{fmt.safe(m.status)}: {fmt.safe(m.error or 'no reason recorded', 2000)}"))
        elif m.table("breakdown").empty:     # the light tables: no pandas before the first frame
            rows.append(BarRow(fmt.safe(m.name), None, "no steps found in the trace: no breakdown"))
        else:
            # the user's step: a bar adds up to the mode's untraced median (the profiler's cost
            # taken out), as the reports draw it
            rows.append(BarRow(fmt.safe(m.name), {k: float(v) for k, v in m.category_means().items()}))
    return rows


def missing_notes(run: Run) -> list[str]:
    """What the user should know is missing or doubtful, one line each."""
    notes = []
    if not run.modes:
        notes.append("This run has no modes.")
    elif len(run.ok_modes()) == 1:
        notes.append("Only one mode succeeded: nothing to compare it with.")
    for m in run.modes.values():
        if not m.ok:  # listed with its reason among the bars
            continue
        if m.table("steps").empty:
            notes.append(f"{fmt.safe(m.name)}: no steps found in the trace "
                         f"({fmt.safe(m.step_rule or 'no step rule', 2000)}).")
        if m.table("hotspots").empty:
            notes.append(f"{fmt.safe(m.name)}: no python-tracer pass: no Python hotspots.")
    with_notes = [fmt.safe(m.name) for m in run.modes.values() if m.ok and m.notes]
    if with_notes:   # shown in full in each mode's detail
        notes.append(f"Notes on how {', '.join(with_notes)} {'was' if len(with_notes) == 1 else 'were'} "
                     f"measured: enter for the mode's detail.")
    return notes


def insights(run: Run, findings: tuple[list[Finding], str | None]) -> Text:
    """Why each mode is slower than the fastest (from compare_modes), then the top findings."""
    text = Text()
    for g in run.host_groups():     # multi-host profile sessions (none: nothing shown)
        from traceinsight.report import hosts_prose  # imported only where there are hosts
        text.append(f"Hosts of profile session {fmt.safe(g.session)} (h: side by side)\n",
                    style="bold")
        for sentence in (hosts_prose.spread_sentence(g), hosts_prose.category_sentence(g)):
            if sentence:
                text.append(f"• {fmt.safe(sentence, None)}\n")
    ok = run.by_speed()
    # where each mode stands is the summary's decision: a trace of another program is not
    # compared with the fastest (its difference would explain nothing)
    stands = {r["mode"]: r.get("vs_fastest") for r in run.table("summary").records()}
    other = [m.name for m in ok[1:] if stands.get(m.name) == VsFastest.ANOTHER_PROGRAM]
    compared = [m for m in ok[1:] if m.name not in other]
    if compared:
        text.append("Why slower than the fastest (c: compare)\n", style="bold")
        for m in reversed(compared):      # the slowest first
            text.append(f"• {fmt.safe(run.compare(m.name, ok[0].name).sentence(), None)}\n")
    if other:
        text.append(f"Not compared with {fmt.safe(ok[0].name)}: their ops show another program: "
                    f"{', '.join(fmt.safe(n) for n in other)}\n", style="italic")
    found, problem = findings
    if found:
        text.append("Top findings (f: all, with evidence and the fix)\n", style="bold")
        for f in found[:TOP_FINDINGS]:
            text.append(f"• {fmt.safe(f.title, None)}")
            if fmt.is_num(f.saving_ms):
                text.append(f"  ≈ {fmt.ms(f.saving_ms)} ms/step", style="bold")
            text.append("\n")
    elif problem:
        text.append(problem + "\n", style="italic")
    text.rstrip()
    return text


class OverviewScreen(Screen):
    """The run at a glance. Rows appear at once with each mode's own figures; the run's figures
    (the summary's intervals and ratios, the comparisons, the findings: computed with the run)
    are formatted by a worker thread, which builds the summary's DataFrame (pandas' import is
    the slow part) and posts them as ``FiguresReady``; ``figures`` holds them once shown, and
    ``figures_shown`` is set then (what a test, or a headless screenshot, waits for)."""

    @dataclass
    class FiguresReady(Message):
        summary: object | None          # Run.summary(), None when it could not be computed
        insights: Text                  # why each mode is slower, top findings (or the error)

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.figures: OverviewScreen.FiguresReady | None = None
        self.figures_shown = asyncio.Event()

    def compose(self) -> ComposeResult:
        yield Static(run_title(self.run), id="title")
        # One scroll for the page (many modes, a short terminal); tab reaches it, the mouse too.
        with VerticalScroll(id="overview-body"):
            yield ModeTable(self.run, id="modes")
            yield Static(Text(BARS_HEADING[fmt.drawn_basis(
                [m.correction is not None and m.correction.kind is CorrectionKind.TRACED
                 for m in self.run.ok_modes()])], style="bold"), classes="heading")
            yield CategoryBars(bar_rows(self.run), id="bars")
            yield Static(legend(), id="legend")
            yield Static(id="insights")
            notes = missing_notes(self.run)
            yield Static(Text("\n".join(notes), style="italic") if notes else "", id="missing")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ModeTable).focus()     # not the page scroll, which comes first in tab order
        self.call_after_refresh(self._first_frame_drawn)

    def _first_frame_drawn(self) -> None:
        # The summary's table needs pandas (its import takes a good part of a second): built off
        # the UI thread, after the first frame.
        self.run_worker(self._figures, thread=True, group="figures", exit_on_error=False)

    def _figures(self) -> None:
        """Runs in a worker thread; hands the figures to the screen as a message."""
        app = cast(Viewer, self.app)
        summary = None
        try:
            summary = app.summary()
            text = insights(self.run, app.findings())
        except Exception as e:  # noqa: BLE001 - say so on the screen rather than fail silently
            text = Text(f"Could not compute the run's figures: {type(e).__name__}: {fmt.safe(e)}",
                        style="bold red")
        self.post_message(self.FiguresReady(summary, text))

    def on_overview_screen_figures_ready(self, message: FiguresReady) -> None:
        if message.summary is not None:
            self.query_one(ModeTable).fill(message.summary)
        self.query_one("#insights", Static).update(message.insights)
        self.figures = message
        self.figures_shown.set()

    @property
    def selected_mode(self) -> str | None:
        return self.query_one(ModeTable).highlighted_mode

    def on_mode_table_chosen(self, event: ModeTable.Chosen) -> None:
        cast(Viewer, self.app).show_mode(event.mode)

    def on_key(self, event) -> None:
        # keys the help lists that act only on other screens: say where, instead of nothing
        from traceinsight.tui.help import overview_key_hint
        hint = overview_key_hint(event.key, cast(Viewer, self.app).multi_host)
        if hint:
            event.stop()
            self.notify(hint, timeout=5)
