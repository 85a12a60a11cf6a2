"""What explains the difference between two modes (or the same mode in two runs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from traceinsight import present
from traceinsight.analysis.opfamily import family
from traceinsight.model import CATEGORIES, ModeResult
from traceinsight.stats import RatioEstimate, difference_ci, mode_ratio

if TYPE_CHECKING:
    import pandas as pd

OP_KEY = ["op", "type", "thread"]
# An op whose per-step self time changed by less than this share (and 0.01 ms) is "same".
_SAME_REL = 0.05
_SAME_ABS_MS = 0.01
_FLIP_CHANGE = {"only in a": "only in b", "only in b": "only in a", "slower": "faster",
                "faster": "slower"}
# |traced / untraced − 1| from this on, a mode's category split is called distorted
DISTORTION_LARGE = 0.15


def is_distorted(d: float | None) -> TypeGuard[float]:
    """A mode's distortion (``Timing.distortion``) is large: its traced steps are
    ``DISTORTION_LARGE`` or more off its untraced ones, so their category split is less sure.
    The one test every page and finding applies."""
    return d is not None and bool(np.isfinite(d)) and abs(d) >= DISTORTION_LARGE


class _Lazy:
    """A Comparison table: given as a DataFrame or as a function that computes it, read as a
    DataFrame (computed on first access: the overview's ratios need none of the tables, so
    ``traceinsight analyze`` never computes an op diff or imports pandas). Each read is a copy:
    the comparison is shared by every page of the run, so no reader can change what another
    reads."""

    def __init__(self, columns: list[str] | None = None):
        self.columns = columns

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            # the dataclass default (families): an empty table
            return None if self.columns is None else _empty_table(self.columns)
        v = obj.__dict__[self.name]
        if callable(v):
            v = obj.__dict__[self.name] = v()
        return v.copy()

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


def _empty_table(columns: list[str]) -> Callable[[], pd.DataFrame]:
    def make() -> pd.DataFrame:
        import pandas as pd
        return pd.DataFrame(columns=columns)
    return make


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    a_ms: float                 # median ms/step of a
    b_ms: float
    delta_ms: float             # a - b
    ratio: float                # a_ms / b_ms, with its 95 % interval (``stats.mode_ratio``)
    ratio_lo: float             # NaN: no valid interval (``note`` says why)
    ratio_hi: float
    significant: bool           # the interval excludes 1 and the paired rounds agree
    # the tables: DataFrames, or functions computing them on first access (see _Lazy)
    categories: _Lazy = _Lazy()  # category, a_ms, b_ms, delta_ms (mean ms/step of the traced steps:
    #                             they add up to traced_delta_ms); sorted by |delta| descending
    ops: _Lazy = _Lazy()         # op, type, thread, family, a_ms, b_ms, delta_ms, change
    #                             change in {"only in a", "only in b", "slower", "faster", "same"}
    families: _Lazy = _Lazy(["family", "a_ms", "b_ms", "delta_ms"])
    #                             op time per family (opfamily), both threads, by |delta|
    basis: str = "steps"        # "steps" | "steps within rounds": what the interval resampled
    traced_a_ms: float = float("nan")   # median traced (host-profiled) step of a
    traced_b_ms: float = float("nan")
    distortion_a: float | None = None
    distortion_b: float | None = None
    note: str = ""              # why the ratio has no interval, or why it does not order them
    traced_mean_a_ms: float = float("nan")   # mean traced step of a: the sum of its categories
    traced_mean_b_ms: float = float("nan")
    delta_lo: float = float("nan")   # 95 % interval of delta_ms (``stats.difference_ci``)
    delta_hi: float = float("nan")

    def delta_text(self) -> str:
        """``+5.75 ms/step [+5.60, +5.90]``: the measured difference with its interval."""
        out = f"{present.signed_ms(self.delta_ms)} ms/step"
        if np.isfinite(self.delta_lo) and np.isfinite(self.delta_hi):
            out += f" [{present.signed_ms(self.delta_lo)}, {present.signed_ms(self.delta_hi)}]"
        return out

    @property
    def traced_delta_ms(self) -> float:
        """a − b of the traced steps' mean: the difference the category breakdown adds up to."""
        return self.traced_mean_a_ms - self.traced_mean_b_ms

    @property
    def traced_disagrees(self) -> bool:
        """The traced steps order the two modes the other way round from the untraced medians: the
        category split (from traced steps) cannot explain this difference."""
        if not self.significant or not np.isfinite(self.traced_a_ms) or not np.isfinite(self.traced_b_ms):
            return False
        return bool(np.sign(self.traced_a_ms - self.traced_b_ms) == -np.sign(self.delta_ms) != 0)

    @property
    def distorted(self) -> list[tuple[str, float]]:
        """(mode, distortion) of the modes whose traced steps are >= DISTORTION_LARGE off."""
        return [(n, d) for n, d in ((self.a, self.distortion_a), (self.b, self.distortion_b))
                if is_distorted(d)]

    @property
    def estimate(self) -> RatioEstimate:
        """The ratio, its interval and verdict as ``stats.mode_ratio`` gave them."""
        return RatioEstimate(self.ratio, self.ratio_lo, self.ratio_hi, self.significant,
                             self.basis, self.note)

    def ratio_text(self) -> str:
        """``1.35× [1.30, 1.41]``, or ``1.35× (too few steps for an interval)``: how every page
        writes this pair's ratio."""
        return present.ratio_ci(self.ratio, self.ratio_lo, self.ratio_hi, self.note)

    def caveat(self) -> str:
        """What makes the traced figures doubtful for this pair, in one clause ("" when nothing)."""
        parts = []
        # the same mode of two runs (diff): name the sides, B against A
        na, nb = (self.a, self.b) if self.a != self.b else ("B", "A")
        if self.traced_disagrees:
            parts.append(f"the traced steps order them the other way ({na} {present.ms(self.traced_a_ms)} "
                         f"vs {nb} {present.ms(self.traced_b_ms)} ms), so the traced categories cannot "
                         "explain this difference")
        distorted = [(n, d) for n, d in ((na, self.distortion_a), (nb, self.distortion_b))
                     if is_distorted(d)]
        if distorted:
            parts.append("profiler distortion " + ", ".join(f"{n} {d * 100:+.0f} %"
                                                             for n, d in distorted))
        return "; ".join(parts)

    def breakdown_text(self) -> str:
        """``the traced steps' mean differs by +5.30 ms: python +3.10, dispatch +1.20, op +0.80,
        input +0.20`` — every category whose difference shows at the display's precision; the
        parts add up to the traced difference (means add up, medians do not)."""
        cats = self.categories[np.isfinite(self.categories["delta_ms"])]
        shown = cats[cats["delta_ms"].abs() >= 0.0005]
        parts = ", ".join(f"{r.category} {present.signed_ms(r.delta_ms)}" for r in shown.itertuples())
        out = f"the traced steps' mean differs by {present.signed_ms(self.traced_delta_ms)} ms"
        return out + (f": {parts}" if parts else "")

    def distortion_text(self) -> str:
        """``profiler distortion eager +7 %, function +17 %`` (the modes whose distortion is
        known): how far the traced steps the breakdown comes from are off the untraced ones."""
        na, nb = (self.a, self.b) if self.a != self.b else ("B", "A")
        known = [(n, d) for n, d in ((na, self.distortion_a), (nb, self.distortion_b))
                 if d is not None and np.isfinite(d)]
        return ("profiler distortion " + ", ".join(f"{n} {d * 100:+.0f} %" for n, d in known)
                if known else "")

    def sentence(self, top: int = 7, traced_label: bool = True, label: str | None = None) -> str:
        """``eager − function = +4.9 ms/step (untraced medians); the traced steps' mean differs by
        +5.3 ms: python +3.1, dispatch +1.2, ... (profiler distortion eager +7 %, function +17 %)``.

        The headline is the difference of the modes' medians (untraced timing when captured); the
        categories come from the host-traced steps, which the profiler slows unevenly, so their
        breakdown explains the traced difference it adds up to, said beside the headline with the
        distortion of each side. When the traced steps contradict the untraced ordering it says
        that instead of quoting categories. ``label`` replaces ``a − b`` (the diff writes
        ``B − A``); ``top`` and ``traced_label`` are kept for callers, every category shows."""
        if not np.isfinite(self.delta_ms):
            return f"{self.a} vs {self.b}: no step times to compare"
        if not self.significant:
            return (f"{self.a} vs {self.b}: no measurable difference "
                    f"({present.ms(self.a_ms)} vs {present.ms(self.b_ms)} ms/step, ratio "
                    f"{self.ratio_text()})")
        head = f"{label or f'{self.a} − {self.b}'} = {present.signed_ms(self.delta_ms)} ms/step"
        if self.traced_disagrees:
            return f"{head} ({present.ms(self.a_ms)} vs {present.ms(self.b_ms)} ms untraced); but {self.caveat()}"
        if not np.isfinite(self.traced_delta_ms):
            return head
        out = f"{head} (untraced medians); {self.breakdown_text()}"
        dist = self.distortion_text()
        return out + (f" ({dist})" if dist else "")

    def flipped(self) -> "Comparison":
        """The same comparison read from the other side (b against a): every delta negated, the
        ratio and its interval inverted (percentile intervals map exactly under 1/x), columns of
        the op and family tables exchanged. Nothing is recomputed."""
        def swap(df: pd.DataFrame) -> pd.DataFrame:
            out = df.rename(columns={"a_ms": "b_ms", "b_ms": "a_ms"}).assign(delta_ms=-df["delta_ms"])
            if "change" in out:
                out["change"] = out["change"].map(_FLIP_CHANGE).fillna(out["change"])
            return out[list(df.columns)]
        inv = (lambda x: 1.0 / x if np.isfinite(x) and x != 0 else float("nan"))
        return Comparison(self.b, self.a, self.b_ms, self.a_ms, -self.delta_ms, inv(self.ratio),
                          inv(self.ratio_hi), inv(self.ratio_lo), self.significant,
                          lambda: swap(self.categories), lambda: swap(self.ops),
                          lambda: swap(self.families), self.basis,
                          self.traced_b_ms, self.traced_a_ms, self.distortion_b, self.distortion_a,
                          self.note, self.traced_mean_b_ms, self.traced_mean_a_ms,
                          -self.delta_hi, -self.delta_lo)

    def top_family(self, slower: bool = True) -> pd.Series | None:
        """The op family that costs most of the difference in that direction (kernel families
        only: the tf.function wrapper and runtime rows hold the others' time)."""
        f = self.families
        if f.empty:
            return None
        f = f[~f["family"].str.startswith("tf.function") & (f["family"] != "(runtime)")]
        f = f[f["delta_ms"] > 0] if slower else f[f["delta_ms"] < 0]
        return None if f.empty else f.iloc[0]


def _distortion(m: ModeResult) -> float | None:
    return m.timing.distortion if m.timing is not None else None


def compare_modes(a: ModeResult, b: ModeResult) -> Comparison:
    """Use ``Run.compare(a, b)``: it computes each pair once."""
    sa, sb = a.step_samples_ms, b.step_samples_ms
    est = mode_ratio(sa, sb, _rounds(a), _rounds(b), boot_a=a.boot_medians if len(sa) > 1 else None,
                     boot_b=b.boot_medians if len(sb) > 1 else None)
    a_ms = float(np.median(sa)) if len(sa) else float("nan")
    b_ms = float(np.median(sb)) if len(sb) else float("nan")
    ops: list[pd.DataFrame] = []     # the op diff, computed once for both tables that read it

    def op_table() -> pd.DataFrame:
        if not ops:
            # the op diff is a groupby and an outer merge: pandas, built here from the modes'
            # columns (only when a page reads the diff)
            ops.append(op_diff(a.table("ops").to_pandas(), b.table("ops").to_pandas()))
        return ops[0]

    return Comparison(a.name, b.name, a_ms, b_ms, a_ms - b_ms, est.ratio, est.lo, est.hi,
                      est.significant, lambda: category_diff(a, b), op_table,
                      lambda: family_diff(op_table()), est.basis, a.traced_ms, b.traced_ms,
                      _distortion(a), _distortion(b), est.note, a.traced_mean_ms, b.traced_mean_ms,
                      *difference_ci(sa, sb, a.boot_medians if len(sa) > 1 else None,
                                     b.boot_medians if len(sb) > 1 else None))


def _rounds(m: ModeResult) -> tuple | None:
    """The mode's interleaved rounds when its step samples are their steps (untraced timing)."""
    t = m.timing
    return t.rounds if t is not None and len(t.steps_s) and t.rounds else None


def category_diff(a: ModeResult, b: ModeResult) -> pd.DataFrame:
    """category, a_ms, b_ms, delta_ms (mean ms/step of the steady traced steps, so the deltas add
    up to the traced steps' mean difference), largest |delta| first."""
    import pandas as pd

    ca, cb = a.category_means(), b.category_means()
    cats = pd.DataFrame({"category": list(CATEGORIES), "a_ms": [ca[c] for c in CATEGORIES],
                         "b_ms": [cb[c] for c in CATEGORIES]})
    cats["delta_ms"] = cats["a_ms"] - cats["b_ms"]
    cats["_abs"] = cats["delta_ms"].abs().fillna(-1.0)
    # ties in the categories' own order
    cats = cats.sort_values("_abs", ascending=False, kind="stable").drop(columns="_abs")
    return cats.reset_index(drop=True)


def _by_abs_delta(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Largest |delta_ms| first; ties by the key columns (a stable, machine-independent order)."""
    df = df.assign(_abs=df["delta_ms"].abs())
    return df.sort_values(["_abs"] + key, ascending=[False] + [True] * len(key),
                          kind="stable").drop(columns="_abs").reset_index(drop=True)


def op_diff(ops_a: pd.DataFrame, ops_b: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    cols = OP_KEY + ["family", "a_ms", "b_ms", "delta_ms", "change"]
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
    m["family"] = [family(str(o), str(t)) for o, t in zip(m["op"], m["type"])]
    same = (m["delta_ms"].abs() <= np.maximum(_SAME_ABS_MS, _SAME_REL * m[["a_ms", "b_ms"]].max(axis=1)))
    m["change"] = np.select([only_a, only_b, same, m["delta_ms"] > 0],
                            ["only in a", "only in b", "same", "slower"], "faster")
    return _by_abs_delta(m, OP_KEY)[cols]


def normalized_type(op_type: str) -> str:
    """An op type spelled the same on every CPU and in eager and graph runs: ``_MklMatMul``,
    ``_FusedMatMul``, ``_MklNativeFusedConv2D`` -> ``MatMul``, ``Conv2D``."""
    import re
    return re.sub(r"^_(?:Mkl)?(?:Native)?(?:Fused)?", "", op_type) or op_type


def op_type_diff(ops: pd.DataFrame) -> pd.DataFrame:
    """``op_diff`` read by normalized op type, both threads summed: two modes name the same work
    differently (eager ``Conv2D`` on the main thread, graph ``model/conv1d/convolution`` run by
    ``_MklNativeFusedConv2D`` on a worker), so by name nearly every op is 'removed' and another
    'added'; by type they meet. Columns as ``op_diff`` (op: the type)."""
    import pandas as pd

    cols = OP_KEY + ["family", "a_ms", "b_ms", "delta_ms", "change"]
    if ops.empty:
        return pd.DataFrame(columns=cols)
    df = ops.assign(op=[normalized_type(str(t)) for t in ops["type"]])
    df = df.assign(type=df["op"], thread="both",
                   _a=df["change"] != "only in b", _b=df["change"] != "only in a")
    g = df.groupby(["op", "type", "thread"], as_index=False).agg(
        family=("family", "first"), a_ms=("a_ms", "sum"), b_ms=("b_ms", "sum"),
        in_a=("_a", "any"), in_b=("_b", "any"))
    g["delta_ms"] = g["a_ms"] - g["b_ms"]
    same = (g["delta_ms"].abs() <= np.maximum(_SAME_ABS_MS, _SAME_REL * g[["a_ms", "b_ms"]].max(axis=1)))
    g["change"] = np.select([~g["in_b"], ~g["in_a"], same, g["delta_ms"] > 0],
                            ["only in a", "only in b", "same", "slower"], "faster")
    return _by_abs_delta(g, OP_KEY)[cols]


def family_diff(ops: pd.DataFrame) -> pd.DataFrame:
    """Per op family (both threads summed): a_ms, b_ms, delta_ms, largest |delta| first. Renamed
    functions and ops named differently in each mode (eager ``Conv2D``, graph
    ``.../convolution:_MklNativeFusedConv2D``, XLA ``convolution.3``) meet here."""
    import pandas as pd

    cols = ["family", "a_ms", "b_ms", "delta_ms"]
    if ops.empty:
        return pd.DataFrame(columns=cols)
    g = ops.groupby("family", as_index=False)[["a_ms", "b_ms", "delta_ms"]].sum()
    return _by_abs_delta(g, ["family"])[cols]


# Two traces share a program when most of their op types are shared (Jaccard index of the sets,
# CPU-specific spellings folded) or when they call a tf.function of the same name.
SAME_PROGRAM_JACCARD = 0.5


def _op_signature(m: ModeResult) -> tuple[frozenset[str], frozenset[str]]:
    """(op types, tf.function names) a mode's trace ran, spelled the same on every CPU
    (``_MklMatMul`` / ``_FusedMatMul`` -> ``MatMul``; ``__inference_step_12`` -> ``step``)."""
    import re

    ops = m.table("ops")
    if ops.empty or "type" not in ops:
        return frozenset(), frozenset()
    types, functions = set(), set()
    for op, typ in zip(map(str, ops["op"]), map(str, ops["type"])):
        if typ.startswith("tf.function"):
            functions.add(re.sub(r"^__(?:inference|forward|backward)_|_\d+$", "", op))
        else:
            types.add(re.sub(r"^_(?:Mkl)?(?:Native)?(?:Fused)?", "", typ))
    return frozenset(types), frozenset(functions)


def same_program(a: ModeResult, b: ModeResult) -> bool | None:
    """Do two traces run the same program? None when either has no op table to tell."""
    ta, fa = _op_signature(a)
    tb, fb = _op_signature(b)
    if not ta or not tb:
        return None
    if fa & fb:
        return True
    return len(ta & tb) / len(ta | tb) >= SAME_PROGRAM_JACCARD


def program_groups(run) -> list[list[str]]:
    """The run's ok modes grouped by program. A captured run's modes are one program by
    construction; foreign traces in one folder may be several (a Keras fit beside a loop of
    matmuls), and modes of different programs are not compared."""
    names = [m.name for m in run.ok_modes()]
    if run.source == "run":
        return [names] if names else []
    groups: list[list[str]] = []
    for n in names:
        for g in groups:
            if same_program(run.modes[g[0]], run.modes[n]) is not False:
                g.append(n)
                break
        else:
            groups.append([n])
    return groups
