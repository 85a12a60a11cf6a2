"""Compile time of XLA-compiled tf.function calls in traces that hold no XLA compile events.

TensorFlow 2.18+ writes its XLA compilation as events (``CpuCompiler::*``; 2.20+ also
``JitCompiler::Compile``): the rules place them in ``compile``. TensorFlow 2.12 - 2.16 write none,
even at host tracer level 3: the compilation then runs inside the XLA launch event of the
function's first call (``__inference_f:__inference_f``, an ``op`` event), which alone would count
it as op.

Where the trace holds no compile event, a call that compiles is known from its ``tf_function_call``
stat (``traced-xla``: the call traced, hence compiled, an XLA function). Its op time beyond the
median op time of the same function's calls that did not trace (``notTraced-xla``) is compilation
*and* the function's other one-time setup on its first run (instantiation and graph optimisation,
which the same function without XLA pays on its first call too). The trace cannot split the two,
and the setup is no small part: on TF 2.15 the excess was several times the independent measure of
compilation (the first call with ``jit_compile=True`` minus with ``jit_compile=False``, fresh
processes: ``tools/measure_xla_compile.py``). So that excess, from the call's start (XLA
compiles before it runs), moves out of ``op`` into ``other``, and the result says compile is not
separable (``CompileKind.NOT_SEPARABLE``, with the excess per call); compile itself shows nothing
rather than a figure the trace cannot defend. Without a later call to compare with, the call's
whole op time moves to ``other`` (compilation and run unsplit) and the result says compile was not
recorded. Traces with any compile event are left as they are.
"""

from __future__ import annotations

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import TF_FUNCTION_CALL, traced_call, xla_call
from traceinsight.model import CATEGORIES, CompileCall, CompileEstimate, CompileKind

N_CAT = len(CATEGORIES)
PS_PER_MS = 1e9


def xla_compiling_calls(table: EventTable, main: int, outside: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(traced, steady): main-thread calls of XLA functions, as event indices sorted by start,
    that traced (and so compiled) and that did not."""
    z = np.zeros(0, dtype=np.int64)
    if main < 0 or TF_FUNCTION_CALL not in table.stat_str:
        return z, z
    idx, val = table.stat_str[TF_FUNCTION_CALL]
    kind = np.asarray(val, dtype=object)
    xla = np.array([xla_call(v) for v in kind], dtype=bool)
    keep = xla & (table.line[idx] == main) & ~outside[idx] & (table.end[idx] > table.start[idx])
    idx, kind = idx[keep], kind[keep]
    traced = np.array([traced_call(v) for v in kind], dtype=bool)
    order = np.argsort(table.start[idx], kind="stable")
    idx, traced = idx[order], traced[order]
    return idx[traced].astype(np.int64), idx[~traced].astype(np.int64)


def _move_first(tl: native.Timeline, t0: int, t1: int, amount: int, to: int) -> native.Timeline:
    """The first ``amount`` ps of op segments inside [t0, t1), in time order, become ``to``; the
    segment where the amount ends is split there, so the categories still tile the timeline. (A
    call event is on the timeline: its edges are segment bounds.) In place on the categories but
    for the split, which makes a new timeline."""
    lo = max(int(tl.search(np.array([t0]), "right")[0]) - 1, 0)
    hi = min(int(tl.search(np.array([t1]), "left")[0]), len(tl))
    ops = [k for k in range(lo, hi) if tl.cat[k] == rules.OP]
    if not ops or amount <= 0:
        return tl
    left = amount
    for k in ops:
        b0, b1 = (int(x) for x in tl.times(np.array([k, k + 1])))
        n = b1 - b0
        if n > left:     # the amount ends inside this segment: split it
            tl = tl.cut(np.array([b0 + left]))
            n = left
        tl.cat[k] = to
        left -= n
        if left <= 0:
            break
    return tl


def estimate(table: EventTable, main: int, compile_recorded: bool, outside: np.ndarray,
             tl: native.Timeline, step_start: np.ndarray, step_num: np.ndarray
             ) -> tuple[native.Timeline, CompileEstimate | None]:
    """(timeline, estimate): the main thread's timeline with the compile time of XLA calls
    that compiled moved out of ``op`` (see the module docstring), and what was done, or the
    timeline unchanged and None when the trace records compilation or compiles nothing."""
    if not len(tl) or compile_recorded:
        return tl, None
    traced, steady = xla_compiling_calls(table, main, outside)
    if not len(traced):
        return tl, None
    names = table.name
    calls: list[CompileCall] = []
    for ev in traced.tolist():
        t0, t1 = int(table.start[ev]), int(table.end[ev])
        op = int(native.window_sums(tl, np.array([t0]), np.array([t1]),
                                    N_CAT)[0, rules.OP])
        later = steady[(names[steady] == names[ev]) & (table.start[steady] > t0)]
        k = int(np.searchsorted(step_start, t0, side="right")) - 1
        num = int(step_num[k]) if k >= 0 else None
        fn = table.names[names[ev]]
        if len(later):
            sums = native.window_sums(tl, table.start[later], table.end[later], N_CAT)
            steady_op = min(int(np.median(sums[:, rules.OP])), op)
            tl = _move_first(tl, t0, t1, op - steady_op, rules.OTHER)
            calls.append(CompileCall(fn, num, op / PS_PER_MS, steady_op / PS_PER_MS, None))
        else:
            tl = _move_first(tl, t0, t1, op, rules.OTHER)
            calls.append(CompileCall(fn, num, op / PS_PER_MS, None, None))
    kind = (CompileKind.NOT_SEPARABLE if all(c.steady_op_ms is not None for c in calls)
            else CompileKind.NOT_RECORDED)
    return tl, CompileEstimate(kind, tuple(calls))
