"""Whose code issues a mode's ops, from its tables: the python pass's frames (``analysis.hotspots``:
the user's, Keras', TF's, the tool's), the op calls and conversions per step, the Keras step
functions and graph loops that tell the user's code from the library's.
"""

from __future__ import annotations

import math
import re

import numpy as np

from traceinsight import present
from traceinsight.analysis import names
from traceinsight.analysis.results import ms_per_call
from traceinsight.findings import evidence as ev
from traceinsight.modekind import CALL, EAGER
from traceinsight.model import ModeResult
from traceinsight.runview import RunView


def _main_calls(m: ModeResult, *types: str) -> float:
    """Calls per step of main-thread ops of these types (0 without an ops table)."""
    ops = m.table("ops")
    if ops.empty or "type" not in ops:
        return 0.0
    sel = (ops["thread"] == "main") & np.isin(ops["type"], types)
    return float(np.nansum(np.asarray(ops["calls_per_step"][sel], dtype=float)))


def waits_on_tf_data(run: RunView, m: ModeResult) -> bool:
    """The mode's steps pull batches from tf.data: an ``IteratorGetNext`` op runs in them (a graph
    op on the executor, or the eager op), or the mode is a dataset mode."""
    if m.kind.input == "dataset":
        return True
    ops = m.table("ops")
    return (not ops.empty and "type" in ops
            and any(str(t).startswith(names.ITERATOR_GET_NEXT) for t in ops["type"]))


def conversions(m: ModeResult) -> float:
    """Conversions per step that did work: every numpy / Python value converted to a tensor runs
    an ``_EagerConst`` op (a tensor passed to an op is returned unchanged and runs none)."""
    return _main_calls(m, names.EAGER_CONST)


def slicing(m: ModeResult) -> float:
    """StridedSlice calls per step when the conversions are its Python indices: ``w[i]`` with a
    Python int converts begin, end and strides (3 ``_EagerConst`` runs) for each slice."""
    n = _main_calls(m, "StridedSlice")
    return n if n >= 1 and conversions(m) >= 2 * n else 0.0


# ---- whose code issues the ops: the python pass's frames (``analysis.hotspots``) -----------------

# Keras' frames that convert the arrays the user passed (not Keras' own values): Keras 3's
# Functional model converts its inputs in ``_convert_inputs_to_tensors``, a Layer's ``__call__``
# in its nested ``maybe_convert``; Keras 2 (tf_keras) in ``_convert_numpy_or_python_types``
_KERAS_INPUT_FRAMES = frozenset({("functional.py", "_convert_inputs_to_tensors"),
                                 ("layer.py", "maybe_convert"),
                                 ("base_layer.py", "_convert_numpy_or_python_types")})
# a frame issuing this many slices per step slices in a loop (``w[i]`` for each i)
LOOP_SLICES = 8


def issuers(m: ModeResult) -> list[dict] | None:
    """The python pass's frames that issue ops (``analysis.hotspots``: the nearest frame above
    each op call that is the user's, Keras' or the tool's), most op calls first; None when the
    mode has no python pass (nothing says whose code issued its ops)."""
    h = m.table("hotspots")
    if h.empty or "op_calls_per_step" not in h:
        return None
    # only the frames that issue ops made into rows (a python pass lists hundreds of frames, and
    # several rules ask): a missing figure (None, NaN) issues none
    rows = h.take(np.asarray(h["op_calls_per_step"], dtype=float) > 0).records()
    if not rows:
        return None   # no frame issued an op: a trace analysed before frames were tied to ops
    return sorted(rows, key=lambda r: (-float(r["op_calls_per_step"]), str(r["file"]), int(r["line"])))


def is_users_input(r: dict) -> bool:
    """A frame whose conversions are of the user's own inputs: the user's code, the capture's
    call of the user's step with the user's data, or Keras converting the arrays passed to it
    (in its input-converting frames, or in an entry point the user's code called, such as
    ``train_on_batch`` passing the arrays to its train function)."""
    return (r["group"] in ("user", "traceinsight")
            or (str(r["file"]), str(r["function"])) in _KERAS_INPUT_FRAMES
            or bool(r.get("entry", False)))


def where(r: dict) -> str:
    """``step (model.py:12)``: a frame as the python tracer names it (the line its function starts
    at)."""
    line = f":{int(r['line'])}" if int(r["line"] or 0) > 0 else ""
    return f"{present.safe(str(r['function']))} ({present.safe(str(r['file']))}{line})"


def _user_frame(m: ModeResult) -> dict | None:
    """The user's own frame where a fix of the whole step goes: the user frame issuing the most
    ops, else the user frame with the most Python time under it (None: no user frame ran in the
    steady steps, e.g. a Keras workload whose calls the capture makes)."""
    h = m.table("hotspots")
    if h.empty:
        return None
    rows = h.take(h["group"] == "user").records()
    if not rows:
        return None
    return max(rows, key=lambda r: (float(r.get("op_calls_per_step", 0.0) or 0.0),
                                    float(r["inclusive_ms"] or 0.0)))


def user_function(m: ModeResult, name: str) -> dict | None:
    """The user's frame of the function named ``name`` in the python pass (a tf.function's Python
    function runs there while it is traced), or None."""
    h = m.table("hotspots")
    if h.empty:
        return None
    return next((r for r in h.records() if r["group"] == "user" and str(r["function"]) == name),
                None)


def at_user_line(m: ModeResult, fix: str) -> str:
    """The fix, headed by the user's file and line where it goes when the trace has them."""
    r = _user_frame(m)
    return f"# in your code: {where(r)}\n{fix}" if r is not None else fix


def shares(rows: list[dict], mine: list[dict]) -> dict[str, float]:
    """Of the python pass's time, the share ``mine`` holds: python (its frames' inclusive time
    against every frame's self time), input and dispatch (the conversion and dispatch time of
    the ops it issues, against all issued)."""
    def total(rs, col):
        return math.fsum(float(r.get(col, 0.0) or 0.0) for r in rs)
    out = {}
    for cat, col_mine, col_all in (("python", "inclusive_ms", "self_ms"),
                                   ("input", "input_ms", "input_ms"),
                                   ("dispatch", "dispatch_ms", "dispatch_ms")):
        t = total(rows, col_all)
        out[cat] = min(total(mine, col_mine) / t, 1.0) if t > 0 else 0.0
    return out


def issued_cost(m: ModeResult, mine: list[dict]) -> float:
    """The estimated ms of the untraced step that the ops of ``mine`` cost beyond their kernels
    (python, dispatch and conversion), from the python pass's shares (``shares``) applied to the
    category split."""
    h = m.table("hotspots")
    sh = shares(h.records() if not h.empty else [], mine)
    parts = [ev.cat(m, c) * sh[c] for c in sh if ev.finite(ev.cat(m, c))]
    return ev.in_step(m, math.fsum(parts)) if parts else float("nan")


def op_words(rows: list[dict]) -> str:
    return ", ".join(f"{where(r)} {float(r['op_calls_per_step']):.0f}" for r in rows[:3])


def conversion_words(rows: list[dict]) -> str:
    return ", ".join(f"{where(r)} {float(r['conversions_per_step']):.3g}" for r in rows[:3])


# op types that are not kernels: a graph function's call, a conversion, the runtime's own events
_NOT_KERNELS = frozenset({"tf.function", names.EAGER_CONST, "(runtime)"})


def kernels_recorded(m: ModeResult) -> bool:
    """The mode's trace records its kernels one by one (graph ops, XLA's HLO ops): TensorFlow
    before 2.17 writes no per-op events for XLA on CPU, only the whole function call."""
    ops = m.table("ops")
    return not ops.empty and any(str(t) not in _NOT_KERNELS for t in ops["type"])


def op_call_stats(m: ModeResult, main_only: bool = False) -> tuple[float, float]:
    """(op calls per step, median ms of one op call weighted by calls), of the main thread's ops
    only with ``main_only``."""
    ops = m.table("ops")
    if ops.empty or "calls_per_step" not in ops:
        return 0.0, float("nan")
    if main_only:
        ops = ops.take(np.flatnonzero(ops["thread"] == "main"))
    calls = np.asarray(ops["calls_per_step"], dtype=float)
    each = ms_per_call(calls, ops["self_ms_per_step"])
    ok = (calls > 0) & (each > 0)   # zero-time calls (e.g. _EagerConst) count, not in the median
    if not ok.any():
        return float(calls[calls > 0].sum()), float("nan")
    per_call = each[ok]
    order = np.argsort(per_call, kind="stable")
    cum = np.cumsum(calls[ok][order])
    median = float(per_call[order][np.searchsorted(cum, cum[-1] / 2)])
    return float(calls[calls > 0].sum()), median


# Keras' own step functions as the trace names them (Keras 3's, then tf_keras'): calls of these
# tf.functions run ops Keras wrote
_KERAS_STEP_FUNCTIONS = frozenset({
    "multi_step_on_iterator", "one_step_on_iterator", "one_step_on_data",
    "one_step_on_data_distributed", "multi_step_on_data", "train_function", "predict_function",
    "test_function"})


def function_name(op: str) -> str:
    """``__inference_multi_step_on_iterator_262`` -> ``multi_step_on_iterator``."""
    name = op.removeprefix(names.INFERENCE).removeprefix("__forward_").removeprefix("__backward_")
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name


def runs_keras_step(m: ModeResult) -> bool:
    """The mode's steps run Keras' own train / predict / test functions, seen in the trace (a
    main-thread tf.function call or a trace of one of them); for a Keras step without a
    tf.function (``run_eagerly``), the capture's mode says so."""
    names: list[str] = []
    ops, r = m.table("ops"), m.table("retraces")
    if not ops.empty and "type" in ops:
        names += [function_name(str(n)) for n, t in zip(ops["op"], ops["type"])
                  if str(t).startswith("tf.function")]
    if not r.empty and "function" in r:
        names += [function_name(str(n)) for n in r["function"]]
    if any(n in _KERAS_STEP_FUNCTIONS for n in names):
        return True
    ax = m.kind.axes()   # a Keras call (not the model called directly) run eagerly
    return ax is not None and ax.call != CALL and ax.compile == EAGER


def runs_eagerly(m: ModeResult) -> bool:
    """What the trace shows of a step whose mode says nothing of it (a script's own mode, a
    foreign trace): its ops dispatched one by one from Python, executed on the Python thread
    itself (most of the op time on the main thread), with dispatch time in its steps, and no
    tf.function called in them (no call op in the ops table, no call in the retraces table). A
    step that calls a tf.function, or runs a TF1 session's graph (its ops on the runtime's
    threads, no eager dispatch), is not."""
    if not m.ok or not m.host_events_recorded:
        return False
    ops, r = m.table("ops"), m.table("retraces")
    if ops.empty or "type" not in ops or "self_ms_per_step" not in ops:
        return False
    if any(str(t).startswith("tf.function") for t in ops["type"]):
        return False
    if not r.empty and "calls" in r and any(float(c) > 0 for c in r["calls"]):
        return False
    self_ms = np.asarray(ops["self_ms_per_step"], dtype=float)
    on_main = float(self_ms[np.asarray(ops["thread"] == "main")].sum())
    dispatch = float(m.category_means().get("dispatch", 0.0))
    return dispatch > 0 and on_main > 0.5 * float(self_ms.sum())


def graph_while_loop(m: ModeResult) -> bool:
    """The mode's many op calls come from a graph-mode While loop (tf.while_loop / AutoGraph's
    loop over a tensor): one graph op per iteration, no Python dispatch to remove by vectorizing
    Python code."""
    ops = m.table("ops")
    if ops.empty:
        return False
    return (any(str(t) in ("While", "StatelessWhile") for t in ops["type"])
            or any(_WHILE_SCOPE.search(str(n)) for n in ops["op"]))


# an op inside a graph-mode While loop's body: a name scope ``while/`` or ``while_3/``
_WHILE_SCOPE = re.compile(r"(?:^|/)while(?:_\d+)?/")
