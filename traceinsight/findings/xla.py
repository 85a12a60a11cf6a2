"""Compile findings: XLA measurably slower or faster per step than the plain graph function of the
same call.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable

import numpy as np

from traceinsight.finding import Change, Finding, SavingKind, advice
from traceinsight.findings import evidence as ev
from traceinsight.findings import frames as fr
from traceinsight.findings import pairing
from traceinsight.modekind import XLA
from traceinsight.model import ModeResult
from traceinsight.runview import RunView

if TYPE_CHECKING:
    from traceinsight.compare import Comparison, FamilyDelta  # (types: start-up time)

# op families that are not work XLA compiles: the function call itself, constants and arguments
_NOT_WORK_FAMILIES = ("tf.function", "constants", "variables and arguments")


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
    from traceinsight.compare import FamilyDelta
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
    share = fam.b_ms / kernels if ev.finite(kernels) and kernels > 0 else float("nan")
    most = ev.finite(share) and share >= 0.5
    return (f" {x.name}'s kernels are not in this trace (TensorFlow before 2.17 writes no per-op "
            f"events for XLA on CPU), so the op families are {f.name}'s: "
            + (f"mostly {fam.family}" if most else f"its largest is {fam.family}")
            + f", {ev.fmt_ms(fam.b_ms)} ms/step of traced kernel time"
            + (f" ({ev.pct(share)} of its traced op time)" if ev.finite(share) else "")
            + ": the work XLA compiles into its own kernels.", fam if most else None)


_XLA_OFF = ("step = tf.function(step_fn, jit_compile=False)",
            "# Keras: model.compile(..., jit_compile=False)")
_XLA_ON = ("step = tf.function(step_fn, jit_compile=True)",
           "# Keras: model.compile(..., jit_compile=True)")


def _compile_cost(x: ModeResult, f: ModeResult) -> tuple[float, str]:
    """(ms, how it reads) of what XLA's compilation costs the XLA mode once: the compile time its
    trace records; where it records none (TensorFlow before 2.18 writes no compile events) the
    XLA mode's first call beyond the graph mode's first call, both timed by the capture (the
    same function traced in both; XLA adds its compilation and its own one-time work), which is
    how ``tools/measure_xla_compile.py`` measures compilation independently. NaN when neither."""
    compile_ms = ev.first_compile_ms(x)
    if ev.finite(compile_ms) and compile_ms > 0:
        return compile_ms, f"Its {ev.fmt_ms(compile_ms)} ms compile"
    tx, tf_ = x.timing, f.timing
    if tx is None or tf_ is None or tx.first_step_s is None or tf_.first_step_s is None:
        return float("nan"), ""
    extra = (tx.first_step_s - tf_.first_step_s) * 1e3
    if not extra > 0:
        return float("nan"), ""
    return extra, (f"Its first call, {ev.fmt_ms(extra)} ms longer than {f.name}'s (XLA's "
                   "compilation and one-time work: the trace records no compile events, so this "
                   "is the two first calls' difference),")


def rule_xla(run: RunView) -> Iterable[Finding]:
    """4. XLA measurably slower (or faster) than the plain graph function on this machine."""
    for x in pairing.modes_compiled(run, XLA):
        f = pairing.graph_twin(run, x)
        if f is None:
            continue
        c = pairing.compare_modes(run, x, f)
        if not c.significant:
            continue
        compile_ms, what = _compile_cost(x, f)
        unrecorded, one_sided = ("", None) if fr.kernels_recorded(x) else \
            _unrecorded_family_evidence(c, x, f)
        if c.delta_ms > 0:
            evidence = (ev.vs(c) + ev.op_evidence(c, x, f)
                        + (unrecorded or ("" if c.traced_disagrees else ev.family_evidence(c, slower=True)))
                        + (f" {what} never pays back, since every step is slower."
                           if ev.finite(compile_ms) and compile_ms > 0 else ""))
            fam = None if c.traced_disagrees or unrecorded else c.top_family(True)
            fam = fam if ev.family_dominates(c, fam) else None
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
                fix="\n".join(_XLA_OFF), advice=advice(Change.XLA_OFF, *_XLA_OFF))
        else:
            gain = -c.delta_ms
            steps = (math.ceil(compile_ms / gain) if ev.finite(compile_ms) and compile_ms > 0
                     and gain > 0 else None)
            evidence = (ev.vs(c) + ev.op_evidence(c, x, f)
                        + (unrecorded or ("" if c.traced_disagrees else ev.family_evidence(c, slower=False)))
                        + (f" {what} is paid back after {steps} steps." if steps is not None
                           else ""))
            yield Finding(
                rule="xla-faster",
                title=(f"{x.name} (XLA) is faster per step than {f.name}: use jit_compile"
                       + (f"; {f.name}'s kernels are mostly {one_sided.family} ({x.name}'s are not "
                          "recorded)" if one_sided is not None else "")),
                evidence=evidence, saving_ms=gain,
                saving_basis=f"measured: median step of {f.name} minus {x.name}, {c.flipped().delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(f.name, x.name),   # the step that gets faster first
                fix="\n".join(_XLA_ON), advice=advice(Change.XLA_ON, *_XLA_ON))
