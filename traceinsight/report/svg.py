"""Inline SVG pictures of a report document (``traceinsight.report.document``): the
category split per mode, the step times of each mode over its run, and the per-step skew of the
hosts of a multi-host profile session.

Renderers only: every figure comes from the document; which steps are marked (first, stalls,
retraces) and the steady median they are measured against come with it, computed by the analysis
(``analysis.step_marks``, ``RunFigures.step_marks``). Every string from a trace or a run goes
through ``esc`` (``present.safe`` then ``html.escape``); the markup and the colours are ours, and
the colours of the categories are ``present.CATEGORY_COLORS``, as in the viewer. No script, nothing
fetched: the SVG is the same inline in the HTML report and as a file beside a markdown report.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from traceinsight import present
from traceinsight.analysis.step_marks import STALL_FACTOR, StepMark, StepMarks
from traceinsight.model import CATEGORIES
from traceinsight.report import prose
from traceinsight.report.document import ModeEntry, ReportDocument

COLORS = present.CATEGORY_COLORS
NO_SPLIT = "#c9ced4"          # a step whose categories the trace cannot split
STALL = "#cf222e"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d0d7de"
# hosts are not categories: hues the category palette does not use (teal, magenta, brown, ...)
HOST_COLORS = ("#1b9e9e", "#d6409f", "#8c564b", "#17becf", "#bcbd22", "#393b79", "#7f3b08",
               "#000000")
FONT = "system-ui,-apple-system,Segoe UI,Roboto,sans-serif"
MAX_COLUMNS = 240              # step columns drawn; more steps are binned (the slowest of each bin)
MAX_STEP_CHARTS = 12           # modes whose steps are charted (a 100-host run: the first 12)
WIDTH = 760


def esc(s: Any, limit: int | None = present.MAX_NAME) -> str:
    return html.escape(present.safe(s, limit), quote=True)


def _num(x: Any) -> str:
    return esc(present.ms(x))


def _finite(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _open(width: int, height: int, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(label)}" '
            f'font-family="{FONT}" font-size="12" fill="{INK}">'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>')


def _short(name: Any, n: int = 24) -> str:
    full = present.safe(name)
    return full if len(full) <= n else full[:n - 1] + "…"


def _legend(items: list[tuple[str, str]], x: float, y: float, max_x: float) -> tuple[list[str], float]:
    """Swatches with labels, wrapped at ``max_x``; returns the parts and the y below them."""
    parts: list[str] = []
    for color, label in items:
        w = 14 + 6.6 * len(label) + 16
        if x + w > max_x and parts:
            x, y = 8.0, y + 16
        parts.append(f'<rect x="{x:.0f}" y="{y}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{x + 14:.0f}" y="{y + 9}" font-size="11">{esc(label)}</text>')
        x += w
    return parts, y + 16


# the category bars' words by how the modes were drawn (``prose.drawn_basis``): the user's
# untraced step, or for traces captured without traceinsight the traced step as recorded
_U, _T, _M = present.DrawnBasis.UNTRACED, present.DrawnBasis.TRACED, present.DrawnBasis.MIXED
BARS_TITLE = {_U: "ms per untraced step by category and mode",
              _T: "ms per traced step by category and mode",
              _M: "ms per step by category and mode"}
BARS_ALT = {
    _U: "ms per untraced step by category and mode (each category's mean ms/step; a bar adds up "
        "to the mode's untraced median)",
    _T: "ms per traced step by category and mode (each category's mean ms/step of the traced "
        "steps, the profiler's cost inside: no untraced timing was captured; a bar adds up to the "
        "mode's mean traced step)",
    _M: "ms per step by category and mode (each category's mean ms/step; a bar adds up to the "
        "mode's untraced median, or for a mode with no untraced timing to its mean traced step)"}
MERMAID_TITLE = {_U: "ms per untraced step, by category (profiler cost taken out)",
                 _T: "ms per traced step, by category (profiler cost inside)",
                 _M: "ms per step, by category (profiler cost taken out where timed untraced)"}


def category_bars(modes: Sequence[ModeEntry]) -> str:
    """Stacked bars: the user's step of each ok mode split into categories (``category_means``:
    the host-traced split with the profiler's cost taken out), so a bar's length and its label
    are the untraced median the tables beside it show (a foreign trace's: its mean traced
    step). Each segment's tip also gives the traced figure it was made from."""
    ok = [m for m in modes if m["status"] == "ok" and any(_finite(v) for v in (m.get("category_means") or {}).values())]
    if not ok:
        return ""
    # a bar's length and label: the step its categories add up to (the document's
    # ``category_total_ms``, the tables' "step ms"), the longest bar the scale
    totals = [m["category_total_ms"] for m in ok]
    scale_max = max((t for t in totals if _finite(t)), default=0.0) or 1.0
    label_w, bar_w, row_h, top = 170, 500, 26, 8
    parts = []
    for i, (m, total) in enumerate(zip(ok, totals)):
        y = top + i * row_h
        parts.append(f'<text x="{label_w - 6}" y="{y + 16}" text-anchor="end">'
                     f'{esc(_short(m["name"]))}<title>{esc(m["name"])}</title></text>')
        x = float(label_w)
        for c in CATEGORIES:
            v = m["category_means"].get(c)
            if not _finite(v) or v <= 0:
                continue
            w = bar_w * v / scale_max
            traced = (m.get("traced_category_means") or {}).get(c)
            was = f" (traced {_num(traced)})" if _finite(traced) and traced != v else ""
            parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" '
                         f'fill="{COLORS[c]}"><title>{esc(m["name"])} · {c}: {_num(v)} ms/step'
                         f'{was}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 5:.1f}" y="{y + 16}">{_num(total)} ms</text>')
    legend, bottom = _legend([(COLORS[c], c) for c in CATEGORIES], float(label_w),
                             top + row_h * len(ok) + 8, WIDTH)
    return "\n".join([_open(WIDTH, int(bottom) + 6, BARS_TITLE[prose.drawn_basis(modes)]),
                      *parts, *legend, "</svg>"])


def _bins(marks: list[StepMark]) -> list[list[int]]:
    n = len(marks)
    if n <= MAX_COLUMNS:
        return [[i] for i in range(n)]
    edges = [round(k * n / MAX_COLUMNS) for k in range(MAX_COLUMNS + 1)]
    return [list(range(a, b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _step_tip(mode: str, m: StepMark, rec: dict) -> str:
    parts = [f"{mode} · step {m.step_num}: {present.ms(m.wall_ms)} ms"]
    split = [(c, float(rec[c])) for c in CATEGORIES if _finite(rec.get(c)) and rec[c] > 0]
    if split:
        split.sort(key=lambda cv: -cv[1])
        parts.append(", ".join(f"{c} {present.ms(v)}" for c, v in split[:4]))
    if m.first:
        parts.append("first step")
    if m.partial:
        parts.append("cut by the end of the trace")
    if m.stall:
        parts.append(f"stall (> {STALL_FACTOR:g}× the median)")
    if m.retrace_ms:
        parts.append(f"retraced ({present.ms(m.retrace_ms)} ms tracing)")
    return esc(" · ".join(parts), None)


def step_chart(mode: ModeEntry, step_marks: StepMarks) -> str:
    """One mode's host-traced steps over the run: a bar per step split by category, the first
    step, stalls and retraces marked (``step_marks``, the analysis' marks of its steps table,
    ``RunFigures.step_marks``); steps above the scale drawn to the top under a ▲."""
    records = mode.get("steps") or []
    marks = list(step_marks.marks)
    walls = [m.wall_ms for m in marks if _finite(m.wall_ms)]
    if len(walls) < 2:
        return ""
    steady = [m.wall_ms for m in marks if not m.first and not m.partial and _finite(m.wall_ms)]
    median = step_marks.steady_median_ms
    # the scale: the steady steps (up to 4x their median); the first step, usually far above
    # them, would flatten every other bar
    cap = max(steady) if steady else max(walls)
    if _finite(median) and median > 0:
        cap = min(cap, 4 * median)
    cap = cap if cap > 0 else 1.0
    left, right, top, plot_h = 64, 16, 50, 150
    plot_w = WIDTH - left - right
    bins = _bins(marks)
    col_w = plot_w / len(bins)
    split = mode.get("host_events_recorded") is not False
    parts = [f'<text x="8" y="16" font-weight="600">{esc(mode["name"])}</text>',
             f'<text x="{WIDTH - right}" y="16" text-anchor="end" fill="{MUTED}" font-size="11">'
             f'{len(marks)} traced steps'
             + (f" · median {_num(median)} ms (steady)" if _finite(median) else "")
             + "".join(f" · first step {_num(m.wall_ms)} ms" for m in marks[:1] if m.first)
             + "</text>"]
    y0 = top + plot_h
    for frac in (0.0, 0.5, 1.0):
        y = y0 - plot_h * frac
        parts.append(f'<line x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{GRID}" stroke-width="1"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="{MUTED}">{_num(cap * frac)}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.0f}" font-size="11" fill="{MUTED}" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.0f})" text-anchor="middle">ms</text>')
    marker_y = top - 4
    for k, idx in enumerate(bins):
        # the slowest step of a bin stands for it; its marks are the bin's
        j = max(idx, key=lambda i: marks[i].wall_ms if _finite(marks[i].wall_ms) else -1.0)
        m, rec = marks[j], records[j]
        x = left + k * col_w
        w = max(col_w - (1 if col_w > 3 else 0), 0.5)
        wall = m.wall_ms if _finite(m.wall_ms) else 0.0
        h_total = plot_h * min(wall, cap) / cap
        tip = _step_tip(mode["name"], m, rec)
        parts.append(f"<g><title>{tip}</title>")
        cats = [(c, float(rec[c])) for c in CATEGORIES if _finite(rec.get(c)) and rec[c] > 0]
        if split and cats and wall > 0:
            scale = h_total / wall
            y = float(y0)
            for c, v in cats:
                h = v * scale
                parts.append(f'<rect x="{x:.2f}" y="{y - h:.2f}" width="{w:.2f}" height="{h:.2f}" '
                             f'fill="{COLORS[c]}"/>')
                y -= h
        else:
            parts.append(f'<rect x="{x:.2f}" y="{y0 - h_total:.2f}" width="{w:.2f}" '
                         f'height="{h_total:.2f}" fill="{NO_SPLIT}"/>')
        if m.partial:
            parts.append(f'<rect x="{x:.2f}" y="{y0 - h_total:.2f}" width="{w:.2f}" '
                         f'height="{h_total:.2f}" fill="#ffffff" fill-opacity="0.6"/>')
        cx = x + w / 2
        if any(marks[i].stall for i in idx):
            parts.append(f'<rect x="{x:.2f}" y="{top:.1f}" width="{w:.2f}" height="{plot_h}" '
                         f'fill="{STALL}" fill-opacity="0.10"/>'
                         f'<path d="M{cx - 4:.1f},{marker_y - 8} h8 l-4,7 z" fill="{STALL}"/>')
        if any(marks[i].retrace_ms for i in idx):
            parts.append(f'<path d="M{cx:.1f},{marker_y - 20} l4,4 l-4,4 l-4,-4 z" '
                         f'fill="{COLORS["tracing"]}"/>')
        if wall > cap * 1.0001:
            parts.append(f'<text x="{cx:.1f}" y="{top + 9}" text-anchor="middle" font-size="9" '
                         f'fill="#ffffff">▲</text>')
        parts.append("</g>")
        if m.first:
            parts.append(f'<text x="{x:.1f}" y="{marker_y}" font-size="10">first</text>')
    if _finite(median) and median > 0:
        y = y0 - plot_h * min(median, cap) / cap
        parts.append(f'<line x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{INK}" stroke-width="1" stroke-dasharray="4 3"/>')
    nums = [m.step_num for m in marks]
    for frac, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        k = min(len(bins) - 1, int(frac * (len(bins) - 1)))
        x = left + (k + (0.5 if anchor == "middle" else 1 if anchor == "end" else 0)) * col_w
        parts.append(f'<text x="{x:.1f}" y="{y0 + 14}" text-anchor="{anchor}" font-size="11" '
                     f'fill="{MUTED}">step {nums[bins[k][0] if anchor != "end" else bins[k][-1]]}</text>')
    legend_y = y0 + 24
    items = ([(COLORS[c], c) for c in CATEGORIES] if split else [(NO_SPLIT, "step (categories not recorded)")])
    legend, bottom = _legend(items, 8.0, legend_y, WIDTH)
    keys = [f'<path d="M12,{bottom + 1} h8 l-4,7 z" fill="{STALL}"/>'
            f'<text x="24" y="{bottom + 8}" font-size="11">stall: slower than {STALL_FACTOR:g}× the '
            f'median</text>',
            f'<path d="M236,{bottom} l4,4 l-4,4 l-4,-4 z" fill="{COLORS["tracing"]}"/>'
            f'<text x="246" y="{bottom + 8}" font-size="11">retraced (tracing time in the step)</text>',
            f'<line x1="456" x2="476" y1="{bottom + 4}" y2="{bottom + 4}" stroke="{INK}" '
            f'stroke-dasharray="4 3"/><text x="480" y="{bottom + 8}" font-size="11">median</text>',
            f'<text x="540" y="{bottom + 8}" font-size="11">▲ above the scale</text>']
    if len(bins) < len(marks):
        keys.append(f'<text x="8" y="{bottom + 24}" font-size="11" fill="{MUTED}">{len(marks)} '
                    f'steps in {len(bins)} columns: each shows the slowest step of its '
                    f'{len(marks) / len(bins):.1f}</text>')
        bottom += 16
    return "\n".join([_open(WIDTH, int(bottom) + 16, f"ms per step over the run: {mode['name']}"),
                      *parts, *legend, *keys, "</svg>"])


def host_skew(session: Mapping[str, Any]) -> str:
    """Per aligned step of a multi-host session: how much slower the step's slowest host was than
    its fastest (the others' wait), coloured by the slowest host (grey: a tie)."""
    steps = session.get("steps") or []
    hosts = [h["host"] for h in session.get("hosts") or []]
    if len(steps) < 1 or len(hosts) < 2:
        return ""
    color = {h: HOST_COLORS[i % len(HOST_COLORS)] for i, h in enumerate(hosts)}
    skews = []
    for s in steps:
        walls = [v for v in (s.get("wall_ms") or {}).values() if _finite(v)]
        skews.append(max(walls) - min(walls) if len(walls) >= 2 else math.nan)
    finite = [v for v in skews if _finite(v)]
    if not finite:
        return ""
    cap = max(finite) or 1.0
    left, right, top, plot_h = 64, 16, 28, 120
    plot_w = WIDTH - left - right
    n = len(steps)
    col_w = plot_w / n
    parts = [f'<text x="8" y="16" font-weight="600">Profile session {esc(session["session"])}: '
             f'slowest − fastest host per step</text>']
    y0 = top + plot_h
    for frac in (0.0, 0.5, 1.0):
        y = y0 - plot_h * frac
        parts.append(f'<line x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{GRID}"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
                     f'font-size="11" fill="{MUTED}">{_num(cap * frac)}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.0f}" font-size="11" fill="{MUTED}" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.0f})" text-anchor="middle">ms</text>')
    for k, (s, v) in enumerate(zip(steps, skews)):
        if not _finite(v):
            continue
        h = plot_h * v / cap
        slow = s.get("slowest")
        fill = color.get(slow, NO_SPLIT) if slow else NO_SPLIT
        hosts_ms = ", ".join(f"{present.safe(host)} {present.ms(ms)}" for host, ms in
                             (s.get("wall_ms") or {}).items())
        tip = esc(f"step {s.get('step_num')}: slowest {slow or '(tie)'} · skew {present.ms(v)} ms"
                  f" · {hosts_ms} ms", None)
        parts.append(f'<rect x="{left + k * col_w:.2f}" y="{y0 - h:.2f}" '
                     f'width="{max(col_w - (1 if col_w > 3 else 0), 0.5):.2f}" height="{h:.2f}" '
                     f'fill="{fill}"><title>{tip}</title></rect>')
    for frac, anchor in ((0.0, "start"), (1.0, "end")):
        k = int(frac * (n - 1))
        x = left + (k + (1 if anchor == "end" else 0)) * col_w
        parts.append(f'<text x="{x:.1f}" y="{y0 + 14}" text-anchor="{anchor}" font-size="11" '
                     f'fill="{MUTED}">step {esc(steps[k].get("step_num"))}</text>')
    items = [(color[h], f"slowest: {_short(h, 40)}") for h in hosts] + [(NO_SPLIT, "tie")]
    legend, bottom = _legend(items, 8.0, y0 + 24, WIDTH)
    return "\n".join([_open(WIDTH, int(bottom) + 6, "per-step host skew"), *parts, *legend, "</svg>"])


def figures(document: ReportDocument) -> list[tuple[str, str, str]]:
    """(file stem, alt text, SVG) of each picture of a report document, in report order."""
    doc = document.data
    out = []
    bars = category_bars(doc["modes"])
    if bars:
        out.append(("categories", BARS_ALT[prose.drawn_basis(doc["modes"])], bars))
    for i, m in enumerate([m for m in doc["modes"] if m["status"] == "ok"][:MAX_STEP_CHARTS]):
        marks = document.step_marks.get(m["name"])
        chart = step_chart(m, marks) if marks is not None else ""
        if chart:
            out.append((f"steps-{i + 1}", f"ms per step over the run: {present.safe(m['name'])}",
                        chart))
    for i, g in enumerate(doc.get("host_sessions") or []):
        skew = host_skew(g)
        if skew:
            out.append((f"hosts-{i + 1}", f"per-step host skew: {present.safe(g['session'])}", skew))
    return out


# ----------------------------------------------------------------------------- markdown (Mermaid)

_MERMAID_NAME = __import__("re").compile(r"[^A-Za-z0-9_.:/+-]")
COLOR_NAMES = {"op": "blue", "dispatch": "orange", "tracing": "purple", "compile": "red",
               "input": "green", "python": "yellow", "other": "grey"}


def _mermaid_label(name: Any) -> str:
    """A mode name as a Mermaid axis label: characters that could end the label or the chart
    replaced by ``_``, cut to 24 characters (the tables above give the names in full)."""
    return '"' + _MERMAID_NAME.sub("_", present.safe(name, 24)) + '"'


def mermaid_bars(modes: Sequence[ModeEntry]) -> list[str]:
    """The category bars as a Mermaid chart (GitHub renders it in issues and pull requests):
    Mermaid's bar series overlap, so the stack is drawn as its running sums, the whole first,
    each in its top category's colour."""
    ok = [m for m in modes if m["status"] == "ok" and any(_finite(v) for v in (m.get("category_means") or {}).values())]
    if not ok:
        return []
    means = [{c: v for c, v in m["category_means"].items() if _finite(v)} for m in ok]
    cats = [c for c in CATEGORIES if any(mm.get(c, 0.0) > 0 for mm in means)]
    sums = []
    for k in range(len(cats), 0, -1):     # op..other, then op..python, ..., op alone
        sums.append((cats[k - 1], [sum(mm[c] for c in cats[:k] if c in mm) for mm in means]))
    palette = ", ".join(COLORS[c] for c, _ in sums)
    out = ["```mermaid", "---", "config:", "  themeVariables:", "    xyChart:",
           f'      plotColorPalette: "{palette}"', "---", "xychart-beta",
           f'  title "{MERMAID_TITLE[prose.drawn_basis(modes)]}"',
           "  x-axis [" + ", ".join(_mermaid_label(m["name"]) for m in ok) + "]",
           '  y-axis "ms"']
    out += ["  bar [" + ", ".join(f"{v:.6g}" for v in values) + "]" for _, values in sums]
    out += ["```", "", "Colours: " + ", ".join(f"{c} {COLOR_NAMES[c]}" for c in cats) + "."]
    return out
