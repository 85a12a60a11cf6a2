"""Compile time of XLA-compiled tf.function calls in traces that hold no XLA compile events.

TensorFlow 2.21 writes its XLA compilation as events (``JitCompiler::Compile``, ``CpuCompiler::*``,
``FusionCompiler::Compile``): the rules place them in ``compile``. Older TensorFlow writes none,
even at host tracer level 3: the compilation then runs inside the XLA launch event of the
function's first call (``__inference_f:__inference_f``, an ``op`` event), which alone would count
it as op.

Where the trace holds no compile event, a call that compiles is known from its ``tf_function_call``
stat (``traced-xla``: the call traced, hence compiled, an XLA function). Its compile time is
derived from the trace: the call's op time minus the median op time of the same function's calls
that did not trace (``notTraced-xla``). That much of the call's op time, from its start (XLA
compiles before it runs), moves to ``compile``; the result says it is derived. It is an upper
bound of compilation proper: the function's other one-time setup on its first run (TF's own graph
instantiation, also paid by a function without XLA) is part of it. Without a later call to
compare with, the split cannot be known: the call's whole op time moves to ``other`` (compilation
and run unsplit) and the result says compile was not recorded. Traces with any compile event are
left as they are.
"""

from __future__ import annotations

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.events import EventTable
from traceinsight.model import CATEGORIES, CompileCall, CompileEstimate, CompileKind

N_CAT = len(CATEGORIES)
PS_PER_MS = 1e9


def xla_compiling_calls(table: EventTable, main: int, outside: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(traced, steady): main-thread calls of XLA functions, as event indices sorted by start,
    that traced (and so compiled) and that did not."""
    z = np.zeros(0, dtype=np.int64)
    if main < 0 or "tf_function_call" not in table.stat_str:
        return z, z
    idx, val = table.stat_str["tf_function_call"]
    kind = np.asarray(val, dtype=object)
    xla = np.array([str(v).endswith("-xla") for v in kind], dtype=bool)
    keep = xla & (table.line[idx] == main) & ~outside[idx] & (table.end[idx] > table.start[idx])
    idx, kind = idx[keep], kind[keep]
    traced = np.array([str(v).startswith("traced") for v in kind], dtype=bool)
    order = np.argsort(table.start[idx], kind="stable")
    idx, traced = idx[order], traced[order]
    return idx[traced].astype(np.int64), idx[~traced].astype(np.int64)


def _move_first(bounds: np.ndarray, seg_owner: np.ndarray, seg_cat: np.ndarray, t0: int, t1: int,
                amount: int, to: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ``amount`` ps of op segments inside [t0, t1), in time order, become ``to``; the
    segment where the amount ends is split there, so the categories still tile the timeline. (A
    call event is on the timeline: its edges are segment bounds.)"""
    lo = max(int(np.searchsorted(bounds, t0, side="right")) - 1, 0)
    hi = min(int(np.searchsorted(bounds, t1, side="left")), len(seg_cat))
    ops = [k for k in range(lo, hi) if seg_cat[k] == rules.OP]
    if not ops or amount <= 0:
        return bounds, seg_owner, seg_cat
    seg_cat = seg_cat.copy()
    left = amount
    for k in ops:
        n = int(bounds[k + 1] - bounds[k])
        if n > left:     # the amount ends inside this segment: split it
            bounds = np.insert(bounds, k + 1, bounds[k] + left)
            seg_owner = np.insert(seg_owner, k + 1, seg_owner[k])
            seg_cat = np.insert(seg_cat, k + 1, seg_cat[k])
            n = left
        seg_cat[k] = to
        left -= n
        if left <= 0:
            break
    return bounds, seg_owner, seg_cat


def estimate(table: EventTable, main: int, own: np.ndarray, outside: np.ndarray,
             bounds: np.ndarray, seg_owner: np.ndarray, seg_cat: np.ndarray,
             step_start: np.ndarray, step_num: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, CompileEstimate | None]:
    """(bounds, seg_owner, seg_cat, estimate): the timeline with the compile time of XLA calls
    that compiled moved out of ``op`` (see the module docstring), and what was done, or the
    timeline unchanged and None when the trace records compilation or compiles nothing."""
    if not len(seg_cat) or (own == rules.COMPILE).any():
        return bounds, seg_owner, seg_cat, None
    traced, steady = xla_compiling_calls(table, main, outside)
    if not len(traced):
        return bounds, seg_owner, seg_cat, None
    names = table.name
    calls: list[CompileCall] = []
    for ev in traced.tolist():
        t0, t1 = int(table.start[ev]), int(table.end[ev])
        op = int(native.window_sums(bounds, seg_cat, np.array([t0]), np.array([t1]),
                                    N_CAT)[0, rules.OP])
        later = steady[(names[steady] == names[ev]) & (table.start[steady] > t0)]
        k = int(np.searchsorted(step_start, t0, side="right")) - 1
        num = int(step_num[k]) if k >= 0 else None
        fn = table.names[names[ev]]
        if len(later):
            sums = native.window_sums(bounds, seg_cat, table.start[later], table.end[later], N_CAT)
            steady_op = int(np.median(sums[:, rules.OP]))
            moved = max(op - steady_op, 0)
            bounds, seg_owner, seg_cat = _move_first(bounds, seg_owner, seg_cat, t0, t1, moved,
                                                     rules.COMPILE)
            calls.append(CompileCall(fn, num, op / PS_PER_MS, steady_op / PS_PER_MS,
                                     moved / PS_PER_MS))
        else:
            bounds, seg_owner, seg_cat = _move_first(bounds, seg_owner, seg_cat, t0, t1, op,
                                                     rules.OTHER)
            calls.append(CompileCall(fn, num, op / PS_PER_MS, None, None))
    kind = (CompileKind.DERIVED if all(c.compile_ms is not None for c in calls)
            else CompileKind.NOT_RECORDED)
    return bounds, seg_owner, seg_cat, CompileEstimate(kind, tuple(calls))
