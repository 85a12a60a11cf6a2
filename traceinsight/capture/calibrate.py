"""The profiler's cost, measured in the workload process (standard library only until TF is given:
``traceinsight run``'s agent loads this file by path into the user's interpreter, which may have
none of traceinsight's dependencies).

One small eager op (an add of two scalars, kernels that run inline on the calling thread) is
called ``CALLS`` times per block, each block timed with perf_counter: ``BLOCKS`` blocks untraced
just before the traced pass (``capture`` takes them again just after it), and ``BLOCKS`` blocks
inside it, before its first step, each inside a ``MARKER`` TraceMe (``runfolder.CALIBRATION_MARKER``,
the name the analysis looks for). The analysis counts the events one call records
(``analysis/overhead.py``: the events of the thread holding the step markers, so the blocks run
on the thread that makes the steps); what tracing added to a call over those events is the cost
of one recorded event on this machine, in this process. The fastest block of each kind is used:
it is the one other processes disturbed least.
"""

from __future__ import annotations

import time
from typing import Any

CALLS = 50
BLOCKS = 20
# ``runfolder.CALIBRATION_MARKER`` (a test holds them equal): not imported from there, so that this
# file needs nothing but the standard library
MARKER = "traceinsight calibration"


def _block(tf: Any, x: Any, calls: int) -> float:
    add = tf.math.add
    t0 = time.perf_counter()
    for _ in range(calls):
        add(x, x)
    return time.perf_counter() - t0


def untraced(tf: Any) -> list[float] | None:
    """The untraced blocks (seconds each); None in a process that does not execute eagerly (the
    TF1 modes): its ops would only build a graph."""
    if not tf.executing_eagerly():
        return None
    x = tf.constant(1.0)
    _block(tf, x, CALLS)          # warm: the op's kernel is found and cached on the first calls
    return [_block(tf, x, CALLS) for _ in range(BLOCKS)]


def traced(tf: Any) -> list[float]:
    """The traced blocks, each inside a calibration marker (call while the profiler records)."""
    x = tf.constant(1.0)
    trace = tf.profiler.experimental.Trace
    out = []
    for _ in range(BLOCKS):
        with trace(MARKER):
            out.append(_block(tf, x, CALLS))
    return out
