"""Terminal tables of an analysed run (rich), for ``traceinsight analyze``.

Figures are formatted by ``traceinsight.present``; every string from a trace (op, function, file,
mode names, errors, notes) goes through ``present.safe`` and into a rich ``Text`` (never parsed as
markup), so escape codes, bidi controls and brackets in names reach the terminal as visible text.
Numeric columns are never narrower than their widest figure: piped output (80 columns when not a
terminal) folds the name columns, never a median.
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from traceinsight import present
from traceinsight.model import CATEGORIES, Run


def _s(v: Any) -> Text:
    """A trace string as rich Text (shown literally)."""
    return Text(present.safe(v))


def _table(title: str, columns: Sequence[tuple[str, bool]], rows: list[list[Any]]) -> Table:
    """``columns``: (header, numeric). Numeric columns keep their widest cell whole."""
    t = Table(title=Text(title), title_justify="left")
    for i, (header, numeric) in enumerate(columns):
        if numeric:
            width = max([len(header)] + [len(str(r[i])) for r in rows])
            t.add_column(header, justify="right", no_wrap=True, min_width=width)
        else:
            t.add_column(header, justify="left", overflow="fold")
    for r in rows:
        t.add_row(*r)
    return t


def render_analysis(run: Run, *, top: int = 10, modes: list[str] | None = None,
                    console: Console | None = None) -> None:
    console = console or Console()
    ms = present.ms
    wanted = [m for m in run.modes.values() if modes is None or m.name in modes]
    summary = run.summary().set_index("mode")

    rows: list[list[Any]] = []
    for m in wanted:
        if not m.ok:
            rows.append([_s(m.name), "", "", "", "",
                         Text.assemble((present.safe(m.status), "red"), ": ",
                                       present.safe(m.error or ""))])
            continue
        s = summary.loc[m.name]
        n = int(s["n"]) if present.is_num(s["n"]) else 0
        rows.append([_s(m.name), ms(s["median_ms"]), present.ms_range(s["p25_ms"], s["p75_ms"]),
                     present.ratio_ci(s["ratio"], s["ratio_lo"], s["ratio_hi"]),
                     ms(s["first_step_ms"]), f"ok, {n} timed steps"])
    console.print(_table(f"{present.safe(run.name)}: ms per step",
                         [("mode", False), ("median", True), ("IQR", True),
                          ("×fastest [95% CI]", True), ("first step", True),
                          ("status / steps", False)], rows))

    rows = []
    for m in wanted:
        if m.ok:
            cats = m.category_ms()
            rows.append([_s(m.name), *[ms(cats[k]) for k in CATEGORIES]])
    console.print(_table("where a steady step's time goes (ms, median per category)",
                         [("mode", False)] + [(c, True) for c in CATEGORIES], rows))

    for m in wanted:
        if not m.ok:
            continue
        console.rule(Text(present.safe(m.name), style="bold"))
        first = ""
        if m.first_step is not None:
            parts = ", ".join(f"{k} {ms(v)}" for k, v in m.first_step.items() if v > 0.0005)
            first = f", first step apart: {ms(m.first_step.sum())} ms ({parts})"
        console.print(Text(f"steps: {present.safe(m.step_rule)}; {len(m.steady_steps)} steady "
                           f"step(s){first}"))
        for note in m.notes:
            console.print(Text.assemble(("note:", "yellow"), " ", present.safe(note, None)))
        if not m.ops.empty:
            console.print(_table("top ops (self ms per step)",
                                 [("op", False), ("type", False), ("thread", False),
                                  ("calls/step", True), ("self ms/step", True), ("share", True)],
                                 [[_s(r.op), _s(r.type), _s(r.thread), present.count(r.calls_per_step),
                                   ms(r.self_ms_per_step), present.percent(r.share)]
                                  for r in m.ops.head(top).itertuples()]))
        if not m.retraces.empty:
            console.print(_table("tf.function calls and retraces",
                                 [("function", False), ("calls", True), ("traced", True),
                                  ("tracing ms", True), ("compile ms", True),
                                  ("what the trace shows", False)],
                                 [[_s(r.function), present.integer(r.calls),
                                   present.integer(r.traced_calls), ms(r.tracing_ms),
                                   ms(r.compile_ms), Text(present.safe(r.changes, 2000))]
                                  for r in m.retraces.head(top).itertuples()]))
        if not m.hotspots.empty:
            console.print(_table("Python hotspots (ms per step)",
                                 [("function", False), ("file:line", False), ("group", False),
                                  ("self", True), ("inclusive", True), ("calls/step", True)],
                                 [[_s(r.function), _s(present.where(r.file, r.line)), _s(r.group),
                                   ms(r.self_ms), ms(r.inclusive_ms), present.count(r.calls_per_step)]
                                  for r in m.hotspots.head(top).itertuples()]))
        if not m.other.empty:
            console.print(_table("events without a rule (other)",
                                 [("name", False), ("ms/step", True), ("count", True)],
                                 [[_s(r.name), ms(r.ms_per_step), present.integer(r.count)]
                                  for r in m.other.head(top).itertuples()]))
