"""What explains the difference between two modes (or the same mode in two runs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from traceinsight.model import CATEGORIES, ModeResult
from traceinsight.stats import ratio_ci

OP_KEY = ["op", "type", "thread"]
# An op whose per-step self time changed by less than this share (and 0.01 ms) is "same".
_SAME_REL = 0.05
_SAME_ABS_MS = 0.01


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    a_ms: float                 # median ms/step of a
    b_ms: float
    delta_ms: float             # a - b
    ratio: float                # a / b, with a 95 % bootstrap interval
    ratio_lo: float
    ratio_hi: float
    significant: bool           # the interval excludes 1
    categories: pd.DataFrame    # category, a_ms, b_ms, delta_ms; sorted by |delta| descending
    ops: pd.DataFrame           # op, type, thread, a_ms, b_ms, delta_ms, change
    #                             change in {"only in a", "only in b", "slower", "faster", "same"}

    def sentence(self, top: int = 4, traced_label: bool = True) -> str:
        """``eager − function = +4.9 ms/step: in traced steps, python +3.1, dispatch +1.2, ...``.

        The total is the difference of the modes' medians (untraced timing when captured); the
        categories come from the host-traced steps, which the profiler slows unevenly, so the
        sentence says so (``traced_label=False`` when the caller already does)."""
        if not np.isfinite(self.delta_ms):
            return f"{self.a} vs {self.b}: no step times to compare"
        if not self.significant:
            return (f"{self.a} vs {self.b}: no measurable difference "
                    f"({self.a_ms:.3g} vs {self.b_ms:.3g} ms/step, ratio {self.ratio:.2f} "
                    f"[{self.ratio_lo:.2f}, {self.ratio_hi:.2f}])")
        cats = self.categories[np.isfinite(self.categories["delta_ms"])]
        cats = cats[cats["delta_ms"].abs() >= 0.005].head(top)
        parts = ", ".join(f"{r.category} {r.delta_ms:+.3g}" for r in cats.itertuples())
        sep = ": in traced steps, " if traced_label else ": "
        return f"{self.a} − {self.b} = {self.delta_ms:+.3g} ms/step" + (f"{sep}{parts}" if parts else "")


def compare_modes(a: ModeResult, b: ModeResult) -> Comparison:
    sa, sb = a.step_samples_ms, b.step_samples_ms
    ratio, lo, hi = ratio_ci(sa, sb)
    a_ms = float(np.median(sa)) if len(sa) else float("nan")
    b_ms = float(np.median(sb)) if len(sb) else float("nan")
    significant = bool(np.isfinite(lo) and (lo > 1.0 or hi < 1.0))
    ca, cb = a.category_ms(), b.category_ms()
    cats = pd.DataFrame({"category": list(CATEGORIES), "a_ms": ca.to_numpy(), "b_ms": cb.to_numpy()})
    cats["delta_ms"] = cats["a_ms"] - cats["b_ms"]
    # largest |delta| first; ties (and NaN, last) keep the category order
    cats = cats.assign(_abs=cats["delta_ms"].abs()).sort_values(
        "_abs", ascending=False, na_position="last", kind="stable").drop(columns="_abs")
    return Comparison(a.name, b.name, a_ms, b_ms, a_ms - b_ms, ratio, lo, hi, significant,
                      cats.reset_index(drop=True), op_diff(a.ops, b.ops))


def op_diff(ops_a: pd.DataFrame, ops_b: pd.DataFrame) -> pd.DataFrame:
    cols = OP_KEY + ["a_ms", "b_ms", "delta_ms", "change"]
    if ops_a.empty and ops_b.empty:
        return pd.DataFrame(columns=cols)

    def per_op(ops: pd.DataFrame, col: str) -> pd.DataFrame:
        if ops.empty:
            return pd.DataFrame(columns=OP_KEY + [col])
        return ops.groupby(OP_KEY, as_index=False)["self_ms_per_step"].sum().rename(
            columns={"self_ms_per_step": col})

    m = per_op(ops_a, "a_ms").merge(per_op(ops_b, "b_ms"), on=OP_KEY, how="outer")
    only_a = m["b_ms"].isna()
    only_b = m["a_ms"].isna()
    m[["a_ms", "b_ms"]] = m[["a_ms", "b_ms"]].astype(float).fillna(0.0)
    m["delta_ms"] = m["a_ms"] - m["b_ms"]
    same = (m["delta_ms"].abs() <= np.maximum(_SAME_ABS_MS, _SAME_REL * m[["a_ms", "b_ms"]].max(axis=1)))
    m["change"] = np.select([only_a, only_b, same, m["delta_ms"] > 0],
                            ["only in a", "only in b", "same", "slower"], "faster")
    # largest |delta| first; ties in op, type, thread order (a stable sort over named keys, so the
    # order does not depend on the sort algorithm numpy picks on this machine)
    m = m.assign(_abs=m["delta_ms"].abs()).sort_values(
        ["_abs"] + OP_KEY, ascending=[False] + [True] * len(OP_KEY), kind="stable").drop(columns="_abs")
    return m[cols].reset_index(drop=True)
