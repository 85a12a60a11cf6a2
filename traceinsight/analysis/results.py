"""Attribution -> the per-mode tables of ``traceinsight.model.ModeResult``: steps, breakdown, ops
and other here; the retrace table in ``analysis.retraces``, the Python hotspots in
``analysis.hotspots``; and the numpy sorting and grouping they share.

Computed with numpy into ``traceinsight.columns.Columns`` (no pandas: ``traceinsight analyze``
prints from these without importing it); the model offers them as DataFrames too. Group sums
and sorts reproduce what the pandas code before them computed (``groupby().sum()``,
``sort_values(kind="stable")``), figure for figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.names import DEVICE_PLANE, HLO_OP, MEMCPY, STEP_NUM, TASK_ENVIRONMENT
from traceinsight.columns import Columns, text
from traceinsight.model import CATEGORIES, steady_mask
from traceinsight.resample import median, quantiles, unique

if TYPE_CHECKING:   # (the comparisons import sort_order: no trace decoding, no protobuf)
    from traceinsight.analysis.attribute import Attribution

PS_PER_MS = 1e9

STEP_COLUMNS = [STEP_NUM, "start_ps", "end_ps", "wall_ms", "first", "partial", *CATEGORIES]
BREAKDOWN_COLUMNS = ["median", "p25", "p75", "mean"]

OPS_COLUMNS = ["op", "type", "thread", "calls_per_step", "self_ms_per_step", "share"]
OTHER_COLUMNS = ["name", "ms_per_step", "count"]


# ---- sorting and grouping as the tables need them (numpy) -------------------------------------

def sort_order(keys: Sequence[tuple[np.ndarray, bool]]) -> np.ndarray:
    """Row order by several (column, ascending) keys, the first the most significant; stable (ties
    keep their order) and NaN last either way, as pandas' ``sort_values(by=[...],
    kind="stable")``. Strings sort by code point."""
    codes = []
    for values, ascending in keys:
        v = np.asarray(values)
        if v.dtype == object:
            v = np.unique(v, return_inverse=True)[1].reshape(-1)
        elif v.dtype == bool:
            v = v.astype(np.int64)
        codes.append(v if ascending else -v)
    if not codes or not len(codes[0]):
        return np.zeros(0, dtype=np.int64)
    return np.lexsort(codes[::-1])


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques) with uniques in order of first appearance (``pd.factorize``)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), values[:0]
    uniq, first, inv = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inv.reshape(-1)], uniq[order]


def group_sum_int(codes: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per code."""
    out = np.zeros(n_groups, dtype=np.int64)
    np.add.at(out, codes, np.asarray(values, dtype=np.int64))
    return out


# ---- the tables --------------------------------------------------------------------------------

def steps_table(a: Attribution, step0_is_first_call: bool = False) -> Columns:
    """One row per step: step_num, start_ps, end_ps, wall_ms, first, partial (cut by the end of
    the trace), and ms per category. ``step0_is_first_call``: the capture numbered the process's
    first call 0 (traceinsight's own run folders), so a step 0 is it even without tracing."""
    if not len(a.step_start):
        return Columns.no_rows(STEP_COLUMNS)
    ct = a.category_time(a.step_start, a.step_end) / PS_PER_MS
    n = len(a.step_start)
    # The first step in the trace is reported apart when it holds the process's first call of
    # the step: tracing or compilation in it, where one-time costs live. A marker numbered 0 is
    # not enough: a trace started mid-run numbers its own steps from 0 after the step was traced.
    first = np.zeros(n, dtype=bool)
    first[0] = bool((step0_is_first_call and a.step_num[0] == 0)
                    or (ct[0, rules.TRACING] + ct[0, rules.COMPILE]) > 0)
    if n == 1:
        first[0] = False  # a single step is all there is: keep it as the steady state
    data: dict[str, np.ndarray] = {
        STEP_NUM: a.step_num.astype(np.int64), "start_ps": a.step_start, "end_ps": a.step_end,
        "wall_ms": (a.step_end - a.step_start) / PS_PER_MS, "first": first,
        "partial": a.step_partial if a.step_partial is not None else np.zeros(n, dtype=bool)}
    for i, c in enumerate(CATEGORIES):
        data[c] = np.ascontiguousarray(ct[:, i])
    return Columns(data)


def breakdown_table(steps: Columns) -> Columns:
    """Per category and the step's wall time ("total"), over the steady steps: median, p25, p75
    (linear interpolation) and mean, ms; NaN steps (categories not recorded) are skipped, as
    pandas' ``median`` / ``quantile`` / ``mean`` skip them."""
    if not len(steps):
        return Columns.no_rows(BREAKDOWN_COLUMNS)
    steady = steady_mask(steps)
    if not steady.any():
        return Columns.no_rows(BREAKDOWN_COLUMNS)
    out: dict[str, list[float]] = {k: [] for k in BREAKDOWN_COLUMNS}
    for c in [*CATEGORIES, "wall_ms"]:
        values = np.asarray(steps[c], dtype=float)[steady]
        nan = np.isnan(values)
        v = values[~nan]
        if not len(v):
            for k in BREAKDOWN_COLUMNS:
                out[k].append(float("nan"))
            continue
        p25, p75 = quantiles(v, [0.25, 0.75])   # np.percentile's, bit for bit
        out["median"].append(float(median(v)))
        out["p25"].append(float(p25))
        out["p75"].append(float(p75))
        # the sum with NaN as 0 (pandas' nanmean: the same additions, in the same order)
        out["mean"].append(float(np.sum(np.where(nan, 0.0, values)) / len(v)))
    return Columns({k: np.asarray(v, dtype=float) for k, v in out.items()},
                   index=[*CATEGORIES, "total"])


def steady_windows(a: Attribution, steps: Columns) -> tuple[np.ndarray, np.ndarray, int]:
    if steps.empty:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    steady = steady_mask(steps)
    return a.step_start[steady], a.step_end[steady], int(steady.sum())


def owned_time(a: Attribution, ws: np.ndarray, we: np.ndarray, category: int) -> np.ndarray:
    """Per event, the main-thread time (ps) of one category it owns inside the windows, clipped
    to them. Not kept: each (category, windows) is asked for once per analysis, and a table-long
    int64 column kept per category would hold 8 bytes per event each until the analysis ended."""
    return native.owned_time(a.timeline, ws, we, category, len(a.table))


def owned_by_window(a: Attribution, ws: np.ndarray, we: np.ndarray,
                    category: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``owned_time`` split by window: (event, window index, ps) per piece of the main thread's
    timeline segments of the category that an event owns, cut at the windows' edges (a segment
    across an edge is split between the windows; an event may own several pieces of one window).
    Summed per event, the pieces give ``owned_time``'s times."""
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    tl = a.timeline
    if not len(tl) or not len(ws):
        return none
    # the category's segments as indices (no segment-long mask)
    keep = tl.of_category(category)
    owner = tl.owners(keep).astype(np.int64)
    keep, owner = keep[owner >= 0], owner[owner >= 0]
    start, end = tl.times(keep), tl.times(keep + 1)
    if not len(start):
        return none
    # the windows' edges that fall inside one of these segments cut it (the segments are sorted
    # and disjoint, so each edge is inside one at most)
    edges = unique(np.concatenate([ws, we]).astype(np.int64))
    seg = np.searchsorted(start, edges, side="right") - 1
    inside = (seg >= 0) & (edges > start[np.maximum(seg, 0)]) & (edges < end[np.maximum(seg, 0)])
    if inside.any():
        at, cut = seg[inside] + 1, edges[inside]
        # each cut ends the piece before it and starts a new one of the same owner
        start = np.insert(start, at, cut)
        end = np.insert(end, at - 1, cut)
        owner = np.insert(owner, at, owner[at - 1])
    win = in_windows(start, ws, we)
    ok = (win >= 0) & (end > start)
    return owner[ok], win[ok], (end - start)[ok]


def in_windows(t: np.ndarray, ws: np.ndarray, we: np.ndarray) -> np.ndarray:
    """Index of the window holding each time, -1 when none (windows sorted, disjoint)."""
    if not len(ws):
        return np.full(len(t), -1, dtype=np.int64)
    if len(t) > 1 and (t[1:] >= t[:-1]).all():
        # sorted times (a thread's events, timeline segments): each window is a run of them, found
        # by two searches per window instead of one per time
        lo, hi = np.searchsorted(t, ws, side="left"), np.searchsorted(t, we, side="left")
        delta = np.zeros(len(t) + 1, dtype=np.int64)
        np.add.at(delta, lo, np.arange(1, len(ws) + 1))
        np.add.at(delta, hi, -np.arange(1, len(ws) + 1))
        return np.cumsum(delta[:-1]) - 1
    k = np.searchsorted(ws, t, side="right") - 1
    ok = (k >= 0) & (t < we[np.clip(k, 0, len(we) - 1)])
    return np.where(ok, k, -1)


def op_step_totals(a: Attribution, steps: Columns) -> Columns:
    """``op_totals`` over the steady steps, per step (a ``window`` column: the steady step's index
    among them): what the ops table sums, and the layers' per-step times group."""
    ws, we, n = steady_windows(a, steps)
    if n == 0 or not len(a.table):
        return Columns.no_rows(["op", "type", "thread", "window", "calls", "self_ps"])
    return op_totals(a, ws, we, by_window=True)


def ops_table(a: Attribution, steps: Columns, step_totals: Columns | None = None) -> Columns:
    """Ops on the main thread (op time owned inside each op's dispatch) and on worker threads
    (self time of graph / HLO op events), per steady step. ``step_totals``: the same steps'
    ``op_step_totals`` where already computed (summed here over the steps)."""
    ws, we, n = steady_windows(a, steps)
    if n == 0 or not len(a.table):
        return Columns.no_rows(OPS_COLUMNS)
    totals = op_totals(a, ws, we) if step_totals is None else _over_windows(step_totals)
    if totals.empty:
        return Columns.no_rows(OPS_COLUMNS)
    calls_per_step = totals["calls"] / n
    self_ms = totals["self_ps"] / PS_PER_MS / n
    thread = totals["thread"]
    # share of the thread group's op time; the group's total summed exactly (math.fsum: the same
    # whatever the rows' order)
    total = np.zeros(len(self_ms))
    for th in dict.fromkeys(thread.tolist()):
        sel = thread == th
        total[sel] = math.fsum(self_ms[sel].tolist())
    share = np.where(total > 0, self_ms / np.where(total > 0, total, 1), 0.0)
    # ties (XLA's repeated fusions often cost the same) in name order, so the table is the same
    # from run to run of the analysis
    order = sort_order([(self_ms, False), (totals["op"], True), (thread, True)])
    return Columns({"op": totals["op"], "type": totals["type"], "thread": thread,
                    "calls_per_step": calls_per_step, "self_ms_per_step": self_ms,
                    "share": share}).take(order)


def ms_per_call(calls_per_step: np.ndarray, self_ms_per_step: np.ndarray) -> np.ndarray:
    """Self time of one call of each op of an ops table (ms): its per-step self time over its
    calls per step; NaN for an op with no calls. The one definition the viewer's ops table and
    the tiny-ops finding read."""
    calls = np.asarray(calls_per_step, dtype=float)
    self_ms = np.asarray(self_ms_per_step, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(calls > 0, self_ms / np.where(calls > 0, calls, 1.0), np.nan)


def _over_windows(per_window: Columns) -> Columns:
    """``op_totals(by_window=True)``'s rows summed over the windows, in the order ``op_totals``
    gives them: each (op, type, thread) once, at its first row (sums of whole picoseconds: exact
    in any order)."""
    if per_window.empty:
        return Columns.no_rows(["op", "type", "thread", "calls", "self_ps"])
    keys = list(zip(per_window["op"].tolist(), per_window["type"].tolist(),
                    per_window["thread"].tolist()))
    index: dict[tuple[str, str, str], int] = {}
    code = np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)
    first = list(index)
    calls = np.bincount(code, weights=per_window["calls"].astype(float), minlength=len(first))
    self_ps = np.bincount(code, weights=per_window["self_ps"].astype(float), minlength=len(first))
    return Columns({"op": text([k[0] for k in first]), "type": text([k[1] for k in first]),
                    "thread": text([k[2] for k in first]), "calls": calls.astype(np.int64),
                    "self_ps": self_ps})


def op_totals(a: Attribution, ws: np.ndarray, we: np.ndarray, by_window: bool = False) -> Columns:
    """op, type, thread, calls, self_ps summed over the windows [ws, we); ``by_window``: one row
    per window an op has calls or time in, its index in a ``window`` column."""
    # No table-long column but the op-event mask (1 byte an event): the op events and the owners
    # of op time are few next to a large trace's events, so they are worked on as index lists
    # (each table-long int column would hold 4-8 bytes an event at the analysis's peak).
    t = a.table
    names = t.names
    # main thread: op-category timeline segments, owned by the nearest op event above the owner
    # (their pieces made before the op-event mask: their temporaries and it are not alive at once)
    main = a.main_line >= 0 and len(a.timeline)
    if main:
        if by_window:
            owners, owner_win, owned_ps = owned_by_window(a, ws, we, rules.OP)
        else:
            owners, owned_ps = _owned_by_owner(a, ws, we, rules.OP)
            owner_win = np.zeros(len(owners), dtype=np.int64)
    op_of_name = [rules.op_of_name(nm) for nm in names]
    # accelerator planes (/device:GPU:0, ...) are not ops here: their kernels and copies are in
    # the device analysis (traceinsight.analysis.device: by whole kernel name and TF op, and not
    # from XProf's derived lines, which repeat the kernels' times)
    device_line = np.array([t.planes[ln.plane].name.startswith(DEVICE_PLANE) for ln in t.lines]
                           or [False], dtype=bool)
    op_name = np.array([o is not None for o in op_of_name] or [False], dtype=bool)
    # events are grouped by an integer key code: the name id, or for events carrying an hlo_op
    # stat, len(names) + the id of that HLO op's name; runtime (non-op) owners: -1 - name id.
    # The HLO codes are kept for the events that carry one (sorted), not per event
    hlo_ev = np.zeros(0, dtype=np.int64)
    hlo_val = np.zeros(0, dtype=np.int64)
    hlo_names: list[str] = []
    if HLO_OP in t.stat_str:
        idx, val = t.stat_str[HLO_OP]
        codes, uniq = factorize(np.asarray(val, dtype=object))
        idx = np.asarray(idx, dtype=np.int64)
        # an event given the stat twice keeps the last (as a table-long assignment would)
        order = np.argsort(idx, kind="stable")
        idx, codes = idx[order], codes[order]
        last = np.ones(len(idx), dtype=bool)
        last[:-1] = idx[1:] != idx[:-1]
        hlo_ev, hlo_val = idx[last], len(names) + codes[last]
        hlo_names = [str(u) for u in uniq]
    # the op events: by name, but on device lines, and the events carrying an hlo_op stat. Where
    # the name tells (no such lines or events), the mask is per name id (``mask_name``: each
    # event's), else per event (1 byte an event, held until the sums)
    mask_name: np.ndarray | None = None
    if len(hlo_ev) or (len(t) and device_line.any()):
        is_op_event = native.lookup(op_name, t.name)
        if len(t) and device_line.any():
            is_op_event &= (~device_line)[t.line]
        is_op_event[hlo_ev] = True
        op_ev = np.flatnonzero(is_op_event)
    else:
        is_op_event, mask_name = op_name, t.name
        block = 1 << 20
        parts = [k + np.flatnonzero(native.lookup(op_name, t.name[k:k + block]))
                 for k in range(0, len(t), block)]
        op_ev = np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)

    def codes_of(ev: np.ndarray) -> np.ndarray:
        code = t.name[ev].astype(np.int64)
        if len(hlo_ev) and len(ev):
            pos = np.minimum(np.searchsorted(hlo_ev, ev), len(hlo_ev) - 1)
            hit = hlo_ev[pos] == ev
            code[hit] = hlo_val[pos[hit]]
        return code

    def key_of(code: int) -> tuple[str, str]:
        if code < 0:
            return names[-1 - code], "(runtime)"
        if code >= len(names):
            hlo = hlo_names[code - len(names)]
            return hlo, rules.hlo_type(hlo)
        op = op_of_name[code]
        if op is not None:
            return op
        name = names[code]
        return name, ("memcpy" if name.startswith(MEMCPY) else "device kernel")

    n_win = len(ws) if by_window else 1

    def totals(codes: np.ndarray, weights: np.ndarray | None,
               window: np.ndarray | None = None) -> dict[tuple[str, str, int], list]:
        """(key, window) -> [events, summed weight]; several codes may share a key. Window 0
        for all without ``by_window``. ``weights`` None: the events counted, each weighing 0."""
        # codes run from -1 - len(names) (runtime owners) up: shifted to be >= 0 (made in place:
        # one array of the events' length, not one per operation)
        key = codes.astype(np.int64)
        key += len(names) + 1
        key *= n_win
        if window is not None and by_window:
            key += window
        counts: np.ndarray
        sums: np.ndarray
        if weights is None:
            # counts only: the keys sorted in place and their runs counted (no inverse index,
            # nor np.unique's own copies of the events' length)
            key.sort()
            first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else \
                np.zeros(0, dtype=np.intp)
            uniq, counts = key[first], np.diff(np.r_[first, len(key)])
            sums = np.zeros(len(uniq))
        else:
            uniq, inv = np.unique(key, return_inverse=True)
            inv = inv.reshape(-1)
            sums = np.bincount(inv, weights=np.asarray(weights, dtype=float), minlength=len(uniq))
            counts = np.bincount(inv, minlength=len(uniq))
        del key
        out: dict[tuple[str, str, int], list] = {}
        for u, n, w in zip(uniq.tolist(), counts.tolist(), sums.tolist()):
            acc = out.setdefault((*key_of(u // n_win - len(names) - 1), u % n_win), [0, 0.0])
            acc[0] += n
            acc[1] += w
        return out

    rows: list[tuple[str, str, str, int, float, int]] = []
    # What reads the op-event mask is asked first (the nearest op event above each owner of op
    # time, above each nested op event), the mask then dropped: the sums below make their
    # temporaries without it (at a large trace's analysis, this is its peak).
    if main:
        # the nearest op event at or above each owner, walked up once per distinct owner
        distinct, back = unique_inverse(owners)
        anc = native.nearest_marked_at(is_op_event, a.parent, distinct, name=mask_name)[back]
        del distinct, back
        # op time with no op event above it: named after the owning event
        anc_key = np.where(anc >= 0, anc, owners)
        del anc
        anc_is_op = is_op_event[anc_key] if mask_name is None else \
            is_op_event[mask_name[anc_key]]
    # worker threads: self time of op events: duration minus the durations of the op events
    # nested in it (the nearest ones, at any depth). Other nested events (ParallelFor, Eigen
    # pool work, executor bookkeeping) are the op's own execution and stay in its self time, as
    # in XProf's framework_op_stats.
    on_data_plane = np.array([not t.planes[ln.plane].name.startswith(TASK_ENVIRONMENT)
                              for ln in t.lines] or [True])
    op_line = t.line[op_ev]
    ev = op_ev[(op_line != a.main_line) & ~a.outside[op_ev] & on_data_plane[op_line]]
    del op_line
    ev_win = in_windows(t.start[ev], ws, we)
    ev, ev_win = ev[ev_win >= 0], ev_win[ev_win >= 0]
    if len(ev):
        nested_op = op_ev[a.parent[op_ev] >= 0]
        # the nearest op event strictly above
        above = native.nearest_marked_at(is_op_event, a.parent, a.parent[nested_op],
                                         name=mask_name)
        nested_op, above = nested_op[above >= 0], above[above >= 0]
        # the nested op events' durations summed per event of ev (sorted): positions, not a
        # table-long array
        pos = np.minimum(np.searchsorted(ev, above), len(ev) - 1)
        hit = ev[pos] == above
        child_sum = np.bincount(pos[hit], minlength=len(ev),
                                weights=(t.end[nested_op[hit]] - t.start[nested_op[hit]]).astype(float))
        del nested_op, above, pos, hit
        self_ps = np.maximum((t.end[ev] - t.start[ev]).astype(float) - child_sum, 0.0)
    del is_op_event
    if main:
        codes = np.where(anc_is_op, codes_of(anc_key), -1 - t.name[anc_key])
        del anc_is_op, anc_key
        keyed = totals(codes, owned_ps, owner_win)
        del codes, owners, owner_win, owned_ps
        main_ops = op_ev[(t.line[op_ev] == a.main_line) & ~a.outside[op_ev]]
        main_win = in_windows(t.start[main_ops], ws, we)
        main_ops, main_win = main_ops[main_win >= 0], main_win[main_win >= 0]
        calls = totals(codes_of(main_ops), None, main_win)
        del main_ops, main_win
        for k in sorted(set(keyed) | set(calls)):
            rows.append((k[0], k[1], "main", calls.get(k, [0])[0], keyed.get(k, [0, 0.0])[1], k[2]))
    if len(ev):
        for k, (n, ps) in totals(codes_of(ev), self_ps, ev_win).items():
            rows.append((k[0], k[1], "worker", n, ps, k[2]))
    window_col = ["window"] if by_window else []
    if not rows:
        return Columns.no_rows(["op", "type", "thread", *window_col, "calls", "self_ps"])
    out = {"op": text([r[0] for r in rows]), "type": text([r[1] for r in rows]),
           "thread": text([r[2] for r in rows])}
    if by_window:
        out["window"] = np.array([r[5] for r in rows], dtype=np.int64)
    out["calls"] = np.array([r[3] for r in rows], dtype=np.int64)
    out["self_ps"] = np.array([r[4] for r in rows], dtype=float)
    return Columns(out)


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each value among them): ``np.unique``'s with
    ``return_inverse``, as a flat int64 index."""
    if not len(values):
        return values[:0], np.zeros(0, dtype=np.int64)
    distinct, back = np.unique(values, return_inverse=True)
    return distinct, back.reshape(-1).astype(np.int64, copy=False)


def _owned_by_owner(a: Attribution, ws: np.ndarray, we: np.ndarray,
                    category: int) -> tuple[np.ndarray, np.ndarray]:
    """(owners, ps): ``owned_time``'s events with time and their times, without its table-long
    column: ``owned_by_window``'s pieces summed per event (whole picoseconds: exact). Its pieces
    need sorted, disjoint windows (steps are); other windows take ``owned_time``."""
    ws, we = np.asarray(ws, dtype=np.int64), np.asarray(we, dtype=np.int64)
    if not ((we >= ws).all() and (ws[1:] >= we[:-1]).all()):
        owned = owned_time(a, ws, we, category)
        owners = np.nonzero(owned)[0]
        return owners, owned[owners]
    owners, _, ps = owned_by_window(a, ws, we, category)
    distinct, back = unique_inverse(owners)
    return distinct, group_sum_int(back, ps, len(distinct))


def other_table(a: Attribution, steps: Columns) -> Columns:
    """Main-thread time of events no rule places, by name."""
    ws, we, n = steady_windows(a, steps)
    if n == 0 or not len(a.timeline.of_category(rules.OTHER)):
        return Columns.no_rows(OTHER_COLUMNS)
    owners, owned = _owned_by_owner(a, ws, we, rules.OTHER)
    if not len(owners):
        return Columns.no_rows(OTHER_COLUMNS)
    # names are interned: one name id per name
    ids, inv = np.unique(a.table.name[owners], return_inverse=True)
    ps = group_sum_int(inv.reshape(-1), owned, len(ids))   # int64: exact
    count = np.bincount(inv.reshape(-1), minlength=len(ids)).astype(np.int64)
    g = Columns({"name": text([a.table.names[i] for i in ids.tolist()]),
                 "ms_per_step": ps / PS_PER_MS / n, "count": count})
    return g.take(sort_order([(g["ms_per_step"], False), (g["name"], True)]))


def hotspots_listed_order(h: Columns) -> Columns:
    """A mode's hotspots in the order the reports list them (``RunFigures.hotspots_listed``):
    the user's own frames first, by inclusive time (a layer's ``call`` spends its time in
    Keras and TF code below it: by self time it ranks among the last and a table cut at its top
    rows drops it), then every other frame by self time."""
    if h.empty or "group" not in h:
        return h
    user = np.asarray(h["group"] == "user", dtype=bool)

    def by(rows: np.ndarray, first: str, second: str) -> np.ndarray:
        keys = [(h[first][rows], False), (h[second][rows], False)]
        keys += [(h[c][rows], True) for c in ("function", "file", "line")]
        return rows[sort_order(keys)]

    return h.take(np.concatenate([by(np.flatnonzero(user), "inclusive_ms", "self_ms"),
                                  by(np.flatnonzero(~user), "self_ms", "inclusive_ms")]))
