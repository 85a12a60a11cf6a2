"""One step of a mode drawn as a timeline in the terminal: a row per thread (and nesting depth,
and device stream), each event a bar in its category's colour and letter (o op, d dispatch, t
tracing, c compile, i input, p python, x other), zoomable with keys. Works over
SSH with no browser; the Chrome-trace export (``traceinsight export``) stays for deep dives.

The rows are ``analysis.timeline.step_timeline``'s: the mode's own analysis of its host-traced
pass, made in a worker the first time the screen opens (the same analysis ``export`` draws). This
module only scales them to the screen's width and colours them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from traceinsight import present as fmt
from traceinsight.analysis import timeline as tl
from traceinsight.errors import TraceinsightError
from traceinsight.model import CATEGORIES, ModeResult

if TYPE_CHECKING:
    from traceinsight.analysis.mode import TraceAnalysis

LABEL_WIDTH = 26
ZOOM_STEP = 2.0
MAX_ZOOM = 4096.0
GAP = "·"


def ms_label(ps: float) -> str:
    return f"{fmt.ms(ps / 1e9)} ms"


def draw(t: tl.StepTimeline, zoom: float, centre: float, width: int) -> Text:
    """The step as text ``width`` columns wide: a header, a time axis, one line per row."""
    out = Text(no_wrap=True, overflow="crop")
    bar_w = max(10, width - LABEL_WIDTH - 1)
    v0, v1 = tl.view_window(t, zoom, centre)
    span = max(1, v1 - v0)
    # axis: the view's start and end, relative to the step's start
    left, right = ms_label(v0 - t.start_ps), ms_label(v1 - t.start_ps)
    axis = left + " " * max(1, bar_w - len(left) - len(right)) + right
    out.append(" " * LABEL_WIDTH + " ")
    out.append(axis[:bar_w] + "\n", style="dim")
    for row in t.rows:
        # the thread's name cut to fit, keeping what tells its rows apart (depth, kind)
        suffix = row.suffix if LABEL_WIDTH - len(row.suffix) >= 8 else ""
        room = LABEL_WIDTH - len(suffix)
        thread = fmt.safe(row.thread)
        label = (thread if len(thread) <= room else thread[:room - 1] + "…") + suffix
        out.append(f"{label:<{LABEL_WIDTH}} ", style="bold" if row.kind == "categories" else "")
        shown = tl.cells(row, v0, v1, bar_w)
        c = 0
        while c < bar_w:
            k = shown[c]
            end = c
            while end + 1 < bar_w and shown[end + 1] == k:
                end += 1
            n = end - c + 1
            if k is None:
                out.append(GAP * n, style="dim")
            else:
                category = CATEGORIES[int(row.category[k])]
                glyph = fmt.CATEGORY_GLYPHS[category]
                name = fmt.safe(row.names[k])
                # the category's letter, then the event's name where it fits, else the letter
                # throughout: the colour is never the only thing that tells categories apart
                text = (glyph + name[:n - 2] + " ").ljust(n) if n >= 6 else glyph * n
                out.append(text, style=f"black on {fmt.CATEGORY_COLORS[category]}")
            c = end + 1
        out.append("\n")
    if not t.rows:
        out.append("This step has no events to draw.\n", style="italic")
    # the view's width in time, so a zoomed view says how much one column is
    out.append(f"\n{' ' * LABEL_WIDTH} one column = {ms_label(span / bar_w)}", style="dim")
    return out


def header(mode: ModeResult, t: tl.StepTimeline, zoom: float) -> Text:
    text = Text()
    text.append(fmt.safe(mode.name), style="bold")
    text.append(f"  {t.which}: step {t.step_num}, {fmt.ms(t.wall_ms)} ms traced")
    if t.first:
        text.append(" (the first step: tracing and compile live here)")
    if t.partial:
        text.append(" (cut by the end of the trace)", style="bold red")
    text.append(f" · zoom ×{zoom:g}")
    if t.host_events_recorded:
        text.append("\n")
        for c in CATEGORIES:
            v = t.categories.get(c, float("nan"))
            if fmt.is_num(v) and v > 0:
                text.append(f" {fmt.CATEGORY_GLYPHS[c]} ", style=f"black on {fmt.CATEGORY_COLORS[c]}")
                text.append(f" {c} {fmt.ms(v)}  ")
    else:
        text.append("\nHost categories not recorded in this trace: events drawn without a split.",
                    style="italic")
    notes = [f"{t.events:,} events drawn"]
    if t.rows_not_drawn:
        notes.append(f"{t.rows_not_drawn} deeper or further rows not drawn")
    notes.append("traced times: the profiler's own cost is inside them (the mode's ms/step is "
                 "timed without it)")
    text.append("\n" + "; ".join(notes), style="dim")
    return text


class TimelineView(Widget):
    """The drawn step; redrawn when the step, the zoom or the size changes."""

    DEFAULT_CSS = "TimelineView { height: auto; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.timeline: tl.StepTimeline | None = None
        self.zoom = 1.0
        self.centre = 0.5

    def show(self, t: tl.StepTimeline) -> None:
        self.timeline = t
        self.refresh(layout=True)

    def render(self) -> Text:
        if self.timeline is None:
            return Text("Reading the mode's trace…", style="italic")
        return draw(self.timeline, self.zoom, self.centre, self.size.width or 100)

    def get_content_height(self, container, viewport, width: int) -> int:
        return 3 + (len(self.timeline.rows) if self.timeline else 1)


class TimelineScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("plus,equals_sign", "zoom(2)", "Zoom in", key_display="+"),
        Binding("minus", "zoom(0.5)", "Zoom out", key_display="-"),
        Binding("left", "pan(-1)", "Pan", key_display="←→"),
        Binding("right", "pan(1)", "Pan", show=False),
        Binding("0", "reset", "Whole step"),
        Binding("m", "step('median')", "Median step"),
        Binding("w", "step('slowest')", "Slowest"),
        Binding("1", "step('first')", "First step"),
        Binding("n", "next(1)", "Next step"),
        Binding("p", "next(-1)", "Previous", show=False),
    ]

    def __init__(self, mode: ModeResult) -> None:
        super().__init__()
        self.mode = mode
        self.analysis: TraceAnalysis | None = None
        self.error: str | None = None

    @property
    def selected_mode(self) -> str:
        return self.mode.name

    def compose(self) -> ComposeResult:
        yield Static(Text(fmt.safe(self.mode.name), style="bold"), id="timeline-header")
        with VerticalScroll(id="timeline-scroll"):
            yield TimelineView(id="timeline")
        yield Footer()

    def on_mount(self) -> None:
        self.load("median")

    @work(thread=True, exclusive=True)
    def load(self, which: str | int) -> None:
        try:
            analysis = self.analysis or tl.pass_analysis(self.mode)
            self.analysis = analysis
            t = tl.step_timeline(analysis, which)
        except TraceinsightError as e:
            self.app.call_from_thread(self.fail, str(e))
            return
        self.app.call_from_thread(self.shown, t)

    def fail(self, message: str) -> None:
        self.error = message
        self.query_one("#timeline-header", Static).update(
            Text.assemble((fmt.safe(self.mode.name), "bold"), "  no timeline: ",
                          fmt.safe(message, 2000)))
        view = self.query_one(TimelineView)
        view.timeline = None
        view.display = False

    def shown(self, t: tl.StepTimeline) -> None:
        view = self.query_one(TimelineView)
        view.zoom, view.centre = 1.0, 0.5
        view.show(t)
        self.query_one("#timeline-header", Static).update(header(self.mode, t, view.zoom))

    @property
    def current(self) -> tl.StepTimeline | None:
        return self.query_one(TimelineView).timeline

    def redraw(self) -> None:
        view = self.query_one(TimelineView)
        if view.timeline is not None:
            view.refresh()
            self.query_one("#timeline-header", Static).update(header(self.mode, view.timeline, view.zoom))

    def action_zoom(self, factor: float) -> None:
        view = self.query_one(TimelineView)
        view.zoom = min(MAX_ZOOM, max(1.0, view.zoom * factor))
        self.redraw()

    def action_pan(self, direction: int) -> None:
        view = self.query_one(TimelineView)
        half = 0.5 / view.zoom
        view.centre = min(1.0 - half, max(half, view.centre + direction * half / 2))
        self.redraw()

    def action_reset(self) -> None:
        view = self.query_one(TimelineView)
        view.zoom, view.centre = 1.0, 0.5
        self.redraw()

    def action_step(self, which: str) -> None:
        if self.current is not None:
            self.load(which)

    def action_next(self, delta: int) -> None:
        t = self.current
        if t is None:
            return
        num = tl.neighbour_step(t, delta)
        if num is None:
            self.notify("No more steps that way.")
            return
        self.load(num)
