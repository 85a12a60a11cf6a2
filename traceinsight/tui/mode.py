"""Mode detail: categories, ops, Python hotspots, retraces and per-step times of one mode."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from traceinsight import present as fmt
from traceinsight.analysis.step_marks import StepSeries
from traceinsight.columns import Columns
from traceinsight.model import ModeResult
from traceinsight.tui.category_table import CategoryTable
from traceinsight.tui.frame_table import Column, FrameTable
from traceinsight.tui.hotspots import HotspotTree
from traceinsight.tui.step_chart import StepChart

OP_COLUMNS = [
    Column("self_ms_per_step", "traced self ms/step", fmt.ms, numeric=True),
    Column("share", "share of thread", fmt.percent, numeric=True),
    Column("calls_per_step", "calls/step", fmt.count, numeric=True),
    Column("ms_per_call", "ms/call", fmt.ms, numeric=True),
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
STAGE_COLUMNS = [
    Column("ms_per_step", "traced self ms/step", fmt.ms, numeric=True),
    Column("calls_per_step", "calls/step", fmt.count, numeric=True),
    Column("self_ms", "self ms (trace)", fmt.ms, numeric=True),
    Column("total_ms", "total ms (trace)", fmt.ms, numeric=True),
    Column("count", "calls (trace)", fmt.count, numeric=True),
    Column("share", "share", fmt.percent, numeric=True),
    Column("parallel", "parallel calls"),
    Column("stage", "tf.data stage"),
]


def _stage_frame(stages: Columns) -> pd.DataFrame:
    """The stage table with each stage's recorded parallelism in words (``4``, ``auto 2``, ``–``),
    as the reports show it."""
    df = stages.to_pandas()
    if not df.empty:
        df["parallel"] = [fmt.parallelism(p, a) for p, a in
                          zip(df.get("parallel_calls", [None] * len(df)),
                              df.get("autotuned", [None] * len(df)))]
    return df

LAYER_COLUMNS = [
    Column("ms_per_step", "self ms/step", fmt.ms, numeric=True),
    Column("share", "share", fmt.percent, numeric=True),
    Column("calls_per_step", "op calls/step", fmt.count, numeric=True),
    Column("ops", "ops", fmt.count, numeric=True),
    Column("source", "placed by"),
    Column("layer", "layer"),
]

# an eager mode's layers (the python-tracer pass's layer frames) add the time by category and
# the layer calls per step; op tables' layers have none of these columns
EAGER_LAYER_COLUMNS = [
    Column("layer_calls_per_step", "layer calls/step", fmt.count, numeric=True),
    *(Column(f"{c}_ms", f"{c} ms", fmt.ms, numeric=True)
      for c in ("op", "dispatch", "input", "python", "other")),
]

# this mode's rows of the cross-mode layer view (``RunFigures.layer_matrix``) against the mode
# each is compared with
LAYER_RATIO_COLUMNS = [
    Column("ratio_text", "ratio [95% CI]"),
    Column("ms_per_step", "ms/step here", fmt.ms, numeric=True),
    Column("versus_ms", "ms/step there", fmt.ms, numeric=True),
    Column("median_ms", "median ms here", fmt.ms, numeric=True),
    Column("steps", "steps", fmt.count, numeric=True),
    Column("layer", "layer"),
]


def layer_ratio_frame(matrix: Columns, mode: str) -> pd.DataFrame:
    """``mode``'s rows of the cross-mode layer view that are compared with another mode, with that
    mode's ms/step beside them and the ratio cell as every page writes it."""
    rows = [r for r in matrix.records() if r["mode"] == mode and r["versus"]] if not matrix.empty \
        else []
    there = {(r["layer"], r["mode"]): r["ms_per_step"] for r in matrix.records()} if rows else {}
    return pd.DataFrame([{**r, "versus_ms": there.get((r["layer"], r["versus"])),
                          "ratio_text": fmt.layer_ratio(r)} for r in rows])


KERNEL_COLUMNS = [
    Column("ms_per_step", "device ms/step", fmt.ms, numeric=True),
    Column("share", "share", fmt.percent, numeric=True),
    Column("calls", "calls", fmt.count, numeric=True),
    Column("op_type", "type"),
    Column("op", "framework op"),
    Column("kernel", "kernel"),
]


def kernel_detail(row: pd.Series) -> Text:
    return Text.assemble((str(row["kernel"]), "bold"), f"  for {row['op']} ({row['op_type']}) · ",
                         f"{fmt.ms(row['ms_per_step'])} ms/step, {fmt.count(row['calls'])} calls")


def device_text(devices: pd.DataFrame) -> Text:
    """Per device, median ms per steady step: the slowest device sets the step."""
    text = Text("Per device, median ms per steady step (kernels = summed kernel time; idle = step "
                "- busy):\n", style="bold")
    for r in devices.itertuples():
        text.append(f"{r.host} {r.device}: step {fmt.ms(r.wall_ms)}, kernels {fmt.ms(r.compute_ms)}, "
                    f"H2D {fmt.ms(r.h2d_ms)}, D2H {fmt.ms(r.d2h_ms)}, D2D {fmt.ms(r.d2d_ms)}, "
                    f"idle {fmt.ms(r.idle_ms)}, host launches {fmt.ms(r.launch_ms)}"
                    + (f", device span {fmt.ms(r.span_ms)}, ends {fmt.ms(r.after_host_ms)} after "
                       "the host step" if pd.notna(getattr(r, "after_host_ms", None)) else "")
                    + ("  ← slowest\n" if r.slowest else "\n"))
    return text


def with_per_call(ops: pd.DataFrame, per_call: Sequence[float] | None) -> pd.DataFrame:
    """The ops table plus self time per call (``per_call``, in the table's order: the run's
    ``RunFigures.op_ms_per_call``; none for a mode shown without its run's figures)."""
    return ops.assign(ms_per_call=list(per_call) if per_call is not None else math.nan)


def op_detail(row: pd.Series) -> Text:
    return Text.assemble((fmt.safe(row["op"]), "bold"),
                         f"  {fmt.safe(row['type'])} · {fmt.safe(row['thread'])} thread · ",
                         f"{fmt.ms(row['self_ms_per_step'])} ms/step self, "
                         f"{fmt.count(row['calls_per_step'])} calls/step")


def retrace_detail(row: pd.Series) -> Text:
    return Text.assemble((fmt.safe(row["function"]), "bold"),
                         f": {fmt.count(row['traced_calls'])} of {fmt.count(row['calls'])} calls traced, "
                         f"{fmt.ms(row['tracing_ms'])} ms tracing, "
                         f"{fmt.ms(row['compile_ms'])} ms compiling. ",
                         ("What changed: ", "bold"), fmt.safe(row["changes"] or "unknown", 2000))


def mode_headline(mode: ModeResult, row: pd.Series | None) -> Text:
    text = Text()
    text.append(fmt.safe(mode.name), style="bold")
    if not mode.ok:
        return text.append(f"  {fmt.safe(mode.status)}: {fmt.safe(mode.error or 'no reason recorded', 2000)}",
                           style="bold red")
    if row is not None and fmt.is_num(row["median_ms"]):
        text.append(f"  {fmt.ms(row['median_ms'])} ms/step", style="bold")
        text.append(f" (IQR {fmt.ms(row['p25_ms'])}–{fmt.ms(row['p75_ms'])}, n={int(row['n'])})")
        text.append(f" · {fmt.ratio_ci(row['ratio'], row['ratio_lo'], row['ratio_hi'])} the fastest")
        if isinstance(row["ratio_note"], str) and row["ratio_note"]:   # no interval, timed apart
            text.append(f" ({fmt.safe(row['ratio_note'], 300)})")
    if row is not None and fmt.is_num(row["first_step_ms"]):
        text.append(f" · first step {fmt.ms(row['first_step_ms'])} ms")
    if row is not None and fmt.is_num(row["distortion"]):
        text.append(f" · profiler {fmt.percent(row['distortion'], signed=True)}")
    lines = []
    mem = memory_line(mode)
    if mem:
        lines.append(mem)
    if mode.step_rule:
        lines.append(f"steps: {fmt.safe(mode.step_rule, 2000)}")
    if mode.correction is not None and mode.host_events_recorded:
        lines.append(f"breakdown: {mode.correction.method}")
    lines.extend(fmt.safe(n, 2000) for n in mode.notes)
    if lines:
        text.append("\n" + "\n".join(lines), style="dim")
    return text


def memory_line(mode: ModeResult) -> str | None:
    """The mode's memory in a line (``ModeResult.memory_figures``), or None where none is
    recorded."""
    m = mode.memory_figures()
    parts = []
    if fmt.is_num(m.peak_rss_bytes):
        of = "the timing phase" if m.rss_basis == "phase" else "the whole process"
        parts.append(f"peak RSS {fmt.mib(m.peak_rss_bytes)} MiB while timed untraced (peak of {of})")
    if fmt.is_num(m.allocations):
        parts.append(f"{fmt.count(m.allocations)} allocations/step, "
                     f"{fmt.mib(m.requested_bytes)} MiB requested/step, allocator peak "
                     f"{fmt.mib(m.peak_in_use_bytes)} MiB in a step (traced)")
    return "memory: " + "; ".join(parts) if parts else None


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
        Binding("l", "timeline", "Timeline"),
        # the tabs move with ← / → from the tables too (their cursors are rows: ← / → are free);
        # priority, so a focused table does not swallow them; an input keeps them (SkipAction)
        Binding("left", "tab(-1)", "Previous tab", show=False, priority=True),
        Binding("right", "tab(1)", "Next tab", show=False, priority=True),
    ]

    def __init__(self, mode: ModeResult, summary_row: pd.Series | None,
                 op_ms_per_call: Sequence[float] | None = None,
                 step_series: Sequence[StepSeries] | None = None,
                 layer_matrix: Columns | None = None) -> None:
        super().__init__()
        self.mode = mode
        # the run's cross-mode layer view (``RunFigures.layer_matrix``); none for a mode shown
        # without its run's figures
        self.layer_ratios = layer_ratio_frame(layer_matrix if layer_matrix is not None
                                              else Columns(), mode.name)
        self.summary_row = summary_row
        self.op_ms_per_call = op_ms_per_call
        # the run's ``RunFigures.step_series``; none for a mode shown without its run's figures
        self.step_series = tuple(step_series) if step_series is not None else None
        self._filled: set[str] = set()

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
            # Panes are filled when first shown: a mode of a large run holds big tables.
            yield TabPane("Categories", id="tab-categories")
            yield TabPane(f"Ops ({len(m.table('ops')):,})", id="tab-ops")
            yield TabPane("Python", id="tab-python")
            yield TabPane(f"Retraces ({len(m.table('retraces'))})", id="tab-retraces")
            if not m.table("layers").empty:  # graph / XLA op scopes, or eager python-tracer frames
                yield TabPane(f"Layers ({int(m.table('layers')['placed'].sum())})", id="tab-layers")
            if not self.layer_ratios.empty:   # the same layers in the mode it is compared with
                # Content, not markup: a mode's name is data
                yield TabPane(Content(f"Layers vs {fmt.safe(self.layer_ratios['versus'].iloc[0])}"),
                              id="tab-layer-ratios")
            yield TabPane("Steps", id="tab-steps")
            if not m.table("stages").empty:  # tf.data traces only: the others keep their tabs
                yield TabPane(f"tf.data ({len(m.table('stages'))})", id="tab-tfdata")
            if not m.table("devices").empty:  # GPU traces only: CPU runs keep their tabs
                yield TabPane(f"Device ({len(m.table('devices'))})", id="tab-device")
        yield Footer()

    def pane_content(self, pane_id: str) -> list:
        m = self.mode
        # The panes' tables filter, sort and group with pandas: each builds its DataFrame here,
        # from the mode's columns, once, when the pane is first shown.
        if pane_id == "tab-categories":
            if not m.host_events_recorded:
                return [Static(Text("Host categories not recorded: this trace holds no host events "
                                    "to split (see the notes above). The Device tab has what the "
                                    "trace can tell.", style="italic"), classes="missing")]
            if m.table("breakdown").empty:
                return [Static("No steps were found in the trace, so there is no breakdown.",
                               classes="missing")]
            out = [CategoryTable(m, id="categories"), Static(id="category-help")]
            if not m.table("other").empty:
                out.append(Static(other_text(m.table("other").to_pandas()), id="other-events"))
            return out
        if pane_id == "tab-ops":
            if m.table("ops").empty:
                return [Static("No ops in this trace.", classes="missing")]
            ops = with_per_call(m.table("ops").to_pandas(), self.op_ms_per_call)
            return [FrameTable(ops, OP_COLUMNS, filter_columns=["op", "type", "thread"], noun="ops",
                               placeholder="/ filter ops by name, type or thread", detail=op_detail,
                               id="ops")]
        if pane_id == "tab-python":
            if m.table("hotspots").empty:
                return [Static(python_missing_text(m), classes="missing")]
            return [HotspotTree(m.table("hotspots").to_pandas(), id="hotspots")]
        if pane_id == "tab-retraces":
            if m.table("retraces").empty:
                return [Static("No tf.function was traced in this mode.", classes="missing")]
            return [FrameTable(m.table("retraces").to_pandas(), RETRACE_COLUMNS, filter_columns=["function", "changes"],
                               noun="functions", placeholder="/ filter functions",
                               detail=retrace_detail, id="retraces")]
        if pane_id == "tab-layers":
            table = m.table("layers").to_pandas()
            cols = LAYER_COLUMNS[:-1] + [c for c in EAGER_LAYER_COLUMNS if c.key in table] \
                + LAYER_COLUMNS[-1:]
            return [Static(Text(fmt.LAYERS_TITLE, style="dim")),
                    FrameTable(table, cols, filter_columns=["layer"],
                               noun="layers", placeholder="/ filter layers", id="layers")]
        if pane_id == "tab-layer-ratios":
            versus = self.layer_ratios["versus"].iloc[0]
            return [Static(Text(f"This mode's layers against {fmt.safe(versus)} (the fastest mode of its "
                                f"program doing the same work). {fmt.LAYER_RATIO_NOTE}",
                                style="dim")),
                    FrameTable(self.layer_ratios, LAYER_RATIO_COLUMNS, filter_columns=["layer"],
                               noun="layers", placeholder="/ filter layers", id="layer-ratios")]
        if pane_id == "tab-steps":
            return [VerticalScroll(StepChart(self.step_series, m.table("steps").to_pandas(), id="steps"))]
        if pane_id == "tab-tfdata":
            return [Static(Text(fmt.STAGE_TITLE, style="dim")),
                    FrameTable(_stage_frame(m.table("stages")), STAGE_COLUMNS, filter_columns=["stage"],
                               noun="stages", placeholder="/ filter stages", id="tfdata")]
        if pane_id == "tab-device":
            out = [Static(device_text(m.table("devices").to_pandas()), id="devices")]
            if not m.table("kernels").empty:
                out.append(FrameTable(m.table("kernels").to_pandas(), KERNEL_COLUMNS,
                                      filter_columns=["op", "op_type", "kernel"], noun="kernels",
                                      placeholder="/ filter kernels by op, type or name",
                                      detail=kernel_detail, id="kernels"))
            return out
        return []

    async def fill_pane(self, pane_id: str) -> None:
        if pane_id in self._filled:
            return
        self._filled.add(pane_id)
        await self.query_one(f"#{pane_id}", TabPane).mount(*self.pane_content(pane_id))

    async def on_mount(self) -> None:
        if not self.mode.ok:
            return
        await self.fill_pane("tab-categories")
        if not self.mode.table("breakdown").empty and self.mode.host_events_recorded:
            self.query_one(CategoryTable).focus()

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            await self.fill_pane(event.pane.id)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if isinstance(event.data_table, CategoryTable):
            self.query_one("#category-help", Static).update(
                Text(event.data_table.highlighted_help, style="dim"))

    def action_tab(self, step: int) -> None:
        from textual.actions import SkipAction
        from textual.widgets import Input, Tabs
        focused = self.focused
        if not self.mode.ok or isinstance(focused, Input) or (
                isinstance(focused, DataTable) and focused.cursor_type in ("cell", "column")):
            raise SkipAction()
        tabs = self.query_one(TabbedContent).query_one(Tabs)
        if step < 0:
            tabs.action_previous_tab()
        else:
            tabs.action_next_tab()

    def action_timeline(self) -> None:
        """One step of this mode, event by event (``tui/timeline.py``)."""
        if not self.mode.ok:
            self.notify("This mode did not run: there is no step to draw.")
            return
        from traceinsight.tui.timeline import TimelineScreen
        self.app.push_screen(TimelineScreen(self.mode))

    async def action_filter(self) -> None:
        if not self.mode.ok or self.mode.table("ops").empty:
            self.notify("No ops to filter in this mode.")
            return
        self.query_one(TabbedContent).active = "tab-ops"
        await self.fill_pane("tab-ops")
        self.query_one("#ops", FrameTable).focus_filter()


def other_text(other: pd.DataFrame, top: int = 8) -> Text:
    text = Text("TensorFlow events no rule places yet ('other'), ms/step:\n", style="bold")
    for r in other.sort_values(["ms_per_step", "name"], ascending=[False, True],
                               kind="stable").head(top).itertuples():
        text.append(f"{fmt.ms(r.ms_per_step):>8}  {fmt.safe(r.name)}  ×{fmt.count(r.count)}\n")
    if len(other) > top:
        text.append(f"… {len(other) - top} more", style="italic")
    return text
