"""Terminal tables of an analysed run (rich), for ``traceinsight analyze``."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from traceinsight.model import CATEGORIES, Run


def _ms(v) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(v):
        return "–"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def render_analysis(run: Run, *, top: int = 10, modes: list[str] | None = None,
                    console: Console | None = None) -> None:
    console = console or Console()
    wanted = [m for m in run.modes.values() if modes is None or m.name in modes]
    summary = run.summary().set_index("mode")

    t = Table(title=f"{run.name}: ms per step", title_justify="left")
    for col in ("mode", "median", "IQR", "×fastest [95% CI]", "first step", "status / steps"):
        t.add_column(col, justify="left" if col in ("mode", "status / steps") else "right",
                     overflow="fold")
    for m in wanted:
        if not m.ok:
            t.add_row(m.name, "", "", "", "", f"[red]{m.status}[/]: {m.error or ''}")
            continue
        s = summary.loc[m.name]
        ratio = f"{s['ratio']:.2f} [{s['ratio_lo']:.2f}, {s['ratio_hi']:.2f}]" \
            if s["ratio"] == s["ratio"] else "–"
        iqr = f"{_ms(s['p25_ms'])}–{_ms(s['p75_ms'])}" if s["p25_ms"] == s["p25_ms"] else "–"
        t.add_row(m.name, _ms(s["median_ms"]), iqr, ratio, _ms(s["first_step_ms"]),
                  f"ok, {int(s['n']) if s['n'] == s['n'] else 0} timed steps")
    console.print(t)

    c = Table(title="where a steady step's time goes (ms, median per category)",
              title_justify="left")
    c.add_column("mode", overflow="fold")
    for cat in CATEGORIES:
        c.add_column(cat, justify="right")
    for m in wanted:
        if m.ok:
            cats = m.category_ms()
            c.add_row(m.name, *[_ms(cats[k]) for k in CATEGORIES])
    console.print(c)

    for m in wanted:
        if not m.ok:
            continue
        console.rule(f"[bold]{m.name}")
        console.print(f"steps: {m.step_rule}; {len(m.steady_steps)} steady step(s)"
                      + (f", first step apart: {_ms(m.first_step.sum())} ms "
                         f"({', '.join(f'{k} {_ms(v)}' for k, v in m.first_step.items() if v > 0.0005)})"
                         if m.first_step is not None else ""))
        for note in m.notes:
            console.print(f"[yellow]note:[/] {note}")
        if not m.ops.empty:
            ot = Table(title="top ops (self ms per step)", title_justify="left")
            for col in ("op", "type", "thread", "calls/step", "self ms/step", "share"):
                ot.add_column(col, justify="right" if col not in ("op", "type", "thread") else "left",
                              overflow="fold")
            for r in m.ops.head(top).itertuples():
                ot.add_row(r.op, r.type, r.thread, f"{r.calls_per_step:.1f}",
                           _ms(r.self_ms_per_step), f"{r.share:.0%}")
            console.print(ot)
        if not m.retraces.empty:
            rt = Table(title="tf.function calls and retraces", title_justify="left")
            for col in ("function", "calls", "traced", "tracing ms", "compile ms", "what the trace shows"):
                rt.add_column(col, overflow="fold")
            for r in m.retraces.head(top).itertuples():
                rt.add_row(r.function, str(r.calls), str(r.traced_calls), _ms(r.tracing_ms),
                           _ms(r.compile_ms), r.changes)
            console.print(rt)
        if not m.hotspots.empty:
            ht = Table(title="Python hotspots (ms per step)", title_justify="left")
            for col in ("function", "file:line", "group", "self", "inclusive", "calls/step"):
                ht.add_column(col, overflow="fold")
            for r in m.hotspots.head(top).itertuples():
                ht.add_row(r.function, f"{r.file}:{r.line}", r.group, _ms(r.self_ms),
                           _ms(r.inclusive_ms), f"{r.calls_per_step:.0f}")
            console.print(ht)
        if not m.other.empty:
            xt = Table(title="events without a rule (other)", title_justify="left")
            xt.add_column("name", overflow="fold")
            xt.add_column("ms/step", justify="right")
            xt.add_column("count", justify="right")
            for r in m.other.head(top).itertuples():
                xt.add_row(r.name, _ms(r.ms_per_step), str(r.count))
            console.print(xt)
