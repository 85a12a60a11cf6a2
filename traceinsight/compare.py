"""What explains the difference between two modes (or the same mode in two runs).

A comparison's tables (the category, op and op-family differences) are computed with numpy into
``Columns`` when the comparison is made: the run's summary makes one per mode against the
fastest, and ``traceinsight analyze`` prints the summary without importing pandas. The package
reads them with ``Comparison.table(name)``; the Python API's ``c.categories``, ``c.ops`` and
``c.families`` are new DataFrames built from them on every read.
"""

from __future__ import annotations

import numpy as np

from traceinsight.analysis.opfamily import family
from traceinsight.analysis.results import sort_order
from traceinsight.columns import Columns, text
from traceinsight.comparison import (
    CATEGORY_COLUMNS,
    COMPARISON_TABLES,
    DISTORTION_LARGE,
    FAMILY_COLUMNS,
    OP_COLUMNS,
    OP_KEY,
    Comparison,
    FamilyDelta,
    is_distorted,
)
from traceinsight.model import CATEGORIES, CorrectionKind, ModeResult
from traceinsight.resample import median
from traceinsight.stats import difference_ci, mode_ratio, pair_rounds

# the comparison's types live below the model (``traceinsight.comparison``); read from here too
__all__ = ["CATEGORY_COLUMNS", "COMPARISON_TABLES", "DISTORTION_LARGE", "FAMILY_COLUMNS",
           "OP_COLUMNS", "Comparison", "FamilyDelta", "is_distorted"]

# An op whose per-step self time changed by less than this share (and 0.01 ms) is "same".
_SAME_REL = 0.05
_SAME_ABS_MS = 0.01
def _distortion(m: ModeResult) -> float | None:
    return m.timing.distortion if m.timing is not None else None


def compare_modes(a: ModeResult, b: ModeResult, same_run: bool = True) -> Comparison:
    """Use ``Run.compare(a, b)``: it computes each pair once. ``same_run``: False for the modes of
    two runs (``rundiff``), which were never timed in the same rounds."""
    sa, sb = a.step_samples_ms, b.step_samples_ms
    ra, rb = _rounds(a), _rounds(b)
    paired = pair_rounds(a.timing, b.timing) if ra and rb and same_run else None
    est = mode_ratio(sa, sb, ra, rb, boot_a=a.boot_medians if len(sa) > 1 else None,
                     boot_b=b.boot_medians if len(sb) > 1 else None, paired=paired)
    a_ms = float(median(sa)) if len(sa) else float("nan")
    b_ms = float(median(sb)) if len(sb) else float("nan")
    ops = op_diff(a.table("ops"), b.table("ops"))
    return Comparison(a.name, b.name, a_ms, b_ms, a_ms - b_ms, est.ratio, est.lo, est.hi,
                      est.significant, category_diff(a, b), ops, family_diff(ops), est.basis,
                      a.traced_ms, b.traced_ms, _distortion(a), _distortion(b), est.note,
                      a.traced_mean_ms, b.traced_mean_ms,
                      *difference_ci(sa, sb, a.boot_medians if len(sa) > 1 else None,
                                     b.boot_medians if len(sb) > 1 else None, paired=paired),
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
