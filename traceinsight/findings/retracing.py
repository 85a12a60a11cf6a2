"""Tracing findings: a tf.function traced again and again in the steady loop, with the cause the
analysis recorded (``RetraceCause``) and its fix.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from traceinsight.analysis.retraces import GRAPH_BUILDS
from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import frames as fr
from traceinsight.model import ModeResult
from traceinsight.retracecause import RetraceCause
from traceinsight.runview import RunView

_FIX_NEW_FUNCTION = ("step = tf.function(step_fn)   # create it once, outside the loop\n"
                     "for x in batches:\n    step(x)")
# without the arguments' record (a trace from elsewhere, ``run``'s script): the signature's form,
# not a shape made up for it
_FIX_SHAPES = ("@tf.function(reduce_retracing=True)   # or a fixed signature, one spec an argument:\n"
               "# @tf.function(input_signature=[tf.TensorSpec(shape, dtype), ...])\n"
               "# (shape: None in each dimension that varies)\n"
               "def step(x): ...")
_FIX_PYTHON = "step(x, tf.constant(lr))   # pass tensors, not Python numbers or objects"


def _fix_shapes(signature: str, args: str, name: str = "step") -> str:
    """The fix for changing shapes: ``reduce_retracing``, or the fixed signature the recorded
    inputs fit (``signature``, from ``analysis.retraces.input_signature``; its form without)."""
    if not signature:
        return _FIX_SHAPES.replace("def step(x): ...", f"def {name}({args}): ...")
    return ("@tf.function(reduce_retracing=True)   # or the signature every recorded input fits:\n"
            f"# @tf.function(input_signature={signature})\n"
            "# (None: a dimension that varied)\n"
            f"def {name}({args}): ...")


def _code_name(function: str) -> str:
    """The traced function's name where it can stand in a ``def`` line (an identifier from the
    trace), else ``step``: a name from a trace is data, never written into code as it is."""
    return function if function.isidentifier() and function.isascii() else "step"


def retrace_cause(cause: RetraceCause, detail: str, calls: int, traced: int,
                  signature: str = "", function: str = "step") -> tuple[str, str]:
    """(cause in words, fix snippet) from what the analysis recorded about the traces (the
    ``cause`` / ``cause_detail`` columns of ``ModeResult.retraces``).

    The host trace records no argument signatures (TF 2.21), but each traced call carries the
    function's ``tracing_count``: a count that climbs means one tf.function object retraced (its
    arguments changed: shapes or Python values); a count stuck at 1 while every call traces means a
    new tf.function object per call. The capture's log of the arguments it fed says which.
    """
    name = _code_name(function)
    both_fix = _fix_shapes(signature, "x, lr", name) + "\n" + _FIX_PYTHON.replace("step(", f"{name}(", 1)
    if cause is RetraceCause.SHAPES_AND_PYTHON_VALUES:
        return (f"its inputs changed between calls: {detail} — every new shape and every new "
                "Python value is a new trace", both_fix)
    if cause is RetraceCause.SHAPES:
        return f"input shapes change between calls: {detail}", _fix_shapes(signature, "x", name)
    if cause is RetraceCause.PYTHON_VALUES:
        return (f"Python values passed as arguments: {detail} (each new value is a new trace)",
                _FIX_PYTHON.replace("step(", f"{name}(", 1))
    if cause is RetraceCause.NEW_FUNCTION:
        return (f"a new tf.function object per call ({detail}: created inside a loop or a "
                "function)", _FIX_NEW_FUNCTION)
    if cause is RetraceCause.ARGUMENTS_CHANGED:
        return (f"one tf.function object retraced ({detail}): its arguments changed between "
                "calls — new input shapes or new Python values (the trace does not record which)",
                both_fix)
    text = "not recorded in the trace; the usual causes are "
    text += ("a tf.function created per call (in a loop), changing input shapes, or Python "
             "values as arguments" if traced >= calls > 1 else
             "changing input shapes or Python values as arguments")
    return (text,
            "step = tf.function(step_fn, reduce_retracing=True)  # create once, outside loops\n"
            "step(tf.constant(x))      # pass tensors, not Python numbers or objects\n"
            "# or fix shapes: input_signature=[tf.TensorSpec(shape, dtype), ...] (None where "
            "a dimension varies)")


def _row_get(row: dict, name: str, default=""):
    v = row.get(name, default)
    return default if v is None or (isinstance(v, float) and not np.isfinite(v)) else v


def rule_retracing(run: RunView) -> Iterable[Finding]:
    """2. A function traced more than once in the steady loop."""
    for m in run.ok_modes():
        r = m.table("retraces")
        if r.empty:
            continue
        for row in r.records():
            traced, calls = int(row["traced_calls"]), int(row["calls"])
            if traced < 2:
                continue
            recorded_cause = RetraceCause.of(_row_get(row, "cause"))
            function = row["function"]
            if recorded_cause is RetraceCause.GRAPH_BUILDS or function == GRAPH_BUILDS:
                continue  # no tf.function retraced: rule_predict / rule_graph_builds speak
            tracing, compile_ = float(row["tracing_ms"] or 0.0), float(row["compile_ms"] or 0.0)
            per_trace = (tracing + compile_) / traced
            one_time = per_trace * (traced - 1)
            cause, fix = retrace_cause(recorded_cause, str(_row_get(row, "cause_detail")),
                                        calls, traced, str(_row_get(row, "signature")),
                                        str(function))
            recorded = f" Recorded: {row['changes']}." if row["changes"] else ""
            evidence = (f"In {m.name}, {function} was traced {traced} times in {calls} calls of the "
                        f"trace: {ev.fmt_ms(tracing)} ms tracing"
                        + (f" + {ev.fmt_ms(compile_)} ms XLA compile" if compile_ else "")
                        + f", {ev.fmt_ms(per_trace)} ms per trace; the {traced - 1} retraces cost "
                        f"≈ {ev.fmt_ms(one_time)} ms once. Cause: {cause}." + recorded)
            saving, basis, kind, steady = _retrace_saving(m, per_trace, traced, calls)
            where = fr.user_function(m, fr.function_name(str(function)))
            if where is not None:
                fix = f"# in your code: {fr.where(where)}\n{fix}"
            evidence += (" " + steady) if steady else ""
            title = (f"{function} retraces {traced - 1} times in {m.name}" if saving is not None
                     else f"{function} retraced {traced - 1} times in {m.name}, then stopped: a "
                     f"one-time cost of ≈ {ev.fmt_ms(one_time)} ms")
            yield Finding(
                rule="retracing", title=title, evidence=evidence, fix=fix, saving_ms=saving,
                saving_basis=basis, saving_kind=kind, modes=(m.name,))


# a step holds a retrace when it is longer than the median by this part of a retrace's traced cost
# (the profiler slows tracing, which is Python: the untraced retrace is cheaper than the traced one)
RETRACE_PART = 0.25


def _retrace_saving(m: ModeResult, per_trace: float, traced: int, calls: int
                    ) -> tuple[float | None, str, SavingKind | None, str]:
    """(per-step saving, its basis, its kind, a sentence on the steady steps) of a function's
    retraces. A retrace's cost per step is what it costs the steps it hit, spread over the steady
    steps: where a retrace costs more than a few typical untraced steps, the untraced steps that
    hold one stand out, and their time above the median is that cost; none standing out means
    the retraces stopped before the steady steps (a one-time cost, no per-step saving). Where a
    retrace fits in a typical step (it may happen every step), the trace's retraces per call at a
    retrace's cost, within the step."""
    samples, med = m.step_samples_ms, m.median_ms
    if m.timing is None or not len(samples) or not ev.finite(med) or med >= RETRACE_PART * per_trace:
        steady = ev.est(m, "tracing", "compile")
        if ev.finite(steady) and steady > 0:
            return (steady, "estimate: the steady steps' tracing and compile time, "
                    + ev.ESTIMATE_NOTE, SavingKind.ESTIMATE, "")
        if not calls or not ev.finite(med):
            return None, "", None, ""
        rate = min(per_trace * (traced - 1) / calls, med)
        return (rate, "estimate: a retrace's traced cost × the trace's retraces per call"
                + (f", capped at the whole {ev.fmt_ms(med)} ms step" if rate == med else ""),
                SavingKind.ESTIMATE, "")
    hit = samples > med + RETRACE_PART * per_trace
    n = len(samples)
    if not hit.any():
        return (None, f"a one-time cost: none of the {n} untraced steady steps took a retrace's "
                f"time over the {ev.fmt_ms(med)} ms median", None,
                f"None of the {n} untraced steady steps (median {ev.fmt_ms(med)} ms) holds a retrace: "
                "they stopped before the steady steps, so fixing them saves start-up time, not "
                "step time.")
    excess = float(np.sum(samples[hit] - med)) / n
    return (excess, f"estimate: the time over the median of the {int(hit.sum())} of {n} untraced "
            "steady steps that took a retrace's time, spread over all of them", SavingKind.ESTIMATE,
            f"{int(hit.sum())} of the {n} untraced steady steps hold a retrace (median "
            f"{ev.fmt_ms(med)} ms; or another stall as long): ≈ {ev.fmt_ms(excess)} ms per step spread "
            "over all of them.")
