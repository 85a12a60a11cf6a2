"""Exclusive attribution of main-thread time to categories, step by step.

Pipeline on one event table (numpy, and the C extension for the loops that visit every event in
order; no per-event Python):
1. nesting: parent and depth of every positive-length event, per thread line;
2. categories: each event's own category from ``rules``, then the effective one along the nesting;
3. the main thread's timeline: the innermost open event owns each instant (gaps own nothing and are
   Python), cut into segments at every event start and end;
4. steps: windows from step markers (or a documented fallback), and each category's time inside each
   window summed from the timeline's segments, so the categories sum to the step's wall time
   exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from traceinsight.analysis import native, rules, xla_compile
from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import (
    CONVERT_TO_TENSOR,
    DEVICE_PLANE,
    EAGER_CONST,
    EAGER_CONST_EXECUTE,
    EAGER_KERNEL_EXECUTE,
    EAGER_OP,
    HLO_OP,
    HOST_PLANE,
    ITERATOR_GET_NEXT,
    KERNEL_RUN,
    MAIN_THREAD_LINES,
    MEMCPY,
    MEMCPY_H2D,
    PYTHON_FRAME,
    TF_CONSTANT,
    TF_DATA_LINE,
    TF_FUNCTION_CALL,
    TFE_FAST_PATH,
    TFE_PY,
    traced_call,
)
from traceinsight.analysis.steps import depth_of, find_steps, step_markers  # noqa: F401 (re-exported)
from traceinsight.model import CATEGORIES, CompileEstimate
from traceinsight.resample import isin, unique
from traceinsight.stepsource import StepSource

N_CAT = len(CATEGORIES)
NONE = -1


@dataclass
class Attribution:
    table: EventTable
    main_line: int                 # index into table.lines, -1 when the trace has no host events
    main_rule: str                 # how the main thread was chosen
    parent: np.ndarray             # int32 per event, -1 for roots and zero-length events
    marker: np.ndarray             # bool per event: a step marker (a window), kept out of the nesting
    outside: np.ndarray            # bool per event: kept out of the nesting (crossers, step markers)
    cat: np.ndarray                # effective category per event (0..N_CAT-1), int8
    # the main thread's timeline: its segments tile it, each owned by an event or by none (-1:
    # Python), of one category (timeline.cat, int8); its boundaries are references to the events
    # whose edges they are (native.Timeline)
    timeline: native.Timeline
    # steps
    step_start: np.ndarray
    step_end: np.ndarray
    step_num: np.ndarray
    step_rule: str                 # how the steps were found, in words (shown)
    step_source: StepSource        # the same, as data (what decisions read)
    has_device_plane: bool
    step_partial: np.ndarray | None = None  # bool per step: cut by the end of the trace
    step_notes: tuple[str, ...] = ()
    compile_estimate: CompileEstimate | None = None   # compile derived where no event records it

    @property
    def crosser(self) -> np.ndarray:
        """Bool per event: crosses another event, kept out of the nesting (made when asked: the
        markers and the events kept out are held, not a third table-long column)."""
        return self.outside & ~self.marker

    def depth(self, rows: np.ndarray) -> np.ndarray:
        """The nesting depth of the events ``rows`` (int32; 0 at top level and out of the
        nesting): made from ``parent`` for the rows asked, the table-long column is not kept."""
        return depth_of(self.parent, rows)

    @property
    def seg_cat(self) -> np.ndarray:
        """The category of each segment of the main thread's timeline (int8)."""
        return self.timeline.cat

    def category_time(self, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """(len(t0), N_CAT) main-thread time per category inside each window [t0, t1), in ps.
        Windows may overlap. Time outside the timeline (before the first or after the last event)
        is python."""
        t0 = np.asarray(t0, dtype=np.int64)
        t1 = np.asarray(t1, dtype=np.int64)
        out = native.window_sums(self.timeline, t0, t1, N_CAT)
        out[:, rules.PYTHON] = 0
        out[:, rules.PYTHON] = (t1 - t0) - out.sum(axis=1)  # python: its segments and the rest
        return out


def nest(table: EventTable, marker: np.ndarray | None = None, *, depth: bool = True):
    """Parent and depth of every positive-length event, and which events cross others.

    TraceMe events nest among themselves, and python-tracer frames among themselves, but a TraceMe
    started inside one Python frame and ended in another (a step marker opened in
    ``Trace.__init__``) crosses frames. Such crossing events are kept out of the nesting (they
    keep their own time span, e.g. as step windows, but own no timeline segments): of a frame and a
    TraceMe the frame is kept out, so the TraceMe keeps its place and its category; otherwise the
    later event. Step markers are always kept out (they are windows). Zero-length events own no
    time and get no parent. One stack pass per thread line (``native.nest``). ``depth=False``: no
    depth column (None)."""
    # Step markers are windows, not owners: kept out of the nesting so an event that crosses a
    # step edge is split between the two steps instead of being lost.
    if marker is None:
        marker = step_markers(table)
    is_frame = np.array([n.startswith(PYTHON_FRAME) for n in table.names] or [False], dtype=bool)
    include = np.greater(table.end, table.start)
    include[marker] = False     # (in place: no table-long temporaries)
    parent, depths, crosser = native.nest(table.start, table.end, table.line, include, is_frame,
                                          table.name, depth=depth)
    return parent, depths, crosser, marker


def effective_categories(own: np.ndarray, parent: np.ndarray, own_strength: np.ndarray,
                         pass_strength: np.ndarray, *, consume: bool = False) -> np.ndarray:
    """Each event's category along the nesting.

    ``own_strength`` is how strongly an event holds its own category against the one inherited
    from its ancestors; ``pass_strength`` how strongly it hands its category down (0: not at all).
    An event without a rule of its own takes the inherited category, else ``python`` for a python
    tracer frame and ``other`` for the rest. ``consume``: written over ``own`` (and
    ``pass_strength``), which the caller drops (``native.inherit``)."""
    return native.inherit(parent, own, own_strength, pass_strength, n_cat=N_CAT,
                          pyframe=rules.PYFRAME, python=rules.PYTHON, other=rules.OTHER,
                          consume=consume)


def _merge(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals [s, e) as sorted, disjoint intervals."""
    if not len(s):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    run_end = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > run_end[:-1]]
    return s[new], np.maximum.reduceat(e, np.nonzero(new)[0])


def _subtract(a_s, a_e, b_s, b_e) -> tuple[np.ndarray, np.ndarray]:
    """Sorted disjoint intervals A minus sorted disjoint intervals B."""
    if not len(a_s) or not len(b_s):
        return a_s, a_e
    pts = unique(np.concatenate([a_s, a_e, b_s, b_e]))
    lo, hi = pts[:-1], pts[1:]

    def covered(s, e):
        k = np.searchsorted(s, lo, side="right") - 1
        return (k >= 0) & (hi <= e[np.maximum(k, 0)])

    keep = covered(a_s, a_e) & ~covered(b_s, b_e)
    return _merge(lo[keep], hi[keep])


_CONTAINER_OPS = frozenset({
    "While", "StatelessWhile", "_While", "If", "StatelessIf", "_If", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall", "RemoteCall", "For"})
_INPUT_WORK = re.compile(f"^({MEMCPY_H2D}|{ITERATOR_GET_NEXT})|:{ITERATOR_GET_NEXT}\\w*$")


def _input_work_intervals(table: EventTable, main: int, outside: np.ndarray, cat: np.ndarray):
    """Time intervals in which the step waits on input work off the main thread and nothing else
    of the step computes: tf.data ``IteratorGetNext`` ops on executor / tf.data threads and
    host-to-device copies (``MemcpyH2D``) on device planes, minus the time any other op of the step
    runs elsewhere (graph ops, HLO ops, device kernels on threads that are not the input
    pipeline's own ``tf_data*`` threads). While the step's own compute runs beside the iterator,
    the wait is not on the step's critical path; the part no compute overlaps is."""
    names = table.names
    is_input = np.array([bool(_INPUT_WORK.search(n)) for n in names] or [False])
    rows = table.line_rows(main)
    if not is_input.any() or rows.stop - rows.start == len(table):
        # no input work by name, or no thread but the main one (a python-traced trace):
        # nothing to look for in the table
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ok = (table.line != main) & ~outside & (table.end > table.start)
    ev = np.nonzero(native.lookup(is_input, table.name) & ok)[0]
    if not len(ev):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    w_s, w_e = _merge(table.start[ev], table.end[ev])
    # the step's compute elsewhere: op events outside the input pipeline. Control-flow and call
    # ops (a While loop or a PartitionedCall holding the IteratorGetNext) contain the wait itself:
    # their events are not compute
    named_op = np.array([(o := rules.op_of_name(n)) is not None and o[1] not in _CONTAINER_OPS
                         for n in names] or [False])
    compute = native.lookup(named_op, table.name)
    if HLO_OP in table.stat_str:
        compute[table.stat_str[HLO_OP][0]] = True
    device_line = np.array([table.planes[ln.plane].name.startswith(DEVICE_PLANE)
                            for ln in table.lines] or [False])
    compute |= native.lookup(device_line, table.line)
    pipeline_line = np.array([ln.name.startswith(TF_DATA_LINE) for ln in table.lines] or [False])
    # (names that are input work or copies, and the pipeline's lines, are not compute)
    not_compute = is_input | np.array([n.startswith(MEMCPY) for n in names] or [False])
    compute &= ok & ~native.lookup(not_compute, table.name) & \
        ~native.lookup(pipeline_line, table.line) & (cat != rules.INPUT)
    c = np.nonzero(compute)[0]
    return _subtract(w_s, w_e, *_merge(table.start[c], table.end[c]))


def _relabel_waits(tl: native.Timeline, w_start, w_end) -> native.Timeline:
    """Main-thread op time spent while input work runs elsewhere is input: the main thread is
    blocked in the function / kernel waiting on tf.data or a copy. Segments are split at the
    intervals' edges (sorted, disjoint), and the op parts inside an interval become input (in
    place on the timeline's categories where nothing is split)."""
    tl = tl.cut(np.concatenate([w_start, w_end]))
    inside = tl.within(w_start, w_end)
    inside = inside[tl.cat[inside] == rules.OP]
    tl.cat[inside] = rules.INPUT
    return tl


def _conversions_without_work(table: EventTable, own: np.ndarray, parent: np.ndarray) -> None:
    """``convert_to_tensor`` / ``tf.constant`` events that place no value did no input
    conversion: every conversion of a Python or numpy value runs an ``_EagerConst`` op
    (``EagerLocalExecute: _EagerConst``, or an ``EagerExecute`` whose ``eager_op`` it is) inside
    the event. A tensor comes back unchanged in a few µs (no TensorFlow event inside), and a
    variable converted for an op's argument runs a ``ReadVariableOp`` there (TensorFlow 2.16 on
    wrap an eager op's variable reads in ``convert_to_tensor``: a loop of ``tf.matmul(x, w)``
    over a ``tf.Variable`` ``w`` holds one per call). Those are the op-call machinery's own time
    and the op they run, not the step's inputs: dispatch (in place on ``own``), so that what runs
    inside keeps its own category."""
    ids = [i for i in (table.name_id(CONVERT_TO_TENSOR), table.name_id(TF_CONSTANT)) if i >= 0]
    if not ids or not len(table):
        return
    # the few candidates as rows (no table-long search of the names)
    conv = np.flatnonzero(own == rules.INPUT)
    conv = conv[np.isin(table.name[conv], ids)]
    if not len(conv):
        return
    not_frame = np.array([not n.startswith(PYTHON_FRAME) for n in table.names], dtype=bool)
    works = native.has_child(parent, table.name, not_frame)[conv]
    own[conv[~works]] = rules.DISPATCH
    busy = conv[works]
    if len(busy):
        own[busy[~isin(busy, _placing_ancestors(table, parent))]] = rules.DISPATCH


def _placing_ancestors(table: EventTable, parent: np.ndarray) -> np.ndarray:
    """Rows of every event that holds a value's placement as a tensor (an ``_EagerConst`` op run,
    by its event's name or its ``EagerExecute``'s ``eager_op`` stat) at any depth."""
    parts = []
    ec = table.name_id(EAGER_CONST_EXECUTE)
    if ec >= 0:
        parts.append(np.flatnonzero(table.name == ec))
    if EAGER_OP in table.stat_str:
        idx, val = table.stat_str[EAGER_OP]
        parts.append(np.asarray(idx)[np.asarray(val) == EAGER_CONST])
    rows = unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    found = []
    while len(rows):        # up the nesting, one level a pass, each row once
        rows = parent[rows]
        rows = unique(rows[rows >= 0])
        found.append(rows)
    return np.concatenate(found) if found else rows


def _kernel_runs_without_event(table: EventTable, own: np.ndarray, parent: np.ndarray) -> None:
    """TensorFlow before 2.12 writes no ``KernelAndDeviceFunc::Run`` inside ``EagerKernelExecute``
    (``names.KERNEL_RUN``): the kernel, or a tf.function's graph (its ops on ``tf_Compute`` threads
    under ``ExecutorState::Process``), runs inside ``EagerKernelExecute`` itself while the calling
    thread waits there. In a trace that holds no ``KernelAndDeviceFunc::Run`` at all, an
    ``EagerKernelExecute`` with no event inside it is op, as the run event is op where TF writes
    it (its launch overhead, a few µs, cannot be told apart). In place on ``own``."""
    if table.name_id(KERNEL_RUN) >= 0:
        return
    ke = table.name_id(EAGER_KERNEL_EXECUTE)
    if ke < 0:
        return
    ev = table.name == ke
    has_child = native.has_child(parent, table.name, np.ones(len(table.names), dtype=bool),
                                 table.start, table.end)
    own[ev & ~has_child & (own == rules.DISPATCH)] = rules.OP


def _compile_without_parent(table: EventTable, own: np.ndarray, parent: np.ndarray) -> None:
    """Events named like an HLO pass (rules.PASS_SHAPE) that no rule places, at the top level of a
    thread before that thread's first XLA executable run and before its last compile event ends,
    are compile: a host trace that starts in the middle of a long compilation holds the passes
    without the compile event around them (nested in one, they are compile by inheritance
    already). In place on ``own``."""
    if not len(table) or not (own == rules.COMPILE).any():
        return
    shaped = np.array([bool(rules.PASS_SHAPE.match(n)) for n in table.names], dtype=bool)
    cand = native.lookup(shaped, table.name) & (own == rules.UNKNOWN) & (parent < 0)
    if not cand.any():
        return
    run = native.lookup(np.array([bool(rules.XLA_RUN.match(n)) for n in table.names],
                                 dtype=bool), table.name)
    if HLO_OP in table.stat_str:
        run[table.stat_str[HLO_OP][0]] = True
    first_run = np.full(len(table.lines), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_run, table.line[run], table.start[run])
    # and while that thread compiles: before the end of its last compile event
    compiling = own == rules.COMPILE
    last_compile = np.full(len(table.lines), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last_compile, table.line[compiling], table.end[compiling])
    cand &= (table.start < first_run[table.line]) & (table.start < last_compile[table.line])
    own[cand] = rules.COMPILE


def _rows_where(column: np.ndarray, test, block: int = 1 << 20) -> np.ndarray:
    """``np.nonzero(test(column))[0]``, ``test`` applied to a block of rows at a time: no mask as
    long as the column."""
    parts = [k + np.flatnonzero(test(column[k:k + block])) for k in range(0, len(column), block)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)


def _fast_path_conversions(table: EventTable, parent: np.ndarray, tl: native.Timeline) -> None:
    """Input conversion inside the C fast path. ``TFE_Py_FastPathExecute_C`` converts each numpy
    / Python argument itself: it copies the value into a new tensor (no event of its own), then
    places it with an ``_EagerConst`` op (``EagerExecute`` > ``EagerLocalExecute: _EagerConst``).
    The fast path's own time from its start, or from the end of its previous child, to such an
    ``EagerExecute`` is that copy: input, not dispatch. In place on the timeline's categories."""
    ec = table.name_id(EAGER_CONST_EXECUTE)
    fp = table.name_id(TFE_FAST_PATH)
    if ec < 0 or fp < 0:
        return
    # (runs after the timeline is made, at the analysis's largest: no table-long mask)
    consts = _rows_where(table.name, lambda names: names == ec)
    ee = parent[consts]
    ee = ee[ee >= 0]
    ee = ee[(parent[ee] >= 0)]
    ee = ee[table.name[parent[ee]] == fp]
    if not len(ee):
        return
    owners = unique(parent[ee])
    # every child of those fast paths, in time order per fast path: the gap before each
    # _EagerConst run starts where the previous child ended (or at the fast path's start)
    kids = _rows_where(parent, lambda parents: np.isin(parents, owners))
    kids = kids[np.lexsort((table.start[kids], parent[kids]))]
    same = np.r_[False, parent[kids[1:]] == parent[kids[:-1]]]
    prev_end = np.r_[0, table.end[kids[:-1]]]
    gap_start = np.where(same, prev_end, table.start[parent[kids]])
    is_const = np.isin(kids, ee)
    g_s, g_e, g_own = gap_start[is_const], table.start[kids[is_const]], parent[kids[is_const]]
    o = np.argsort(g_s, kind="stable")
    g_s, g_e, g_own = g_s[o], g_e[o], g_own[o]
    # the segments inside each gap (its edges are event edges: timeline boundaries) that its fast
    # path owns; the gaps are disjoint (a gap holds no child of its fast path, so no other one)
    keep = g_e > g_s
    g_s, g_e, g_own = g_s[keep], g_e[keep], g_own[keep]
    seg, gap = tl.within_windows(g_s, g_e)
    seg = seg[(tl.owners(seg) == g_own[gap]) & (tl.cat[seg] == rules.DISPATCH)]
    tl.cat[seg] = rules.INPUT


def _choose_main_line(table: EventTable, marker: np.ndarray, host_lines: np.ndarray) -> tuple[int, str]:
    if not len(host_lines):
        return -1, "no host thread lines"
    counts = np.bincount(table.line[marker], minlength=len(table.lines)) if marker.any() else None
    if counts is not None and counts[host_lines].max() > 0:
        best = host_lines[np.argmax(counts[host_lines])]
        return int(best), f"the thread holding the step markers ({table.lines[best].name})"
    for i in host_lines:
        if table.lines[i].name in MAIN_THREAD_LINES:
            return int(i), f"the Python main thread ({table.lines[i].name})"
    tfe = np.array([n.startswith(TFE_PY) for n in table.names], dtype=bool)
    ev_tfe = native.lookup(tfe, table.name)
    c = np.bincount(table.line[ev_tfe], minlength=len(table.lines))
    if c[host_lines].max() > 0:
        best = host_lines[np.argmax(c[host_lines])]
        return int(best), f"the thread calling TF's Python API most ({table.lines[best].name})"
    dur = np.bincount(table.line, weights=(table.end - table.start).astype(float),
                      minlength=len(table.lines))
    best = host_lines[np.argmax(dur[host_lines])]
    return int(best), f"the busiest host thread ({table.lines[best].name})"


def main_thread(table: EventTable, marker: np.ndarray) -> tuple[int, str]:
    """The main thread's line (-1: the trace holds no host thread events) and how it was chosen,
    ``marker`` the step markers (``steps.step_markers``): as ``attribute`` chooses it."""
    host_planes = {i for i, p in enumerate(table.planes) if p.name.startswith(HOST_PLANE)}
    host_lines = np.array([i for i, ln in enumerate(table.lines)
                           if ln.plane in host_planes and ln.n_events], dtype=np.int64)
    return _choose_main_line(table, marker, host_lines)


def attribute(table: EventTable, marker: np.ndarray | None = None) -> Attribution:
    """``marker``: the step markers (``steps.step_markers(table)``) where the caller has them."""
    names = table.names
    if marker is None:
        marker = step_markers(table)
    main, main_rule = main_thread(table, marker)
    rows = table.line_rows(main) if main >= 0 else slice(0, 0)
    # the room for the main thread's timeline, its largest array (two int32 boundaries an event),
    # made first: a large trace's analysis starts with much of the memory its reading freed in one
    # block, which this takes before the per-event columns below scatter over it (a process keeps
    # freed memory while it analyses, see malloc.kept_memory; a block found nowhere would grow it)
    room = native.timeline_room(rows.stop - rows.start)
    has_device = any(p.name.startswith(DEVICE_PLANE) and any(
        ln.plane == i and ln.n_events for ln in table.lines) for i, p in enumerate(table.planes))
    # per-event codes and strengths are int8, parent and depth int32 (not int64): every byte per
    # event is memory in proportion to the trace, which is time too (a fresh process's first trace
    # pays a page fault for every page it touches)
    name_code = np.array([rules.own_category(n, has_device) for n in names] or [rules.UNKNOWN],
                         dtype=np.int8)
    own = native.lookup(name_code, table.name)
    if HLO_OP in table.stat_str:
        idx, _ = table.stat_str[HLO_OP]
        own[idx] = rules.OP
    if TF_FUNCTION_CALL in table.stat_str:
        idx, val = table.stat_str[TF_FUNCTION_CALL]
        traced = np.array([traced_call(v) for v in val], dtype=bool)
        own[idx] = np.where(traced, rules.TRACING, rules.DISPATCH)

    own[marker] = rules.PYTHON  # a marker's own time (outside any event) is python
    # no depth column (4 bytes an event): made again for the rows that need it (steps.depth_of)
    parent, _, crosser, marker_ev = nest(table, marker, depth=False)
    end = table.end
    _conversions_without_work(table, own, parent)
    _kernel_runs_without_event(table, own, parent)
    _compile_without_parent(table, own, parent)
    prio = np.zeros(N_CAT, dtype=np.int8)
    for c, pr in rules.INHERIT_PRIORITY.items():
        prio[c] = 2 * pr
    # strength by own code, looked up (codes without a category, all negative, hold nothing)
    # through the codes' bytes
    strength_of = np.zeros(256, dtype=np.int8)
    strength_of[:N_CAT] = prio
    own_strength = native.lookup(strength_of, own)
    gb = table.name_id(rules.GRAPH_BUILDING)
    if gb >= 0:
        sel = np.nonzero(table.name == gb)[0]
        own_strength[sel] = 2 * rules.GRAPH_BUILDING_PRIORITY
    # each event hands its category down as strongly as it holds it, but the compiling launches
    # below: one column for both where there are none (a table-long copy less)
    pass_strength = own_strength
    launch_names = np.array([bool(rules.XLA_LAUNCH.match(n)) for n in names] or [False])
    launch = native.lookup(launch_names, table.name) if launch_names.any() else np.zeros(0, bool)
    if launch.any():
        compiling = launch & native.mark_ancestors(own == rules.COMPILE, parent)
        if compiling.any():
            pass_strength = own_strength.copy()
        own[compiling] = rules.COMPILE
        own_strength[compiling] = 2 * rules.INHERIT_PRIORITY[rules.COMPILE]
        pass_strength[compiling] = 1  # weak: only nested events without a rule inherit it
    compile_recorded = bool((own == rules.COMPILE).any())
    # the categories written over the own codes (no column more at this point of the peak)
    cat = effective_categories(own, parent, own_strength, pass_strength, consume=True)
    del own, own_strength, pass_strength

    outside = crosser
    outside |= marker_ev    # (in place: the crossers are told from the markers when asked)
    del crosser
    # the main thread's events (int32), for the steps (traceinsight.analysis.steps: markers,
    # tf.function calls, device grouping, fallback), found before the timeline and dropped: the
    # list is written into the timeline's room (no more than half of it), which the timeline
    # then overwrites, and the timeline takes the same rows from the main line's run
    on_main = native.spans_in(table.start, end, outside, rows, room=room)
    found = find_steps(table, main, marker, parent, on_main)
    n_main = len(on_main)
    del on_main, marker_ev
    # every instant the innermost open event changes (strictly increasing): the segments between
    # them tile [first start, last end]
    # (owner -1 is a gap between top-level events: python)
    # (the timeline's events are the nesting's on the main line: the parent of each is the
    # innermost of them open at its start, so an event's end hands the time back to its parent)
    tl = native.timeline(table.start, table.end, None, cat, rules.PYTHON, parent,
                         outside=outside, rows=rows, n_events=n_main, room=room)
    if main >= 0 and len(tl):
        _fast_path_conversions(table, parent, tl)
        waits = _input_work_intervals(table, main, outside, cat)
        if len(waits[0]):
            tl = _relabel_waits(tl, *waits)

    # XLA compilation that no event records (TF 2.15, 2.16): out of op (analysis.xla_compile)
    tl, estimate = xla_compile.estimate(table, main, compile_recorded, outside, tl, found.start,
                                        found.num)
    return Attribution(table=table, main_line=main, main_rule=main_rule, parent=parent,
                       marker=marker, outside=outside, cat=cat, timeline=tl,
                       step_start=found.start, step_end=found.end, step_num=found.num,
                       step_rule=found.rule, step_source=found.source,
                       has_device_plane=has_device,
                       step_partial=found.partial, step_notes=found.notes,
                       compile_estimate=estimate)
