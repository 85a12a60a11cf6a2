"""The ``?`` screen: keys, and what each category means."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from traceinsight import present as fmt
from traceinsight.model import CATEGORIES, CATEGORY_HELP

KEYS = [
    ("↑ ↓ ← →, tab", "move; shift+tab moves back"),
    ("enter", "drill down: a mode's detail (categories, ops, Python, retraces, steps)"),
    ("escape", "back to the previous screen"),
    ("c", "compare the selected mode with the fastest other mode (x swaps)"),
    ("f", "findings: what to change, largest saving first"),
    ("h", "hosts (runs with several hosts in a profile session): step time per host, the "
          "straggler, the spread"),
    ("r", "write a markdown report and show its path"),
    ("l", "a mode's timeline (from its detail): one step, a row per thread, each event a bar "
          "in its category's colour and letter (o op, d dispatch, t tracing, c compile, i input, "
          "p python, x other); + / - zoom, ← → pan, 0 whole step, m median, w slowest, "
          "1 first step, n / p next / previous step"),
    ("/", "filter the table as you type (enter or escape: back to the table)"),
    ("s, S / click header", "sort a table by the next column, reverse the sort / by that column"),
    ("t", "switch between dark and light themes"),
    ("?", "this help"),
    ("q", "quit"),
]


def overview_key_hint(key: str, multi_host: bool) -> str | None:
    """What to say when a key the help lists does nothing on the overview (None: nothing)."""
    if key == "h" and not multi_host:
        return ("h compares the hosts of a multi-host profile session; this run has none "
                "(one host per session).")
    if key == "s":
        return "s sorts the tables of a mode's detail (select a mode, enter) and of compare (c)."
    if key in ("slash", "/"):
        return "/ filters the ops of a mode's detail (select a mode, enter) and of compare (c)."
    return None


def help_text() -> Group:
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold", no_wrap=True, justify="right")
    keys.add_column()
    for key, what in KEYS:
        keys.add_row(key, what)
    cats = Table.grid(padding=(0, 1))
    cats.add_column(no_wrap=True)
    cats.add_column()
    for cat in CATEGORIES:
        cats.add_row(Text.assemble(("■ ", fmt.CATEGORY_COLORS[cat]), (cat, "bold")), CATEGORY_HELP[cat])
    return Group(
        Text("traceinsight view\n", style="bold"), keys,
        Text("\nCategories: every traced step's main-thread time is split into", style="bold"), cats,
        Text("\nms/step is the median of steps timed without the profiler; the category split comes "
             "from the host-traced steps ('profiler' = how much slower tracing made them).\n"
             "Press escape or ? to close.", style="dim"))


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(help_text())
