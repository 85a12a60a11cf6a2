"""The viewer's step chart draws the run's figures (``RunFigures.step_series``): which steps are
outliers and the medians it scales by come computed with the run, by the analysis's one rule for a
stall, so the chart marks the steps the HTML report's step chart marks, binned or not."""

from __future__ import annotations

import math

from traceinsight.analysis.step_marks import STALL_FACTOR, step_series
from traceinsight.testing import sample_run
from traceinsight.tui.step_chart import OUTLIER_STYLE, render_chart, summary_line


def test_outliers_are_the_steady_steps_over_the_stall_factor_times_their_median():
    # first step 50 ms (tracing), steady steps 10 ms but one of 30 ms, the last cut by the trace
    values = [50, 10, 10, 10, 30, 10, 2]
    s = step_series("t", values, [True] + [False] * 6, [False] * 6 + [True])
    assert s.n_steady == 5 and s.steady_median_ms == 10 and s.steady_min_ms == 10
    assert s.steady_max_ms == 30 and s.outlier == (False,) * 4 + (True,) + (False,) * 2
    assert 30 > STALL_FACTOR * 10 and s.scale_median_ms == 10 and s.scale_max_ms == 30
    assert "5 steps: min 10.0 · median 10.0 · max 30.0 ms · 1 outlier" in summary_line(s).plain
    one = step_series("t", [7.0], [True])      # only the first step: scaled by itself, no median
    assert one.n_steady == 0 and math.isnan(one.steady_median_ms) and one.scale_max_ms == 7.0


def test_binned_chart_colours_the_bin_holding_the_stall_and_no_other():
    # 400 steady steps of 10 ms, one stall of 40 ms at step 250, drawn in 40 columns (10 a bin)
    values = [10.0] * 400
    values[250] = 40.0
    s = step_series("t", values, [False] * 400)
    chart = render_chart(s, width=40)
    bottom = chart.plain.split("\n")[-1]
    assert len(bottom) == 40
    red = sorted({span.start % 41 for span in chart.spans if span.style == OUTLIER_STYLE})
    assert red == [25]      # the bin of steps 250..259, and only it


def test_the_runs_figures_mark_the_stalls_the_html_chart_marks():
    run = sample_run()
    for name, m in run.modes.items():
        series = run.figures.step_series[name]
        traced = [s for s in series if s.title.startswith("Traced")]
        assert bool(traced) == (not m.table("steps").empty)
        if traced and name in run.figures.step_marks:
            marks = run.figures.step_marks[name].marks
            assert traced[0].outlier == tuple(mk.stall for mk in marks)
