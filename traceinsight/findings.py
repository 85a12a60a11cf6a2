"""Findings: rules that read a Run's analysis results and say what to change, ranked by saving.

Every rule is a pure function of the Run. A rule fires only when the figures it quotes are in the
run (never on a mode name alone), and its evidence quotes those figures with the mode names they
come from. ``saving_ms`` is an estimate in ms/step; ``saving_kind`` says how it was found
(``SavingKind.MEASURED`` against the mode of the same run with the fix applied, else an
``ESTIMATE`` from the traced categories or an ``UPPER_BOUND``, which no mode with the fix
checked), and ``saving_basis`` says it in words. Findings without a saving (no measurable
difference, profiler distortion) are informational and rank last.

Medians of whole steps come from the untraced timing (``ModeResult.median_ms``), the category split
from the host-traced steps (``ModeResult.category_medians``); evidence says which one it quotes.
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
    """Sum of the mean ms/step of some categories over the traced steady steps (nan when the mode
    has no breakdown): what they cost the run per step, a stall in a few steps included, so a
    share of ``_traced_total`` is a share of the run's time (as XProf's input-bound share is)."""
    c = m.category_means()
    vals = [float(c.get(k, np.nan)) for k in cats]
    return float(np.nansum(vals)) if any(np.isfinite(v) for v in vals) else float("nan")


def _traced_total(m: ModeResult) -> float:
    """The traced steady steps' mean wall time: the sum of every category's ``_cat``."""
    return m.traced_mean_ms


def untraced(m: ModeResult, traced_ms: float) -> tuple[float, str]:
    """A time read from the host-traced steps, scaled to untraced steps by the mode's measured
    profiler distortion (traced median / untraced median), and a note saying so."""
    d = m.timing.distortion if m.timing is not None else None
    if d is None or not np.isfinite(d) or d <= -1 or abs(d) < 0.01:
        return traced_ms, ""
    return traced_ms / (1.0 + d), f", scaled by the profiler distortion ({d * 100:+.0f} %)"


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

    "eager-dispatch-bound" when python + dispatch are >= 30 % of the eager step (the saving is their
    drop against the function mode, or unknown without one); "eager-slower" when the function mode
    is measurably faster for other reasons (the saving is the measured step difference)."""
    for e in _modes_with_base(run, *_EAGER_BASES):
        base = _base(run, e)
        f = sibling(run, e, "function" if base == "eager" else "train_on_batch")
        pd_e, total = _cat(e, "python", "dispatch"), _traced_total(e)
        bound = _finite(pd_e, total) and total > 0 and pd_e / total >= DISPATCH_BOUND_SHARE
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
        split = (f"In {e.name}, python {fmt_ms(_cat(e, 'python'))} + dispatch "
                 f"{fmt_ms(_cat(e, 'dispatch'))} = {fmt_ms(pd_e)} ms of a {fmt_ms(total)} ms "
                 f"mean traced step ({_pct(pd_e / total)}).") if _finite(pd_e, total) and total > 0 else ""
        if bound:
            saving, basis = None, "no graph-function mode in this run to measure against"
            kind: SavingKind | None = None
            modes: tuple[str, ...] = (e.name,)
            evidence = split
            if c is not None and f is not None:
                pd_f = _cat(f, "python", "dispatch")
                se, ne = untraced(e, pd_e)
                sf, _ = untraced(f, pd_f)
                saving = max(0.0, se - sf)
                basis = f"measured: python + dispatch of {e.name} minus {f.name}{ne}"
                kind = SavingKind.MEASURED
                if saving > c.delta_ms:
                    saving = c.delta_ms
                    basis += "; capped at the measured step difference"
                evidence += f" {f.name} spends {fmt_ms(pd_f)} ms there; {_vs(c)}."
                modes = (e.name, f.name)
            yield Finding(
                rule="eager-dispatch-bound",
                title=f"{e.name} is Python/dispatch-bound: compile the step with tf.function",
                evidence=evidence, saving_ms=saving, saving_basis=basis, saving_kind=kind,
                modes=modes, fix=fix)
        elif c is not None and f is not None:  # (not bound: c is set, see above)
            yield Finding(
                rule="eager-slower",
                title=(f"{e.name} is {fmt_ratio(c.ratio)}× slower than {f.name}: compile the step "
                       "with tf.function"),
                evidence=_vs_by_category(c) + " " + split,
                saving_ms=c.delta_ms,
                saving_basis=f"measured: median step of {e.name} minus {f.name}, {c.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(e.name, f.name), fix=fix)


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
            lost = (tracing + compile_) * (traced - 1) / traced
            cause, fix = _retrace_cause(recorded_cause, str(_row_get(row, "cause_detail")),
                                        calls, traced)
            recorded = f" Recorded: {row['changes']}." if row["changes"] else ""
            per_call = lost / calls if calls else None
            evidence = (f"In {m.name}, {function} was traced {traced} times in {calls} calls: "
                        f"{fmt_ms(tracing)} ms tracing"
                        + (f" + {fmt_ms(compile_)} ms XLA compile" if compile_ else "")
                        + f"; the {traced - 1} retraces cost ≈ {fmt_ms(lost)} ms"
                        + (f" ({fmt_ms(per_call)} ms per call)" if per_call is not None else "")
                        + f". Cause: {cause}." + recorded)
            yield Finding(
                rule="retracing", title=f"{function} retraces {traced - 1} times in {m.name}",
                evidence=evidence, fix=fix, saving_ms=per_call,
                saving_basis="measured: time of retraces beyond the first, per call",
                saving_kind=SavingKind.MEASURED if per_call is not None else None,
                modes=(m.name,))


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


def _conversion_hint(m: ModeResult) -> str:
    n = _conversions(m)
    text = (f" {n:.0f} conversion{'s' if round(n) != 1 else ''} per step (`_EagerConst` runs)."
            if n > 0 else "")
    names = []
    hotspots, other = m.table("hotspots"), m.table("other")
    if not hotspots.empty:
        names += [str(f) for f in hotspots["function"] if "convert_to_tensor" in str(f)]
    if not other.empty and "name" in other:
        names += [str(n) for n in other["name"] if any(k in str(n) for k in
                                                         ("_EagerConst", "tf.constant", "convert_to_tensor"))]
    names = list(dict.fromkeys(names))[:3]
    return text + (f" Conversion events seen: {', '.join(names)}." if names else "")


def _slicing(m: ModeResult) -> float:
    """StridedSlice calls per step when the conversions are its Python indices: ``w[i]`` with a
    Python int converts begin, end and strides (3 ``_EagerConst`` runs) for each slice."""
    n = _main_calls(m, "StridedSlice")
    return n if n >= 1 and _conversions(m) >= 2 * n else 0.0


def rule_numpy_inputs(run: Run) -> Iterable[Finding]:
    """3. Values (numpy arrays, Python numbers) converted to tensors every step: one finding for the
    run, the mode with the most input time first. A conversion of something that is a tensor
    already is not input (the attribution makes it dispatch), so input time here is conversion
    work (``_EagerConst`` runs, counted when the ops table has them); a step waiting on tf.data is
    rule 7's, and input that is only host-to-device copies is not a conversion."""
    hits = []
    for m in run.ok_modes():
        if m.kind.input != "numpy" or _waits_on_tf_data(run, m):
            continue  # +tensor modes already pass tensors; tf.data waits: rule 7
        if m.kind.backend == "jax":
            continue  # Keras on JAX puts arrays on the device (DevicePut): the TF fix does not apply
        ops = m.table("ops")
        if _conversions(m) <= 0 and not ops.empty and bool(np.any(ops["type"] == "memcpy")):
            continue  # no conversion ran: the input time is host-to-device copies
        inp, total = _cat(m, "input"), _traced_total(m)
        if not _finite(inp, total) or total <= 0 or inp < INPUT_MIN_MS or inp / total < INPUT_SHARE:
            continue
        t = _tensor_twin(run, m)
        measured = None
        if t is not None:
            c = compare_modes(run, m, t)
            if not _slower(c):
                continue  # passing tensors made no measurable difference
            measured = (c.delta_ms, t.name, c)
        hits.append((measured[0] if measured else inp, m, inp, total, measured))
    if not hits:
        return
    hits.sort(key=lambda h: (h[4] is None, -h[0]))   # measured against +tensor first
    saving, m, inp, total, measured = hits[0]
    keras_step = _runs_keras_step(m)
    # inside Keras' own step functions the slices are Keras' code, not the user's: no w[i] advice
    slices = 0.0 if keras_step else _slicing(m)
    what = ("converting Python values to tensors, copies" if slices else
            "converting arrays and Python values to tensors, copies")
    evidence = (f"In {m.name}, input ({what}) takes "
                f"{fmt_ms(inp)} ms of a {fmt_ms(total)} ms mean traced step ({_pct(inp / total)})."
                + _conversion_hint(m))
    if slices:
        evidence += (f" The step slices tensors {slices:.0f} times per step (StridedSlice): indexing "
                     "with a Python int (w[i]) converts the slice's begin, end and strides to "
                     "tensors on every call, whatever the inputs are.")
    modes = [m.name]
    if measured:
        evidence += f" Passing tensors instead: {_vs(measured[2])}."
        modes.append(measured[1])
        basis = f"measured: median step of {m.name} minus {measured[1]}, {measured[2].delta_text()}"
        kind = SavingKind.MEASURED
    else:
        saving, note = untraced(m, inp)
        basis = (f"estimate: {m.name}'s input time{note}; no mode with tensor inputs in this run "
                 "to measure it against (passing tensors can save more than the conversions, or "
                 "less)")
        kind = SavingKind.ESTIMATE
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(
            f"{h[1].name} {fmt_ms(h[2])} ms ({_pct(h[2] / h[3])}"
            + (f"; with tensors {fmt_ms(h[4][0])} ms/step faster" if h[4] else "") + ")"
            for h in hits[1:]) + "."
        modes += [h[1].name for h in hits[1:]]
    if keras_step:
        evidence += (" These conversions run inside Keras' step (the numpy batch and Keras' own "
                     "Python values); passing the batch as tensors removes the batch's part.")
    if slices:
        title = f"{m.name} converts slice indices to tensors every step"
        fix = ("ws = tf.unstack(w)   # once, outside the step: ws[i] is a Python list lookup\n"
               "# or index inside tf.function, where the slice's constants are built once")
    elif keras_step:
        title = f"{m.name} converts its inputs to tensors every step"
        fix = ("x, y = tf.convert_to_tensor(x_np), tf.convert_to_tensor(y_np)  # once, outside the loop\n"
               "model.train_on_batch(x, y)   # or a tf.data pipeline: model.fit(ds)")
    else:
        title = f"{m.name} converts its inputs to tensors every step"
        fix = ("x = tf.convert_to_tensor(x_np)   # numpy inputs: convert once, outside the loop\n"
               "ws = tf.unstack(w)               # Python ints as indices (w[i]) convert every call\n"
               "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(tf.data.AUTOTUNE)")
    yield Finding(
        rule="numpy-inputs", title=title,
        evidence=evidence, saving_ms=saving, saving_basis=basis, saving_kind=kind,
        modes=tuple(modes), fix=fix)


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
    sides = f"{c.a} {fmt_ms(a_ms)} vs {c.b} {fmt_ms(b_ms)} ms/step of kernel time"
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
    out = f"; op time {fmt_ms(_cat(x, 'op'))} vs {fmt_ms(_cat(f, 'op'))} ms/step (traced steps)."
    return out + (f" Caveat: {c.caveat()}." if c.caveat() else "")


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
        if c.delta_ms > 0:
            evidence = (_vs(c) + _op_evidence(c, x, f)
                        + ("" if c.traced_disagrees else _family_evidence(c, slower=True))
                        + (f" Its {fmt_ms(compile_ms)} ms compile never pays back, since every "
                           f"step is slower." if _finite(compile_ms) and compile_ms > 0 else ""))
            fam = None if c.traced_disagrees else c.top_family(True)
            fam = fam if _family_dominates(c, fam) else None
            yield Finding(
                rule="xla-slower",
                title=(f"{x.name} (XLA) is slower per step than {f.name} on this machine"
                       + (f", mostly in {fam.family}" if fam is not None else "")),
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
                        + ("" if c.traced_disagrees else _family_evidence(c, slower=False))
                        + (f" Its {fmt_ms(compile_ms)} ms compile is paid back after {steps} steps."
                           if steps is not None else ""))
            yield Finding(
                rule="xla-faster",
                title=f"{x.name} (XLA) is faster per step than {f.name}: use jit_compile",
                evidence=evidence, saving_ms=gain,
                saving_basis=f"measured: median step of {f.name} minus {x.name}, {c.flipped().delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(f.name, x.name),   # the step that gets faster first
                fix=("step = tf.function(step_fn, jit_compile=True)\n"
                     "# Keras: model.compile(..., jit_compile=True)"))


def _op_call_stats(m: ModeResult) -> tuple[float, float]:
    """(op calls per step, median ms of one op call weighted by calls)."""
    ops = m.table("ops")
    if ops.empty or "calls_per_step" not in ops:
        return 0.0, float("nan")
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
        overhead_e = _cat(e, "python", "dispatch")
        why = []
        if _finite(overhead_e) and n_e:
            why.append(f"the eager step issues {n_e:.0f} op call(s) per step with "
                       f"{fmt_ms(overhead_e)} ms of Python + dispatch: little for tf.function to "
                       "remove")
        fam = None if c.traced_disagrees else c.top_family(True)
        fam = fam if _family_dominates(c, fam) else None
        if fam is not None:
            why.append(f"{fam.family} kernels take {fmt_ms(fam.a_ms)} ms/step in "
                       f"{f.name} against {fmt_ms(fam.b_ms)} in {e.name}: the same work "
                       "runs slower inside the graph (another kernel or fewer threads)")
        call = _cat(f, "dispatch")
        if _finite(call) and call >= 0.005 and not c.traced_disagrees:
            why.append(f"the function call machinery costs {fmt_ms(call)} ms/step (dispatch)")
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
            fix=("# a step of a few large ops gains nothing from tf.function: run it eagerly,\n"
                 "# or let XLA fuse it (compare the xla mode):\n"
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
    not a graph-mode While loop)."""
    hits = []
    for m in run.ok_modes():
        if not m.host_events_recorded:
            continue  # the host's op calls are not all in the trace: no per-call claim
        if _runs_keras_step(m) or _graph_while_loop(m):
            continue
        n, med = _op_call_stats(m)
        if n >= TINY_OPS_PER_STEP and _finite(med) and med <= TINY_OP_MEDIAN_MS:
            hits.append((n, med, m))
    if not hits:
        return
    hits.sort(key=lambda h: (-h[0], h[2].name))
    n, med, m = hits[0]
    overhead = _cat(m, "dispatch")
    evidence = (f"{m.name} runs {n:.0f} op calls per step with a median of {med * 1e3:.1f} µs per "
                f"call; per-op overhead (dispatch) is {fmt_ms(overhead)} ms/step.")
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(f"{h[2].name} {h[0]:.0f} calls, {h[1] * 1e3:.1f} µs"
                                          for h in hits[1:]) + "."
    saving, note = untraced(m, overhead) if _finite(overhead) and overhead > 0 else (None, "")
    yield Finding(
        rule="tiny-ops", title=f"Many tiny ops per step in {m.name}: vectorize",
        evidence=evidence, saving_ms=saving,
        saving_basis=("estimate: the dispatch time, which grows with the number of op calls"
                      + note),
        saving_kind=SavingKind.ESTIMATE if saving is not None else None,
        modes=tuple(h[2].name for h in hits),
        fix=("# fewer, larger ops: one batched op instead of a Python loop of small ones\n"
             "y = tf.einsum('bij,bjk->bik', a, b)      # not [a[i] @ b[i] for i in range(n)]\n"
             "z = tf.vectorized_map(fn, xs)            # not [fn(x) for x in xs]\n"
             + ("step = tf.function(step_fn)              # no per-op Python dispatch in eager"
                if _base(run, m) in _EAGER_BASES else
                "step = tf.function(step_fn, jit_compile=True)  # XLA fuses small graph ops")))


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
    tracing = _cat(m, "tracing")
    out = (f" Every call also traces: {row['changes']}; tracing {fmt_ms(tracing)} ms/step "
           "(traced steps), while its predict function is traced once.")
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
                tracing = _cat(p, "tracing")
                saving, note = untraced(p, tracing)
                yield Finding(
                    rule="predict-overhead",
                    title=f"{p.name}() traces new graphs on every call",
                    evidence=builds.strip(), saving_ms=saving,
                    saving_basis=f"upper bound: the mode's tracing time{note}",
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
            modes=(p.name,) + tuple(c.b for c in cs), fix=fix)


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
    return f"{_vs(c)}. By category (traced steps): {c.sentence(traced_label=False)}."


def rule_input_bound(run: Run) -> Iterable[Finding]:
    """7b. Steps that wait on tf.data, in any mode (a function workload iterating a dataset as much
    as fit on one): the wait no other compute of the step overlaps is input."""
    for m in run.ok_modes():
        if not _waits_on_tf_data(run, m):
            continue
        inp, total = _cat(m, "input"), _traced_total(m)
        if not _finite(inp, total) or total <= 0 or inp < INPUT_MIN_MS or inp / total < INPUT_BOUND_SHARE:
            continue
        stage_text, stage_fix_line = _stage_evidence(m)
        yield Finding(
            rule="input-bound", title=f"{m.name} waits on its input pipeline",
            evidence=(f"In {m.name}, input (waiting on tf.data while nothing else of the step "
                      f"computes, copies) takes {fmt_ms(inp)} ms of a {fmt_ms(total)} ms mean traced "
                      f"step ({_pct(inp / total)}).") + _stalls_text(run, m, "input") + stage_text,
            saving_ms=untraced(m, inp)[0],
            saving_basis="upper bound: all of the mode's input time" + untraced(m, inp)[1],
            saving_kind=SavingKind.UPPER_BOUND,
            modes=(m.name,),
            fix=(stage_fix_line + "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)   # parallel map\n"
                 "ds = ds.cache()                                            # when it fits in memory\n"
                 "ds = ds.batch(32).prefetch(tf.data.AUTOTUNE)               # overlap with the step"))


def _stage_evidence(m: ModeResult) -> tuple[str, str]:
    """The tf.data stage whose own work costs most (``analysis.tfdata``), in words, and the fix
    line for its kind ("" when the trace has no stage events)."""
    from traceinsight.analysis.tfdata import costliest_work_stage, stage_fix

    best = costliest_work_stage(m.table("stages"))
    if best is None:
        return "", ""
    text = (f" By tf.data stage, {best['stage']} costs most: {fmt_ms(best['self_ms'])} ms of its "
            f"own work over {best['count']} calls in the trace ({_pct(best['share'])} of the "
            "pipeline's time; a Prefetch stage's time is the step waiting on it).")
    fix = stage_fix(str(best["kind"]))
    return text, (f"# the costliest stage: {best['kind']}\n{fix}\n" if fix else "")


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
                saving_ms=untraced(m, saving)[0],
                saving_basis=("estimate: the spikes' time above the typical step, per step"
                              + untraced(m, saving)[1]),
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
                           f"{c.ratio_text()}" + (f": {c.note}" if c.note and np.isfinite(c.ratio_lo)
                                                  else " includes 1" if np.isfinite(c.ratio_lo) else "")
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
    parts = [(c, _cat(m, c)) for c in ("op", "dispatch", "python")]
    return ", ".join(f"{c} {fmt_ms(v)}" for c, v in parts if _finite(v))


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
                evidence += (f" Traced steps: {j.name} {_host_split(j)}; {t.name} {_host_split(t)} "
                             "ms/step." + _family_evidence(c, slower=slower))
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
RULE_IDS: tuple[str, ...] = (
    "eager-dispatch-bound", "eager-slower", "function-slower", "retracing", "numpy-inputs",
    "xla-slower", "xla-faster", "tiny-ops", "predict-overhead", "fit-overhead",
    "train-on-batch-overhead", "input-bound", "concentrated-cost", "tf1-vs-tf2",
    "jax-backend-slower", "jax-backend-faster", "no-difference", "profiler-distortion",
    "host-not-recorded")

RULES: tuple[Callable[[Run], Iterable[Finding]], ...] = (
    rule_eager_dispatch_bound, rule_function_slower, rule_retracing, rule_numpy_inputs, rule_xla,
    rule_tiny_ops, rule_predict, rule_fit_overhead, rule_input_bound, rule_concentrated,
    rule_tf1_vs_tf2, rule_jax_backend,
    rule_no_difference,
    rule_distortion, rule_host_not_recorded)


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
    the largest names the larger ones it overlaps, and is capped so that together they never exceed
    the step (the mode's median)."""
    out = []
    used: dict[str, tuple[float, list[str]]] = {}
    for f in findings:
        own = f.saving_ms
        if own is None or not np.isfinite(own) or not f.modes:
            out.append(f)
            continue
        mode = f.modes[0]
        step = run.modes[mode].median_ms if mode in run.modes else float("nan")
        total, rules = used.get(mode, (0.0, []))
        if rules:
            basis = f.saving_basis + "; overlaps " + ", ".join(rules) + f" on the same {mode} step"
            saving = own
            if np.isfinite(step) and total + saving > step:
                saving = max(0.0, step - total)
                basis += (f"; capped at the {fmt_ms(saving)} ms left of the {fmt_ms(step)} ms step "
                          "after the larger ones")
            f = replace(f, saving_ms=saving, saving_basis=basis, overlaps=tuple(rules))
        elif np.isfinite(step) and own > step:
            f = replace(f, saving_ms=step, saving_basis=f.saving_basis + f"; capped at the "
                        f"{fmt_ms(step)} ms step")
        used[mode] = (total + (f.saving_ms or 0.0), rules + [f.rule])
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
