"""Input findings: the user's numpy inputs converted to tensors every step (or slice specs), and
steps that wait on a tf.data pipeline.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from traceinsight import present
from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import frames as fr
from traceinsight.findings import pairing
from traceinsight.modekind import PREDICT, PREDICT_ON_BATCH, TRAIN_ON_BATCH
from traceinsight.model import ModeResult
from traceinsight.runview import RunView

INPUT_SHARE = 0.05              # input conversion >= 5 % of a step ...
INPUT_MIN_MS = 0.05             # ... and at least 50 µs
# tf.data waits >= 5 % of the traced time: XProf's overview calls a program "moderately
# input-bound" from 5 % of the step time waiting for input (its share of summed step time, as here)
INPUT_BOUND_SHARE = 0.05


def _slice_saving(m: ModeResult, slicers: list[dict], others: list[dict]) -> tuple[float, str]:
    """The estimated saving of slicing without Python values in the user's frames that slice (and
    of passing tensors for the user's other conversions): of the cost of the ops each such frame
    issues (``frames.issued_cost``), the share its slices and their specs' conversions are of its op
    calls (the fix removes both); the other conversions at their share of the input time."""
    parts, words = [], []
    for r in slicers:
        calls = float(r["op_calls_per_step"])
        k = float(r["slices_per_step"]) + float(r["conversions_per_step"])
        share = min(k / calls, 1.0) if calls > 0 else 0.0
        parts.append(fr.issued_cost(m, [r]) * share)
        words.append(f"{k:.0f} of the {calls:.0f} op calls {fr.where(r)} issues")
    if others:
        sh = fr.shares(m.table("hotspots").records(), others)["input"]
        parts.append(ev.in_step(m, ev.cat(m, "input") * sh))
    saving = math.fsum(v for v in parts if ev.finite(v))
    return saving, ("estimate: the slices and their specs' conversions, " + "; ".join(words)
                    + ", at the cost of those ops (python, dispatch and conversion: their shares "
                    f"of the python pass applied to the category split), {ev.ESTIMATE_NOTE}"
                    + ("; your other inputs' conversions at their share of the input time"
                       if others else "") + "; no mode of this run slices without them")


def rule_numpy_inputs(run: RunView) -> Iterable[Finding]:
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
        if m.kind.input != "numpy" or (fr.waits_on_tf_data(run, m) and not _keras_wraps_each_call(m)):
            continue  # +tensor modes already pass tensors; a pipeline's waits: rule 7
        if m.kind.backend == "jax":
            continue  # Keras on JAX puts arrays on the device (DevicePut): the TF fix does not apply
        ops = m.table("ops")
        if fr.conversions(m) <= 0 and not ops.empty and bool(np.any(ops["type"] == "memcpy")):
            continue  # no conversion ran: the input time is host-to-device copies
        share = ev.share(m, "input")
        if not ev.finite(share) or ev.cat(m, "input") < INPUT_MIN_MS or share < INPUT_SHARE:
            continue
        issuers = fr.issuers(m)
        conv = [r for r in issuers or [] if float(r["conversions_per_step"]) > 0]
        users = [r for r in conv if fr.is_users_input(r)]
        t = pairing.tensor_twin(run, m)
        c = pairing.compare_modes(run, m, t) if t is not None else None
        if c is not None and not ev.slower(c):
            continue  # passing tensors made no measurable difference
        if issuers is not None and not users:
            continue  # every conversion is of Keras' own values: passing tensors removes none
        if c is not None and t is not None:
            saving: float | None = c.delta_ms
            kind: SavingKind | None = SavingKind.MEASURED
            basis = f"measured: median step of {m.name} minus {t.name}, {c.delta_text()}"
        elif issuers is not None:
            sh = fr.shares(m.table("hotspots").records(), users)["input"]
            saving = ev.in_step(m, ev.cat(m, "input") * sh)
            kind = SavingKind.ESTIMATE
            basis = (f"estimate: the conversion time of your inputs ({ev.pct(sh)} of {m.name}'s "
                     f"conversion time in the python pass), {ev.ESTIMATE_NOTE}; no mode with tensor "
                     "inputs in this run to measure it against")
        else:
            saving = ev.est(m, "input")
            kind = SavingKind.UPPER_BOUND
            basis = (f"upper bound: all of {m.name}'s input time, {ev.ESTIMATE_NOTE} (no python pass "
                     "to tell your inputs' conversions from the library's own); no mode with "
                     "tensor inputs in this run to measure it against")
        hits.append((saving, m, c, t, conv, users, kind, basis))
    if not hits:
        return
    hits.sort(key=lambda h: (h[2] is None, -(h[0] if h[0] is not None and np.isfinite(h[0]) else 0.0)))
    saving, m, c, t, conv, users, kind, basis = hits[0]
    keras_step = fr.runs_keras_step(m)
    n_all = math.fsum(float(r["conversions_per_step"]) for r in conv) if conv else fr.conversions(m)
    evidence = f"In {m.name}, {ev.est_text(m, 'input (converting values to tensors, copies)', 'input')}."
    if conv:
        n_user = math.fsum(float(r["conversions_per_step"]) for r in users)
        evidence += (f" {n_all:.0f} conversion{'s' if round(n_all) != 1 else ''} per step "
                     f"(`_EagerConst` runs); {n_user:.3g} yours ({fr.conversion_words(users)})")
        others = [r for r in conv if r not in users]
        if others:
            n_other = math.fsum(float(r["conversions_per_step"]) for r in others)
            evidence += (f"; the other {n_other:.3g} are "
                         + ("Keras' own values " if all(r["group"] == "keras" for r in others)
                            else "the library's own values ")
                         + f"({fr.conversion_words(others)}), converted whatever you pass")
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
    loop_slicer = next((r for r in slicers if float(r["slices_per_step"]) >= fr.LOOP_SLICES), None)
    if fr.issuers(m) is None and not keras_step and fr.slicing(m) >= fr.LOOP_SLICES \
            and run.manifest.get("workload", {}).get("kind") != "keras":
        # no python pass: slices whose every one converts its spec, in a step no Keras code runs
        loop_slicer = {"function": "your step", "file": "", "line": 0, "slices_per_step": fr.slicing(m)}
    if slicers and kind is SavingKind.ESTIMATE:
        saving, basis = _slice_saving(m, slicers, [u for u in users if u not in slicers])
    modes = [m.name] + ([t.name] if t is not None and c is not None else [])
    if c is not None:
        evidence += f" Passing tensors instead: {ev.vs(c)}."
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(
            f"{h[1].name} " + (f"with tensors {ev.fmt_ms(h[2].delta_ms)} ms/step faster (measured)"
                               if h[2] is not None else
                               f"≈ {ev.fmt_ms(h[0])} ms/step ({h[6].value if h[6] else ''})" if h[0] is not None
                               else "(no estimate)")
            for h in hits[1:]) + "."
        modes += [h[1].name for h in hits[1:]]
    if loop_slicer is not None:
        where = fr.where(loop_slicer) if loop_slicer["file"] else loop_slicer["function"]
        evidence += (f" {where} slices tensors {float(loop_slicer['slices_per_step']):.0f} times "
                     "per step (StridedSlice) with Python ints (w[i]): each slice converts its "
                     "begin, end and strides to tensors on every call.")
        title = f"{m.name} converts slice indices to tensors every step"
        fix = (f"# in your code: {where}\n" if loop_slicer["file"] else "") + \
            ("ws = tf.unstack(w)   # once, outside the step: ws[i] is a Python list lookup\n"
             "# or index inside tf.function, where the slice's constants are built once")
    elif slicers:
        r = slicers[0]
        evidence += (f" {fr.where(r)} slices with Python values {float(r['slices_per_step']):.3g} "
                     "time(s) per step (e.g. q[:, None, :]): each slice converts its spec to "
                     "tensors on every call.")
        only_slices = all(x in slicers for x in users)
        title = (f"{m.name} converts slice specs to tensors every step" if only_slices else
                 f"{m.name} converts its inputs and slice specs to tensors every step")
        fix = (f"# in your code: {fr.where(r)}\n"
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
        fix = fr.at_user_line(m, "x = tf.convert_to_tensor(x_np)   # numpy inputs: convert once, "
                            "outside the loop\n"
                            "# or feed the batches from a tf.data pipeline:\n"
                            "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)"
                            ".prefetch(tf.data.AUTOTUNE)")
    yield Finding(
        rule="numpy-inputs", title=title,
        evidence=evidence, saving_ms=saving if saving is None or np.isfinite(saving) else None,
        saving_basis=basis, saving_kind=kind, modes=tuple(modes), fix=fix)


def rule_input_bound(run: RunView) -> Iterable[Finding]:
    """7b. Steps that wait on tf.data, in any mode (a function workload iterating a dataset as much
    as fit on one): the wait no other compute of the step overlaps is input. One finding per mode,
    about its pipeline as configured: the costliest stage's fix for that stage as it is (a map
    already parallel is not told to run in parallel), and a prefetch only where the pipeline has
    none."""
    for m in run.ok_modes():
        if not fr.waits_on_tf_data(run, m) or _keras_wraps_each_call(m):
            continue
        share = ev.share(m, "input")
        if not ev.finite(share) or ev.cat(m, "input") < INPUT_MIN_MS or share < INPUT_BOUND_SHARE:
            continue
        stage_text, fix_lines = _stage_evidence(m)
        saving = ev.est(m, "input")
        yield Finding(
            rule="input-bound", title=f"{m.name} waits on its input pipeline",
            evidence=(f"In {m.name}, "
                      + ev.est_text(m, "input (waiting on tf.data while nothing else of the step "
                                  "computes, copies)", "input") + ".")
            + ev.stalls_text(run, m, "input") + stage_text,
            saving_ms=saving if ev.finite(saving) else None,
            saving_basis=f"upper bound: all of the mode's input time, {ev.ESTIMATE_NOTE}",
            saving_kind=SavingKind.UPPER_BOUND if ev.finite(saving) else None,
            modes=(m.name,),
            fix=fix_lines or ("ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)   # parallel map\n"
                              "ds = ds.cache()                                            # when it fits in memory\n"
                              "ds = ds.batch(32).prefetch(tf.data.AUTOTUNE)               # overlap with the step"))


def _keras_wraps_each_call(m: ModeResult) -> bool:
    """A Keras call of one batch given as arrays (``train_on_batch``, ``predict_on_batch``,
    ``predict``): Keras 2 wraps each call's arrays in a one-batch tf.data dataset of its own, so
    the step "waits on tf.data" for that wrapping of the user's arrays, not on a pipeline the user
    wrote or can tune. Its cost is the call's overhead (the fit / train_on_batch and predict
    findings) and the arrays' conversion (numpy-inputs), not an input-bound pipeline."""
    return m.kind.call in (TRAIN_ON_BATCH, PREDICT_ON_BATCH, PREDICT) and m.kind.input != "dataset"


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
    parallel = is_parallel(kind, int(best.get("parallel_calls") or 0), bool(best.get("autotuned")))
    prefetch = has_prefetch(stages)
    text = (f" By tf.data stage, {present.safe(str(best['stage']))} costs most: "
            f"{ev.fmt_ms(best['self_ms'])} ms of its own work over {best['count']} calls in the trace "
            f"({ev.pct(best['share'])} of the pipeline's time; a Prefetch stage's time is the step "
            "waiting on it). As configured: "
            + ("this stage runs in parallel" if parallel else "this stage runs serially")
            + _parallelism_text(best)
            + (", the pipeline prefetches." if prefetch else ", the pipeline does not prefetch."))
    lines = [f"# the costliest stage: {kind}"]
    fix = stage_fix(kind, parallel)
    if fix:
        lines.append(fix)
    if not prefetch:
        lines.append(PREFETCH_FIX)
    return text, "\n".join(lines)


def _parallelism_text(stage: dict) -> str:
    """How the trace recorded the stage's parallelism, in words ("" where it recorded none)."""
    n = int(stage.get("parallel_calls") or 0)
    if n <= 0:
        return ""
    return f" (its events record parallelism {n}" + (", autotuned)" if stage.get("autotuned") else ")")
