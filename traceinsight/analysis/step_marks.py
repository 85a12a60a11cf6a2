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

from traceinsight.analysis.names import STEP_NUM

STALL_FACTOR = 1.5


@dataclass(frozen=True)
class StepMark:
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
