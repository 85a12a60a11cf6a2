"""How a finding quotes its figures: one mode's category split as a share of its untraced
step (``in_step``), a comparison's medians and ratio, the op family that explains a difference,
the steps a cost is concentrated in. Every rule words its evidence with these, so the same figure
reads the same in every finding.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from traceinsight import present
from traceinsight.model import ModeResult
from traceinsight.runview import RunView

if TYPE_CHECKING:
    # (types: the rules of a run of one mode compare nothing; start-up time)
    from traceinsight.compare import Comparison, FamilyDelta

# --------------------------------------------------------------------------------------------------
# helpers


# one formatter for every figure shown (the viewer and the reports use the same)
fmt_ms = present.ms
fmt_ratio = present.ratio


def pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def finite(*xs) -> bool:
    return all(x is not None and np.isfinite(x) for x in xs)


def cat(m: ModeResult, *cats: str) -> float:
    """Sum of the mean ms/step of some categories over the steady steps (``category_means``; nan
    when the mode has no breakdown): what they cost the run per step, a stall in a few steps
    included, so a share of ``_cats_total`` is a share of the run's time (as XProf's input-bound
    share is). A figure of the category split: an estimate, quoted as ``in_step``."""
    c = m.category_means()
    vals = [float(c.get(k, np.nan)) for k in cats]
    return float(np.nansum(vals)) if any(np.isfinite(v) for v in vals) else float("nan")


def _cats_total(m: ModeResult) -> float:
    """The sum of every category's ``cat``: the whole step the category split describes."""
    vals = [v for v in m.category_means().values() if np.isfinite(v)]
    return float(math.fsum(vals)) if vals else float("nan")


def share(m: ModeResult, *cats: str) -> float:
    """The categories' share of the step the category split describes (nan: unknown)."""
    part, total = cat(m, *cats), _cats_total(m)
    return part / total if finite(part, total) and total > 0 else float("nan")


def in_step(m: ModeResult, ms: float) -> float:
    """A time read from the category split (``category_means``), as the same share of the mode's
    untraced median step: never more than the whole step, whether the split describes the traced
    steps (then this scales them to the untraced step) or the untraced step already (then it
    changes nothing)."""
    total, median = _cats_total(m), m.median_ms
    if not finite(ms, total, median) or total <= 0:
        return float("nan")
    return min(max(ms, 0.0) / total, 1.0) * median


def traced_in_step(m: ModeResult, traced_ms: float) -> float:
    """A time read from the traced steps themselves (a stall's excess), as the same share of the
    traced steps' categories applied to the untraced median (``in_step`` for the traced split,
    which ``category_means`` no longer is where the profiler's cost was taken out)."""
    vals = [v for v in m.traced_category_means().values() if np.isfinite(v)]
    total, median = (float(math.fsum(vals)) if vals else float("nan")), m.median_ms
    if not finite(traced_ms, total, median) or total <= 0:
        return float("nan")
    return min(max(traced_ms, 0.0) / total, 1.0) * median


def est(m: ModeResult, *cats: str) -> float:
    """``in_step`` of some categories: their estimated ms in the untraced step."""
    return in_step(m, cat(m, *cats))


ESTIMATE_NOTE = "their share of the category split applied to the untraced median"


def est_text(m: ModeResult, what: str, *cats: str) -> str:
    """``python + dispatch ≈ 2.85 ms of its 4.18 ms step (68 % of its categories)``: the
    categories' estimate in the untraced step with their share, what every finding quoting a
    category says."""
    return (f"{what} ≈ {fmt_ms(est(m, *cats))} ms of its {fmt_ms(m.median_ms)} ms step "
            f"({pct(share(m, *cats))} of its categories)")


def vs(c: Comparison) -> str:
    ci = ", 95 % CI" if np.isfinite(c.ratio_lo) else ""
    return f"{c.a} {fmt_ms(c.a_ms)} vs {c.b} {fmt_ms(c.b_ms)} ms/step ({c.ratio_text()}{ci})"


def slower(c: Comparison) -> bool:
    """a is measurably slower than b."""
    return c.significant and c.delta_ms > 0


def first_compile_ms(m: ModeResult) -> float:
    first = m.first_step
    if first is not None and "compile" in first:
        v = first["compile"]
        if np.isfinite(v) and v > 0:
            return v
    r = m.table("retraces")
    if not r.empty and "compile_ms" in r:
        return float(np.nansum(np.asarray(r["compile_ms"], dtype=float)))
    return float("nan")


def family_dominates(c: Comparison, fam: FamilyDelta | None) -> bool:
    """The family's difference (traced kernel time) is at least half the step difference."""
    return fam is not None and abs(fam.delta_ms) >= 0.5 * abs(c.delta_ms)


def family_evidence(c: Comparison, slower: bool = True) -> str:
    """`` The difference is mostly convolution: 3.1 vs 1.2 ms/step of op time (ops matched by
    family across modes).`` — the op family that costs most of it, with both sides' ms/step."""
    fam = c.top_family(slower)
    if fam is None:
        return ""
    a_ms, b_ms = fam.a_ms, fam.b_ms
    sides = f"{c.a} {fmt_ms(a_ms)} vs {c.b} {fmt_ms(b_ms)} ms/step of traced kernel time"
    if family_dominates(c, fam):
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


def op_evidence(c: Comparison, x: ModeResult, f: ModeResult) -> str:
    """Traced op time of both modes, unless the traced steps contradict the untraced ordering
    (then traced categories are no evidence for it, and the caveat says why)."""
    if c.traced_disagrees:
        return f". Caveat: {c.caveat()}."
    out = (f"; op time ≈ {fmt_ms(est(x, 'op'))} vs {fmt_ms(est(f, 'op'))} ms/step (the category "
           "split's share of each untraced step).")
    return out + (f" Caveat: {c.caveat()}." if c.caveat() else "")


def vs_by_category(c) -> str:
    """The two modes' medians and ratio, then the category difference from traced steps."""
    return f"{vs(c)}. By category: {c.sentence(traced_label=False)}."


def stalls_text(run: RunView, m: ModeResult, category: str) -> str:
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
