"""Mode detail: categories, ops, Python hotspots, retraces and per-step times of one mode."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from traceinsight.model import ModeResult
from traceinsight.tui import fmt
from traceinsight.tui.category_table import CategoryTable
from traceinsight.tui.frame_table import Column, FrameTable
from traceinsight.tui.hotspots import HotspotTree
from traceinsight.tui.step_chart import StepChart

OP_COLUMNS = [
    Column("self_ms_per_step", "self ms/step", fmt.ms, numeric=True),
    Column("share", "share", fmt.percent, numeric=True),
    Column("calls_per_step", "calls/step", fmt.count, numeric=True),
    Column("thread", "thread"),
    Column("type", "type"),
    Column("op", "op"),
]
RETRACE_COLUMNS = [
    Column("function", "function"),
    Column("calls", "calls", fmt.count, numeric=True),
    Column("traced_calls", "traces", fmt.count, numeric=True),
    Column("tracing_ms", "tracing ms", fmt.ms, numeric=True),
    Column("compile_ms", "compile ms", fmt.ms, numeric=True),
    Column("changes", "what changed", lambda v: v or "unknown"),
]


def mode_headline(mode: ModeResult, row: pd.Series | None) -> Text:
    text = Text()
    text.append(mode.name, style="bold")
    if not mode.ok:
        return text.append(f"  {mode.status}: {mode.error or 'no reason recorded'}", style="bold red")
    if row is not None and fmt.is_num(row["median_ms"]):
        text.append(f"  {fmt.ms(row['median_ms'])} ms/step", style="bold")
        text.append(f" (IQR {fmt.ms(row['p25_ms'])}–{fmt.ms(row['p75_ms'])}, n={int(row['n'])})")
        text.append(f" · {fmt.ratio(row['ratio'], row['ratio_lo'], row['ratio_hi'])} the fastest")
    if row is not None and fmt.is_num(row["first_step_ms"]):
        text.append(f" · first step {fmt.ms(row['first_step_ms'])} ms")
    if row is not None and fmt.is_num(row["distortion"]):
        text.append(f" · profiler {fmt.percent(row['distortion'], signed=True)}")
    lines = []
    if mode.step_rule:
        lines.append(f"steps: {mode.step_rule}")
    lines.extend(mode.notes)
    if lines:
        text.append("\n" + "\n".join(lines), style="dim")
    return text


def step_series(mode: ModeResult) -> list[tuple[str, np.ndarray, np.ndarray]]:
    series = []
    t = mode.timing
    if t is not None and len(t.steps_s):
        vals = np.asarray(t.steps_s, dtype=float) * 1e3
        first = np.zeros(len(vals), dtype=bool)
        if t.first_step_s is not None:
            vals = np.concatenate([[t.first_step_s * 1e3], vals])
            first = np.concatenate([[True], first])
        series.append(("Timed steps (no profiler), ms", vals, first))
    if not mode.steps.empty:
        series.append(("Traced steps (host tracer), ms", mode.steps["wall_ms"].to_numpy(float),
                       mode.steps["first"].to_numpy(bool)))
    return series


def python_missing_text(mode: ModeResult) -> str:
    passes = mode.profile_options or {}
    if "python" not in passes:
        return ("No python-tracer pass in this mode, so no Python hotspots. Capture with the Python "
                "tracer to see which functions the 'python' time is spent in.")
    if not passes["python"].get("ok", True):
        return "The python-tracer pass did not record with the options asked for: no hotspots."
    return "The python-tracer pass recorded no Python frames."


class ModeScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("/", "filter", "Filter"),
        Binding("c", "app.compare", "Compare"),
    ]

    def __init__(self, mode: ModeResult, summary_row: pd.Series | None) -> None:
        super().__init__()
        self.mode = mode
        self.summary_row = summary_row

    @property
    def selected_mode(self) -> str:
        return self.mode.name

    def compose(self) -> ComposeResult:
        m = self.mode
        yield Static(mode_headline(m, self.summary_row), id="mode-headline")
        if not m.ok:
            yield Static(Text("This mode did not run, so there is nothing to break down. "
                              "Press escape to go back.", style="italic"), classes="missing")
            yield Footer()
            return
        with TabbedContent(id="mode-tabs"):
            with TabPane("Categories", id="tab-categories"):
                if m.breakdown.empty:
                    yield Static("No steps were found in the trace, so there is no breakdown.",
                                 classes="missing")
                else:
                    yield CategoryTable(m, id="categories")
                    yield Static(id="category-help")
                    if not m.other.empty:
                        yield Static(other_text(m.other), id="other-events")
            with TabPane(f"Ops ({len(m.ops):,})", id="tab-ops"):
                if m.ops.empty:
                    yield Static("No ops in this trace.", classes="missing")
                else:
                    yield FrameTable(m.ops, OP_COLUMNS, filter_columns=["op", "type", "thread"],
                                     noun="ops", placeholder="/ filter ops by name, type or thread",
                                     id="ops")
            with TabPane("Python", id="tab-python"):
                if m.hotspots.empty:
                    yield Static(python_missing_text(m), classes="missing")
                else:
                    yield HotspotTree(m.hotspots, id="hotspots")
            with TabPane(f"Retraces ({len(m.retraces)})", id="tab-retraces"):
                if m.retraces.empty:
                    yield Static("No tf.function was traced in this mode.", classes="missing")
                else:
                    yield FrameTable(m.retraces, RETRACE_COLUMNS, filter_columns=["function", "changes"],
                                     noun="functions", placeholder="/ filter functions",
                                     id="retraces")
            with TabPane("Steps", id="tab-steps"):
                with VerticalScroll():
                    yield StepChart(step_series(m), id="steps")
        yield Footer()

    def on_mount(self) -> None:
        if self.mode.ok and not self.mode.breakdown.empty:
            self.query_one(CategoryTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if isinstance(event.data_table, CategoryTable):
            self.query_one("#category-help", Static).update(
                Text(event.data_table.highlighted_help, style="dim"))

    def action_filter(self) -> None:
        if not self.mode.ok or self.mode.ops.empty:
            self.notify("No ops to filter in this mode.")
            return
        self.query_one(TabbedContent).active = "tab-ops"
        self.query_one("#ops", FrameTable).focus_filter()


def other_text(other: pd.DataFrame, top: int = 8) -> Text:
    text = Text("TensorFlow events no rule places yet ('other'), ms/step:\n", style="bold")
    for r in other.sort_values("ms_per_step", ascending=False).head(top).itertuples():
        text.append(f"{fmt.ms(r.ms_per_step):>8}  {r.name}  ×{fmt.count(r.count)}\n")
    if len(other) > top:
        text.append(f"… {len(other) - top} more", style="italic")
    return text
