"""Per-step times as a small bar chart: the first step and outliers stand out in colour. It draws
the run's figures (``RunFigures.step_series``: which steps are outliers, the medians it scales
by) and computes none: binning the steps into the columns it has is layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from rich.text import Text
from textual.widget import Widget

from traceinsight import present as fmt
from traceinsight.analysis.step_marks import STALL_FACTOR, StepSeries
from traceinsight.model import CATEGORIES
from traceinsight.present import CATEGORY_COLORS

EIGHTHS = " ▁▂▃▄▅▆▇█"
FIRST_STYLE = "bold #b07aa1"      # the tracing colour: the first step is where tracing lives
OUTLIER_STYLE = "bold #e15759"
NORMAL_STYLE = "#4e79a7"
# a step slower than this many times the steady median stands out: the analysis's one rule for a
# stall (the HTML report's step chart marks the same steps)
OUTLIER_FACTOR = STALL_FACTOR


def render_chart(series: StepSeries, width: int, height: int = 5) -> Text:
    """Bars of ``height`` rows plus a marker row above; steps beyond the scale (usually the first
    one, which traces and compiles) are drawn full height under a ▲. More steps than columns are
    binned: the slowest step of each bin is drawn, in the first step's colour when the bin holds
    it, else in the outliers' when it holds one (``series``: the run's figures, which say which
    steps are outliers and what the chart scales by)."""
    values = np.asarray(series.values, dtype=float)
    first = np.asarray(series.first, dtype=bool)
    outlier = np.asarray(series.outlier, dtype=bool)
    out = Text(no_wrap=True)
    if not len(values):
        return out.append("no steps", style="italic")
    width = max(10, width)
    if len(values) > width:
        edges = np.linspace(0, len(values), width + 1).astype(int)
        bins = list(zip(edges[:-1], edges[1:]))
        values = np.array([values[a:b].max() for a, b in bins])
        first = np.array([first[a:b].any() for a, b in bins])
        outlier = np.array([outlier[a:b].any() for a, b in bins])
    median, top = series.scale_median_ms, series.scale_max_ms
    cap = min(top, 4 * median) if median > 0 else float(values.max())
    cap = cap if cap > 0 else 1.0
    styles = [FIRST_STYLE if f else OUTLIER_STYLE if o else NORMAL_STYLE
              for f, o in zip(first, outlier)]
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

    def __init__(self, series: Sequence[StepSeries] | None,
                 steps: pd.DataFrame | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.series = series   # the run's figures: RunFigures.step_series (None: not computed)
        self.steps = steps if steps is not None else pd.DataFrame()

    def render(self) -> Text:
        out = Text()
        if self.series is None:
            return out.append("No step chart: the run's figures were not computed.", style="italic")
        if not self.series:
            return out.append("No per-step times in this mode.", style="italic")
        for i, s in enumerate(self.series):
            if i:
                out.append("\n\n")
            out.append(s.title, style="bold")
            out.append("\n")
            out.append_text(render_chart(s, self.size.width))
            out.append("\n")
            out.append_text(summary_line(s))
        slow = slowest_steps(self.steps, self.series[-1].steady_median_ms)
        if slow.plain:
            out.append("\n\n")
            out.append_text(slow)
        return out

    def get_content_height(self, container, viewport, width: int) -> int:
        slow = slowest_steps(self.steps, self.series[-1].steady_median_ms if self.series else 0).plain
        return max(1, len(self.series or ()) * 9 - 2 + (slow.count("\n") + 3 if slow else 0))


def slowest_steps(steps: pd.DataFrame, median: float, top: int = 3) -> Text:
    """The slowest steady traced steps, each with its largest categories (from the model's split);
    ``median``: the steady traced steps' (the run's figures)."""
    out = Text()
    if steps.empty or "wall_ms" not in steps:
        return out
    steady = steps[~steps["first"]] if "first" in steps else steps
    if len(steady) < 2:
        return out
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


def summary_line(s: StepSeries) -> Text:
    """The steady steps' count, min, median and max, their outliers, the first step."""
    line = Text(style="dim")
    if not s.values:
        return line
    if s.n_steady:
        line.append(f"{s.n_steady} steps: min {fmt.ms(s.steady_min_ms)} · median "
                    f"{fmt.ms(s.steady_median_ms)} · max {fmt.ms(s.steady_max_ms)} ms")
        outliers = sum(s.outlier)
        if outliers:
            line.append(f" · {outliers} outlier{'s' if outliers > 1 else ''} (> {OUTLIER_FACTOR}× median)",
                        style=OUTLIER_STYLE)
    if any(s.first):
        line.append(f"   first step {fmt.ms(s.values[s.first.index(True)])} ms", style=FIRST_STYLE)
    return line
