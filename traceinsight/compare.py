"""What explains the difference between two modes (or the same mode in two runs).

A comparison's tables (the category, op and op-family differences) are computed with numpy into
``Columns`` when the comparison is made: the run's summary makes one per mode against the
fastest, and ``traceinsight analyze`` prints the summary without importing pandas. The package
reads them with ``Comparison.table(name)``; the Python API's ``c.categories``, ``c.ops`` and
``c.families`` are new DataFrames built from them on every read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from traceinsight import present
from traceinsight.analysis.opfamily import family
from traceinsight.analysis.results import sort_order
from traceinsight.columns import Columns, fields_equal, fields_repr, text
from traceinsight.model import CATEGORIES, CorrectionKind, ModeResult, Table
from traceinsight.stats import RatioEstimate, difference_ci, mode_ratio, pair_rounds

OP_KEY = ["op", "type", "thread"]
# An op whose per-step self time changed by less than this share (and 0.01 ms) is "same".
_SAME_REL = 0.05
_SAME_ABS_MS = 0.01
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


@dataclass(frozen=True, eq=False)
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


def _distortion(m: ModeResult) -> float | None:
    return m.timing.distortion if m.timing is not None else None


def compare_modes(a: ModeResult, b: ModeResult, same_run: bool = True) -> Comparison:
    """Use ``Run.compare(a, b)``: it computes each pair once. ``same_run``: False for the modes of
    two runs (``rundiff``), which were never timed in the same rounds."""
    sa, sb = a.step_samples_ms, b.step_samples_ms
    ra, rb = _rounds(a), _rounds(b)
    est = mode_ratio(sa, sb, ra, rb, boot_a=a.boot_medians if len(sa) > 1 else None,
                     boot_b=b.boot_medians if len(sb) > 1 else None,
                     paired=pair_rounds(a.timing, b.timing) if ra and rb and same_run else None)
    a_ms = float(np.median(sa)) if len(sa) else float("nan")
    b_ms = float(np.median(sb)) if len(sb) else float("nan")
    ops = op_diff(a.table("ops"), b.table("ops"))
    return Comparison(a.name, b.name, a_ms, b_ms, a_ms - b_ms, est.ratio, est.lo, est.hi,
                      est.significant, category_diff(a, b), ops, family_diff(ops), est.basis,
                      a.traced_ms, b.traced_ms, _distortion(a), _distortion(b), est.note,
                      a.traced_mean_ms, b.traced_mean_ms,
                      *difference_ci(sa, sb, a.boot_medians if len(sa) > 1 else None,
                                     b.boot_medians if len(sb) > 1 else None),
                      a.breakdown_ms, b.breakdown_ms, _corrected(a) and _corrected(b),
                      est.orders, est.paired, est.round_ratios)


def _corrected(m: ModeResult) -> bool:
    """The mode's categories are its untraced step (``ModeResult.correction``)."""
    return m.correction is not None and m.correction.kind is not CorrectionKind.TRACED


def _rounds(m: ModeResult) -> tuple | None:
    """The mode's interleaved rounds when its step samples are their steps (untraced timing)."""
    t = m.timing
    return t.rounds if t is not None and len(t.steps_s) and t.rounds else None


# ---- the tables, with numpy ----------------------------------------------------------------------
# Each reproduces what pandas' groupby / merge / sort_values gave when these tables were
# DataFrames (tests/test_compare_tables.py checks them against that): group keys in sorted order,
# rows with a missing key dropped, sums compensated in row order with NaN skipped, ties of the
# sort broken by the key columns in Python's string order.


def _codes(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the column's distinct values (equal values, equal ranks; strings
    in Python's order). Python sorts the distinct strings faster than numpy sorts object arrays."""
    vals = values.tolist()
    rank = {v: i for i, v in enumerate(sorted(set(vals)))}
    return np.fromiter((rank[v] for v in vals), dtype=np.intp, count=len(vals))


def _groups(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by the key columns: (each row's group, the first row of each group), groups
    numbered in the keys' sorted order (as pandas' groupby), so a table of one row per group, in
    group order, is sorted by its keys. Every row must have its keys."""
    n = len(keys[0])
    if not n:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    codes = [_codes(k) for k in keys]
    order = np.lexsort(codes[::-1])                 # stable: a group's rows keep their order
    new = np.ones(n, dtype=bool)
    new[1:] = np.any([c[order][1:] != c[order][:-1] for c in codes], axis=0)
    labels = np.empty(n, dtype=np.intp)
    labels[order] = np.cumsum(new) - 1
    return labels, order[new]


def _has_key(keys: list[np.ndarray]) -> np.ndarray:
    """Rows whose key columns all hold a value (pandas' groupby drops the others)."""
    ok = np.ones(len(keys[0]), dtype=bool)
    for k in keys:
        if k.dtype == object:
            ok &= np.array([v is not None and v == v for v in k.tolist()], dtype=bool)
        elif k.dtype.kind == "f":
            ok &= ~np.isnan(k)
    return ok


def _kahan(values: list[float]) -> float:
    """The sum in this order, NaN skipped, compensated as pandas' groupby sum adds."""
    total = comp = 0.0
    for x in values:
        if x != x:
            continue
        y = x - comp
        t = total + y
        comp = t - total - y
        if comp != comp:        # an infinite value: no compensation
            comp = 0.0
        total = t
    return total


def _group_sums(labels: np.ndarray, n_groups: int, values: list[np.ndarray]) -> list[np.ndarray]:
    """Per group and column, the sum of its rows' values in row order, NaN skipped (0 when none),
    compensated (Kahan) as pandas' groupby sum is, so each figure is the one it gave."""
    sizes = np.bincount(labels, minlength=n_groups)
    alone = sizes[labels] == 1
    order = np.argsort(labels, kind="stable")       # each group's rows together, in row order
    ends = np.cumsum(sizes)
    several = [(g, int(ends[g] - sizes[g]), int(ends[g])) for g in np.flatnonzero(sizes > 1).tolist()]
    out = []
    for v in values:
        v = np.asarray(v, dtype=float)
        s = np.zeros(n_groups)
        # one row: its value (added to 0.0 as the sum does, so a -0.0 is summed to 0.0)
        s[labels[alone]] = np.where(np.isnan(v[alone]), 0.0, v[alone]) + 0.0
        grouped = v[order]
        for g, lo, hi in several:
            s[g] = _kahan(grouped[lo:hi].tolist())
        out.append(s)
    return out


def _by_abs_delta(delta: np.ndarray) -> np.ndarray:
    """Row order of a table in its keys' order (one row per group): largest |delta_ms| first
    (NaN last), ties in the keys' order (a stable, machine-independent order)."""
    return sort_order([(np.abs(delta), False)])


def _change(only_a: np.ndarray, only_b: np.ndarray, a_ms: np.ndarray, b_ms: np.ndarray,
            delta: np.ndarray) -> np.ndarray:
    """Each op's change: only on one side, the same (within ``_SAME_REL`` or ``_SAME_ABS_MS``),
    slower or faster in a."""
    with np.errstate(invalid="ignore"):
        same = np.abs(delta) <= np.maximum(_SAME_ABS_MS, _SAME_REL * np.fmax(a_ms, b_ms))
        slower = delta > 0
    return text(np.select([only_a, only_b, same, slower],
                          ["only in a", "only in b", "same", "slower"], "faster").tolist())


def category_diff(a: ModeResult, b: ModeResult) -> Columns:
    """category, a_ms, b_ms, delta_ms (the user's step, ``ModeResult.category_means``: mean
    ms/step with the profiler's cost taken out, so the deltas add up to the difference of the
    untraced medians), largest |delta| first."""
    ca, cb = a.category_means(), b.category_means()
    a_ms = np.array([ca[c] for c in CATEGORIES], dtype=float)
    b_ms = np.array([cb[c] for c in CATEGORIES], dtype=float)
    delta = a_ms - b_ms
    # ties in the categories' own order; a NaN difference last
    order = sort_order([(np.where(np.isnan(delta), -1.0, np.abs(delta)), False)])
    return Columns({"category": text(CATEGORIES), "a_ms": a_ms, "b_ms": b_ms,
                    "delta_ms": delta}).take(order)


def _op_rows(ops: Columns) -> tuple[list[np.ndarray], np.ndarray]:
    """One mode's ops: the key columns and self ms/step of the rows that have their keys."""
    if ops.empty:
        return [np.empty(0, dtype=object) for _ in OP_KEY], np.zeros(0)
    keys = [np.asarray(ops[k]) for k in OP_KEY]
    keep = _has_key(keys)
    return [k[keep] for k in keys], np.asarray(ops["self_ms_per_step"], dtype=float)[keep]


def op_diff(ops_a: Columns, ops_b: Columns) -> Columns:
    """Two modes' ops tables joined on (op, type, thread), each side's self ms/step summed per
    key: a_ms, b_ms (0 on the side without it), delta_ms, the op's family and its change."""
    if ops_a.empty and ops_b.empty:
        return Columns.no_rows(OP_COLUMNS)
    keys_a, ms_a = _op_rows(ops_a)
    keys_b, ms_b = _op_rows(ops_b)
    # the outer join: the keys of both sides grouped at once; each side's rows summed per key
    # (NaN: the side has no row with it)
    keys = [np.concatenate([ka, kb]) for ka, kb in zip(keys_a, keys_b)]
    labels, first = _groups(keys)
    n, na = len(first), len(ms_a)
    sides = []
    for rows, ms in ((labels[:na], ms_a), (labels[na:], ms_b)):
        summed, = _group_sums(rows, n, [ms])
        sides.append(np.where(np.bincount(rows, minlength=n) > 0, summed, np.nan))
    a_ms, b_ms = sides
    only_a, only_b = np.isnan(b_ms), np.isnan(a_ms)
    a_ms, b_ms = np.where(only_b, 0.0, a_ms), np.where(only_a, 0.0, b_ms)
    op, typ, thread = (text(k[first].tolist()) for k in keys)
    delta = a_ms - b_ms
    fam = text([family(str(o), str(t)) for o, t in zip(op.tolist(), typ.tolist())])
    t = Columns({"op": op, "type": typ, "thread": thread, "family": fam, "a_ms": a_ms,
                 "b_ms": b_ms, "delta_ms": delta,
                 "change": _change(only_a, only_b, a_ms, b_ms, delta)})
    return t.take(_by_abs_delta(delta))


def normalized_type(op_type: str) -> str:
    """An op type spelled the same on every CPU and in eager and graph runs: ``_MklMatMul``,
    ``_FusedMatMul``, ``_MklNativeFusedConv2D`` -> ``MatMul``, ``Conv2D``."""
    import re
    return re.sub(r"^_(?:Mkl)?(?:Native)?(?:Fused)?", "", op_type) or op_type


def op_type_diff(ops: Columns) -> Columns:
    """``op_diff`` read by normalized op type, both threads summed: two modes name the same work
    differently (eager ``Conv2D`` on the main thread, graph ``model/conv1d/convolution`` run by
    ``_MklNativeFusedConv2D`` on a worker), so by name nearly every op is 'removed' and another
    'added'; by type they meet. Columns as ``op_diff`` (op: the type, thread: "both"; family: the
    first op's)."""
    if ops.empty:
        return Columns.no_rows(OP_COLUMNS)
    types = text([normalized_type(str(t)) for t in ops["type"].tolist()])
    labels, first = _groups([types])
    n = len(first)
    a_ms, b_ms = _group_sums(labels, n, [ops["a_ms"], ops["b_ms"]])
    change = ops["change"]
    in_a = np.bincount(labels[change != "only in b"], minlength=n) > 0
    in_b = np.bincount(labels[change != "only in a"], minlength=n) > 0
    op = text(types[first].tolist())
    delta = a_ms - b_ms
    t = Columns({"op": op, "type": op, "thread": text(["both"] * n),
                 "family": text(ops["family"][first].tolist()), "a_ms": a_ms, "b_ms": b_ms,
                 "delta_ms": delta, "change": _change(~in_b, ~in_a, a_ms, b_ms, delta)})
    return t.take(_by_abs_delta(delta))


def family_diff(ops: Columns) -> Columns:
    """Per op family (both threads summed; ``ops``: an ``op_diff``): a_ms, b_ms, delta_ms, largest
    |delta| first. Renamed functions and ops named differently in each mode (eager ``Conv2D``,
    graph ``.../convolution:_MklNativeFusedConv2D``, XLA ``convolution.3``) meet here."""
    if ops.empty:
        return Columns.no_rows(FAMILY_COLUMNS)
    names = np.asarray(ops["family"])
    keep = _has_key([names])
    labels, first = _groups([names[keep]])
    a_ms, b_ms, delta = _group_sums(labels, len(first), [np.asarray(ops[c])[keep]
                                                         for c in ("a_ms", "b_ms", "delta_ms")])
    fam = text(names[keep][first].tolist())
    return Columns({"family": fam, "a_ms": a_ms, "b_ms": b_ms, "delta_ms": delta}).take(
        _by_abs_delta(delta))


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
