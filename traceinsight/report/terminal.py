"""Terminal tables of an analysed run (rich), for ``traceinsight analyze``: ``render(run,
TerminalOptions(top, modes))`` gives the rich renderables (tables, rules, lines), ``show`` prints
them on a console.

Figures are formatted by ``traceinsight.present``; every string from a trace (op, function, file,
mode names, errors, notes) goes through ``present.safe`` and into a rich ``Text`` (never parsed as
markup), so escape codes, bidi controls and brackets in names reach the terminal as visible text.
Tables come from ``present.rich_table``, printed by ``present.print_table``: on a terminal the name
columns fold, never a median; piped, every table at its natural width (nothing folded or cut).

It reads the run's tables in their light form (``ModeResult.table``, ``Run.table("summary")``), so
``traceinsight analyze`` never imports pandas.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from traceinsight import present
from traceinsight.model import CATEGORIES, CompileKind, Run
from traceinsight.report.options import TERMINAL_DEFAULTS, TerminalOptions


def _s(v: Any) -> Text:
    """A trace string as rich Text (shown literally)."""
    return Text(present.safe(v))


_table = present.rich_table


def _spec_table(title: str, cols: Sequence[present.ColumnSpec], records: list[dict]) -> Table:
    """A per-mode table by the column specs every renderer shares (``present``)."""
    rows = [[c.format(c.value(r)) if c.format is not None
             else Text(present.safe(c.value(r), 2000 if c.text else present.MAX_NAME))
             for c in cols] for r in records]
    return _table(title, [(c.label, c.numeric) for c in cols], rows)


def show(run: Run, options: TerminalOptions = TERMINAL_DEFAULTS,
         console: Console | None = None) -> None:
    """Print ``render(run, options)`` on ``console`` (default: stdout): tables by
    ``present.print_table`` (folded on a terminal, whole when piped), the rest as they are."""
    # no emoji codes: every string from a trace is Text already, and rich's emoji table alone
    # costs a noticeable share of analyze's start-up
    console = console or Console(emoji=False)
    for r in render(run, options):
        if isinstance(r, Table):
            present.print_table(console, r)
        else:
            console.print(r)


def render(run: Run, options: TerminalOptions = TERMINAL_DEFAULTS) -> list[Any]:
    """What ``traceinsight analyze`` prints, as rich renderables in order: the modes' summary,
    the category medians, the hosts of multi-host sessions, then each mode's rule, step line,
    notes and tables (the first ``top`` rows)."""
    top, modes = options.top, options.modes
    out: list[Any] = []
    ms = present.ms
    wanted = [m for m in run.modes.values() if modes is None or m.name in modes]
    summary = {r["mode"]: r for r in run.table("summary").records()}

    rows: list[list[Any]] = []
    for m in wanted:
        if not m.ok:
            rows.append([_s(m.name), "", "", "", "",
                         Text.assemble((present.safe(m.status), "red"), ": ",
                                       present.safe(m.error or ""))])
            continue
        s = summary[m.name]
        n = int(s["n"]) if present.is_num(s["n"]) else 0
        rows.append([_s(m.name), ms(s["median_ms"]), present.ms_range(s["p25_ms"], s["p75_ms"]),
                     present.ratio_ci(s["ratio"], s["ratio_lo"], s["ratio_hi"]),
                     ms(s["first_step_ms"]), f"ok, {n} timed steps"])
    out.append(_table(f"{present.safe(run.name)}: ms per step",
                         [("mode", False), ("median", True), ("IQR", True),
                          ("×fastest [95% CI]", True), ("first step", True),
                          ("status / steps", False)], rows))
    for m in wanted:   # why a ratio has no interval or does not count (timed apart, ...)
        note = summary[m.name]["ratio_note"] if m.ok else None
        if isinstance(note, str) and note:
            out.append(Text(f"{present.safe(m.name)} × fastest: {note}", style="dim"))

    rows = []
    for m in wanted:
        if m.ok:
            cats = m.category_medians()
            rows.append([_s(m.name), *[ms(cats[k]) for k in CATEGORIES]])
    out.append(_table("where a steady step's time goes (ms, median per category, the profiler's cost "
                      "taken out)",
                         [("mode", False)] + [(c, True) for c in CATEGORIES], rows))

    names = {m.name for m in wanted}
    for group in run.host_groups():     # multi-host profile sessions: the hosts side by side
        if names & {h.mode for h in group.hosts}:
            from traceinsight.report.hosts_terminal import renderables
            out += renderables(group, top)

    for m in wanted:
        if not m.ok:
            continue
        out.append(Rule(Text(present.safe(m.name), style="bold")))
        first = ""
        split = m.first_step
        if split is not None:
            derived = m.compile_estimate is not None and m.compile_estimate.kind is CompileKind.DERIVED
            parts = ", ".join(f"{k}{' (derived)' if derived and k == 'compile' else ''} {ms(v)}"
                              for k, v in split.items() if v > 0.0005)
            first = f", first step apart: {ms(np.nansum(list(split.values())))} ms ({parts})"
        out.append(Text(f"steps: {present.safe(m.step_rule)}; {m.n_steady} steady "
                        f"step(s){first}"))
        c = m.correction
        if c is not None and m.host_events_recorded:
            out.append(Text(f"breakdown: traced mean step {ms(c.traced_ms)} ms"
                            + (f" → untraced median {ms(c.untraced_ms)} ms" if np.isfinite(c.untraced_ms) else "")
                            + f"; {c.method}"))
        for note in m.notes:
            out.append(Text.assemble(("note:", "yellow"), " ", present.safe(note, None)))
        for title, name, cols in (("top ops (ms per steady step)", "ops", present.OP_COLUMNS),
                                  (present.STAGE_TITLE, "stages", present.STAGE_COLUMNS),
                                  ("tf.function calls and retraces", "retraces",
                                   present.RETRACE_COLUMNS),
                                  ("Python hotspots (ms per steady step)", "hotspots",
                                   present.HOTSPOT_COLUMNS),
                                  ("events without a rule (other)", "other", present.OTHER_COLUMNS)):
            table = m.table(name)
            if not table.empty:
                out.append(_spec_table(title, cols, table.records(top)))
    return out
