"""Where the steps of a trace are, and which rule found them.

Rules, first that applies (the rule used is stated with every mode):

1. host step markers on the main thread: ``train…`` / ``test…`` / ``TraceContext`` (what XProf
   recognizes) and Keras' ``Profiled batch`` (the TensorBoard callback's ``profile_batch`` wraps
   each batch in one), each with a ``step_num`` stat;
2. no markers: each top-level tf.function call on the main thread; a single call is the step too,
   not the whole trace around it (a Keras 2 ``fit`` traced by the TensorBoard callback over one
   batch holds one ``train_function`` call and no ``train`` marker; XProf took such a call as the
   step on a TF 2.1x trace, and finds no step at all on TF 2.12's);
3. no host events at all (host tracer level 0, device-only traces): the device-side step grouping
   XProf itself wrote into the trace (the derived ``Steps`` line of each device plane, one event
   per step with its ``group_id``), else device events grouped by their ``group_id`` stat (TF's
   event grouping, as XProf's ``group_events`` assigns it), else all device activity as one step;
4. otherwise the whole main-thread span is one step.

Two things a trace can hold that are not steady steps:

* markers that repeat a ``step_num`` (a loop that reuses one number): each marker is still its own
  window, numbered in time order, and a note says so;
* a last step cut by the end of the trace (its window or the work started in it runs to the
  recorded stop time): flagged ``partial`` and kept out of the steady steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import (
    DERIVED_LINE_NAMES,
    DEVICE_PLANE,
    EAGER_EXECUTE,
    EAGER_LOCAL_EXECUTE,
    EXECUTOR_PROCESS,
    EXECUTOR_PROPAGATE,
    FUNCTION_RUN,
    GROUP_ID,
    HLO_MODULE,
    HLO_OP,
    MEMCPY_D2H,
    MEMCPY_H2D,
    MEMORY_ALLOCATION,
    MEMORY_DEALLOCATION,
    PJIT_FUNCTION,
    PROFILE_START_TIME,
    PROFILE_STOP_TIME,
    PROFILED_BATCH,
    PYTHON_FRAME,
    SCRIPT_STEP_MARKER,
    STEP_MARKER_TEST,
    STEP_MARKER_TRAIN,
    STEP_NUM,
    STEPS_LINE,
    TF_FUNCTION_CALL,
    TFE,
    TRACE_CONTEXT,
)
from traceinsight.stepsource import StepSource, StepSpan

if TYPE_CHECKING:
    from traceinsight.model import Timing

STEP_MARKER = re.compile(f"^({re.escape(STEP_MARKER_TRAIN)}|{re.escape(STEP_MARKER_TEST)})[^/]*$"
                         f"|^{re.escape(TRACE_CONTEXT)}$|^{re.escape(PROFILED_BATCH)}$")

# XProf's derived lines (tsl/profiler/utils/xplane_schema.h: kThreadIdDerivedMin = 0xdeadbeef as
# int32, then StepInfo, KernelLaunch, TfNameScope, TfOp, HloModule, HloOp, Overhead, Source...):
# written into device planes when XProf preprocessed a trace. They repeat the kernels' times, so
# they are never summed as device work.
DERIVED_LINE_MIN = -559038737
DERIVED_LINE_MAX = DERIVED_LINE_MIN + 64
STEPS_LINE_ID = DERIVED_LINE_MIN
RULE_MODULE_RUNS = "no host step events: steps from the device's XLA module executions"
# The end of a marker rule's sentence whose step numbers are the markers' own step_num stats (the
# job's step numbers: the same number on two hosts of one job is the same step), and of one whose
# markers repeat a step_num, renumbered here in time order (numbers of this trace only). The
# sentences are shown; decisions read the rule's StepSource.
STEP_NUM_RULE = "(step_num)"
RENUMBERED_RULE = "(renumbered in time order: the markers repeat a step_num)"
RULE_DEVICE_GROUPS = ("no host events: device events grouped into steps by their group_id stat "
                      "(TF's step grouping)")


def spanned_rule(rule: str, timing: Timing | None) -> str:
    """The step rule's sentence, saying what a step spans where a script's mode recorded it: its
    markers are the agent's, and for a loop's steps each runs from one step call to the next."""
    if timing is None or timing.step_span is not StepSpan.ITERATION:
        return rule
    calls = " / ".join(timing.step_calls) or "step"
    return (f"{rule}: each step is one iteration of the loop: from one {calls} call to the next "
            "(what the loop does between calls, its input fetch included, is in the step; the "
            "last call, which has no next, is not a step)")


def is_derived_line(line) -> bool:
    return DERIVED_LINE_MIN <= line.id < DERIVED_LINE_MAX or line.name in DERIVED_LINE_NAMES


@dataclass(frozen=True)
class StepWindows:
    """The steps a trace holds: each step's window on the trace's clock, its number, whether the
    trace's end cut it, and the rule that found them (in words and as data)."""

    start: np.ndarray          # int64 ps, sorted
    end: np.ndarray
    num: np.ndarray            # step_num (renumbered in time order when markers repeat one)
    partial: np.ndarray        # bool: cut by the end of the trace
    rule: str                  # the rule, in words (shown to the user)
    source: StepSource         # the rule, as data (what decisions read)
    notes: tuple[str, ...] = ()

    @staticmethod
    def empty(rule: str, notes: tuple[str, ...] = ()) -> StepWindows:
        z = np.zeros(0, dtype=np.int64)
        return StepWindows(z, z, z, np.zeros(0, dtype=bool), rule, StepSource.NONE, notes)


def step_markers(table: EventTable) -> np.ndarray:
    """Step marker events: named as XProf expects (``train…``, ``test…``, ``TraceContext``) or
    Keras' ``Profiled batch``, and carrying a ``step_num`` stat (a tf.function named
    ``train_function`` is not one)."""
    if not len(table):
        return np.zeros(0, dtype=bool)
    named = np.array([bool(STEP_MARKER.match(n)) for n in table.names], dtype=bool)
    # (the default -1 is not >= 0: an event without the stat is no marker)
    return named[table.name] & table.stat_int_flag(STEP_NUM, lambda v: v >= 0)


def stop_time_ps(table: EventTable) -> int | None:
    """The recorded profile stop time on the table's clock (ps), when the trace has it."""
    if table.zero_ns is None:
        return None
    for plane in table.planes:
        stop, start = plane.stats.get(PROFILE_STOP_TIME), plane.stats.get(PROFILE_START_TIME)
        if not (type(stop) is int and type(start) is int and 0 < start <= stop):
            continue
        # TF 2.21 writes CPU line timestamps relative to the profile start (tens of µs), device
        # planes may carry wall-clock ones: the stop time goes on whichever clock the lines use
        if table.zero_ns < start // 2:
            return (stop - start - table.zero_ns) * 1000
        return (stop - table.zero_ns) * 1000
    return None


def depth_of(parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The nesting depth (``native.nest``'s: the number of ancestors) of the events ``rows``,
    walked up ``parent``; the table-long depth column is not kept."""
    depth = np.zeros(len(rows), dtype=np.int32)
    up = parent[rows]
    while True:
        inside = np.flatnonzero(up >= 0)
        if not len(inside):
            return depth
        depth[inside] += 1
        up[inside] = parent[up[inside]]


def find_steps(table: EventTable, main: int, marker: np.ndarray, parent: np.ndarray,
               on_main: np.ndarray) -> StepWindows:
    """The step windows of a trace (see the module docstring for the rules)."""
    names = table.names
    main_marker = np.nonzero(marker & (table.line == main))[0] if main >= 0 else \
        np.zeros(0, np.int64)
    notes: list[str] = []
    own = table.name_id(SCRIPT_STEP_MARKER)
    if own >= 0 and len(main_marker) and (table.name[main_marker] == own).any():
        # ``run`` / profile() / the callback marked the steps: their markers alone are the steps
        # (Keras 2's fit marks each batch ``train`` too, around them and past the traced window)
        others = int((table.name[main_marker] != own).sum())
        main_marker = main_marker[table.name[main_marker] == own]
        if others:
            notes.append(f"{others} other step markers (Keras 2's fit marks each batch, around "
                         "traceinsight's own marker) are not the steps: traceinsight's are")
    if len(main_marker):
        ss, se = table.start[main_marker], table.end[main_marker]
        sn = table.stat_int_at(STEP_NUM, main_marker)
        depth = depth_of(parent, main_marker)
        top = depth == depth.min()  # markers nested in markers: outer
        ss, se, sn = ss[top], se[top], sn[top]
        marker_names = sorted({names[i] for i in table.name[main_marker]})
        rule = f"step markers {', '.join(repr(n) for n in marker_names)} {STEP_NUM_RULE}"
        source = StepSource.MARKERS_STEP_NUM
        o = np.lexsort((-se, ss))  # by start, the longest first
        ss, se, sn = ss[o], se[o], sn[o]
        ss, se, sn, more = _outermost(ss, se, sn)
        notes += more
        uniq, counts = np.unique(sn, return_counts=True)
        if (counts > 1).any():
            rep = ", ".join(f"{int(u)} ×{int(c)}" for u, c in zip(uniq, counts) if c > 1)
            notes.append(f"{int(counts[counts > 1].sum())} step markers repeat a step_num ({rep}): "
                         "each marker is counted as its own step, renumbered in time order from "
                         f"{int(sn.min())}")
            sn = int(sn.min()) + np.arange(len(sn))
            rule = rule.replace(STEP_NUM_RULE, RENUMBERED_RULE)
            source = StepSource.MARKERS_RENUMBERED
    else:
        calls = np.zeros(0, dtype=np.int64)
        if TF_FUNCTION_CALL in table.stat_str and main >= 0:
            idx, _ = table.stat_str[TF_FUNCTION_CALL]
            idx = idx[(table.line[idx] == main) & (parent[idx] < 0)]
            calls = np.sort(idx)
        dev = None
        jax = not len(calls) and _jax_trace(table)
        jit = jit_calls(table, main) if jax else None
        if len(calls) >= 1:
            ss, se = table.start[calls], table.end[calls]
            sn = np.arange(len(calls))
            rule = ("no step markers: each top-level tf.function call on the main thread is a step"
                    if len(calls) > 1 else
                    f"no step markers: the one top-level tf.function call on the main thread "
                    f"({names[table.name[calls[0]]]!r}) is the step")
            source = StepSource.TF_FUNCTION_CALLS
        elif jax and (dev := device_steps(table, grouped_only=True, modules=True)) is not None:
            # device work: steps from the device's module executions, so that every kernel is in
            # a step (the host's jitted calls would leave the work of other calls out)
            return dev
        elif jit is not None:
            ss, se, fn = jit
            sn = np.arange(len(ss))
            rule = (f"no step markers: each top-level call of the jitted function {fn} (the one "
                    "with the most time on the main thread) is a step")
            source = StepSource.JIT_CALLS
        elif (dev := device_steps(table, grouped_only=main >= 0 and len(on_main) > 0)) is not None:
            return dev
        elif main < 0 or not len(on_main):
            return StepWindows.empty("no step markers, no main-thread events, no device steps: "
                                     "no steps")
        else:
            ss = np.array([table.start[on_main].min()])
            se = np.array([table.end[on_main].max()])
            sn = np.array([0])
            rule = "no step markers and no tf.function call: the whole trace is one step"
            source = StepSource.WHOLE_TRACE
    o = np.argsort(ss, kind="stable")
    ss, se, sn = ss[o], se[o], sn[o]
    partial = _partial(table, ss, se, main)
    if partial.any():
        notes.append(f"the last step (step {int(sn[partial][0])}) was cut by the end of the trace: "
                     "kept out of the steady steps")
    return StepWindows(ss, se, sn.astype(np.int64), partial, rule, source, tuple(notes))


def jit_calls(table: EventTable, main: int) -> tuple[np.ndarray, np.ndarray, str] | None:
    """JAX: the top-level calls (not inside another jitted call) of the jitted function that holds
    the most main-thread time among those called at least twice, as (starts, ends, its name);
    None when there is no such function."""
    if main < 0:
        return None
    ids = [i for i, n in enumerate(table.names) if n.startswith(PJIT_FUNCTION)]
    if not ids:
        return None
    ev = np.nonzero((table.line == main) & np.isin(table.name, ids) & (table.end > table.start))[0]
    if not len(ev):
        return None
    ev = ev[np.lexsort((-table.end[ev], table.start[ev]))]
    s, e = table.start[ev], table.end[ev]
    prev_end = np.r_[np.iinfo(np.int64).min, np.maximum.accumulate(e)[:-1]]
    top = ev[s >= prev_end]
    nm = table.name[top]
    uniq, inv, counts = np.unique(nm, return_inverse=True, return_counts=True)
    total = np.bincount(inv, weights=(table.end[top] - table.start[top]).astype(float))
    total[counts < 2] = -1
    if total.max() < 0:
        return None
    best = int(uniq[int(np.argmax(total))])
    pick = top[nm == best]
    return table.start[pick], table.end[pick], table.names[best][len(PJIT_FUNCTION):-1]


def module_runs(table: EventTable, ev: np.ndarray) -> tuple[np.ndarray, str] | None:
    """A step key for each device event (the events taken in time order: sorted by start,
    stable), from the executions of the XLA module with the most device time: a step begins where
    an execution of that module begins (an event of it after an event of another module, or its
    first HLO op again after other ops of it) and holds every device event until the next one;
    events before the first execution are step 0's too. Back-to-back runs of a module of one HLO
    op cannot be told apart (no event marks an execution's end): they are one step. None when the
    events carry no ``hlo_module`` stat."""
    if HLO_MODULE not in table.stat_str or not len(ev):
        return None
    idx, val = table.stat_str[HLO_MODULE]
    mod = dict(zip(idx.tolist(), val.tolist()))
    hidx, hval = table.stat_str.get(HLO_OP, (np.zeros(0, np.int64), np.zeros(0, object)))
    hlo = dict(zip(hidx.tolist(), hval.tolist()))
    ev = ev[np.argsort(table.start[ev], kind="stable")]
    mods = [mod.get(int(e)) for e in ev.tolist()]
    dur: dict[str, int] = {}
    for e, m in zip(ev.tolist(), mods):
        if m:
            dur[m] = dur.get(m, 0) + int(table.end[e] - table.start[e])
    if not dur:
        return None
    main_mod = max(sorted(dur), key=lambda m: dur[m])
    keys = np.zeros(len(ev), dtype=np.int64)
    k, prev, first_op, prev_op = -1, None, None, None
    for i, (e, m) in enumerate(zip(ev.tolist(), mods)):
        if m == main_mod:
            op = hlo.get(int(e))
            # a new execution: after another module's work, or back at its first op (an op may
            # run as several kernels in a row: those are one op)
            if prev != main_mod or (op is not None and op == first_op and prev_op != first_op):
                k += 1
                first_op = op
            prev_op = op
        if m:
            prev = m
        keys[i] = max(k, 0)
    return keys, main_mod


def _outermost(ss, se, sn):
    """Markers that overlap an earlier marker's window (not nested in the thread's nesting: markers
    are kept out of it) are folded into it; a note says how many."""
    keep = np.ones(len(ss), dtype=bool)
    run_end = None
    for i in range(len(ss)):
        if run_end is not None and ss[i] < run_end:
            keep[i] = False
        else:
            run_end = se[i]
    notes = []
    if not keep.all():
        notes.append(f"{int((~keep).sum())} step markers lie inside other markers' windows: "
                     "the outer markers are the steps")
    return ss[keep], se[keep], sn[keep], notes


def _partial(table: EventTable, ss: np.ndarray, se: np.ndarray, main: int) -> np.ndarray:
    """The last step is partial when the recorded stop time falls inside it, or when work started
    in it on the main thread runs past its end and past every other event of the thread (the trace
    ended while the step was still running)."""
    partial = np.zeros(len(ss), dtype=bool)
    if len(ss) < 2:
        return partial  # a single step is all there is
    stop = stop_time_ps(table)
    if stop is not None and ss[-1] < stop <= se[-1]:
        partial[-1] = True
    return partial


def _jax_trace(table: EventTable) -> bool:
    """No TensorFlow event in the trace: a jax.profiler trace or a device-only one."""
    from traceinsight.analysis import rules
    if TF_FUNCTION_CALL in table.stat_str:
        return False
    return not any(rules.TF_EVIDENCE.match(n) for n in table.names)


def device_steps(table: EventTable, grouped_only: bool = False,
                 modules: bool = False) -> StepWindows | None:
    """Steps from the device side of a trace with no host events: XProf's derived ``Steps`` line
    (one event per step per device; a step spans from the earliest start to the latest end over
    the devices: the slowest device sets it), else device events' ``group_id`` stat, else all
    device activity as one step (not with ``grouped_only``: the caller has a host fallback).
    None when the trace has no device events."""
    dev_planes = {i for i, p in enumerate(table.planes) if p.name.startswith(DEVICE_PLANE)}
    steps_lines = [i for i, ln in enumerate(table.lines)
                   if ln.plane in dev_planes and ln.n_events and
                   (ln.id == STEPS_LINE_ID or ln.name == STEPS_LINE)]
    gid = table.stat_int_column(GROUP_ID) if GROUP_ID in table.stat_int else None
    if steps_lines:
        ev = np.nonzero(np.isin(table.line, steps_lines))[0]
        keys = gid[ev] if gid is not None and (gid[ev] >= 0).all() else \
            np.array([_int_or(table.names[n], -1) for n in table.name[ev]], dtype=np.int64)
        rule = ("no host events: steps from the device-side step grouping XProf wrote into the "
                "trace (the 'Steps' line of each device, by group_id); a step spans all devices")
        source = StepSource.DEVICE_STEPS_LINE
    else:
        dev_lines = [i for i, ln in enumerate(table.lines) if ln.plane in dev_planes
                     and ln.n_events and not is_derived_line(ln)]
        ev = np.nonzero(np.isin(table.line, dev_lines))[0]
        if not len(ev):
            return None
        runs = module_runs(table, ev) if modules and (gid is None or not (gid[ev] >= 0).any()) \
            else None
        if gid is not None and (gid[ev] >= 0).any():
            ev = ev[gid[ev] >= 0]
            keys = gid[ev]
            rule = RULE_DEVICE_GROUPS
            source = StepSource.DEVICE_GROUPS
        elif runs is not None:
            ev = ev[np.argsort(table.start[ev], kind="stable")]
            keys = runs[0]
            rule = (f"{RULE_MODULE_RUNS}: {runs[1]} (the XLA module with the most device time) "
                    "starts a step where its work follows other modules' work or returns to its "
                    "first HLO op; a step holds all device work up to the next (back-to-back "
                    "runs of a one-op module are one step)")
            source = StepSource.MODULE_RUNS
        elif grouped_only:
            return None
        else:
            keys = np.zeros(len(ev), dtype=np.int64)
            rule = ("no host events and no step grouping in the trace: all device activity is one "
                    "step")
            source = StepSource.DEVICE_ALL
    if steps_lines:
        # each device's Steps event has its own clock span: the step is the longest of them (the
        # slowest device sets the step, as XProf's overview reports it)
        uniq, inv = np.unique(keys, return_inverse=True)
        dur = table.end[ev] - table.start[ev]
        best = np.full(len(uniq), -1, dtype=np.int64)
        for i in np.lexsort((-dur, inv)).tolist():  # per key, the longest first
            if best[inv[i]] < 0:
                best[inv[i]] = ev[i]
        ss, se = table.start[best], table.end[best]
        o = np.argsort(ss, kind="stable")
        return StepWindows(ss[o], se[o], uniq[o].astype(np.int64), np.zeros(len(ss), dtype=bool),
                           rule, source, ())
    uniq, inv = np.unique(keys, return_inverse=True)
    ss = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
    se = np.full(len(uniq), np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(ss, inv, table.start[ev])
    np.maximum.at(se, inv, table.end[ev])
    o = np.argsort(ss, kind="stable")
    ss, se, sn = ss[o], se[o], uniq[o].astype(np.int64)
    notes = []
    partial = np.zeros(len(ss), dtype=bool)
    stop = stop_time_ps(table)
    if len(ss) >= 2 and stop is not None and ss[-1] < stop <= se[-1]:
        partial[-1] = True
        notes.append(f"the last step (step {int(sn[-1])}) was cut by the end of the trace: kept "
                     "out of the steady steps")
    return StepWindows(ss, se, sn, partial, rule, source, tuple(notes))


def _int_or(s: str, default: int) -> int:
    try:
        return int(s)
    except ValueError:
        return default


# Events a host trace holds even at host_tracer_level 0 or without TF's Python API in view; a main
# thread with nothing else says nothing about Python, dispatch or input.
_BOOKKEEPING = (MEMORY_ALLOCATION, MEMORY_DEALLOCATION, EXECUTOR_PROPAGATE,
                EXECUTOR_PROCESS, MEMCPY_H2D, MEMCPY_D2H, FUNCTION_RUN)


_SCAN_BLOCK = 1 << 20      # rows a block of host_events_recorded's scan


def host_events_recorded(table: EventTable, main: int, recorded: dict | None) -> tuple[bool, str]:
    """Whether the host trace can tell Python, dispatch and input apart on the main thread:
    the recorded host tracer level when the trace has it (0: no TraceMe events), else whether the
    main thread holds TF's Python-API events (``TFE_Py_*``, tf.function calls, step markers,
    python-tracer frames) or JAX's jitted calls (``PjitFunction(f)``). Returns (recorded, why not)."""
    if recorded and recorded.get("host_tracer_level") == 0:
        return False, "recorded with host_tracer_level 0 (no host TraceMe events)"
    if main < 0:
        return False, "the trace holds no host thread events"
    if recorded and recorded.get("host_tracer_level", 0) >= 1:
        return True, ""     # what the scan below would end with too: no pass over the events
    # the names present on the main thread's rows (one run of the table): marked a block of rows
    # at a time, so the temporaries stay small beside a large table
    rows = table.line_rows(main)
    present = np.zeros(len(table.names) or 1, dtype=bool)
    for lo in range(rows.start, rows.stop, _SCAN_BLOCK):
        block = slice(lo, min(lo + _SCAN_BLOCK, rows.stop))
        present[table.name[block][table.end[block] > table.start[block]]] = True
    on_main = np.flatnonzero(present)
    api = [n for n in on_main.tolist()
           if table.names[n].startswith((TFE, PYTHON_FRAME, EAGER_EXECUTE, EAGER_LOCAL_EXECUTE,
                                         PJIT_FUNCTION))
           or STEP_MARKER.match(table.names[n])]
    if api or (TF_FUNCTION_CALL in table.stat_str
               and (table.line[table.stat_str[TF_FUNCTION_CALL][0]] == main).any()):
        return True, ""
    return False, ("the main thread holds no events of TF's Python API (TFE_*, tf.function calls, "
                   "step markers): the host trace was recorded at a low level or without Python")
