"""The profiler's own cost, measured and taken out: a mode's traced breakdown -> the user's step.

The host tracer lengthens every step it records (``Timing.distortion``), and not evenly: each
recorded event costs the thread that records it, where the event sits. The breakdown a page draws
is the user's *untraced* step, so it is made here from the traced one in two parts:

1. Events (``tracer_events``): per steady traced step, the main thread's events counted by the
   category their recording cost lands in. A TraceMe takes its start stamp after it is set up
   and is recorded after its end stamp, so its cost sits outside its own span, in the event
   around it: its parent's category (python for a root event). A zero-length event (a memory
   allocation) lands in the category running at its instant. An event of another thread of the
   same host (the executor's, the kernels' pools) costs that thread, and delays the work the main
   thread waits for: it lands in the main thread's category at its instant (op, mostly). Where
   those threads run in parallel, not all of that delay reaches the step; a category never loses
   more than its traced time.
2. The correction (``correct``): where the capture calibrated the profiler (``Timing.calibration``:
   one small eager op timed untraced and traced in the same process, its events counted in the
   trace), the cost per event times the events landing in each category is taken out of that
   category (never below zero). What is left is scaled to the untraced median, every category
   alike: it holds what no event accounts for, the traced steps' mean against the untraced
   median, and the machine between the two passes. Without a calibration (run folders captured
   before it) the traced split is scaled as it is, and said so. Without an untraced timing
   (foreign traces) the traced split is drawn, and said so.

Either way the drawn categories add up to the mode's headline median, and none is larger than it.
numpy only; computed once per mode when a run is made (``Run.__post_init__`` asks
``derive.ANALYZER``, which calls ``correct``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from traceinsight import runfolder
from traceinsight.analysis import rules
from traceinsight.columns import Columns
from traceinsight.model import (
    CATEGORIES,
    Correction,
    CorrectionKind,
    ModeResult,
    Timing,
    TracerEvents,
    steady_mask,
)

if TYPE_CHECKING:      # the correction itself needs none (the analyzer imports this module when a run is made)
    from traceinsight.analysis.attribute import Attribution


def _thread_lines(a: Attribution) -> np.ndarray:
    """Per line of the table: another thread of the main thread's host (its plane's lines, not
    the lines XProf derives from the others: steps, ops, modules)."""
    from traceinsight.analysis.steps import is_derived_line
    t = a.table
    plane = t.lines[a.main_line].plane
    return np.array([i != a.main_line and ln.plane == plane and not is_derived_line(ln)
                     for i, ln in enumerate(t.lines)] or [False], dtype=bool)


def tracer_events(a: Attribution, steps: Columns, timing: Timing | None) -> TracerEvents | None:
    """Per steady step, the host's events (the main thread's and its other threads') by the
    category their cost lands in, and the calibration loop's events per call (``TracerEvents``). None where the trace has no main
    thread or no steady step."""
    if a.main_line < 0 or steps.empty:
        return None
    steady = steady_mask(steps)
    n = int(steady.sum())
    if not n:
        return None
    ws, we = a.step_start[steady], a.step_end[steady]
    t = a.table
    order = np.argsort(ws, kind="stable")
    ws, we = ws[order], we[order]
    # per line: 1 the main thread, 2 another thread of its host (its cost lands where the main
    # thread is at its instant), 0 neither; every event visited once in the C kernel, with no
    # table-long column (a large trace's millions of events: each would cost bytes an event)
    kind = _thread_lines(a).astype(np.uint8) * 2
    kind[a.main_line] = 1
    from traceinsight.analysis import native  # here: the correction alone needs no C code
    counts = native.landing_counts(t.start, t.end, t.line, a.parent, a.outside, a.cat,
                                   a.timeline, ws, we, kind, rules.PYTHON, len(CATEGORIES))
    per_step = {c: float(counts[i]) / n for i, c in enumerate(CATEGORIES)}
    return TracerEvents(per_step=per_step, calibration_events=calibration_events(a, timing))


def calibration_events(a: Attribution, timing: Timing | None) -> float | None:
    """Events per call of the capture's calibration loop: the main thread's events inside its
    ``runfolder.CALIBRATION_MARKER`` windows over the calls they hold. None without them."""
    cal = timing.calibration if timing is not None else None
    t = a.table
    mid = t.name_id(runfolder.CALIBRATION_MARKER)
    if cal is None or mid < 0 or a.main_line < 0:
        return None
    rows = t.line_rows(a.main_line)
    win = rows.start + np.flatnonzero(t.name[rows] == mid)
    if not len(win) or cal.calls < 1:
        return None
    ws, we = t.start[win], t.end[win]
    order = np.argsort(ws, kind="stable")
    ws, we = ws[order], we[order]
    # an event is inside when it starts before the end of the last window that starts at or
    # before it. The line's starts are sorted: the events whose last window is k are one run of
    # rows, [first[k], first[k + 1]), and those inside it the run's rows before ends[k]: counted
    # by searches per window, with no table-long column
    starts = t.start[rows]
    first = np.append(np.searchsorted(starts, ws, side="left"), len(starts))
    ends = np.searchsorted(starts, we, side="left")
    inside = np.maximum(np.minimum(ends, first[1:]) - first[:-1], 0).sum()
    # less the windows themselves (the calibration markers)
    k = np.searchsorted(ws, t.start[win], side="right") - 1
    events = int(inside) - int(((k >= 0) & (t.start[win] < we[np.clip(k, 0, None)])).sum())
    return events / (len(win) * cal.calls) if events else None


def correct(m: ModeResult) -> Correction | None:
    """The user's step of an ok mode with a breakdown (``Correction``; see the module's
    docstring). None where there is nothing to correct (no steady traced step)."""
    if not m.ok:
        return None
    traced = m.traced_category_means()
    vals = np.array([traced[c] for c in CATEGORIES], dtype=float)
    traced_ms = m.traced_mean_ms
    if not np.isfinite(vals).any():
        return None
    t = m.timing
    untraced = t.median_ms if t is not None and len(t.steps_s) else float("nan")
    ev = m.tracer_events
    events = float(sum(ev.per_step.values())) if ev is not None else None
    zero = dict.fromkeys(CATEGORIES, 0.0)
    if not np.isfinite(untraced) or not np.all(np.isfinite(vals)):
        # a foreign trace (nothing untraced to aim at), or categories not recorded
        return Correction(CorrectionKind.TRACED, dict(traced), zero, 1.0, dict(traced),
                          traced_ms, untraced, None, events)
    per_event_s = per_event_cost_s(m)
    cost = np.zeros(len(CATEGORIES))
    kind = CorrectionKind.PROPORTIONAL
    if per_event_s == 0.0:
        kind, per_event_s = CorrectionKind.INCONCLUSIVE, None
    if per_event_s is not None and ev is not None:
        kind = CorrectionKind.CALIBRATED
        landing = np.array([ev.per_step[c] for c in CATEGORIES], dtype=float)
        cost = np.minimum(landing * per_event_s * 1e3, np.maximum(vals, 0.0))
    rest = np.maximum(vals - cost, 0.0)
    if rest.sum() <= 0 and kind is CorrectionKind.CALIBRATED:
        # the calibrated cost empties every category: more than the whole traced step, so the
        # calibration is not credible here; scaled as it is
        kind, cost, rest, per_event_s = CorrectionKind.INCONCLUSIVE, np.zeros(len(CATEGORIES)), \
            np.maximum(vals, 0.0), None
    if rest.sum() <= 0:
        # nothing of the traced step is left to scale (an empty step): drawn as traced
        return Correction(CorrectionKind.TRACED, dict(traced), zero, 1.0, dict(traced),
                          traced_ms, untraced, None, events)
    scale = float(untraced / rest.sum())
    user = rest * scale
    return Correction(kind, dict(traced), dict(zip(CATEGORIES, cost.tolist())), scale,
                      dict(zip(CATEGORIES, user.tolist())), traced_ms, float(untraced),
                      per_event_s * 1e6 if kind is CorrectionKind.CALIBRATED and per_event_s is not None
                      else None, events)


def per_event_cost_s(m: ModeResult) -> float | None:
    """The profiler's cost per recorded event measured by the capture's calibration (seconds):
    what tracing added to one call of the loop over the events one call records. None without a
    calibration in both the timing and the trace."""
    t, ev = m.timing, m.tracer_events
    cal = t.calibration if t is not None else None
    if cal is None or ev is None or not ev.calibration_events:
        return None
    excess = cal.excess_s_per_call
    return None if excess is None else excess / ev.calibration_events


def corrected(m: ModeResult) -> ModeResult:
    """``m`` with its ``correction`` (``correct``) and its Python hotspots in the same step: their
    times were scaled to the host pass's traced python time (``analysis.mode``), and are scaled
    again by the correction's python factor, so the hotspots' self times add up to the python the
    breakdown draws, not to more."""
    fix = correct(m)
    if fix is None:
        return m.replace(correction=fix)
    h = m.table("hotspots")
    traced, user = fix.traced.get("python", float("nan")), fix.user.get("python", float("nan"))
    if h.empty or not (np.isfinite(traced) and np.isfinite(user)) or traced <= 0 or user == traced:
        return m.replace(correction=fix)
    factor = user / traced
    data = {c: (np.asarray(h[c], dtype=float) * factor if c in _HOTSPOT_TIMES else h[c])
            for c in h.columns}
    note = (f"Python hotspots scaled by {factor:.2f} more, to the python of the untraced step the "
            "breakdown draws")
    return m.replace(correction=fix, hotspots=Columns(data, index=h.index),
                     notes=tuple(m.notes) + (note,))


# the hotspot table's times in ms per step (the other columns are counts, names and shares)
_HOTSPOT_TIMES = ("self_ms", "inclusive_ms")
