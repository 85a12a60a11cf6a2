"""Compare two modes: what explains the difference, category by category, and the op diff."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Select, Static

from traceinsight import present as fmt
from traceinsight.compare import Comparison
from traceinsight.model import Run
from traceinsight.tui.frame_table import Column, FrameTable

HALF = 12  # cells on each side of the signed bar's axis
ZERO_MS = 0.005  # a category under 5 µs/step in both modes gets no row of its own

CHANGE_STYLE = {"only in a": "bold #e15759", "only in b": "bold #59a14f", "slower": "#e15759",
                "faster": "#59a14f", "same": "dim"}


def default_pair(run: Run, selected: str | None) -> tuple[str | None, str | None]:
    """The selected mode against the fastest other one (the slower of the two first, so the
    differences read as 'what the slow mode spends extra')."""
    by_speed = run.by_speed()
    if len(by_speed) < 2:
        return (by_speed[0].name if by_speed else None), None
    names = [m.name for m in by_speed]
    a = selected if selected in names else names[-1]
    b = names[0] if a != names[0] else names[1]
    if run.modes[a].median_ms < run.modes[b].median_ms:
        a, b = b, a
    return a, b


def signed_bar(delta: float, scale: float, color: str) -> Text:
    out = Text(no_wrap=True)
    n = int(round(abs(delta) / scale * HALF)) if fmt.is_num(delta) and scale > 0 else 0
    n = min(HALF, n)
    if fmt.is_num(delta) and delta < 0:
        out.append(" " * (HALF - n)).append("█" * n, style=color).append("│").append(" " * HALF)
    else:
        out.append(" " * HALF).append("│").append("█" * n, style=color).append(" " * (HALF - n))
    return out


class CategoryDiffTable(DataTable):
    def __init__(self, comparison: Comparison, **kwargs) -> None:
        # No cursor: it would paint over the bars' colours, and no row leads anywhere.
        super().__init__(cursor_type="none", zebra_stripes=True, **kwargs)
        self.comparison = comparison

    def on_mount(self) -> None:
        c = self.comparison
        self.add_columns("category", Text(fmt.safe(c.a), justify="right"), Text(fmt.safe(c.b), justify="right"),
                         Text("Δ ms/step", justify="right"), f"{'faster':>{HALF}} {'slower':<{HALF}}")
        cats = c.table("categories")
        scale = float(np.nanmax(np.abs(np.asarray(cats["delta_ms"], dtype=float)))) if len(cats) else 0.0
        for r in cats.records():
            if is_zero(r["a_ms"]) and is_zero(r["b_ms"]):     # listed once under the table instead
                continue
            color = fmt.CATEGORY_COLORS.get(r["category"], "white")
            self.add_row(Text.assemble(("■ ", color), r["category"]),
                         Text(fmt.ms(r["a_ms"]), justify="right"), Text(fmt.ms(r["b_ms"]), justify="right"),
                         Text(fmt.signed_ms(r["delta_ms"]), justify="right", style="bold"),
                         signed_bar(r["delta_ms"], scale, color), key=r["category"])


def is_zero(v) -> bool:
    return not fmt.is_num(v) or abs(v) < ZERO_MS


def zero_categories(c: Comparison) -> list[str]:
    return [r["category"] for r in c.table("categories").records()
            if is_zero(r["a_ms"]) and is_zero(r["b_ms"])]


def op_columns(a: str, b: str) -> list[Column]:
    a, b = fmt.safe(a), fmt.safe(b)
    return [
        Column("change", "change", lambda v: Text({"only in a": f"only in {a}", "only in b": f"only in {b}"}
                                                  .get(v, str(v)), style=CHANGE_STYLE.get(v, ""))),
        Column("delta_ms", "Δ ms/step", fmt.signed_ms, numeric=True),
        Column("a_ms", a, fmt.ms, numeric=True),
        Column("b_ms", b, fmt.ms, numeric=True),
        Column("op", "op"),
        Column("type", "type"),
        Column("thread", "thread"),
    ]


class CompareScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("/", "filter", "Filter"),
        Binding("x", "swap", "Swap"),
    ]

    def __init__(self, run: Run, a: str | None, b: str | None) -> None:
        super().__init__()
        self.run = run
        self.a = a
        self.b = b
        self.comparison: Comparison | None = None
        # a worker is comparing (or about to): "Comparing a with b …" is shown
        self.pending = a is not None and b is not None and a != b
        self._shown_once = False

    def compose(self) -> ComposeResult:
        options = [(Text(fmt.safe(m.name)), m.name) for m in self.run.ok_modes()]
        with Horizontal(id="pickers"):
            yield Label("compare")
            yield Select(options, value=self.a if self.a else Select.NULL, allow_blank=self.a is None,
                         id="pick-a", compact=True)
            yield Label("with")
            yield Select(options, value=self.b if self.b else Select.NULL, allow_blank=self.b is None,
                         id="pick-b", compact=True)
        yield Vertical(id="compare-body")
        yield Footer()

    async def on_mount(self) -> None:
        await self.rebuild()

    async def rebuild(self) -> None:
        body = self.query_one("#compare-body", Vertical)
        await body.remove_children()
        self.comparison = None
        self.pending = False
        if self.a is None or self.b is None or self.a == self.b:
            text = ("Choose two different modes." if self.a is not None and self.a == self.b else
                    f"Comparing needs two modes that ran; this run has {len(self.run.ok_modes())}.")
            await body.mount(Static(text, classes="missing"))
            return
        await body.mount(Static(Text(f"Comparing {fmt.safe(self.a)} with {fmt.safe(self.b)} …"),
                                classes="missing"))
        # The op diff of two modes with hundreds of thousands of ops takes a second: off the UI thread.
        self.pending = True
        self.run_worker(functools.partial(self._compare, self.a, self.b), thread=True,
                        exclusive=True, group="compare", exit_on_error=False)

    @dataclass
    class Compared(Message):
        comparison: Comparison

    def _compare(self, a: str, b: str) -> None:
        """Runs in a worker thread; hands the comparison to the screen as a message."""
        self.post_message(self.Compared(self.run.compare(a, b)))

    async def on_compare_screen_compared(self, message: Compared) -> None:
        await self.show_comparison(message.comparison)

    async def show_comparison(self, c: Comparison) -> None:
        if (c.a, c.b) != (self.a, self.b):    # the user picked another pair meanwhile
            return
        widgets = [Static(Text(fmt.safe(c.sentence(), None), style="bold"), id="sentence"),
                   CategoryDiffTable(c, id="category-diff")]
        zeros = zero_categories(c)
        if zeros:
            widgets.append(Static(Text(f"{', '.join(zeros)}: 0 in both modes", style="dim"),
                                  id="zero-categories"))
        if c.table("ops").empty:
            widgets.append(Static("Neither mode has ops to compare.", classes="missing"))
        else:
            widgets.append(Static(Text(fmt.safe(op_diff_heading(c), None), style="bold"), classes="heading"))
            # the sortable, filterable table is pandas': it gets a DataFrame of the op diff
            widgets.append(FrameTable(c.table("ops").to_pandas(), op_columns(c.a, c.b), filter_columns=["op", "type", "change"],
                                      noun="ops", placeholder="/ filter ops (name, type, 'only', 'slower')",
                                      detail=lambda r: op_diff_detail(r, c.a, c.b), id="op-diff"))
        body = self.query_one("#compare-body", Vertical)
        await body.remove_children()
        await body.mount(*widgets)
        if self.comparison is None and not self._shown_once:
            # First view: arrows move in the op diff (a focused picker would open on "down").
            self._shown_once = True
            for table in self.query("#op-diff DataTable"):
                table.focus()
        self.comparison = c
        self.pending = False

    async def on_select_changed(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if event.select.id == "pick-a":
            if value == self.a:
                return
            self.a = value
        else:
            if value == self.b:
                return
            self.b = value
        await self.rebuild()

    async def action_swap(self) -> None:
        self.a, self.b = self.b, self.a
        with self.prevent(Select.Changed):
            self.query_one("#pick-a", Select).value = self.a if self.a else Select.NULL
            self.query_one("#pick-b", Select).value = self.b if self.b else Select.NULL
        await self.rebuild()

    def action_filter(self) -> None:
        tables = self.query("#op-diff")
        if tables:
            tables.first(FrameTable).focus_filter()


def op_diff_detail(row, a: str, b: str) -> Text:
    return Text.assemble((fmt.safe(row["op"]), "bold"),
                         f"  {fmt.safe(row['type'])} · {fmt.safe(row['thread'])} thread · ",
                         f"{fmt.safe(a)} {fmt.ms(row['a_ms'])}, {fmt.safe(b)} {fmt.ms(row['b_ms'])} ms/step")


def op_diff_heading(c: Comparison) -> str:
    counts = Counter(c.table("ops")["change"].tolist())
    return (f"Op diff: {counts['only in a']} only in {c.a}, {counts['only in b']} only "
            f"in {c.b}, {counts['slower']} slower, {counts['faster']} faster "
            f"(by |Δ|; s: sort)")
