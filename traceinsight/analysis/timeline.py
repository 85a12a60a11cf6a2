"""One step of one mode, event by event: what the viewer's timeline screen draws.

A breakdown says *how much* of a step each category took; the timeline shows *where in the step*
it went: the main thread's exclusive category timeline (the attribution itself: which category
owns each instant), then every thread line (and device stream) that had events in the step, one
row per nesting depth, each event with the category the analysis gave it. Everything comes from
the mode's own analysis of its host-traced pass (``TraceAnalysis``: the event table, the
attribution and the steps table), so the timeline and the mode's tables share every decision;
the renderer only scales and colours it.

These are traced events: the profiler's own cost is inside them (the mode's untraced median is
the step the user's program takes without it), which the screen says.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.analysis.names import STEP_NUM
from traceinsight.analysis.results import PS_PER_MS
from traceinsight.errors import TraceinsightError
from traceinsight.model import CATEGORIES
from traceinsight.runfolder import PASSES
from traceinsight.runfolder import Pass as TracePass

if TYPE_CHECKING:
    from traceinsight.analysis.mode import TraceAnalysis
    from traceinsight.columns import Columns
    from traceinsight.model import ModeResult

# Which step to draw: a steady step of median wall time, the slowest steady step, or the first
# step (where one-time costs live: tracing, compile).
WHICH = ("median", "slowest", "first")
MAX_DEPTH = 4          # nesting levels drawn per thread (deeper events are counted, not drawn)
MAX_ROWS = 60          # rows drawn in all; the rest are counted


@dataclass(frozen=True)
class TimelineRow:
    """One drawn row: the main thread's category timeline, or one nesting depth of a thread.
    ``label`` and ``names`` are trace strings (data: a renderer escapes them)."""
    thread: str                # the thread (and plane, off the main host plane)
    kind: str                  # "categories" (the attribution's timeline) | "events" | "crossing"
    depth: int                 # nesting depth of an events row (0: top level), else -1
    start_ps: np.ndarray       # int64, clipped to the step
    end_ps: np.ndarray
    category: np.ndarray       # int64 codes into CATEGORIES
    names: tuple[str, ...]     # an event's name; the category's name on the categories row

    @property
    def suffix(self) -> str:
        """What tells this row from the thread's others: its depth, or what it holds."""
        return {"categories": " · categories", "crossing": " · crossing"}.get(
            self.kind, f" ·{self.depth}" if self.depth else "")

    @property
    def label(self) -> str:
        return self.thread + self.suffix


@dataclass(frozen=True)
class StepTimeline:
    """One step as rows of bars. ``categories``: the step's ms per category from the mode's steps
    table (what its breakdown is made of); ``steps``: every step number of the pass, in order,
    for moving to the next or previous one."""
    step_num: int
    which: str                 # "median steady step", "slowest steady step", "first step", "step N"
    start_ps: int
    end_ps: int
    wall_ms: float
    first: bool
    partial: bool
    categories: dict[str, float]
    rows: tuple[TimelineRow, ...]
    rows_not_drawn: int        # thread depths beyond MAX_DEPTH or rows beyond MAX_ROWS
    events: int                # events of the step drawn
    steps: tuple[int, ...]
    host_events_recorded: bool

    @property
    def duration_ps(self) -> int:
        return self.end_ps - self.start_ps


def pass_files(mode: ModeResult, pass_name: str = "host") -> list[Path]:
    """The trace files of one capture pass of a mode (every file, for foreign traces)."""
    paths = [Path(p) for p in mode.trace_paths]
    if not paths:
        raise TraceinsightError(f"mode {mode.name!r} has no trace files")
    marked = [p for p in paths if pass_of(p) == pass_name]
    if marked:
        return marked
    present = sorted(p for p in {pass_of(p) for p in paths} if p is not None)
    if present:
        raise TraceinsightError(f"mode {mode.name!r} has no {pass_name} pass trace "
                                f"(passes present: {', '.join(present)})")
    return paths


def pass_of(path: Path | str) -> str | None:
    """``<mode>/<pass>/plugins/profile/<session>/<host>.xplane.pb`` -> pass (run folder layout)."""
    parts = Path(path).parts
    if len(parts) >= 5 and parts[-4:-2] == ("plugins", "profile") and parts[-5] in PASSES:
        return parts[-5]
    return None


def pass_analysis(mode: ModeResult, pass_name: TracePass = "host") -> TraceAnalysis:
    """The per-event analysis of one pass of a mode, made again from its files as the mode's own
    analysis made it (``analysis.mode.analyze_pass``): what the viewer's timeline and the
    Chrome-trace export draw. Raises ``TraceinsightError`` where the mode did not run or its trace
    cannot be read."""
    from traceinsight.analysis.mode import TraceFailure, analyze_pass
    if not mode.ok:
        raise TraceinsightError(f"mode {mode.name!r} {mode.status}: {mode.error or ''}".strip())
    files = pass_files(mode, pass_name)
    marked = [Path(p) for p in mode.trace_paths if pass_of(p) is not None]
    host = [p for p in marked if pass_of(p) == "host"] if marked else files
    python = [p for p in marked if pass_of(p) == "python"]
    try:
        return analyze_pass(host, python, pass_name, timing=mode.timing)
    except TraceFailure as e:
        raise TraceinsightError(str(e)) from None


def choose_step(steps: Columns, which: str | int) -> int:
    """The row of ``steps`` to draw: ``which`` is one of WHICH or a step number. The median and
    slowest are taken over the steady steps (not the first, not cut by the trace's end), or over
    every step when none is steady."""
    n = len(steps)
    if not n:
        raise TraceinsightError("no steps in this trace, so there is no step to draw")
    nums = np.asarray(steps[STEP_NUM], dtype=np.int64)
    if not isinstance(which, str):
        hit = np.flatnonzero(nums == int(which))
        if not len(hit):
            raise TraceinsightError(f"no step {int(which)} in this trace (steps {nums[0]}..{nums[-1]})")
        return int(hit[0])
    if which not in WHICH:
        raise TraceinsightError(f"step {which!r}: one of {', '.join(WHICH)} or a step number")
    first = np.asarray(steps["first"], dtype=bool)
    if which == "first":
        return int(np.flatnonzero(first)[0]) if first.any() else 0
    steady = ~first & ~np.asarray(steps["partial"], dtype=bool)
    rows = np.flatnonzero(steady) if steady.any() else np.arange(n)
    wall = np.asarray(steps["wall_ms"], dtype=float)[rows]
    if which == "slowest":
        return int(rows[int(np.argmax(wall))])
    order = np.argsort(wall, kind="stable")
    return int(rows[order[(len(order) - 1) // 2]])     # the lower median: a step that happened


def _which_label(which: str | int) -> str:
    if not isinstance(which, str):
        return f"step {int(which)}"
    return {"median": "median steady step", "slowest": "slowest steady step",
            "first": "first step"}[which]


def step_timeline(tr: TraceAnalysis, which: str | int = "median", *, max_depth: int = MAX_DEPTH,
                  max_rows: int = MAX_ROWS) -> StepTimeline:
    """The rows of one step of a pass (see the module docstring); ``which``: one of WHICH or a
    step number."""
    steps, table, a = tr.steps, tr.table, tr.attribution
    row = choose_step(steps, which)
    s0, s1 = int(steps["start_ps"][row]), int(steps["end_ps"][row])
    rows: list[TimelineRow] = []
    not_drawn = 0

    # 1. the main thread's exclusive timeline: the attribution's segments, clipped to the step
    main = a.main_line
    if tr.host_events_recorded and main >= 0 and len(a.seg_cat):
        # the segments that may reach into the step, and their boundaries' instants (not the
        # whole timeline's)
        tl = a.timeline
        j0 = max(int(tl.search(np.array([s0]), "right")[0]) - 1, 0)
        j1 = min(int(tl.search(np.array([s1]), "left")[0]), len(tl))
        b = tl.times(np.arange(j0, max(j1, j0) + 1))
        lo, hi = b[:-1], b[1:]
        keep = (lo < s1) & (hi > s0)
        st, en = np.maximum(lo[keep], s0), np.minimum(hi[keep], s1)
        cat = tl.cat[j0:j0 + len(lo)][keep].astype(np.int64)
        # a step that reaches past the timeline (a marker opened before the first event) is
        # Python there, as the analysis counts it (category_time)
        if len(st) and st[0] > s0:
            st, en, cat = np.r_[s0, st], np.r_[st[0], en], np.r_[CATEGORIES.index("python"), cat]
        if len(en) and en[-1] < s1:
            st, en, cat = np.r_[st, en[-1]], np.r_[en, s1], np.r_[cat, CATEGORIES.index("python")]
        # one bar per run of equal category (the segments break at every event's edge)
        if len(cat):
            keep_run = np.r_[True, (cat[1:] != cat[:-1]) | (st[1:] != en[:-1])]
            ends = np.r_[np.flatnonzero(keep_run)[1:] - 1, len(cat) - 1]
            st, en, cat = st[keep_run], en[ends], cat[keep_run]
        line = table.lines[main]
        rows.append(TimelineRow(line.display_name or line.name, "categories", -1,
                                st.astype(np.int64), en.astype(np.int64), cat,
                                tuple(CATEGORIES[c] for c in cat.tolist())))

    # 2. every line's events inside the step, one row per depth; the main thread first, then the
    # host's other threads, then other planes (device streams), each in the trace's line order
    inside = (table.start < s1) & (table.end > s0)
    idx = np.flatnonzero(inside)
    lines_used = np.unique(table.line[idx]).tolist() if len(idx) else []
    main_plane = table.lines[main].plane if main >= 0 else -1

    def order(li: int) -> tuple[int, int, int]:
        ln = table.lines[li]
        return (0 if li == main else 1 if ln.plane == main_plane else 2, ln.plane, li)

    drawn = 0
    for li in sorted(lines_used, key=order):
        ev = idx[table.line[idx] == li]
        ln = table.lines[li]
        plane = table.planes[ln.plane]
        label = ln.display_name or ln.name or f"line {ln.id}"
        if ln.plane != main_plane:
            label = f"{plane.name} · {label}"
        nested = ev[~a.outside[ev]]
        crossing = ev[a.outside[ev]]
        depth = a.depth(nested)
        groups = [("events", d, nested[depth == d]) for d in range(max_depth)]
        not_drawn += int(np.unique(depth[depth >= max_depth]).size)
        if len(crossing):
            groups.append(("crossing", -1, crossing))
        for kind, d, sel in groups:
            if not len(sel):
                continue
            if len(rows) >= max_rows:
                not_drawn += 1
                continue
            st = np.maximum(table.start[sel], s0).astype(np.int64)
            en = np.minimum(table.end[sel], s1).astype(np.int64)
            rows.append(TimelineRow(label, kind, d, st, en, a.cat[sel].astype(np.int64),
                                    tuple(table.names[k] for k in table.name[sel].tolist())))
            drawn += len(sel)

    cats = {c: float(steps[c][row]) for c in CATEGORIES}
    return StepTimeline(
        step_num=int(steps[STEP_NUM][row]), which=_which_label(which), start_ps=s0, end_ps=s1,
        wall_ms=(s1 - s0) / PS_PER_MS, first=bool(steps["first"][row]),
        partial=bool(steps["partial"][row]), categories=cats, rows=tuple(rows),
        rows_not_drawn=not_drawn, events=drawn,
        steps=tuple(int(v) for v in np.asarray(steps[STEP_NUM]).tolist()),
        host_events_recorded=bool(tr.host_events_recorded))


def neighbour_step(tl: StepTimeline, delta: int) -> int | None:
    """The step number ``delta`` places after (before, when negative) the drawn one, or None at
    either end."""
    try:
        k = tl.steps.index(tl.step_num) + delta
    except ValueError:
        return None
    return tl.steps[k] if 0 <= k < len(tl.steps) else None


def cells(row: TimelineRow, view_start: int, view_end: int, width: int) -> list[int | None]:
    """Which event of ``row`` each of ``width`` character cells over [view_start, view_end)
    shows (an index into the row's events, or None: nothing there). A cell shows the event that
    covers most of it; an event narrower than a cell still takes the cell it starts in when no
    other event covers more of it, so short events stay visible at any zoom."""
    out: list[int | None] = [None] * width
    if width <= 0 or view_end <= view_start or not len(row.start_ps):
        return out
    span = view_end - view_start
    keep = np.flatnonzero((row.start_ps < view_end) & (row.end_ps > view_start))
    if not len(keep):
        return out
    st = np.maximum(row.start_ps[keep], view_start) - view_start
    en = np.minimum(row.end_ps[keep], view_end) - view_start
    # cover[c]: the largest overlap seen so far in cell c (ps·width units: exact integers)
    cover = np.zeros(width, dtype=np.int64)
    a = (st * width) // span
    b = np.minimum(width - 1, (np.maximum(en - 1, st) * width) // span)
    for k, lo, hi, s, e in zip(keep.tolist(), a.tolist(), b.tolist(), st.tolist(), en.tolist()):
        for c in range(lo, hi + 1):
            c0, c1 = c * span, (c + 1) * span           # the cell, in ps·width units
            ov = max(1, min(e * width, c1) - max(s * width, c0))
            if ov > cover[c]:
                cover[c] = ov
                out[c] = k
    return out


def view_window(tl: StepTimeline, zoom: float, centre: float) -> tuple[int, int]:
    """[start, end) ps shown at ``zoom`` (1: the whole step) around ``centre`` (0..1 of the
    step), kept inside the step."""
    d = tl.duration_ps
    if d <= 0:
        return tl.start_ps, tl.end_ps
    width = max(1, int(round(d / max(1.0, zoom))))
    start = tl.start_ps + int(round(centre * d)) - width // 2
    start = min(max(start, tl.start_ps), tl.end_ps - width)
    return start, start + width
