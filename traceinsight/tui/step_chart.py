"""Per-step times as a small bar chart: the first step and outliers stand out in colour."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.widget import Widget

from traceinsight import present as fmt
from traceinsight.analysis.step_marks import STALL_FACTOR
from traceinsight.model import CATEGORIES
from traceinsight.present import CATEGORY_COLORS

EIGHTHS = " ▁▂▃▄▅▆▇█"
FIRST_STYLE = "bold #b07aa1"      # the tracing colour: the first step is where tracing lives
OUTLIER_STYLE = "bold #e15759"
NORMAL_STYLE = "#4e79a7"
# a step slower than this many times the steady median stands out: the analysis's one rule for a
# stall (the HTML report's step chart marks the same steps)
OUTLIER_FACTOR = STALL_FACTOR


def render_chart(values: np.ndarray, first: np.ndarray, width: int, height: int = 5) -> Text:
    """Bars of ``height`` rows plus a marker row above; steps beyond the scale (usually the first
    one, which traces and compiles) are drawn full height under a ▲. More steps than columns are
    binned (the slowest step of each bin is drawn)."""
    values = np.asarray(values, dtype=float)
    first = np.asarray(first, dtype=bool)
    out = Text(no_wrap=True)
    if not len(values):
        return out.append("no steps", style="italic")
    width = max(10, width)
    if len(values) > width:
        edges = np.linspace(0, len(values), width + 1).astype(int)
        values_b = np.array([values[a:b].max() for a, b in zip(edges[:-1], edges[1:])])
        first_b = np.array([first[a:b].any() for a, b in zip(edges[:-1], edges[1:])])
        values, first = values_b, first_b
    steady = values[~first] if (~first).any() else values
    median = float(np.median(steady))
    cap = min(float(steady.max()), 4 * median) if median > 0 else float(values.max())
    cap = cap if cap > 0 else 1.0
    styles = [FIRST_STYLE if f else OUTLIER_STYLE if v > OUTLIER_FACTOR * median else NORMAL_STYLE
              for v, f in zip(values, first)]
    levels = np.clip(values / cap, 0, 1) * height * 8
    for row in range(height, -1, -1):   # row `height` is the marker row
        if row != height:
            out.append("\n")
        for v, lvl, style in zip(values, levels, styles):
            if row == height:
                out.append("▲" if v > cap * 1.0001 else " ", style=style)
                continue
            cell = int(round(min(8, max(0, lvl - row * 8))))
            out.append(EIGHTHS[cell], style=style)
    return out


class StepChart(Widget):
    """One chart per series (timed steps, traced steps), each with a line of its figures, then the
    slowest traced steps with the categories that made them slow."""

    def __init__(self, series: list[tuple[str, np.ndarray, np.ndarray]],
                 steps: pd.DataFrame | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.series = series   # (title, ms per step, is-first flags)
        self.steps = steps if steps is not None else pd.DataFrame()

    def render(self) -> Text:
        out = Text()
        if not self.series:
            return out.append("No per-step times in this mode.", style="italic")
        for i, (title, values, first) in enumerate(self.series):
            if i:
                out.append("\n\n")
            values = np.asarray(values, dtype=float)
            first = np.asarray(first, dtype=bool)
            out.append(title, style="bold")
            out.append("\n")
            out.append_text(render_chart(values, first, self.size.width))
            out.append("\n")
            out.append_text(summary_line(values, first))
        slow = slowest_steps(self.steps)
        if slow.plain:
            out.append("\n\n")
            out.append_text(slow)
        return out

    def get_content_height(self, container, viewport, width: int) -> int:
        slow = slowest_steps(self.steps).plain
        return max(1, len(self.series) * 9 - 2 + (slow.count("\n") + 3 if slow else 0))


def slowest_steps(steps: pd.DataFrame, top: int = 3) -> Text:
    """The slowest steady traced steps, each with its largest categories (from the model's split)."""
    out = Text()
    if steps.empty or "wall_ms" not in steps:
        return out
    steady = steps[~steps["first"]] if "first" in steps else steps
    if len(steady) < 2:
        return out
    median = float(steady["wall_ms"].median())
    cats = [c for c in CATEGORIES if c in steady.columns]
    out.append(f"Slowest traced steps (median {fmt.ms(median)} ms)", style="bold")
    for _, row in steady.nlargest(top, "wall_ms").iterrows():
        parts = sorted(((float(row[c]), c) for c in cats), reverse=True)[:3]
        out.append(f"\n  step {int(row['step_num'])}: {fmt.ms(row['wall_ms'])} ms  ")
        for i, (v, c) in enumerate(parts):
            if i:
                out.append(" · ", style="dim")
            out.append(c, style=CATEGORY_COLORS[c]).append(f" {fmt.ms(v)}")
    return out


def summary_line(values: np.ndarray, first: np.ndarray) -> Text:
    line = Text(style="dim")
    if not len(values):
        return line
    steady = values[~first]
    if len(steady):
        line.append(f"{len(steady)} steps: min {fmt.ms(steady.min())} · median "
                    f"{fmt.ms(np.median(steady))} · max {fmt.ms(steady.max())} ms")
        outliers = int((steady > OUTLIER_FACTOR * np.median(steady)).sum())
        if outliers:
            line.append(f" · {outliers} outlier{'s' if outliers > 1 else ''} (> {OUTLIER_FACTOR}× median)",
                        style=OUTLIER_STYLE)
    if first.any():
        line.append(f"   first step {fmt.ms(values[first][0])} ms", style=FIRST_STYLE)
    return line
