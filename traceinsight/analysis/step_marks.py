"""Which traced steps a reader should see marked: the first step, a step cut by the trace's end,
stalls, and steps that retraced.

A stall is a steady step slower than ``STALL_FACTOR`` times the median of the steady steps (the
rule the viewer's step chart colours by). A retrace is a step after the first that spent time in
the ``tracing`` category: tf.function built a graph again inside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from traceinsight import resample
from traceinsight.analysis.names import STEP_NUM

STALL_FACTOR = 1.5


@dataclass(frozen=True)
class StepMark:
    """One traced step as the pictures mark it: its time, and whether it is the first, cut by the
    trace's end, a stall or a retrace."""

    step_num: int
    wall_ms: float
    first: bool
    partial: bool
    stall: bool
    retrace_ms: float      # tracing ms inside this step (0 when it did not retrace)


def _f(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def steady_median(records: Iterable[dict]) -> float:
    wall = sorted(_f(r.get("wall_ms")) for r in records
                  if not r.get("first") and not r.get("partial") and math.isfinite(_f(r.get("wall_ms"))))
    if not wall:
        return math.nan
    n = len(wall)
    return wall[n // 2] if n % 2 else (wall[n // 2 - 1] + wall[n // 2]) / 2


def step_marks(records: list[dict]) -> list[StepMark]:
    """One mark per step record (a report document's ``steps`` rows), in their order."""
    median = steady_median(records)
    out = []
    for i, r in enumerate(records):
        wall = _f(r.get("wall_ms"))
        first, partial = bool(r.get("first")), bool(r.get("partial"))
        tracing = _f(r.get("tracing"))
        steady = not first and not partial
        out.append(StepMark(
            step_num=int(r[STEP_NUM]) if r.get(STEP_NUM) is not None else i,
            wall_ms=wall, first=first, partial=partial,
            stall=bool(steady and math.isfinite(median) and median > 0
                       and math.isfinite(wall) and wall > STALL_FACTOR * median),
            retrace_ms=tracing if (not first and math.isfinite(tracing) and tracing > 0) else 0.0))
    return out


@dataclass(frozen=True)
class StepMarks:
    """A mode's host-traced steps marked for its pictures (``RunFigures.step_marks``): one
    ``StepMark`` per step, in step order, and the median of the steady steps the stalls are
    measured against (NaN without steady steps)."""
    marks: tuple[StepMark, ...]
    steady_median_ms: float


def mode_step_marks(records: list[dict], digits: int = 6) -> StepMarks:
    """``StepMarks`` of a mode's steps table rows, their times taken to ``digits`` significant
    digits, as every page prints a step's figures (the report document's precision): the chart
    draws those figures, so a stall it marks is one by the times it shows."""
    def shown(v: Any) -> Any:
        f = _f(v)
        return float(f"{f:.{digits}g}") if math.isfinite(f) else v

    rows = [{**r, "wall_ms": shown(r.get("wall_ms")), "tracing": shown(r.get("tracing"))}
            for r in records]
    return StepMarks(tuple(step_marks(rows)), steady_median(rows))


@dataclass(frozen=True)
class StepSeries:
    """One series of a mode's step times for the viewer's step chart (``RunFigures.step_series``):
    the times in step order (ms), which step is the first, which is cut by the trace's end, which
    is an outlier (a stall: a steady step slower than ``STALL_FACTOR`` times the steady median, the
    rule of ``step_marks``), and the steady steps' count, min, median and max. ``scale_median_ms``
    and ``scale_max_ms`` are what the chart scales by: the steady steps', or every step's when
    there is none."""
    title: str
    values: tuple[float, ...]
    first: tuple[bool, ...]
    outlier: tuple[bool, ...]
    n_steady: int
    steady_min_ms: float
    steady_median_ms: float
    steady_max_ms: float
    scale_median_ms: float
    scale_max_ms: float


def step_series(title: str, values: Iterable[Any], first: Iterable[Any],
                partial: Iterable[Any] | None = None) -> StepSeries:
    """``StepSeries`` of step times; ``partial`` steps (cut by the trace's end) are not steady."""
    import numpy as np
    v = np.asarray(list(values), dtype=float)
    f = np.asarray(list(first), dtype=bool)
    p = np.asarray(list(partial), dtype=bool) if partial is not None else np.zeros(len(v), dtype=bool)
    steady = v[~f & ~p]
    scale = steady if len(steady) else v
    median = float(resample.median(steady)) if len(steady) else math.nan
    outlier = ~f & ~p & (v > STALL_FACTOR * median) if len(steady) else np.zeros(len(v), dtype=bool)
    return StepSeries(
        title=title, values=tuple(v.tolist()), first=tuple(f.tolist()), outlier=tuple(outlier.tolist()),
        n_steady=len(steady),
        steady_min_ms=float(steady.min()) if len(steady) else math.nan, steady_median_ms=median,
        steady_max_ms=float(steady.max()) if len(steady) else math.nan,
        scale_median_ms=float(resample.median(scale)) if len(scale) else math.nan,
        scale_max_ms=float(scale.max()) if len(scale) else math.nan)


def mode_step_series(timing: Any, steps: Any) -> tuple[StepSeries, ...]:
    """A mode's ``StepSeries``: its timed steps (no profiler, the first step before them: a
    ``model.Timing``), then its host-traced ones (its ``steps`` table)."""
    import numpy as np
    series = []
    if timing is not None and len(timing.steps_s):
        vals = np.asarray(timing.steps_s, dtype=float) * 1e3
        first = np.zeros(len(vals), dtype=bool)
        if timing.first_step_s is not None:
            vals = np.concatenate([[timing.first_step_s * 1e3], vals])
            first = np.concatenate([[True], first])
        series.append(step_series("Timed steps (no profiler), ms", vals, first))
    if not steps.empty:
        series.append(step_series("Traced steps (host tracer), ms", steps["wall_ms"], steps["first"],
                                  steps["partial"] if "partial" in steps else None))
    return tuple(series)
