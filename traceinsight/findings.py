"""Findings: rules that read a Run's analysis results and say what to change, ranked by saving.

Every rule is a pure function of the Run. A rule fires only when the figures it quotes are in the
run (never on a mode name alone), and its evidence quotes those figures with the mode names they
come from. ``saving_ms`` is in ms/step; ``saving_kind`` says how it was found, and
``saving_basis`` says it in words:

* ``SavingKind.MEASURED``: the mode of the same run with the fix applied exists, and the saving is
  exactly the difference of the two modes' untraced medians (``Comparison.delta_ms``, the summary's
  medians), the figure every page shows for that pair;
* ``SavingKind.ESTIMATE``: no mode with the fix applied; derived from the category split
  (``ModeResult.category_means``) as that share of the untraced median (``in_step``), or from the
  untraced steps themselves, and the basis says how;
* ``SavingKind.UPPER_BOUND``: all of a cost the fix can remove at most.

No saving and no part of a step a finding quotes is larger than the whole untraced step (the
mode's median): a category's figure is its share of that step. Findings without a saving (no
measurable difference, profiler distortion, a one-time cost) are informational and rank last.

Advice is for the code the user wrote: where the python-tracer pass recorded frames, the rules read
which frames issued the ops and conversions (``analysis.hotspots``: the user's, Keras', TF's, the
tool's) and name the user's file and line; loop, slice and vectorize advice is given only where
the user's own code issues the ops.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Callable, Iterable

import numpy as np

from traceinsight import present
from traceinsight.analysis.results import ms_per_call
from traceinsight.analysis.retraces import GRAPH_BUILDS
from traceinsight.compare import Comparison, FamilyDelta, is_distorted
from traceinsight.finding import SEVERITIES, Finding, SavingKind
from traceinsight.layer_findings import LAYER_RULE_ID, rule_layer_explains
from traceinsight.modekind import ModeKind
from traceinsight.model import ModeResult, Run
from traceinsight.retracecause import RetraceCause

# Thresholds. They decide when a rule speaks; each is a share or an absolute time, never a figure
# of a particular model.
DISPATCH_BOUND_SHARE = 0.30     # python + dispatch >= 30 % of an eager step
INPUT_SHARE = 0.05              # input conversion >= 5 % of a step ...
INPUT_MIN_MS = 0.05             # ... and at least 50 µs
# tf.data waits >= 5 % of the traced time: XProf's overview calls a program "moderately
# input-bound" from 5 % of the step time waiting for input (its share of summed step time, as here)
INPUT_BOUND_SHARE = 0.05
# a cost concentrated in a few steps (``stats.concentrated``) speaks from this share of the
# traced time: the same material share as input-bound
CONCENTRATED_SHARE = 0.05
TINY_OPS_PER_STEP = 100         # "many ops": op calls per step
TINY_OP_MEDIAN_MS = 0.050       # "tiny": median time of one op call <= 50 µs




def compare_modes(run: Run, a: ModeResult, b: ModeResult) -> Comparison:
    """The run's comparison of two of its modes (``Run.compare``: each pair computed once, while
    the run's figures are made, and kept in them)."""
    return run.compare(a.name, b.name)


# --------------------------------------------------------------------------------------------------
# helpers


# one formatter for every figure shown (the viewer and the reports use the same)
fmt_ms = present.ms
fmt_ratio = present.ratio


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def _finite(*xs) -> bool:
    return all(x is not None and np.isfinite(x) for x in xs)


def _cat(m: ModeResult, *cats: str) -> float:
    """Sum of the mean ms/step of some categories over the steady steps (``category_means``; nan
    when the mode has no breakdown): what they cost the run per step, a stall in a few steps
    included, so a share of ``_cats_total`` is a share of the run's time (as XProf's input-bound
    share is). A figure of the category split: an estimate, quoted as ``in_step``."""
    c = m.category_means()
    vals = [float(c.get(k, np.nan)) for k in cats]
    return float(np.nansum(vals)) if any(np.isfinite(v) for v in vals) else float("nan")


def _cats_total(m: ModeResult) -> float:
    """The sum of every category's ``_cat``: the whole step the category split describes."""
    vals = [v for v in m.category_means().values() if np.isfinite(v)]
    return float(math.fsum(vals)) if vals else float("nan")


def _share(m: ModeResult, *cats: str) -> float:
    """The categories' share of the step the category split describes (nan: unknown)."""
    part, total = _cat(m, *cats), _cats_total(m)
    return part / total if _finite(part, total) and total > 0 else float("nan")


def in_step(m: ModeResult, ms: float) -> float:
    """A time read from the category split (``category_means``), as the same share of the mode's
    untraced median step: never more than the whole step, whether the split describes the traced
    steps (then this scales them to the untraced step) or the untraced step already (then it
    changes nothing)."""
    total, median = _cats_total(m), m.median_ms
    if not _finite(ms, total, median) or total <= 0:
        return float("nan")
    return min(max(ms, 0.0) / total, 1.0) * median


def traced_in_step(m: ModeResult, traced_ms: float) -> float:
    """A time read from the traced steps themselves (a stall's excess), as the same share of the
    traced steps' categories applied to the untraced median (``in_step`` for the traced split,
    which ``category_means`` no longer is where the profiler's cost was taken out)."""
    vals = [v for v in m.traced_category_means().values() if np.isfinite(v)]
    total, median = (float(math.fsum(vals)) if vals else float("nan")), m.median_ms
    if not _finite(traced_ms, total, median) or total <= 0:
        return float("nan")
    return min(max(traced_ms, 0.0) / total, 1.0) * median


def _est(m: ModeResult, *cats: str) -> float:
    """``in_step`` of some categories: their estimated ms in the untraced step."""
    return in_step(m, _cat(m, *cats))


ESTIMATE_NOTE = "their share of the category split applied to the untraced median"


def _est_text(m: ModeResult, what: str, *cats: str) -> str:
    """``python + dispatch ≈ 2.85 ms of its 4.18 ms step (68 % of its categories)``: the
    categories' estimate in the untraced step with their share, what every finding quoting a
    category says."""
    return (f"{what} ≈ {fmt_ms(_est(m, *cats))} ms of its {fmt_ms(m.median_ms)} ms step "
            f"({_pct(_share(m, *cats))} of its categories)")


def _kinds(run: Run) -> dict[str, ModeKind]:
    """Every mode's kind (``ModeResult.kind``, set once at load), by name."""
    return {n: x.kind for n, x in run.modes.items()}


def _base(run: Run, m: ModeResult) -> str:
    return m.kind.base


def sibling(run: Run, m: ModeResult, base: str, input: str | None = None) -> ModeResult | None:
    """The ok mode of the same flavour (and input, unless given) as ``m`` with another base."""
    k = m.kind
    want = k.same_but(base=base, input=k.input if input is None else input)
    name = next((n for n, x in _kinds(run).items() if x == want), None)
    o = run.modes.get(name) if name is not None else None
    return o if o is not None and o.ok and len(o.step_samples_ms) else None


def _tensor_twin(run: Run, m: ModeResult) -> ModeResult | None:
    """The same mode with its inputs converted to tensors once, outside the step."""
    k = m.kind
    return None if k.input != "numpy" else sibling(run, m, k.base, input="tensor")


# the bases (``ModeKind.base``, the capture's mode table) whose steps run their ops eagerly: each op
# call pays Python and dispatch, which a graph function removes
_EAGER_BASES = ("eager", "train_on_batch-eager")


def _modes_with_base(run: Run, *bases: str) -> list[ModeResult]:
    return [m for m in run.ok_modes() if _base(run, m) in bases and len(m.step_samples_ms)]


def _vs(c: Comparison) -> str:
    ci = ", 95 % CI" if np.isfinite(c.ratio_lo) else ""
    return f"{c.a} {fmt_ms(c.a_ms)} vs {c.b} {fmt_ms(c.b_ms)} ms/step ({c.ratio_text()}{ci})"


def _slower(c: Comparison) -> bool:
    """a is measurably slower than b."""
    return c.significant and c.delta_ms > 0


# --------------------------------------------------------------------------------------------------
# rules: each yields Findings (rank and severity are filled in by find())


def rule_eager_dispatch_bound(run: Run) -> Iterable[Finding]:
    """1. Eager slower than its graph function: wrap the step in tf.function.

    "eager-dispatch-bound" when python + dispatch are >= 30 % of the eager step, "eager-slower"
    when the function mode is measurably faster for other reasons. With the function mode in the
    run (the fix applied), the saving is the measured difference of the two untraced medians;
    without it, an estimate: the python + dispatch share of the eager step, which a graph function
    removes at most (it keeps some of its own)."""
    for e in _modes_with_base(run, *_EAGER_BASES):
        base = _base(run, e)
        f = sibling(run, e, "function" if base == "eager" else "train_on_batch")
        share = _share(e, "python", "dispatch")
        bound = _finite(share) and share >= DISPATCH_BOUND_SHARE
        c = compare_modes(run, e, f) if f is not None else None
        if c is not None and not _slower(c):
            continue  # the function mode is not measurably faster: rule 8 speaks instead
        if not bound and c is None:
            continue
        fix = ("step = tf.function(model)          # or decorate your train/predict step\n"
               "y = step(x)                        # x: a tensor of a fixed shape"
               if base == "eager" else
               "model.compile(optimizer, loss, run_eagerly=False)  # the default: "
               "train_on_batch runs a tf.function")
        fix = _at_user_line(e, fix)
        split = (f"In {e.name}, {_est_text(e, 'python + dispatch', 'python', 'dispatch')}."
                 if _finite(share) else "")
        if c is not None and f is not None:
            saving: float | None = c.delta_ms
            basis = f"measured: median step of {e.name} minus {f.name}, {c.delta_text()}"
            kind: SavingKind | None = SavingKind.MEASURED
            modes: tuple[str, ...] = (e.name, f.name)
            evidence = (_vs(c) + ". " + split
                        + (f" {f.name}: {_est_text(f, 'python + dispatch', 'python', 'dispatch')}."
                           if _finite(_share(f, "python", "dispatch")) else ""))
        else:
            saving = _est(e, "python", "dispatch")
            basis = (f"estimate: {e.name}'s python + dispatch, {ESTIMATE_NOTE}; no graph-function "
                     "mode in this run to measure it against (a function keeps some of its own)")
            kind = SavingKind.ESTIMATE
            modes = (e.name,)
            evidence = split
        if saving is not None and not np.isfinite(saving):
            saving, kind = None, None
        if bound:
            yield Finding(
                rule="eager-dispatch-bound",
                title=f"{e.name} is Python/dispatch-bound: compile the step with tf.function",
                evidence=evidence, saving_ms=saving, saving_basis=basis, saving_kind=kind,
                modes=modes, fix=fix)
        elif c is not None and f is not None:   # not bound: the function mode is faster
            yield Finding(
                rule="eager-slower",
                title=(f"{e.name} is {fmt_ratio(c.ratio)}× slower than {f.name}: compile the step "
                       "with tf.function"),
                evidence=_vs_by_category(c) + " " + split, saving_ms=saving, saving_basis=basis,
                saving_kind=kind, modes=modes, fix=fix)


_FIX_NEW_FUNCTION = ("step = tf.function(step_fn)   # create it once, outside the loop\n"
                     "for x in batches:\n    step(x)")
_FIX_SHAPES = ("@tf.function(reduce_retracing=True)   # or a fixed signature:\n"
               "# @tf.function(input_signature=[tf.TensorSpec([None, 30], tf.float32)])\n"
               "# (None: the dimension that varies)\n"
               "def step(x): ...")
_FIX_PYTHON = "step(x, tf.constant(lr))   # pass tensors, not Python numbers or objects"


def _retrace_cause(cause: RetraceCause, detail: str, calls: int, traced: int) -> tuple[str, str]:
    """(cause in words, fix snippet) from what the analysis recorded about the traces (the
    ``cause`` / ``cause_detail`` columns of ``ModeResult.retraces``).

    The host trace records no argument signatures (TF 2.21), but each traced call carries the
    function's ``tracing_count``: a count that climbs means one tf.function object retraced (its
    arguments changed: shapes or Python values); a count stuck at 1 while every call traces means a
    new tf.function object per call. The capture's log of the arguments it fed says which.
    """
    both_fix = (_FIX_SHAPES.replace("def step(x): ...", "def step(x, lr): ...") + "\n"
                + _FIX_PYTHON)
    if cause is RetraceCause.SHAPES_AND_PYTHON_VALUES:
        return (f"its inputs changed between calls: {detail} — every new shape and every new "
                "Python value is a new trace", both_fix)
    if cause is RetraceCause.SHAPES:
        return f"input shapes change between calls: {detail}", _FIX_SHAPES
    if cause is RetraceCause.PYTHON_VALUES:
        return (f"Python values passed as arguments: {detail} (each new value is a new trace)",
                _FIX_PYTHON)
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
            "# or fix shapes: input_signature=[tf.TensorSpec([None, 30], tf.float32)]")


def _row_get(row: dict, name: str, default=""):
    v = row.get(name, default)
    return default if v is None or (isinstance(v, float) and not np.isfinite(v)) else v


def rule_retracing(run: Run) -> Iterable[Finding]:
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
            cause, fix = _retrace_cause(recorded_cause, str(_row_get(row, "cause_detail")),
                                        calls, traced)
            recorded = f" Recorded: {row['changes']}." if row["changes"] else ""
            evidence = (f"In {m.name}, {function} was traced {traced} times in {calls} calls of the "
                        f"trace: {fmt_ms(tracing)} ms tracing"
                        + (f" + {fmt_ms(compile_)} ms XLA compile" if compile_ else "")
                        + f", {fmt_ms(per_trace)} ms per trace; the {traced - 1} retraces cost "
                        f"≈ {fmt_ms(one_time)} ms once. Cause: {cause}." + recorded)
            saving, basis, kind, steady = _retrace_saving(m, per_trace, traced, calls)
            where = _user_function(m, _function_name(str(function)))
            if where is not None:
                fix = f"# in your code: {_where(where)}\n{fix}"
            evidence += (" " + steady) if steady else ""
            title = (f"{function} retraces {traced - 1} times in {m.name}" if saving is not None
                     else f"{function} retraced {traced - 1} times in {m.name}, then stopped: a "
                     f"one-time cost of ≈ {fmt_ms(one_time)} ms")
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
    if m.timing is None or not len(samples) or not _finite(med) or med >= RETRACE_PART * per_trace:
        steady = _est(m, "tracing", "compile")
        if _finite(steady) and steady > 0:
            return (steady, "estimate: the steady steps' tracing and compile time, "
                    + ESTIMATE_NOTE, SavingKind.ESTIMATE, "")
        if not calls or not _finite(med):
            return None, "", None, ""
        rate = min(per_trace * (traced - 1) / calls, med)
        return (rate, "estimate: a retrace's traced cost × the trace's retraces per call"
                + (f", capped at the whole {fmt_ms(med)} ms step" if rate == med else ""),
                SavingKind.ESTIMATE, "")
    hit = samples > med + RETRACE_PART * per_trace
    n = len(samples)
    if not hit.any():
        return (None, f"a one-time cost: none of the {n} untraced steady steps took a retrace's "
                f"time over the {fmt_ms(med)} ms median", None,
                f"None of the {n} untraced steady steps (median {fmt_ms(med)} ms) holds a retrace: "
                "they stopped before the steady steps, so fixing them saves start-up time, not "
                "step time.")
    excess = float(np.sum(samples[hit] - med)) / n
    return (excess, f"estimate: the time over the median of the {int(hit.sum())} of {n} untraced "
            "steady steps that took a retrace's time, spread over all of them", SavingKind.ESTIMATE,
            f"{int(hit.sum())} of the {n} untraced steady steps hold a retrace (median "
            f"{fmt_ms(med)} ms; or another stall as long): ≈ {fmt_ms(excess)} ms per step spread "
            "over all of them.")


def _main_calls(m: ModeResult, *types: str) -> float:
    """Calls per step of main-thread ops of these types (0 without an ops table)."""
    ops = m.table("ops")
    if ops.empty or "type" not in ops:
        return 0.0
    sel = (ops["thread"] == "main") & np.isin(ops["type"], types)
    return float(np.nansum(np.asarray(ops["calls_per_step"][sel], dtype=float)))


def _waits_on_tf_data(run: Run, m: ModeResult) -> bool:
    """The mode's steps pull batches from tf.data: an ``IteratorGetNext`` op runs in them (a graph
    op on the executor, or the eager op), or the mode is a dataset mode."""
    if m.kind.input == "dataset":
        return True
    ops = m.table("ops")
    return (not ops.empty and "type" in ops
            and any(str(t).startswith("IteratorGetNext") for t in ops["type"]))


def _conversions(m: ModeResult) -> float:
    """Conversions per step that did work: every numpy / Python value converted to a tensor runs
    an ``_EagerConst`` op (a tensor passed to an op is returned unchanged and runs none)."""
    return _main_calls(m, "_EagerConst")


def _slicing(m: ModeResult) -> float:
    """StridedSlice calls per step when the conversions are its Python indices: ``w[i]`` with a
    Python int converts begin, end and strides (3 ``_EagerConst`` runs) for each slice."""
    n = _main_calls(m, "StridedSlice")
    return n if n >= 1 and _conversions(m) >= 2 * n else 0.0


# ---- whose code issues the ops: the python pass's frames (``analysis.hotspots``) -----------------

# Keras' frames that convert the arrays the user passed (not Keras' own values): Keras 3's
# Functional model converts its inputs in ``_convert_inputs_to_tensors``, a Layer's ``__call__``
# in its nested ``maybe_convert``; Keras 2 (tf_keras) in ``_convert_numpy_or_python_types``
_KERAS_INPUT_FRAMES = frozenset({("functional.py", "_convert_inputs_to_tensors"),
                                 ("layer.py", "maybe_convert"),
                                 ("base_layer.py", "_convert_numpy_or_python_types")})
# a frame issuing this many slices per step slices in a loop (``w[i]`` for each i)
LOOP_SLICES = 8


def _issuers(m: ModeResult) -> list[dict] | None:
    """The python pass's frames that issue ops (``analysis.hotspots``: the nearest frame above
    each op call that is the user's, Keras' or the tool's), most op calls first; None when the
    mode has no python pass (nothing says whose code issued its ops)."""
    h = m.table("hotspots")
    if h.empty or "op_calls_per_step" not in h:
        return None
    rows = [r for r in h.records() if float(r["op_calls_per_step"] or 0) > 0]
    if not rows:
        return None   # no frame issued an op: a trace analysed before frames were tied to ops
    return sorted(rows, key=lambda r: (-float(r["op_calls_per_step"]), str(r["file"]), int(r["line"])))


def _is_users_input(r: dict) -> bool:
    """A frame whose conversions are of the user's own inputs: the user's code, the capture's
    call of the user's step with the user's data, or Keras converting the arrays passed to it
    (in its input-converting frames, or in an entry point the user's code called, such as
    ``train_on_batch`` passing the arrays to its train function)."""
    return (r["group"] in ("user", "traceinsight")
            or (str(r["file"]), str(r["function"])) in _KERAS_INPUT_FRAMES
            or bool(r.get("entry", False)))


def _where(r: dict) -> str:
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
    rows = [r for r in h.records() if r["group"] == "user"]
    if not rows:
        return None
    return max(rows, key=lambda r: (float(r.get("op_calls_per_step", 0.0) or 0.0),
                                    float(r["inclusive_ms"] or 0.0)))


def _user_function(m: ModeResult, name: str) -> dict | None:
    """The user's frame of the function named ``name`` in the python pass (a tf.function's Python
    function runs there while it is traced), or None."""
    h = m.table("hotspots")
    if h.empty:
        return None
    return next((r for r in h.records() if r["group"] == "user" and str(r["function"]) == name),
                None)


def _at_user_line(m: ModeResult, fix: str) -> str:
    """The fix, headed by the user's file and line where it goes when the trace has them."""
    r = _user_frame(m)
    return f"# in your code: {_where(r)}\n{fix}" if r is not None else fix


def _shares(rows: list[dict], mine: list[dict]) -> dict[str, float]:
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


def _issued_cost(m: ModeResult, mine: list[dict]) -> float:
    """The estimated ms of the untraced step that the ops of ``mine`` cost beyond their kernels
    (python, dispatch and conversion), from the python pass's shares (``_shares``) applied to the
    category split."""
    h = m.table("hotspots")
    sh = _shares(h.records() if not h.empty else [], mine)
    parts = [_cat(m, c) * sh[c] for c in sh if _finite(_cat(m, c))]
    return in_step(m, math.fsum(parts)) if parts else float("nan")


def _op_words(rows: list[dict]) -> str:
    return ", ".join(f"{_where(r)} {float(r['op_calls_per_step']):.0f}" for r in rows[:3])


def _conversion_words(rows: list[dict]) -> str:
    return ", ".join(f"{_where(r)} {float(r['conversions_per_step']):.3g}" for r in rows[:3])


def _slice_saving(m: ModeResult, slicers: list[dict], others: list[dict]) -> tuple[float, str]:
    """The estimated saving of slicing without Python values in the user's frames that slice (and
    of passing tensors for the user's other conversions): of the cost of the ops each such frame
    issues (``_issued_cost``), the share its slices and their specs' conversions are of its op
    calls (the fix removes both); the other conversions at their share of the input time."""
    parts, words = [], []
    for r in slicers:
        calls = float(r["op_calls_per_step"])
        k = float(r["slices_per_step"]) + float(r["conversions_per_step"])
        share = min(k / calls, 1.0) if calls > 0 else 0.0
        parts.append(_issued_cost(m, [r]) * share)
        words.append(f"{k:.0f} of the {calls:.0f} op calls {_where(r)} issues")
    if others:
        sh = _shares(m.table("hotspots").records(), others)["input"]
        parts.append(in_step(m, _cat(m, "input") * sh))
    saving = math.fsum(v for v in parts if _finite(v))
    return saving, ("estimate: the slices and their specs' conversions, " + "; ".join(words)
                    + ", at the cost of those ops (python, dispatch and conversion: their shares "
                    f"of the python pass applied to the category split), {ESTIMATE_NOTE}"
                    + ("; your other inputs' conversions at their share of the input time"
                       if others else "") + "; no mode of this run slices without them")


def rule_numpy_inputs(run: Run) -> Iterable[Finding]:
    """3. The user's inputs (numpy arrays, Python numbers) converted to tensors every step: one
    finding for the run, the mode with the most to save first. Only the user's inputs count:
    where the python pass recorded who issued each conversion, those of the user's code, of the
    capture's call of the user's step and of Keras converting the arrays passed to it; Keras' own
    Python values are converted whatever the user passes, and are not input to fix. Measured
    against the mode with tensor inputs (the fix applied) where the run has it. A conversion of
    something that is a tensor already is not input (the attribution makes it dispatch); a step
    waiting on tf.data is rule 7's, and input that is only host-to-device copies is not a
    conversion."""
    hits = []
    for m in run.ok_modes():
        if m.kind.input != "numpy" or _waits_on_tf_data(run, m):
            continue  # +tensor modes already pass tensors; tf.data waits: rule 7
        if m.kind.backend == "jax":
            continue  # Keras on JAX puts arrays on the device (DevicePut): the TF fix does not apply
        ops = m.table("ops")
        if _conversions(m) <= 0 and not ops.empty and bool(np.any(ops["type"] == "memcpy")):
            continue  # no conversion ran: the input time is host-to-device copies
        share = _share(m, "input")
        if not _finite(share) or _cat(m, "input") < INPUT_MIN_MS or share < INPUT_SHARE:
            continue
        issuers = _issuers(m)
        conv = [r for r in issuers or [] if float(r["conversions_per_step"]) > 0]
        users = [r for r in conv if _is_users_input(r)]
        t = _tensor_twin(run, m)
        c = compare_modes(run, m, t) if t is not None else None
        if c is not None and not _slower(c):
            continue  # passing tensors made no measurable difference
        if issuers is not None and not users:
            continue  # every conversion is of Keras' own values: passing tensors removes none
        if c is not None and t is not None:
            saving: float | None = c.delta_ms
            kind: SavingKind | None = SavingKind.MEASURED
            basis = f"measured: median step of {m.name} minus {t.name}, {c.delta_text()}"
        elif issuers is not None:
            sh = _shares(m.table("hotspots").records(), users)["input"]
            saving = in_step(m, _cat(m, "input") * sh)
            kind = SavingKind.ESTIMATE
            basis = (f"estimate: the conversion time of your inputs ({_pct(sh)} of {m.name}'s "
                     f"conversion time in the python pass), {ESTIMATE_NOTE}; no mode with tensor "
                     "inputs in this run to measure it against")
        else:
            saving = _est(m, "input")
            kind = SavingKind.UPPER_BOUND
            basis = (f"upper bound: all of {m.name}'s input time, {ESTIMATE_NOTE} (no python pass "
                     "to tell your inputs' conversions from the library's own); no mode with "
                     "tensor inputs in this run to measure it against")
        hits.append((saving, m, c, t, conv, users, kind, basis))
    if not hits:
        return
    hits.sort(key=lambda h: (h[2] is None, -(h[0] if h[0] is not None and np.isfinite(h[0]) else 0.0)))
    saving, m, c, t, conv, users, kind, basis = hits[0]
    keras_step = _runs_keras_step(m)
    n_all = math.fsum(float(r["conversions_per_step"]) for r in conv) if conv else _conversions(m)
    evidence = f"In {m.name}, {_est_text(m, 'input (converting values to tensors, copies)', 'input')}."
    if conv:
        n_user = math.fsum(float(r["conversions_per_step"]) for r in users)
        evidence += (f" {n_all:.0f} conversion{'s' if round(n_all) != 1 else ''} per step "
                     f"(`_EagerConst` runs); {n_user:.3g} yours ({_conversion_words(users)})")
        others = [r for r in conv if r not in users]
        if others:
            n_other = math.fsum(float(r["conversions_per_step"]) for r in others)
            evidence += (f"; the other {n_other:.3g} are "
                         + ("Keras' own values " if all(r["group"] == "keras" for r in others)
                            else "the library's own values ")
                         + f"({_conversion_words(others)}), converted whatever you pass")
        evidence += "."
    elif n_all > 0:
        evidence += (f" {n_all:.0f} conversion{'s' if round(n_all) != 1 else ''} per step "
                     "(`_EagerConst` runs): no python pass says whose.")
        if keras_step:
            evidence += (" These conversions run inside Keras' step (the numpy batch and Keras' "
                         "own Python values); passing the batch as tensors removes the batch's "
                         "part.")
    # slicing with Python values in the user's own code converts the slice's spec every call
    slicers = [r for r in users if r["group"] == "user" and float(r["slices_per_step"]) >= 1
               and float(r["conversions_per_step"]) >= 2 * float(r["slices_per_step"])]
    loop_slicer = next((r for r in slicers if float(r["slices_per_step"]) >= LOOP_SLICES), None)
    if _issuers(m) is None and not keras_step and _slicing(m) >= LOOP_SLICES \
            and run.manifest.get("workload", {}).get("kind") != "keras":
        # no python pass: slices whose every one converts its spec, in a step no Keras code runs
        loop_slicer = {"function": "your step", "file": "", "line": 0, "slices_per_step": _slicing(m)}
    if slicers and kind is SavingKind.ESTIMATE:
        saving, basis = _slice_saving(m, slicers, [u for u in users if u not in slicers])
    modes = [m.name] + ([t.name] if t is not None and c is not None else [])
    if c is not None:
        evidence += f" Passing tensors instead: {_vs(c)}."
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(
            f"{h[1].name} " + (f"with tensors {fmt_ms(h[2].delta_ms)} ms/step faster (measured)"
                               if h[2] is not None else
                               f"≈ {fmt_ms(h[0])} ms/step ({h[6].value if h[6] else ''})" if h[0] is not None
                               else "(no estimate)")
            for h in hits[1:]) + "."
        modes += [h[1].name for h in hits[1:]]
    if loop_slicer is not None:
        where = _where(loop_slicer) if loop_slicer["file"] else loop_slicer["function"]
        evidence += (f" {where} slices tensors {float(loop_slicer['slices_per_step']):.0f} times "
                     "per step (StridedSlice) with Python ints (w[i]): each slice converts its "
                     "begin, end and strides to tensors on every call.")
        title = f"{m.name} converts slice indices to tensors every step"
        fix = (f"# in your code: {where}\n" if loop_slicer["file"] else "") + \
            ("ws = tf.unstack(w)   # once, outside the step: ws[i] is a Python list lookup\n"
             "# or index inside tf.function, where the slice's constants are built once")
    elif slicers:
        r = slicers[0]
        evidence += (f" {_where(r)} slices with Python values {float(r['slices_per_step']):.3g} "
                     "time(s) per step (e.g. q[:, None, :]): each slice converts its spec to "
                     "tensors on every call.")
        only_slices = all(x in slicers for x in users)
        title = (f"{m.name} converts slice specs to tensors every step" if only_slices else
                 f"{m.name} converts its inputs and slice specs to tensors every step")
        fix = (f"# in your code: {_where(r)}\n"
               + ("" if only_slices else
                  "x = tf.convert_to_tensor(x_np)   # numpy inputs: convert once, outside the loop\n")
               + "q = tf.expand_dims(q, 1)         # instead of q[:, None, :]: no spec to convert\n"
               "# or run the step in tf.function, where the spec is a constant built once")
    elif keras_step:
        title = f"{m.name} converts its inputs to tensors every step"
        fix = ("x, y = tf.convert_to_tensor(x_np), tf.convert_to_tensor(y_np)  # once, outside the loop\n"
               "model.train_on_batch(x, y)   # or a tf.data pipeline: model.fit(ds)")
    else:
        title = f"{m.name} converts its inputs to tensors every step"
        fix = _at_user_line(m, "x = tf.convert_to_tensor(x_np)   # numpy inputs: convert once, "
                            "outside the loop\n"
                            "# or feed the batches from a tf.data pipeline:\n"
                            "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)"
                            ".prefetch(tf.data.AUTOTUNE)")
    yield Finding(
        rule="numpy-inputs", title=title,
        evidence=evidence, saving_ms=saving if saving is None or np.isfinite(saving) else None,
        saving_basis=basis, saving_kind=kind, modes=tuple(modes), fix=fix)


def _first_compile_ms(m: ModeResult) -> float:
    first = m.first_step
    if first is not None and "compile" in first:
        v = first["compile"]
        if np.isfinite(v) and v > 0:
            return v
    r = m.table("retraces")
    if not r.empty and "compile_ms" in r:
        return float(np.nansum(np.asarray(r["compile_ms"], dtype=float)))
    return float("nan")


def _family_dominates(c: Comparison, fam: FamilyDelta | None) -> bool:
    """The family's difference (traced kernel time) is at least half the step difference."""
    return fam is not None and abs(fam.delta_ms) >= 0.5 * abs(c.delta_ms)


def _family_evidence(c: Comparison, slower: bool = True) -> str:
    """`` The difference is mostly convolution: 3.1 vs 1.2 ms/step of op time (ops matched by
    family across modes).`` — the op family that costs most of it, with both sides' ms/step."""
    fam = c.top_family(slower)
    if fam is None:
        return ""
    a_ms, b_ms = fam.a_ms, fam.b_ms
    sides = f"{c.a} {fmt_ms(a_ms)} vs {c.b} {fmt_ms(b_ms)} ms/step of traced kernel time"
    if _family_dominates(c, fam):
        out = (f" By op family (ops matched across modes), {fam.family} costs most of the "
               f"difference: {sides}.")
    else:
        out = (f" By op family (ops matched across modes), {fam.family} differs most: {sides}, "
               f"{fmt_ms(abs(fam.delta_ms))} of the {fmt_ms(abs(c.delta_ms))} ms/step "
               "difference; the rest is not in any one op family.")
    # a side with no time in that family may run it inside fusions whose names hide their kind
    fams = c.table("families")
    hidden = np.array([str(n).startswith(("library fusion", "fusion (")) for n in fams["family"]],
                      dtype=bool)
    names = fams["family"][hidden].tolist()
    for side, ms in ((c.a, a_ms), (c.b, b_ms)):
        col = "a_ms" if side == c.a else "b_ms"
        times = np.asarray(fams[col], dtype=float)[hidden]
        if ms == 0 and len(times) and np.nansum(times) > 0:
            out += (f" {side} has no {fam.family} op by name but runs "
                    + ", ".join(f"{n} {fmt_ms(t)}" for n, t in zip(names, times.tolist()) if t > 0)
                    + " ms/step, which may hold it.")
    return out


def _op_evidence(c: Comparison, x: ModeResult, f: ModeResult) -> str:
    """Traced op time of both modes, unless the traced steps contradict the untraced ordering
    (then traced categories are no evidence for it, and the caveat says why)."""
    if c.traced_disagrees:
        return f". Caveat: {c.caveat()}."
    out = (f"; op time ≈ {fmt_ms(_est(x, 'op'))} vs {fmt_ms(_est(f, 'op'))} ms/step (the category "
           "split's share of each untraced step).")
    return out + (f" Caveat: {c.caveat()}." if c.caveat() else "")


# op types that are not kernels: a graph function's call, a conversion, the runtime's own events
_NOT_KERNELS = frozenset({"tf.function", "_EagerConst", "(runtime)"})
# op families that are not work XLA compiles: the function call itself, constants and arguments
_NOT_WORK_FAMILIES = ("tf.function", "constants", "variables and arguments")


def _kernels_recorded(m: ModeResult) -> bool:
    """The mode's trace records its kernels one by one (graph ops, XLA's HLO ops): TensorFlow
    before 2.17 writes no per-op events for XLA on CPU, only the whole function call."""
    ops = m.table("ops")
    return not ops.empty and any(str(t) not in _NOT_KERNELS for t in ops["type"])


def _one_sided_family(c: Comparison, side_b: bool = True) -> FamilyDelta | None:
    """The op family that holds most of one side's kernel time (b by default), leaving out the
    function call, constants and arguments: the work the other side (whose kernels the trace does
    not record) runs in its own compiled kernels."""
    fams = c.table("families")
    if fams.empty:
        return None
    col = "b_ms" if side_b else "a_ms"
    best = None
    for i, fam in enumerate(fams["family"].tolist()):
        if str(fam).startswith(_NOT_WORK_FAMILIES):
            continue
        v = float(fams[col][i])
        if np.isfinite(v) and v > 0 and (best is None or v > float(fams[col][best])):
            best = i
    if best is None:
        return None
    return FamilyDelta(str(fams["family"][best]), float(fams["a_ms"][best]),
                       float(fams["b_ms"][best]), float(fams["delta_ms"][best]))


def _unrecorded_family_evidence(c: Comparison, x: ModeResult, f: ModeResult
                                ) -> tuple[str, FamilyDelta | None]:
    """For an XLA mode whose trace records no kernels (TF 2.15 / 2.16 on CPU): where the op-family
    reason can come from, the other mode's kernels by family, said as such."""
    fam = _one_sided_family(c if c.b == f.name else c.flipped())
    if fam is None:
        return (f" {x.name}'s kernels are not in this trace (TensorFlow before 2.17 writes no "
                "per-op events for XLA on CPU).", None)
    # the family's traced kernel time against the traced op time (both from the traced steps;
    # category_means is the untraced step)
    kernels = float(f.traced_category_means().get("op", float("nan")))
    share = fam.b_ms / kernels if _finite(kernels) and kernels > 0 else float("nan")
    most = _finite(share) and share >= 0.5
    return (f" {x.name}'s kernels are not in this trace (TensorFlow before 2.17 writes no per-op "
            f"events for XLA on CPU), so the op families are {f.name}'s: "
            + (f"mostly {fam.family}" if most else f"its largest is {fam.family}")
            + f", {fmt_ms(fam.b_ms)} ms/step of traced kernel time"
            + (f" ({_pct(share)} of its traced op time)" if _finite(share) else "")
            + ": the work XLA compiles into its own kernels.", fam if most else None)


def rule_xla(run: Run) -> Iterable[Finding]:
    """4. XLA measurably slower (or faster) than the plain graph function on this machine."""
    for x in _modes_with_base(run, "xla", "train_on_batch-xla"):
        f = sibling(run, x, "function" if _base(run, x) == "xla" else "train_on_batch")
        if f is None:
            continue
        c = compare_modes(run, x, f)
        if not c.significant:
            continue
        compile_ms = _first_compile_ms(x)
        unrecorded, one_sided = ("", None) if _kernels_recorded(x) else \
            _unrecorded_family_evidence(c, x, f)
        if c.delta_ms > 0:
            evidence = (_vs(c) + _op_evidence(c, x, f)
                        + (unrecorded or ("" if c.traced_disagrees else _family_evidence(c, slower=True)))
                        + (f" Its {fmt_ms(compile_ms)} ms compile never pays back, since every "
                           f"step is slower." if _finite(compile_ms) and compile_ms > 0 else ""))
            fam = None if c.traced_disagrees or unrecorded else c.top_family(True)
            fam = fam if _family_dominates(c, fam) else None
            yield Finding(
                rule="xla-slower",
                title=(f"{x.name} (XLA) is slower per step than {f.name} on this machine"
                       + (f", mostly in {fam.family}" if fam is not None else "")
                       + (f"; {f.name}'s kernels are mostly {one_sided.family} ({x.name}'s are not "
                          "recorded)" if one_sided is not None else "")),
                evidence=evidence, saving_ms=c.delta_ms,
                saving_basis=f"measured: median step of {x.name} minus {f.name}, {c.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(x.name, f.name),
                fix=("step = tf.function(step_fn, jit_compile=False)\n"
                     "# Keras: model.compile(..., jit_compile=False)"))
        else:
            gain = -c.delta_ms
            steps = (math.ceil(compile_ms / gain) if _finite(compile_ms) and compile_ms > 0
                     and gain > 0 else None)
            evidence = (_vs(c) + _op_evidence(c, x, f)
                        + (unrecorded or ("" if c.traced_disagrees else _family_evidence(c, slower=False)))
                        + (f" Its {fmt_ms(compile_ms)} ms compile is paid back after {steps} steps."
                           if steps is not None else ""))
            yield Finding(
                rule="xla-faster",
                title=(f"{x.name} (XLA) is faster per step than {f.name}: use jit_compile"
                       + (f"; {f.name}'s kernels are mostly {one_sided.family} ({x.name}'s are not "
                          "recorded)" if one_sided is not None else "")),
                evidence=evidence, saving_ms=gain,
                saving_basis=f"measured: median step of {f.name} minus {x.name}, {c.flipped().delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(f.name, x.name),   # the step that gets faster first
                fix=("step = tf.function(step_fn, jit_compile=True)\n"
                     "# Keras: model.compile(..., jit_compile=True)"))


def _op_call_stats(m: ModeResult, main_only: bool = False) -> tuple[float, float]:
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


def rule_function_slower(run: Run) -> Iterable[Finding]:
    """1b. A graph function measurably slower than the same step run eagerly (e.g. a vectorized
    step: one large op leaves no per-op Python overhead for tf.function to remove). Says where the
    difference is: the call machinery or the kernels (by op family)."""
    for f in _modes_with_base(run, "function"):
        e = sibling(run, f, "eager")
        if e is None:
            continue
        c = compare_modes(run, f, e)
        if not _slower(c):
            continue
        traced_gap = c.traced_a_ms - c.traced_b_ms
        trace_cost = _cat(f, "tracing", "compile") - _cat(e, "tracing", "compile")
        if _finite(traced_gap, trace_cost) and traced_gap > 0 and trace_cost >= 0.5 * traced_gap:
            continue  # it keeps tracing (or compiling): the retracing rule says why and what to do
        n_e, _ = _op_call_stats(e)
        overhead_e = _est(e, "python", "dispatch")
        why = []
        if _finite(overhead_e) and n_e:
            why.append(f"the eager step issues {n_e:.0f} op call(s) per step with "
                       f"≈ {fmt_ms(overhead_e)} ms of Python + dispatch in its "
                       f"{fmt_ms(e.median_ms)} ms step: little for tf.function to remove")
        fam = None if c.traced_disagrees else c.top_family(True)
        fam = fam if _family_dominates(c, fam) else None
        if fam is not None:
            why.append(f"{fam.family} kernels take {fmt_ms(fam.a_ms)} ms/step in "
                       f"{f.name} against {fmt_ms(fam.b_ms)} in {e.name}: the same work "
                       "runs slower inside the graph (another kernel or fewer threads)")
        call = _est(f, "dispatch")
        if _finite(call) and call >= 0.005 and not c.traced_disagrees:
            why.append(f"the function call machinery (dispatch) costs ≈ {fmt_ms(call)} ms of "
                       f"{f.name}'s {fmt_ms(f.median_ms)} ms step ({_pct(_share(f, 'dispatch'))} "
                       "of its categories)")
        evidence = (_vs_by_category(c) + (" Why: " + "; ".join(why) + "." if why else ""))
        yield Finding(
            rule="function-slower",
            title=(f"{f.name} is {fmt_ratio(c.ratio)}× slower than {e.name}"
                   + (f": its {fam.family} kernels run slower in the graph" if fam is not None
                      else "")),
            evidence=evidence, saving_ms=c.delta_ms,
            saving_basis=f"measured: median step of {f.name} minus {e.name}, {c.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(f.name, e.name),
            fix=_at_user_line(e, "# a step of a few large ops gains nothing from tf.function: run "
                              "it eagerly,\n# or let XLA fuse it (compare the xla mode):\n"
                              "step = tf.function(step_fn, jit_compile=True)"))


# Keras' own step functions as the trace names them (Keras 3's, then tf_keras'): calls of these
# tf.functions run ops Keras wrote
_KERAS_STEP_FUNCTIONS = frozenset({
    "multi_step_on_iterator", "one_step_on_iterator", "one_step_on_data",
    "one_step_on_data_distributed", "multi_step_on_data", "train_function", "predict_function",
    "test_function"})


def _function_name(op: str) -> str:
    """``__inference_multi_step_on_iterator_262`` -> ``multi_step_on_iterator``."""
    name = op.removeprefix("__inference_").removeprefix("__forward_").removeprefix("__backward_")
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name


def _runs_keras_step(m: ModeResult) -> bool:
    """The mode's steps run Keras' own train / predict / test functions, seen in the trace (a
    main-thread tf.function call or a trace of one of them); for a Keras step without a
    tf.function (``run_eagerly``), the capture's mode says so."""
    names: list[str] = []
    ops, r = m.table("ops"), m.table("retraces")
    if not ops.empty and "type" in ops:
        names += [_function_name(str(n)) for n, t in zip(ops["op"], ops["type"])
                  if str(t).startswith("tf.function")]
    if not r.empty and "function" in r:
        names += [_function_name(str(n)) for n in r["function"]]
    if any(n in _KERAS_STEP_FUNCTIONS for n in names):
        return True
    return m.kind.base == "train_on_batch-eager"


def _graph_while_loop(m: ModeResult) -> bool:
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


def rule_tiny_ops(run: Run) -> Iterable[Finding]:
    """5. Many tiny ops per step, where the user's own code issues them (not Keras' step functions,
    not a graph-mode While loop): vectorize the loop, at the user's file and line. Where the
    python pass recorded who issued the ops, only the user's own frames count, and the saving is
    the python, dispatch and conversion time of the ops they issue (an estimate: no mode of the
    run runs the vectorized code); without it, a Keras workload's ops are Keras' and the rule is
    silent, and the saving is the mode's dispatch time."""
    hits = []
    for m in run.ok_modes():
        if not m.host_events_recorded:
            continue  # the host's op calls are not all in the trace: no per-call claim
        if _runs_keras_step(m) or _graph_while_loop(m):
            continue
        # the ops of a tf.data pipeline's functions run on worker threads beside the step's graph,
        # named alike: where the step pulls from tf.data, only the ops the step's thread calls
        n, med = _op_call_stats(m, main_only=_waits_on_tf_data(run, m))
        if not (_finite(med) and med <= TINY_OP_MEDIAN_MS):
            continue
        issuers = _issuers(m)
        if issuers is None:
            if run.manifest.get("workload", {}).get("kind") == "keras":
                continue   # no python pass: the ops of a Keras model are Keras' to issue
            mine: list[dict] = []
        else:
            mine = [r for r in issuers if r["group"] == "user"]
            n = math.fsum(float(r["op_calls_per_step"]) for r in mine)
        if n >= TINY_OPS_PER_STEP:
            hits.append((n, med, m, mine))
    if not hits:
        return
    hits.sort(key=lambda h: (-h[0], h[2].name))
    n, med, m, mine = hits[0]
    evidence = (f"{m.name} runs {n:.0f} op calls per step"
                + (f" from your code ({_op_words(mine)})" if mine else "")
                + f" with a median of {med * 1e3:.1f} µs per call; "
                + _est_text(m, "per-op overhead (dispatch)", "dispatch") + ".")
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(f"{h[2].name} {h[0]:.0f} calls, {h[1] * 1e3:.1f} µs"
                                          for h in hits[1:]) + "."
    if mine:
        saving = _issued_cost(m, mine)
        basis = ("estimate: the python, dispatch and conversion time of the ops your code issues "
                 f"(their shares of the python pass applied to the category split), {ESTIMATE_NOTE};"
                 " vectorized, one op does the work of the loop (no mode of this run runs it)")
    else:
        saving = _est(m, "dispatch")
        basis = ("estimate: the dispatch time, which grows with the number of op calls, "
                 + ESTIMATE_NOTE)
    fix = ("# fewer, larger ops: one batched op instead of a Python loop of small ones\n"
           "y = tf.reduce_sum(x * w[None, :], axis=1)   # not [tf.reduce_sum(x[i] * w) for i ...]\n"
           "z = tf.vectorized_map(fn, xs)               # not [fn(x) for x in xs]\n"
           + ("step = tf.function(step_fn)                 # no per-op Python dispatch in eager"
              if _base(run, m) in _EAGER_BASES else
              "step = tf.function(step_fn, jit_compile=True)  # XLA fuses small graph ops"))
    if mine:
        fix = f"# in your code: {_where(mine[0])}\n" + fix
    yield Finding(
        rule="tiny-ops", title=f"Many tiny ops per step in {m.name}: vectorize",
        evidence=evidence, saving_ms=saving if _finite(saving) and saving > 0 else None,
        saving_basis=basis if _finite(saving) and saving > 0 else "",
        saving_kind=SavingKind.ESTIMATE if _finite(saving) and saving > 0 else None,
        modes=tuple(h[2].name for h in hits), fix=fix)


def _per_call_graph_builds(m: ModeResult) -> str:
    """What a predict() call traces every time, from the retrace table's row of graphs built outside
    tf.function calls and the python pass's frames (Keras 3.15 / TF 2.21: the array data adapter
    builds a new tf.data pipeline per call, whose map / flat_map functions are traced)."""
    r = m.table("retraces")
    if r.empty or "function" not in r:
        return ""
    rows = np.flatnonzero(r["function"] == GRAPH_BUILDS)
    if not len(rows):
        return ""
    row = r.take(rows[:1]).records()[0]
    out = (f" Every call also traces: {row['changes']}; "
           + _est_text(m, "tracing", "tracing") + ", while its predict function is traced once.")
    h = m.table("hotspots")
    if not h.empty:
        frames = list(zip(map(str, h["file"]), map(str, h["function"])))
        seen = []
        for file, fn in (("array_data_adapter.py", "get_tf_dataset"),
                         ("structured_function.py", "trace_tf_function")):
            hit = [i for i, f in enumerate(frames) if f == (file, fn)]
            if hit:
                e = h.take(np.array(hit[:1])).records()[0]
                seen.append(f"{file} {fn} ×{e['calls_per_step']:.3g} per call, "
                            f"{fmt_ms(e['inclusive_ms'])} ms")
        if seen:
            out += (" Python frames: " + "; ".join(seen) + " — Keras builds a tf.data pipeline "
                    "from the arrays on every predict() call and tf.data traces its functions.")
    return out


def rule_predict(run: Run) -> Iterable[Finding]:
    """6. predict() on small batches costs more than model(x) / predict_on_batch; says what it
    traces on every call."""
    for p in _modes_with_base(run, "predict"):
        alts = [a for a in (sibling(run, p, "predict_on_batch"), sibling(run, p, "eager"),
                            sibling(run, p, "function")) if a is not None]
        cs = [c for c in (compare_modes(run, p, a) for a in alts) if _slower(c)]
        builds = _per_call_graph_builds(p)
        fix = ("y = model.predict_on_batch(x)     # one batch: no per-call data adapter\n"
               "y = model(x, training=False)      # or call the model (tf.function it for speed)")
        if not cs:
            if builds:
                saving = _est(p, "tracing")
                yield Finding(
                    rule="predict-overhead",
                    title=f"{p.name}() traces new graphs on every call",
                    evidence=builds.strip(), saving_ms=saving,
                    saving_basis=f"upper bound: the mode's tracing time, {ESTIMATE_NOTE}",
                    saving_kind=SavingKind.UPPER_BOUND,
                    modes=(p.name,), fix=fix)
            continue
        best = min(cs, key=lambda c: c.b_ms)
        yield Finding(
            rule="predict-overhead",
            title=f"{p.name}() costs {fmt_ratio(best.ratio)}× as much per batch as {best.b}",
            evidence=f"{_vs(best)}. " + "; ".join(c.sentence() for c in cs if c is not best)
            + builds,
            saving_ms=best.delta_ms,
            saving_basis=f"measured: median step of {p.name} minus {best.b}, {best.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(p.name, best.b) + tuple(c.b for c in cs if c is not best), fix=fix)


def rule_fit_overhead(run: Run) -> Iterable[Finding]:
    """7a. fit() and train_on_batch() per step: whichever is measurably slower carries overhead."""
    for f in _modes_with_base(run, "fit"):
        t = sibling(run, f, "train_on_batch")
        if t is None:
            continue
        c = compare_modes(run, f, t)
        if not c.significant:
            continue
        if c.delta_ms > 0:
            yield Finding(
                rule="fit-overhead", title=f"{f.name} costs more per step than {t.name}",
                evidence=_vs_by_category(c),
                saving_ms=c.delta_ms,
                saving_basis=f"measured: median step of {f.name} minus {t.name}, {c.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(f.name, t.name),
                fix=("model.compile(optimizer, loss, steps_per_execution=32)  # fewer Python round trips\n"
                     "model.fit(ds, epochs=1, verbose=0)   # no per-step progress bar\n"
                     "# or, for a handful of steps: model.train_on_batch(x, y)"))
        else:
            rc = compare_modes(run, t, f)
            yield Finding(
                rule="train-on-batch-overhead",
                title=f"{t.name} costs more per step than a batch inside {f.name}",
                evidence=_vs_by_category(rc),
                saving_ms=rc.delta_ms,
                saving_basis=f"measured: median step of {t.name} minus {f.name}, {rc.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(t.name, f.name),
                fix=("model.fit(x, y, batch_size=32, epochs=1, verbose=0)  # one call, many batches\n"
                     "# or keep the loop but compile fewer round trips:\n"
                     "model.compile(optimizer, loss, steps_per_execution=32)"))


def _vs_by_category(c) -> str:
    """The two modes' medians and ratio, then the category difference from traced steps."""
    return f"{_vs(c)}. By category: {c.sentence(traced_label=False)}."


def rule_input_bound(run: Run) -> Iterable[Finding]:
    """7b. Steps that wait on tf.data, in any mode (a function workload iterating a dataset as much
    as fit on one): the wait no other compute of the step overlaps is input. One finding per mode,
    about its pipeline as configured: the costliest stage's fix for that stage as it is (a map
    already parallel is not told to run in parallel), and a prefetch only where the pipeline has
    none."""
    for m in run.ok_modes():
        if not _waits_on_tf_data(run, m):
            continue
        share = _share(m, "input")
        if not _finite(share) or _cat(m, "input") < INPUT_MIN_MS or share < INPUT_BOUND_SHARE:
            continue
        stage_text, fix_lines = _stage_evidence(m)
        saving = _est(m, "input")
        yield Finding(
            rule="input-bound", title=f"{m.name} waits on its input pipeline",
            evidence=(f"In {m.name}, "
                      + _est_text(m, "input (waiting on tf.data while nothing else of the step "
                                  "computes, copies)", "input") + ".")
            + _stalls_text(run, m, "input") + stage_text,
            saving_ms=saving if _finite(saving) else None,
            saving_basis=f"upper bound: all of the mode's input time, {ESTIMATE_NOTE}",
            saving_kind=SavingKind.UPPER_BOUND if _finite(saving) else None,
            modes=(m.name,),
            fix=fix_lines or ("ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)   # parallel map\n"
                              "ds = ds.cache()                                            # when it fits in memory\n"
                              "ds = ds.batch(32).prefetch(tf.data.AUTOTUNE)               # overlap with the step"))


def _stage_evidence(m: ModeResult) -> tuple[str, str]:
    """The tf.data stage whose own work costs most (``analysis.tfdata``) and how the pipeline is
    configured, in words, and the fix lines for it as configured ("" when the trace has no stage
    events)."""
    from traceinsight.analysis.tfdata import PREFETCH_FIX, costliest_work_stage, has_prefetch, is_parallel, stage_fix

    stages = m.table("stages")
    best = costliest_work_stage(stages)
    if best is None:
        return "", ""
    kind = str(best["kind"])
    prefetch = has_prefetch(stages)
    text = (f" By tf.data stage, {present.safe(str(best['stage']))} costs most: "
            f"{fmt_ms(best['self_ms'])} ms of its own work over {best['count']} calls in the trace "
            f"({_pct(best['share'])} of the pipeline's time; a Prefetch stage's time is the step "
            "waiting on it). As configured: "
            + ("this stage runs in parallel" if is_parallel(kind) else "this stage runs serially")
            + (", the pipeline prefetches." if prefetch else ", the pipeline does not prefetch."))
    lines = [f"# the costliest stage: {kind}"]
    fix = stage_fix(kind)
    if fix:
        lines.append(fix)
    if not prefetch:
        lines.append(PREFETCH_FIX)
    return text, "\n".join(lines)


def _stalls_text(run: Run, m: ModeResult, category: str) -> str:
    """`` Most of it in 3 of 29 steps (step 7 3.23 ms, ...): 12.8 % of the traced time above the
    typical step (median 0.33 ms).`` when the category's cost is concentrated in a few steps."""
    hit = run.concentrated_costs(m.name).get(category)
    if hit is None:
        return ""
    steps = ", ".join(f"step {n} {fmt_ms(v)} ms" for n, v in hit["steps"][:5])
    more = f" and {len(hit['steps']) - 5} more" if len(hit["steps"]) > 5 else ""
    return (f" {len(hit['steps'])} of {hit['n_steps']} steps stand out ({steps}{more}): "
            f"{hit['share'] * 100:.1f} % of the traced time is {category} above its typical "
            f"{fmt_ms(hit['median_ms'])} ms per step (mean {fmt_ms(hit['mean_ms'])} ms).")


_PERIODIC_FIX = ("# work done every N steps (checkpoints, logging, evaluation, summaries):\n"
                 "if step % 100 == 0: ...          # less often, or\n"
                 "manager.save()                   # tf.train.CheckpointManager off the hot loop")


def rule_concentrated(run: Run) -> Iterable[Finding]:
    """A cost in a few steps only (``stats.concentrated``) that is a material share of the traced
    time: Python or unplaced work in some steps (periodic checkpoints, logging, evaluation). Input
    stalls are the input-bound finding's, retraces the retracing finding's; op and dispatch
    outliers are left alone (on a shared machine a preempted step looks the same)."""
    for m in run.ok_modes():
        costs = run.concentrated_costs(m.name)
        for cat in ("python", "other"):
            hit = costs.get(cat)
            if hit is None or hit["share"] < CONCENTRATED_SHARE:
                continue
            saving = hit["excess_ms"] / hit["n_steps"]
            if saving < INPUT_MIN_MS:
                continue   # a share of a tiny step: not worth a change
            yield Finding(
                rule="concentrated-cost",
                title=f"{m.name}: {cat} time spikes in {len(hit['steps'])} of {hit['n_steps']} steps",
                evidence=f"In {m.name},{_stalls_text(run, m, cat)}",
                saving_ms=traced_in_step(m, saving),
                saving_basis=("estimate: the spikes' time above the typical step, per step, as its "
                              "share of the category split applied to the untraced median"),
                saving_kind=SavingKind.ESTIMATE,
                modes=(m.name,), fix=_PERIODIC_FIX)


# (a, b) base pairs compared by the rules: the pairs users ask about.
_PAIRS = [("eager", "function"), ("xla", "function"), ("predict", "predict_on_batch"),
          ("fit", "train_on_batch"), ("train_on_batch-eager", "train_on_batch"),
          ("train_on_batch-xla", "train_on_batch"), ("fit-dataset", "fit"),
          ("v1-session", "function")]


def compared_pairs(run: Run) -> list[tuple[ModeResult, ModeResult]]:
    """The pairs of ok modes of this run that the rules compare (incl. X vs X+tensor, Keras 2 vs 3);
    never two traces of different programs."""
    return [(a, b) for a, b in _named_pairs(run) if run.same_program(a.name, b.name)]


def _named_pairs(run: Run) -> list[tuple[ModeResult, ModeResult]]:
    out = []
    for m in run.ok_modes():
        if not len(m.step_samples_ms):
            continue
        base = _base(run, m)
        for a, b in _PAIRS:
            if base == a:
                other = sibling(run, m, b)
                if other is not None:
                    out.append((m, other))
        t = _tensor_twin(run, m)
        if t is not None:
            out.append((m, t))
        twin = _keras3_twin(run, m)
        if twin is not None:
            out.append((m, twin))
    return out


def _keras3_twin(run: Run, m: ModeResult) -> ModeResult | None:
    """For a tf_keras (Keras 2) or TF1 mode, the Keras 3 / TF2 mode of the same base and input
    (from the modes' kinds, ``traceinsight.modekind``)."""
    kinds = _kinds(run)
    k = kinds.get(m.name)
    if k is None or k.flavour == "keras3":
        return None
    name = next((n for n, x in kinds.items() if x == k.same_but(flavour="keras3")), None)
    t = run.modes.get(name) if name is not None else None
    return t if t is not None and t.ok and len(t.step_samples_ms) else None


# The fix for a TF2 mode slower than its TF1 twin, by how the step is called (``modekind.Axes``'
# call): each names the call that removes that call's own per-step overhead.
_TF2_FIX_GRAPH = ("# TF2 pays per call what a TF1 Session ran as one graph: keep the call in a graph\n"
                  "step = tf.function(lambda x: model(x, training=False))\n"
                  "y = step(tf.convert_to_tensor(x))      # tensors, fixed shapes: no retracing")
_TF2_FIXES = {
    "predict": ("# predict() sets up a batch loop (data adapter, callbacks) on every call; for one\n"
                "# batch per call, call the model instead:\n"
                "y = model.predict_on_batch(x)          # or: y = model(x, training=False)\n"
                "# in a loop, one traced graph with tensors in is cheaper still:\n"
                "step = tf.function(lambda x: model(x, training=False))\n"
                "y = step(tf.convert_to_tensor(x))"),
    "predict_on_batch": _TF2_FIX_GRAPH,
    "call": _TF2_FIX_GRAPH,
    "train_on_batch": (
        "# train_on_batch pays Keras' per-call work (numpy conversion, logs) every step: one traced\n"
        "# train step with tensors in, or fit over many batches\n"
        "@tf.function\n"
        "def train_step(x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(y, model(x, training=True))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "    return loss\n"
        "train_step(tf.convert_to_tensor(x), tf.convert_to_tensor(y))\n"
        "# or: model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(n).prefetch(tf.data.AUTOTUNE))"),
    "fit": ("# fit on numpy arrays converts and slices them in Python: feed a tf.data pipeline, and run\n"
            "# several batches per graph call\n"
            "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size).prefetch(tf.data.AUTOTUNE)\n"
            "model.compile(optimizer, loss, steps_per_execution=32)\n"
            "model.fit(ds, epochs=epochs)"),
}


def tf2_fix(kind: ModeKind) -> str:
    """The tf1-vs-tf2 finding's fix for the TF2 mode of this kind, by its call."""
    axes = kind.axes()
    return _TF2_FIXES.get(axes.call if axes is not None else "", _TF2_FIX_GRAPH)


def rule_tf1_vs_tf2(run: Run) -> Iterable[Finding]:
    """A TF1 graph mode (tf_keras with eager disabled, run by a Session) against its TF2 twin:
    which is faster, by how much, and where the difference lies (the traced categories and op
    families) — the tf2_vs_tf1 question."""
    kinds = _kinds(run)
    for m in run.ok_modes():
        if kinds[m.name].flavour != "tf1" or not len(m.step_samples_ms):
            continue
        t = _keras3_twin(run, m)
        if t is None:
            continue
        c = compare_modes(run, t, m)   # TF2 against TF1: positive when TF2 is slower
        if not c.significant:
            continue   # rule_no_difference says so
        slow, fast = (t, m) if c.delta_ms > 0 else (m, t)
        sc = c if c.delta_ms > 0 else c.flipped()
        cause = (f" Where: {sc.sentence(label=f'{slow.name} − {fast.name}')}."
                 + _family_evidence(sc))
        tf2_slower = slow is t
        yield Finding(
            rule="tf1-vs-tf2",
            title=(f"{slow.name} (TF2) is {fmt_ratio(sc.ratio)}× slower than {fast.name} (TF1 graph)"
                   if tf2_slower else
                   f"{slow.name} (TF1 graph) is {fmt_ratio(sc.ratio)}× slower than {fast.name} (TF2)"),
            evidence=_vs(sc) + "." + cause,
            saving_ms=sc.delta_ms,
            saving_basis=f"measured: median step of {slow.name} minus {fast.name}, {sc.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(slow.name, fast.name),
            fix=(tf2_fix(t.kind) if tf2_slower else
                 "# the TF2 mode is faster here: move off tf.compat.v1 Sessions"))


def rule_no_difference(run: Run) -> Iterable[Finding]:
    """8. Pairs whose confidence intervals overlap: no measurable difference, not a ranking."""
    same = [compare_modes(run, a, b) for a, b in compared_pairs(run)]
    same = [c for c in same if np.isfinite(c.ratio) and not c.significant]
    if not same:
        return
    modes = tuple(dict.fromkeys(n for c in same for n in (c.a, c.b)))
    yield Finding(
        rule="no-difference",
        title="No measurable difference: " + "; ".join(f"{c.a} ≈ {c.b}" for c in same),
        evidence="; ".join(f"{c.a} {fmt_ms(c.a_ms)} vs {c.b} {fmt_ms(c.b_ms)} ms/step, ratio "
                           f"{c.ratio_text()}" + (" includes 1" if np.isfinite(c.ratio_lo)
                                                  and not c.note else "")
                           for c in same) + ".",
        saving_ms=None, saving_basis="the data cannot order these modes", modes=modes,
        fix="# Do not pick between these modes on speed: the difference is within noise.\n"
            "# Capture more steps to narrow the interval.")


def traced_disagreements(run: Run) -> list[Comparison]:
    """Compared pairs (and each mode against the fastest, of the same program) whose traced steps
    order the two modes the other way round from their untraced medians
    (``Comparison.traced_disagrees``), each as slower against faster: what the distortion finding
    and the report's summary line both name."""
    pairs = list(compared_pairs(run))
    if run.fastest is not None:
        pairs += [(m, run.modes[run.fastest]) for m in run.by_speed()
                  if m.name != run.fastest and run.same_program(m.name, run.fastest)]
    out, seen = [], set()
    for a, b in pairs:
        key = frozenset((a.name, b.name))
        if key in seen:
            continue
        seen.add(key)
        c = compare_modes(run, a, b)
        if c.traced_disagrees:
            out.append(c if c.delta_ms > 0 else compare_modes(run, b, a))
    return out


def rule_distortion(run: Run) -> Iterable[Finding]:
    """9. The profiler slowed the traced steps a lot, or the traced steps order two modes the
    other way round from the untraced ones: their category split is no evidence for that
    difference."""
    hits = []
    for m in run.ok_modes():
        t = m.timing
        d = t.distortion if t is not None else None
        if t is not None and t.traced_steps_s is not None and is_distorted(d):
            traced = float(np.median(t.traced_steps_s) * 1e3)
            hits.append((d, m.name, t.median_ms, traced))
    disagree = run.traced_disagreements()
    if not hits and not disagree:
        return
    hits.sort(key=lambda h: (-abs(h[0]), h[1]))
    evidence = ""
    if hits:
        evidence = "Traced vs untraced median step: " + "; ".join(
            f"{n} {fmt_ms(t)} vs {fmt_ms(u)} ms ({d * 100:+.0f} %)" for d, n, u, t in hits) + \
            (". Category times come from the traced steps and are off by about as much; "
             "the mode medians come from untraced steps.")
    if disagree:
        evidence += (" " if evidence else "") + "Traced and untraced steps disagree: " + "; ".join(
            f"{c.a} is slower untraced ({fmt_ms(c.a_ms)} vs {fmt_ms(c.b_ms)} ms) but not traced "
            f"({fmt_ms(c.traced_a_ms)} vs {fmt_ms(c.traced_b_ms)} ms)" for c in disagree) + \
            ": the category split does not explain these differences."
    if hits:
        worst = hits[0][0]
        title = (("The profiler slowed traced steps by up to " if worst > 0 else
                  "Traced steps differ from untraced ones by up to ") + _pct(abs(worst)))
    else:
        title = "Traced steps order " + ", ".join(f"{c.a} and {c.b}" for c in disagree[:2]) + \
            " the other way round from untraced ones"
    modes = [h[1] for h in hits] + [n for c in disagree for n in (c.a, c.b)]
    yield Finding(
        rule="profiler-distortion", title=title, evidence=evidence,
        saving_ms=None, saving_basis="not a speed-up: a caveat on the category split",
        modes=tuple(dict.fromkeys(modes)),
        fix="# Compare modes by their untraced medians (the mode table); read the category\n"
            "# split as proportions. Fewer tracer levels (no python tracer) distort less.")


def rule_host_not_recorded(run: Run) -> Iterable[Finding]:
    """10. The trace cannot split host time (host tracer level 0, or no TF Python-API events):
    say what it can tell (the device side) and how to capture so it can tell the rest."""
    hits = [m for m in run.ok_modes() if not m.host_events_recorded]
    if not hits:
        return
    parts = []
    for m in hits:
        part = f"{m.name}: {fmt_ms(m.median_ms)} ms/step"
        dev = m.table("devices")
        slowest = (np.flatnonzero(np.asarray(dev["slowest"], dtype=bool)) if not dev.empty
                   else np.zeros(0, dtype=np.int64))
        if len(slowest):
            d = dev.take(slowest[:1]).records()[0]
            part += (f"; on the slowest device ({d['device']}) kernels {fmt_ms(d['compute_ms'])} ms, "
                     f"copies {fmt_ms(d['h2d_ms'] + d['d2h_ms'] + d['d2d_ms'])} ms, idle "
                     f"{fmt_ms(d['idle_ms'])} ms")
        parts.append(part)
    yield Finding(
        rule="host-not-recorded",
        title="The trace holds no host events to split: Python, dispatch and input are unknown",
        evidence=("; ".join(parts) + ". The host trace holds no events of TF's Python API "
                  "(host_tracer_level 0, or a trace of device activity only), so the time the "
                  "device waits on the host cannot be attributed; the category columns say "
                  "'not recorded'."),
        saving_ms=None, saving_basis="not a speed-up: what this trace cannot tell",
        modes=tuple(m.name for m in hits),
        fix=("# capture the host side too: traceinsight capture model.py, or with XProf's client\n"
             "from xprof.convert import _pywrap_profiler_plugin as p\n"
             "p.trace('localhost:6009', logdir, '', True, 3000, 3,\n"
             "        {'host_tracer_level': 2, 'python_tracer_level': 1, 'device_tracer_level': 1})"))


# ---- Keras on JAX against the same Keras call on TensorFlow ------------------------------
# The finding that compares a Keras model on its JAX backend with the same model on TensorFlow.
#
# Same workload file, same data, two backends: ``jax:<mode>`` against the TF mode that runs the same
# Keras call (``predict_on_batch``, ``train_on_batch``, ``fit``; for training also the XLA-compiled
# ``train_on_batch-xla``, since Keras on JAX always compiles its steps with XLA). The finding fires
# only when the untraced medians differ measurably (the run's comparison), and explains the
# difference as the XLA-vs-function finding does: by op family (ops matched across the two backends'
# traces), by the host categories (dispatch, Python) of the traced steps, and by each side's
# first-step compile.

# a JAX mode's base -> the bases of the TF modes running the same Keras call, in order of preference
_TF_PEERS = {"predict_on_batch": ("predict_on_batch",),
             "train_on_batch": ("train_on_batch", "train_on_batch-xla"),
             "fit": ("fit",)}


def _peers(run: Run, m: ModeResult) -> list[ModeResult]:
    """The TF modes of the same Keras call, flavour and input as the JAX mode ``m`` (by kind)."""
    k = m.kind
    out = []
    for base in _TF_PEERS.get(k.base, ()):
        want = k.same_but(base=base, backend="tensorflow")
        out += [p for p in run.ok_modes() if p.kind == want and len(p.step_samples_ms)]
    return out


def _host_split(m: ModeResult) -> str:
    """op, dispatch and python as estimates within the mode's untraced step (``in_step``)."""
    parts = [(c, _est(m, c)) for c in ("op", "dispatch", "python")]
    return ", ".join(f"{c} ≈ {fmt_ms(v)}" for c, v in parts if _finite(v))


def rule_jax_backend(run: Run) -> Iterable[Finding]:
    for j in _modes_with_base(run, *_TF_PEERS):
        if j.kind.backend != "jax":
            continue
        for t in _peers(run, j):
            c = compare_modes(run, j, t)
            if not c.significant:
                continue
            slower = c.delta_ms > 0
            if slower != (c.ratio > 1):
                # the medians of all steps and the ratio's interval (paired rounds) point opposite
                # ways: no direction to explain
                continue
            fam = None if c.traced_disagrees else c.top_family(slower)
            fam = fam if _family_dominates(c, fam) else None
            jc, tc = _first_compile_ms(j), _first_compile_ms(t)
            evidence = _vs(c) + ", untraced."
            if not c.traced_disagrees:
                evidence += (f" By category (their share of each untraced step): {j.name} "
                             f"{_host_split(j)}; {t.name} {_host_split(t)} ms/step."
                             + _family_evidence(c, slower=slower))
            else:
                evidence += f" Caveat: {c.caveat()}."
            compile_bits = [f"{m.name} {fmt_ms(v)} ms" for m, v in ((j, jc), (t, tc))
                            if _finite(v) and v > 0]
            if compile_bits:
                evidence += " First-step compile: " + ", ".join(compile_bits) + "."
            faster, slow_m = (t, j) if slower else (j, t)
            yield Finding(
                rule="jax-backend-slower" if slower else "jax-backend-faster",
                title=(f"{j.name} (Keras on JAX) is {'slower' if slower else 'faster'} per step "
                       f"than {t.name} (TensorFlow)"
                       + (f", mostly in {fam.family}" if fam is not None else "")),
                evidence=evidence, saving_ms=abs(c.delta_ms),
                saving_basis=f"measured: median step of {slow_m.name} minus {faster.name}",
                saving_kind=SavingKind.MEASURED,
                modes=(slow_m.name, faster.name),
                fix=("import os; os.environ['KERAS_BACKEND'] = "
                     f"{'tensorflow' if slower else 'jax'!r}  # before `import keras`"))


# Every rule id a finding can carry (``Finding.rule``): the one list of them. The JSON report's
# schema lists the same ids (``schemas/report.schema.json``, the finding's ``rule``) so that a
# consumer can rely on them; tests/test_finding_rules.py checks that the schema and every
# ``rule=`` of this module agree with it.
# One mode holds markedly more memory than another mode of the same program when its peak is
# this many times the other's and at least this much more: a difference a user running close to
# the machine's memory would act on (a few MiB between two processes of TensorFlow is noise).
MEMORY_FACTOR = 1.5
MEMORY_MIN_BYTES = 64 * 2**20


def rule_memory(run: Run) -> Iterable[Finding]:
    """13. One mode's process held markedly more memory while it was timed untraced than another
    mode of the same program (``ModeResult.memory_figures``: the phase's own peak resident memory):
    the price of its speed, or a reason to pick another mode. Not a speed-up: info."""
    for group in run.program_groups:
        peaks = {}
        for name in group:
            f = run.modes[name].memory_figures()
            if f.rss_basis == "phase" and np.isfinite(f.peak_rss_bytes) and f.peak_rss_bytes > 0:
                peaks[name] = f
        if len(peaks) < 2:
            continue
        low = min(peaks, key=lambda n: (peaks[n].peak_rss_bytes, n))
        for name, f in sorted(peaks.items(), key=lambda kv: -kv[1].peak_rss_bytes):
            base = peaks[low]
            extra = f.peak_rss_bytes - base.peak_rss_bytes
            if name == low or f.peak_rss_bytes < MEMORY_FACTOR * base.peak_rss_bytes \
                    or extra < MEMORY_MIN_BYTES:
                continue
            mib = lambda b: f"{b / 2**20:.0f} MiB"   # noqa: E731
            evidence = (f"Peak resident memory while timed untraced: {name} {mib(f.peak_rss_bytes)}, "
                        f"{low} {mib(base.peak_rss_bytes)} ({f.peak_rss_bytes / base.peak_rss_bytes:.1f}×, "
                        f"+{mib(extra)}).")
            if np.isfinite(f.peak_in_use_bytes) and np.isfinite(base.peak_in_use_bytes):
                evidence += (f" TensorFlow's allocator held at most {mib(f.peak_in_use_bytes)} vs "
                             f"{mib(base.peak_in_use_bytes)} in a traced step"
                             + (" (so most of the difference is outside the allocator's tensors: "
                                "compiled code, caches, buffers of the runtime)."
                                if f.peak_in_use_bytes - base.peak_in_use_bytes < extra / 2 else "."))
            m = run.modes[name]
            if m.kind.input == "dataset":
                fix = ("# tf.data buffers whole batches: bound them\n"
                       "ds = ds.prefetch(2)            # not a large fixed buffer\n"
                       "opts = tf.data.Options(); opts.autotune.ram_budget = 2**30  # bytes\n"
                       "ds = ds.with_options(opts)")
            else:
                fix = (f"# {name} trades memory for its speed; where memory is short, run as {low}\n"
                       "# (its step time is in the mode table), or shrink the batch")
            yield Finding(
                rule="memory", title=f"{name} holds {f.peak_rss_bytes / base.peak_rss_bytes:.1f}× the "
                f"memory of {low} ({mib(f.peak_rss_bytes)} vs {mib(base.peak_rss_bytes)})",
                evidence=evidence, fix=fix, saving_ms=None,
                saving_basis="not a speed-up: memory", modes=(name, low))


RULE_IDS: tuple[str, ...] = (
    "eager-dispatch-bound", "eager-slower", "function-slower", "retracing", "numpy-inputs",
    "xla-slower", "xla-faster", "tiny-ops", "predict-overhead", "fit-overhead",
    "train-on-batch-overhead", "input-bound", "concentrated-cost", "tf1-vs-tf2",
    "jax-backend-slower", "jax-backend-faster", "no-difference", "profiler-distortion",
    "host-not-recorded", "memory")

RULES: tuple[Callable[[Run], Iterable[Finding]], ...] = (
    rule_eager_dispatch_bound, rule_function_slower, rule_retracing, rule_numpy_inputs, rule_xla,
    rule_tiny_ops, rule_predict, rule_fit_overhead, rule_input_bound, rule_concentrated,
    rule_tf1_vs_tf2, rule_jax_backend,
    rule_no_difference,
    rule_distortion, rule_host_not_recorded, rule_memory)


def _severity(f: Finding, run: Run) -> str:
    """The saving's share of the step: high from 25 %, medium from 5 %; a saving that no mode
    with the fix applied measured (an estimate, an upper bound) is at most medium."""
    if f.saving_ms is None or not np.isfinite(f.saving_ms):
        return "info"
    base = [run.modes[n].median_ms for n in f.modes[:1] if n in run.modes]
    ref = base[0] if base and np.isfinite(base[0]) and base[0] > 0 else None
    if ref is None:
        return "low"
    share = f.saving_ms / ref
    level = "high" if share >= 0.25 else "medium" if share >= 0.05 else "low"
    if level == "high" and f.saving_kind is not SavingKind.MEASURED:
        level = "medium"
    return level


def _overlapping(findings: list[Finding], run: Run) -> list[Finding]:
    """Findings whose savings come out of the same step (same first mode) overlap: a fix that
    removes dispatch also removes some of the tiny ops' and the conversions' cost. Each saving after
    the largest names the larger ones it overlaps (their savings do not add up); none is larger
    than the whole untraced step (the mode's median), and one that would be is capped there and
    says so. A saving is never cut to what the larger ones leave: each is what its own fix saves
    (vectorizing a loop saves most of a step that tf.function also shortens)."""
    out = []
    used: dict[str, list[str]] = {}
    for f in findings:
        own = f.saving_ms
        if own is None or not np.isfinite(own) or not f.modes:
            out.append(f)
            continue
        mode = f.modes[0]
        step = run.modes[mode].median_ms if mode in run.modes else float("nan")
        rules = used.get(mode, [])
        basis, saving = f.saving_basis, own
        if np.isfinite(step) and own > step:
            saving = step
            basis += f"; capped at the whole {fmt_ms(step)} ms step"
        if rules:
            basis += ("; overlaps " + ", ".join(rules) + f" on the same {mode} step: the savings "
                      "share time and do not add up")
        f = replace(f, saving_ms=saving, saving_basis=basis, overlaps=tuple(rules))
        used[mode] = rules + [f.rule]
        out.append(f)
    return out


def _consistent_advice(findings: list[Finding]) -> list[Finding]:
    """No finding's fix contradicts another's: where XLA was measured slower (an ``xla-slower``
    finding advises ``jit_compile=False``), the other fixes lose their ``jit_compile=True`` lines
    and say why."""
    if not any(f.rule == "xla-slower" for f in findings):
        return findings
    out = []
    for f in findings:
        lines = f.fix.splitlines()
        kept = [ln for ln in lines if "jit_compile=True" not in ln]
        if f.rule != "xla-slower" and len(kept) < len(lines):
            kept.append("# (XLA left out: it was measured slower on this run)")
            f = replace(f, fix="\n".join(kept))
        out.append(f)
    return out


def _rank_key(f: Finding):
    return (f.saving_ms is None, -(f.saving_ms or 0.0), SEVERITIES.index(f.severity), f.rule,
            f.modes, f.title)


def find(run: Run) -> list[Finding]:
    """All findings of a run, ranked: the largest estimated saving first, informational last.
    Pure: called once per run, by ``traceinsight.derive`` while the run's figures are made."""
    out = [f for rule in RULES for f in rule(run)]
    # overlaps are judged largest saving first, then severity from the capped savings
    out.sort(key=lambda f: (f.saving_ms is None, -(f.saving_ms or 0.0), f.rule, f.modes, f.title))
    out = [replace(f, severity=_severity(f, run)) for f in _overlapping(_consistent_advice(out), run)]
    out.sort(key=_rank_key)
    return [replace(f, rank=i + 1) for i, f in enumerate(out)]

RULE_IDS, RULES = RULE_IDS + (LAYER_RULE_ID,), RULES + (rule_layer_explains,)   # layer_findings.py
