"""Two modes compared, as data: ``Comparison`` (the difference of their medians with its interval,
and the category, op and op-family tables that explain it) and ``FamilyDelta``. They sit below the
model (``RunFigures`` holds comparisons), so that the model imports them; ``traceinsight.compare``
computes them (``compare_modes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from traceinsight import present
from traceinsight.columns import Columns, Table, fields_equal, fields_repr, text
from traceinsight.ratio import RatioEstimate

OP_KEY = ["op", "type", "thread"]
_FLIP_CHANGE = {"only in a": "only in b", "only in b": "only in a", "slower": "faster",
                "faster": "slower"}
# |traced / untraced − 1| from this on, a mode's category split is called distorted
DISTORTION_LARGE = 0.15

# A Comparison's tables, in field order, with their columns: what ``Comparison.table(name)`` reads.
CATEGORY_COLUMNS = ("category", "a_ms", "b_ms", "delta_ms")
OP_COLUMNS = (*OP_KEY, "family", "a_ms", "b_ms", "delta_ms", "change")
FAMILY_COLUMNS = ("family", "a_ms", "b_ms", "delta_ms")
COMPARISON_TABLES: tuple[str, ...] = ("categories", "ops", "families")


def is_distorted(d: float | None) -> TypeGuard[float]:
    """A mode's distortion (``Timing.distortion``) is large: its traced steps are
    ``DISTORTION_LARGE`` or more off its untraced ones, so their category split is less sure.
    The one test every page and finding applies."""
    return d is not None and bool(np.isfinite(d)) and abs(d) >= DISTORTION_LARGE


@dataclass(frozen=True)
class FamilyDelta:
    """One row of a comparison's op-family table (``Comparison.top_family``)."""

    family: str
    a_ms: float
    b_ms: float
    delta_ms: float


@dataclass(frozen=True, eq=False, repr=False)   # its own __eq__ and __repr__ below
class Comparison:
    """Two modes compared: the difference of their medians with its interval, and the tables
    that explain it.

    Tables (``Columns``, stored once, computed with the comparison; columns below):
      categories: category, a_ms, b_ms, delta_ms (the user's step, ``ModeResult.category_means``:
                  they add up to ``breakdown_delta_ms``, the difference of the untraced medians
                  where both modes have one), largest |delta| first.
      ops:        op, type, thread, family, a_ms, b_ms, delta_ms, change (one of "only in a",
                  "only in b", "slower", "faster", "same"), largest |delta| first.
      families:   family, a_ms, b_ms, delta_ms: op time per family (``analysis.opfamily``), both
                  threads summed, largest |delta| first.

    As for a mode's tables: ``c.table("ops")`` is the package's read (the stored columns, no
    pandas), ``c.ops`` (``.categories``, ``.families``) the Python API's, a new DataFrame on every
    read, which the reader may change without changing the comparison every page shares."""

    __eq__ = fields_equal    # tables compared as stored, by value
    __repr__ = fields_repr

    a: str
    b: str
    a_ms: float                 # median ms/step of a
    b_ms: float
    delta_ms: float             # a - b
    ratio: float                # a_ms / b_ms, with its 95 % interval (``stats.mode_ratio``)
    ratio_lo: float             # NaN: no valid interval (``note`` says why)
    ratio_hi: float
    significant: bool           # the interval excludes 1 and the paired rounds agree
    categories: Table = Table(CATEGORY_COLUMNS)
    ops: Table = Table(OP_COLUMNS)
    families: Table = Table(FAMILY_COLUMNS)
    basis: str = "steps"        # "paired rounds" | "steps within rounds" | "steps": what it came from
    traced_a_ms: float = float("nan")   # median traced (host-profiled) step of a
    traced_b_ms: float = float("nan")
    distortion_a: float | None = None
    distortion_b: float | None = None
    note: str = ""              # why the ratio has no interval, or why it does not order them
    traced_mean_a_ms: float = float("nan")   # mean traced step of a: the sum of its categories
    traced_mean_b_ms: float = float("nan")
    delta_lo: float = float("nan")   # 95 % interval of delta_ms (``stats.difference_ci``)
    delta_hi: float = float("nan")
    breakdown_a_ms: float = float("nan")   # what a's categories add up to (``ModeResult.breakdown_ms``)
    breakdown_b_ms: float = float("nan")
    corrected: bool = False     # both sides' categories are the untraced step (the profiler's cost out)
    orders: bool = False        # the interval excludes 1 (and the paired rounds agree)
    paired: int = 0             # paired rounds the ratio comes from (0: the modes were timed apart)
    round_ratios: tuple[float, ...] = ()

    def table(self, name: str) -> Columns:
        """The package's one read of a table (``categories``, ``ops``, ``families``): the stored
        ``Columns`` themselves, shared, read-only by convention. The Python API reads the
        attribute of the same name instead (a DataFrame)."""
        if name not in COMPARISON_TABLES:
            raise KeyError(f"no table {name!r} (tables: {', '.join(COMPARISON_TABLES)})")
        return self.__dict__[name]

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
                             self.basis, self.note, self.round_ratios, self.orders, self.paired)

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

    @property
    def breakdown_delta_ms(self) -> float:
        """a − b of what the categories add up to: the untraced medians' difference where both
        modes are corrected (``corrected``), else the traced steps' mean difference."""
        return self.breakdown_a_ms - self.breakdown_b_ms

    def breakdown_text(self) -> str:
        """``the untraced step differs by +5.30 ms by category (the profiler's cost taken out):
        python +3.10, dispatch +1.20, op +0.80, input +0.20`` — every category whose difference
        shows at the display's precision; the parts add up to the difference they split (means
        add up, medians do not). Where a side has no untraced timing (a foreign trace): ``the
        traced steps' mean differs by ...``."""
        cats = self.table("categories")
        d = np.asarray(cats["delta_ms"], dtype=float)
        shown = np.isfinite(d) & (np.abs(d) >= 0.0005)
        parts = ", ".join(f"{c} {present.signed_ms(x)}" for c, x in zip(cats["category"][shown], d[shown]))
        total = present.signed_ms(self.breakdown_delta_ms)
        out = (f"the untraced step differs by {total} ms, by category with the profiler's cost "
               "taken out" if self.corrected else f"the traced steps' mean differs by {total} ms")
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
        """``eager − function = +4.9 ms/step (untraced medians); the untraced step differs by
        +4.9 ms, by category with the profiler's cost taken out: python +3.1, dispatch +1.2, ...
        (profiler distortion eager +7 %, function +17 %)``.

        The headline is the difference of the modes' medians (untraced timing when captured); the
        categories are each mode's untraced step (``ModeResult.category_means``: the host-traced
        split with the profiler's cost taken out), so they add up to the headline, said with the
        distortion of each side that was taken out (foreign traces: the traced steps' split).
        When the traced steps contradict the untraced ordering it says that instead of quoting
        categories. ``label`` replaces ``a − b`` (the diff writes
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
        if not np.isfinite(self.breakdown_delta_ms):
            return head
        out = f"{head} (untraced medians); {self.breakdown_text()}"
        dist = self.distortion_text()
        return out + (f" ({dist})" if dist else "")

    def flipped(self) -> "Comparison":
        """The same comparison read from the other side (b against a): every delta negated, the
        ratio and its interval inverted (percentile intervals map exactly under 1/x), columns of
        the tables exchanged. Nothing is recomputed."""
        inv = (lambda x: 1.0 / x if np.isfinite(x) and x != 0 else float("nan"))
        return Comparison(self.b, self.a, self.b_ms, self.a_ms, -self.delta_ms, inv(self.ratio),
                          inv(self.ratio_hi), inv(self.ratio_lo), self.significant,
                          _swapped(self.table("categories")), _swapped(self.table("ops")),
                          _swapped(self.table("families")), self.basis,
                          self.traced_b_ms, self.traced_a_ms, self.distortion_b, self.distortion_a,
                          self.note, self.traced_mean_b_ms, self.traced_mean_a_ms,
                          -self.delta_hi, -self.delta_lo, self.breakdown_b_ms, self.breakdown_a_ms,
                          self.corrected, self.orders, self.paired,
                          tuple(inv(x) for x in self.round_ratios))

    def top_family(self, slower: bool = True) -> FamilyDelta | None:
        """The op family that costs most of the difference in that direction (kernel families
        only: the tf.function wrapper and runtime rows hold the others' time)."""
        f = self.table("families")
        if f.empty:
            return None
        d = np.asarray(f["delta_ms"], dtype=float)
        kernel = np.array([not str(n).startswith("tf.function") and n != "(runtime)"
                           for n in f["family"]], dtype=bool)
        rows = np.flatnonzero(kernel & (d > 0 if slower else d < 0))
        if not len(rows):
            return None
        i = int(rows[0])
        return FamilyDelta(str(f["family"][i]), float(f["a_ms"][i]), float(f["b_ms"][i]), float(d[i]))


def _swapped(t: Columns) -> Columns:
    """A comparison table read from the other side: a_ms and b_ms exchanged, delta_ms negated,
    each change named from the other side ("same" stays); columns in their order."""
    def column(name: str) -> Any:
        if name in ("a_ms", "b_ms"):
            return t["b_ms" if name == "a_ms" else "a_ms"]
        if name == "delta_ms":
            return -t[name]
        if name == "change":
            return text([_FLIP_CHANGE.get(v, v) for v in t[name].tolist()])
        return t[name]
    return Columns({n: column(n) for n in t.columns})
