"""Exclusive attribution of main-thread time to categories, step by step.

Pipeline on one event table (all numpy, no per-event Python):
1. nesting: parent and depth of every positive-length event, per thread line;
2. categories: each event's own category from ``rules``, then the effective one along the nesting;
3. the main thread's timeline: the innermost open event owns each instant (gaps own nothing and are
   Python), cut into segments at every event start and end;
4. steps: windows from step markers (or a documented fallback), and each category's time inside each
   window from the cumulative integral of the timeline, so the categories sum to the step's wall time
   exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import re

import numpy as np

from traceinsight.analysis import rules
from traceinsight.analysis.events import EventTable
from traceinsight.model import CATEGORIES

N_CAT = len(CATEGORIES)
NONE = -1


@dataclass
class Attribution:
    table: EventTable
    main_line: int                 # index into table.lines, -1 when the trace has no host events
    main_rule: str                 # how the main thread was chosen
    parent: np.ndarray             # int64 per event, -1 for roots and zero-length events
    depth: np.ndarray
    crosser: np.ndarray            # bool per event: crosses another event, kept out of the nesting
    outside: np.ndarray            # bool per event: kept out of the nesting (crossers, step markers)
    own: np.ndarray                # own category code per event (rules codes)
    cat: np.ndarray                # effective category per event (0..N_CAT-1)
    # main-thread timeline: segments [bounds[i], bounds[i+1]) tile it
    seg_owner: np.ndarray          # event index or -1 (no event: Python), int32
    seg_cat: np.ndarray            # category of each segment, int8
    bounds: np.ndarray             # segment boundary times (len(seg)+1)
    # steps
    step_start: np.ndarray
    step_end: np.ndarray
    step_num: np.ndarray
    step_rule: str
    has_device_plane: bool
    _memo: dict = field(default_factory=dict)  # lazily computed: cumulative times, window sums

    @property
    def seg_start(self) -> np.ndarray:
        return self.bounds[:-1]

    @property
    def seg_end(self) -> np.ndarray:
        return self.bounds[1:]

    def cumulative(self, c: int) -> np.ndarray:
        """Main-thread time of category ``c`` before each segment boundary (ps), built on first
        use: only the categories asked for cost memory."""
        if c not in self._memo:
            lengths = np.where(self.seg_cat == c, np.diff(self.bounds), 0)
            cum = np.empty(len(self.bounds), dtype=np.int64)
            if len(cum):
                cum[0] = 0
                np.cumsum(lengths, out=cum[1:])
            self._memo[c] = cum
        return self._memo[c]

    def category_time(self, t0: np.ndarray, t1: np.ndarray,
                      categories: tuple[int, ...] | None = None) -> np.ndarray:
        """(len(t0), N_CAT) main-thread time per category inside each window [t0, t1), in ps.
        Time outside the timeline (before the first or after the last event) is python. With
        ``categories``, only those columns are filled (the others stay 0)."""
        t0 = np.asarray(t0, dtype=np.int64)
        t1 = np.asarray(t1, dtype=np.int64)
        out = np.zeros((len(t0), N_CAT), dtype=np.int64)
        if not len(t0):
            return out
        if categories is None and len(self.bounds) >= 2 and (t1 >= t0).all() and \
                (len(t0) == 1 or (t0[1:] >= t1[:-1]).all()):
            return self._window_sums(t0, t1)
        wanted = range(N_CAT) if categories is None else categories
        k0, k1 = self._locate(t0), self._locate(t1)
        for c in wanted:
            if c == rules.PYTHON and categories is None:
                continue  # the remainder, below
            out[:, c] = self._integral(c, t1, k1) - self._integral(c, t0, k0)
        if categories is None:
            out[:, rules.PYTHON] = (t1 - t0) - out.sum(axis=1)
        return out

    def _window_sums(self, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """category_time for sorted, disjoint windows (steps): each segment is added to the
        window it starts in (clipped to the window's end), plus the part of the segment a window
        starts inside; no cumulative arrays."""
        w = len(t0)
        seg_start, seg_end = self.seg_start, self.seg_end
        lo, hi = np.searchsorted(seg_start, [t0[0], t1[-1]])
        k = np.searchsorted(t0, seg_start[lo:hi], side="right") - 1
        valid = (k >= 0) & (seg_start[lo:hi] < t1[np.maximum(k, 0)])
        kv = k[valid]
        length = np.minimum(seg_end[lo:hi][valid], t1[kv]) - seg_start[lo:hi][valid]
        out = np.bincount(kv * N_CAT + self.seg_cat[lo:hi][valid], weights=length.astype(float),
                          minlength=w * N_CAT).reshape(w, N_CAT)
        j = np.searchsorted(seg_start, t0, side="right") - 1  # the segment a window starts in
        jc = np.clip(j, 0, len(seg_start) - 1)
        part = (j >= 0) & (seg_start[jc] < t0) & (seg_end[jc] > t0)
        rows = np.nonzero(part)[0]
        np.add.at(out, (rows, self.seg_cat[jc[rows]]),
                  (np.minimum(seg_end[jc[rows]], t1[rows]) - t0[rows]).astype(float))
        out = np.rint(out).astype(np.int64)
        out[:, rules.PYTHON] = 0
        out[:, rules.PYTHON] = (t1 - t0) - out.sum(axis=1)  # python: its segments and the rest
        return out

    def _locate(self, t: np.ndarray) -> np.ndarray:
        if len(t) > 1 and (np.diff(t) < 0).any():  # sorted queries search much faster
            order = np.argsort(t, kind="stable")
            k = np.empty(len(t), dtype=np.int64)
            k[order] = np.searchsorted(self.bounds, t[order], side="right") - 1
            return k
        return np.searchsorted(self.bounds, t, side="right") - 1

    def _integral(self, c: int, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Time of category c on the timeline before each time t (k: t's segment)."""
        if len(self.bounds) < 2:
            return np.zeros(len(t), dtype=np.int64)
        cum = self.cumulative(c)
        nseg = len(self.seg_cat)
        kc = np.clip(k, 0, nseg - 1)
        res = np.where(k < 0, 0, np.where(k >= nseg, cum[-1], cum[kc]))
        inside = (k >= 0) & (k < nseg)
        partial = np.where(inside & (self.seg_cat[kc] == c), t - self.bounds[kc], 0)
        return res + partial


def depth_order(depth: np.ndarray) -> np.ndarray:
    """Indices sorted by depth, stable; small integer keys let numpy use a linear radix sort."""
    key = depth.astype(np.int16) if len(depth) and depth.max() < 32767 else depth
    return np.argsort(key, kind="stable")


def depth_levels(depth: np.ndarray) -> list[np.ndarray]:
    """Event indices per nesting level (level 0 first), each in table order."""
    if not len(depth):
        return []
    order = depth_order(depth)
    bounds = np.r_[0, np.cumsum(np.bincount(depth))]
    return [order[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _nest_positions(table: EventTable, pos: np.ndarray, parent: np.ndarray,
                    depth: np.ndarray) -> None:
    """Parent and depth of the events ``pos`` (sorted by line, start, -end), assuming they nest.

    For properly nested intervals in that order, the number of open ancestors of event i is
    i - #(earlier events that ended by start_i); the parent is the last earlier event one level up.
    """
    parent[pos] = -1
    depth[pos] = 0
    if not len(pos):
        return
    lines = table.line[pos]
    cuts = np.nonzero(np.diff(lines))[0] + 1
    for block in np.split(np.arange(len(pos)), cuts):
        idx = pos[block]
        s = table.start[idx]
        e = table.end[idx]
        m = len(idx)
        k = np.arange(m)
        d = np.maximum(k - np.searchsorted(np.sort(e), s, side="right"), 0)
        # the parent is the last earlier event one level up: per level, a search of sorted positions
        levels = depth_levels(d)
        par = np.full(m, -1, dtype=np.int64)
        for up, here in zip(levels[:-1], levels[1:]):
            if not len(up) or not len(here):
                continue
            j = np.searchsorted(up, here) - 1
            ok = j >= 0
            par[here[ok]] = up[j[ok]]
        parent[idx] = np.where(par >= 0, idx[np.maximum(par, 0)], -1)
        depth[idx] = d


def step_markers(table: EventTable) -> np.ndarray:
    """Step marker events: named as XProf expects (``train…``, ``test…``, ``TraceContext``) and
    carrying a ``step_num`` stat (a tf.function named ``train_function`` is not one)."""
    if not len(table):
        return np.zeros(0, dtype=bool)
    named = np.array([bool(rules.STEP_MARKER.match(n)) for n in table.names], dtype=bool)
    return named[table.name] & (table.stat_int_column("step_num") >= 0)


def _boundaries(table: EventTable, ev: np.ndarray, parent: np.ndarray):
    """Timeline boundaries of properly nested events ``ev`` (table order): every start and end in
    time order, with the event that owns the time after it (the innermost one open then; -1 for
    none). Starts are already sorted (outer events first); ends are sorted by time, inner events
    first (reversed table order, stable sort); at one instant ends come before starts."""
    s_t = table.start[ev]
    rev = ev[::-1]
    e_order = rev[np.argsort(table.end[rev], kind="stable")]
    e_t = table.end[e_order]
    pos_s = np.arange(len(s_t)) + np.searchsorted(e_t, s_t, side="right")
    pos_e = np.arange(len(e_t)) + np.searchsorted(s_t, e_t, side="left")
    t = np.empty(2 * len(ev), dtype=np.int64)
    owner_after = np.empty(2 * len(ev), dtype=np.int64)
    t[pos_s], t[pos_e] = s_t, e_t
    owner_after[pos_s], owner_after[pos_e] = ev, parent[e_order]
    return t, owner_after


def _frames_crossing_tracemes(table: EventTable, pos: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Python-tracer frames that partly overlap a TraceMe event of their thread (a TraceMe opened in
    ``__enter__`` and closed in ``__exit__``): found per line from the TraceMe nesting alone."""
    out = []
    lines = table.line[pos]
    cuts = np.nonzero(np.diff(lines))[0] + 1
    for block in np.split(np.arange(len(pos)), cuts):
        idx = pos[block]
        fr = frame[block]
        if not fr.any() or fr.all():
            continue
        a = idx[~fr]
        parent = np.full(len(table), -1, dtype=np.int64)
        _nest_positions(table, a, parent, np.zeros(len(table), dtype=np.int64))
        t, owner = _boundaries(table, a, parent)  # who is innermost among TraceMes, when
        f = idx[fr]
        fs, fe = table.start[f], table.end[f]
        # the TraceMe open when the frame starts ends inside the frame
        k = np.searchsorted(t, fs, side="right") - 1
        c = np.where(k >= 0, owner[np.maximum(k, 0)], -1)
        cc = np.maximum(c, 0)
        cross = (c >= 0) & (table.end[cc] < fe)
        # the TraceMe open just before the frame ends started inside it and outlives it
        k = np.searchsorted(t, fe, side="left") - 1
        c = np.where(k >= 0, owner[np.maximum(k, 0)], -1)
        cc = np.maximum(c, 0)
        cross |= (c >= 0) & (table.start[cc] > fs) & (table.end[cc] > fe)
        out.append(f[cross])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def nest(table: EventTable, marker: np.ndarray | None = None, max_rounds: int = 6):
    """Parent and depth of every positive-length event, and which events cross others.

    TraceMe events nest among themselves, and python-tracer frames among themselves, but a TraceMe
    started inside one Python frame and ended in another (a step marker opened in
    ``Trace.__init__``) crosses frames. Such crossing events are taken out of the nesting (they
    keep their own time span, e.g. as step windows, but own no timeline segments) and the rest is
    nested again. Step markers are always kept out (they are windows). Zero-length events own no
    time and get no parent."""
    n = len(table)
    parent = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    crosser = np.zeros(n, dtype=bool)
    # Step markers are windows, not owners: kept out of the nesting so an event that crosses a
    # step edge is split between the two steps instead of being lost.
    if marker is None:
        marker = step_markers(table)
    pos = np.nonzero((table.end > table.start) & ~marker)[0]
    is_frame = np.array([n.startswith("$") for n in table.names] or [False], dtype=bool)
    # Find the frames that cross TraceMe events up front, so one round of nesting usually does.
    pre = _frames_crossing_tracemes(table, pos, is_frame[table.name[pos]])
    if len(pre):
        crosser[pre] = True
        pos = pos[~crosser[pos]]
    todo = pos
    for _ in range(max_rounds):
        _nest_positions(table, todo, parent, depth)
        p = parent[todo]
        bad = (p >= 0) & (table.end[todo] > table.end[np.maximum(p, 0)])
        if not bad.any():
            break
        child, par = todo[bad], p[bad]
        # A TraceMe opened in one Python frame (``__enter__``) and closed in another: the frame is
        # the one taken out, so the TraceMe keeps its place (and its category) in the nesting.
        drop_parent = is_frame[table.name[par]] & ~is_frame[table.name[child]]
        out = np.unique(np.concatenate([par[drop_parent], child[~drop_parent]]))
        crosser[out] = True
        pos = pos[~np.isin(pos, out)]
        # nest again only the lines that had crossings
        todo = pos[np.isin(table.line[pos], np.unique(table.line[out]))]
    else:  # still crossing after several rounds: take the rest of the offenders out as well
        p = parent[pos]
        bad = (p >= 0) & (table.end[pos] > table.end[np.maximum(p, 0)])
        crosser[pos[bad]] = True
    parent[crosser | marker] = -1
    depth[crosser | marker] = 0
    return parent, depth, crosser, marker


def effective_categories(own: np.ndarray, parent: np.ndarray, depth: np.ndarray,
                         own_strength: np.ndarray, pass_strength: np.ndarray) -> np.ndarray:
    """Each event's category along the nesting.

    ``own_strength`` is how strongly an event holds its own category against the one inherited
    from its ancestors; ``pass_strength`` how strongly it hands its category down (0: not at all).
    An event without a rule of its own takes the inherited category, else ``python`` for a python
    tracer frame and ``other`` for the rest."""
    n = len(own)
    cat = np.full(n, N_CAT, dtype=np.int64)
    passed = np.zeros(n, dtype=np.int64)
    if not n:
        return cat
    for ev in depth_levels(depth):
        if not len(ev):
            continue
        p = parent[ev]
        has_p = p >= 0
        pc = np.maximum(p, 0)
        inh_str = np.where(has_p, passed[pc], 0)
        inh_cat = np.where(inh_str > 0, cat[pc], N_CAT)
        o = own[ev]
        is_cat = o >= 0
        keep_own = is_cat & (own_strength[ev] >= inh_str)
        res = np.where(keep_own, o, inh_cat)
        res_pass = np.where(keep_own, pass_strength[ev], inh_str)
        fallback = np.where(o == rules.PYFRAME, rules.PYTHON, rules.OTHER)
        nothing = res == N_CAT
        res = np.where(nothing, fallback, res)
        res_pass = np.where(nothing, 0, res_pass)
        cat[ev] = res
        passed[ev] = res_pass
    return cat


def _has_descendant(mask: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """True for events with a descendant (or themselves) in ``mask``."""
    flag = mask.copy()
    for ev in reversed(depth_levels(depth)):  # deepest first
        ev = ev[flag[ev] & (parent[ev] >= 0)]
        flag[parent[ev]] = True
    return flag


def _input_work_intervals(table: EventTable, main: int, outside: np.ndarray):
    """Merged time intervals of input work off the main thread: tf.data ``IteratorGetNext`` ops on
    executor threads, host-to-device copies (``MemcpyH2D``) on device planes."""
    is_input = np.array([bool(re.match(r"^(MemcpyH2D|IteratorGetNext)", n)
                              or re.search(r":IteratorGetNext\w*$", n)) for n in table.names]
                        or [False])
    ev = np.nonzero(is_input[table.name] & (table.line != main) & ~outside
                    & (table.end > table.start))[0]
    if not len(ev):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(table.start[ev], kind="stable")
    s, e = table.start[ev][order], table.end[ev][order]
    run_end = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > run_end[:-1]]
    return s[new], np.maximum.reduceat(e, np.nonzero(new)[0])


def _relabel_waits(seg_start, seg_end, seg_owner, seg_cat, w_start, w_end):
    """Main-thread op time spent while input work runs elsewhere is input: the main thread is
    blocked in the function / kernel waiting on tf.data or a copy. Segments are split at the
    intervals' edges, and the op parts inside an interval become input."""
    cuts = np.unique(np.concatenate([w_start, w_end]))
    cuts = cuts[(cuts > seg_start[0]) & (cuts < seg_end[-1])]
    bounds = np.union1d(np.concatenate([seg_start, seg_end[-1:]]), cuts)
    new_start, new_end = bounds[:-1], bounds[1:]
    src = np.searchsorted(seg_start, new_start, side="right") - 1
    owner, cat = seg_owner[src], seg_cat[src].copy()
    k = np.searchsorted(w_start, new_start, side="right") - 1
    inside = (k >= 0) & (new_end <= w_end[np.maximum(k, 0)])
    cat[inside & (cat == rules.OP)] = rules.INPUT
    return new_start, new_end, owner, cat


def _choose_main_line(table: EventTable, marker: np.ndarray, host_lines: np.ndarray) -> tuple[int, str]:
    if not len(host_lines):
        return -1, "no host thread lines"
    counts = np.bincount(table.line[marker], minlength=len(table.lines)) if marker.any() else None
    if counts is not None and counts[host_lines].max() > 0:
        best = host_lines[np.argmax(counts[host_lines])]
        return int(best), f"the thread holding the step markers ({table.lines[best].name})"
    for i in host_lines:
        if table.lines[i].name in ("python", "MainThread", "python3"):
            return int(i), f"the Python main thread ({table.lines[i].name})"
    tfe = np.array([n.startswith("TFE_Py_") for n in table.names], dtype=bool)
    ev_tfe = tfe[table.name] if len(table) else np.zeros(0, bool)
    c = np.bincount(table.line[ev_tfe], minlength=len(table.lines))
    if c[host_lines].max() > 0:
        best = host_lines[np.argmax(c[host_lines])]
        return int(best), f"the thread calling TF's Python API most ({table.lines[best].name})"
    dur = np.bincount(table.line, weights=(table.end - table.start).astype(float),
                      minlength=len(table.lines))
    best = host_lines[np.argmax(dur[host_lines])]
    return int(best), f"the busiest host thread ({table.lines[best].name})"


def attribute(table: EventTable) -> Attribution:
    names = table.names
    has_device = any(p.name.startswith("/device:") and any(
        ln.plane == i and ln.n_events for ln in table.lines) for i, p in enumerate(table.planes))
    name_code = np.array([rules.own_category(n, has_device) for n in names] or [rules.UNKNOWN],
                         dtype=np.int64)
    own = name_code[table.name] if len(table) else np.zeros(0, dtype=np.int64)
    own = own.copy()
    if "hlo_op" in table.stat_str:
        idx, _ = table.stat_str["hlo_op"]
        own[idx] = rules.OP
    if "tf_function_call" in table.stat_str:
        idx, val = table.stat_str["tf_function_call"]
        traced = np.array([v.startswith("traced") for v in val], dtype=bool)
        own[idx] = np.where(traced, rules.TRACING, rules.DISPATCH)

    marker = step_markers(table)
    own[marker] = rules.PYTHON  # a marker's own time (outside any event) is python
    parent, depth, crosser, marker_ev = nest(table, marker)
    end = table.end
    prio = np.zeros(N_CAT, dtype=np.int64)
    for c, pr in rules.INHERIT_PRIORITY.items():
        prio[c] = 2 * pr
    own_strength = np.where(own >= 0, prio[np.clip(own, 0, N_CAT - 1)], 0)
    pass_strength = own_strength.copy()
    gb = table.name_id(rules.GRAPH_BUILDING)
    if gb >= 0:
        sel = table.name == gb
        own_strength[sel] = pass_strength[sel] = 2 * rules.GRAPH_BUILDING_PRIORITY
    launch_names = np.array([bool(rules.XLA_LAUNCH.match(n)) for n in names] or [False])
    launch = launch_names[table.name] if len(table) else np.zeros(0, bool)
    if launch.any():
        compiling = launch & _has_descendant(own == rules.COMPILE, parent, depth)
        own[compiling] = rules.COMPILE
        own_strength[compiling] = 2 * rules.INHERIT_PRIORITY[rules.COMPILE]
        pass_strength[compiling] = 1  # weak: only nested events without a rule inherit it
    cat = effective_categories(own, parent, depth, own_strength, pass_strength)

    host_planes = {i for i, p in enumerate(table.planes) if p.name.startswith("/host:")}
    host_lines = np.array([i for i, ln in enumerate(table.lines)
                           if ln.plane in host_planes and ln.n_events], dtype=np.int64)
    step_num_col = table.stat_int_column("step_num")
    main, main_rule = _choose_main_line(table, marker, host_lines)

    # main-thread timeline
    if main >= 0:
        on_main = np.nonzero((table.line == main) & (end > table.start) & ~crosser
                             & ~marker_ev)[0]
    else:
        on_main = np.zeros(0, dtype=np.int64)
    t, owner_after = _boundaries(table, on_main, parent)
    if len(t):
        keep = t[1:] > t[:-1]  # drop zero-length segments; the rest tile [t[0], t[-1]]
        bounds = np.append(t[:-1][keep], t[-1])
        seg_owner = owner_after[:-1][keep].astype(np.int32)
    else:
        bounds = np.zeros(0, dtype=np.int64)
        seg_owner = np.zeros(0, dtype=np.int32)
    del t, owner_after
    seg_cat = np.where(seg_owner >= 0, cat[np.maximum(seg_owner, 0)], rules.PYTHON).astype(np.int8)
    # owner -1 is a gap between top-level events: python
    if main >= 0 and len(seg_owner):
        waits = _input_work_intervals(table, main, crosser | marker_ev)
        if len(waits[0]):
            seg_start, seg_end, seg_owner, seg_cat = _relabel_waits(
                bounds[:-1], bounds[1:], seg_owner, seg_cat, *waits)
            bounds = np.append(seg_start, seg_end[-1])

    # steps
    main_marker = np.nonzero(marker & (table.line == main))[0] if main >= 0 else np.zeros(0, np.int64)
    if len(main_marker):
        ss, se, sn = table.start[main_marker], table.end[main_marker], step_num_col[main_marker]
        top = depth[main_marker] == depth[main_marker].min()  # markers nested in markers: outer ones
        ss, se, sn = ss[top], se[top], sn[top]
        marker_names = sorted({names[i] for i in table.name[main_marker]})
        step_rule = f"step markers {', '.join(repr(n) for n in marker_names)} (step_num)"
    else:
        calls = np.zeros(0, dtype=np.int64)
        if "tf_function_call" in table.stat_str and main >= 0:
            idx, _ = table.stat_str["tf_function_call"]
            idx = idx[(table.line[idx] == main) & (parent[idx] < 0)]
            calls = np.sort(idx)
        if len(calls) >= 2:
            ss, se = table.start[calls], end[calls]
            sn = np.arange(len(calls))
            step_rule = ("no step markers: each top-level tf.function call on the main thread is "
                         "a step")
        elif len(on_main):
            se = np.array([end[on_main].max()])
            ss = np.array([table.start[on_main].min()])
            sn = np.array([0])
            step_rule = "no step markers and no repeated tf.function calls: the whole trace is one step"
        else:
            ss = se = sn = np.zeros(0, dtype=np.int64)
            step_rule = "no main-thread events: no steps"
    o = np.argsort(ss, kind="stable")
    return Attribution(table=table, main_line=main, main_rule=main_rule, parent=parent, depth=depth,
                       crosser=crosser, outside=crosser | marker_ev, own=own, cat=cat,
                       seg_owner=seg_owner, seg_cat=seg_cat, bounds=bounds,
                       step_start=ss[o], step_end=se[o], step_num=sn[o], step_rule=step_rule,
                       has_device_plane=has_device)
