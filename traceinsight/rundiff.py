"""What changed between two runs (matched by mode name) or two modes of one run: the diff as data.

A is "before", B is "after": every delta is B − A (positive: B is slower). The ratio and its
interval are the comparison's (``stats.mode_ratio``), the one figure every page shows for the pair.
Two modes of one run: significant when the comparison orders them. The same mode in two runs:
``between_runs`` also asks the change to exceed run-to-run variation (either capture's own
round-to-round spread when both have interleaved rounds, else an assumed tolerance, and the pair
says which). Per-category significance: a bootstrap interval of the difference of the per-step
category means of the host-traced steady steps (``stats.delta_ci``).

``diff_runs`` computes every figure and every decision of the diff once, into a frozen
``RunDiff``; ``report.diff`` writes its document (sentences, records) from it and decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight.columns import Columns, text
from traceinsight.compare import Comparison, compare_modes, op_type_diff
from traceinsight.machineload import load_explains
from traceinsight.model import CATEGORIES, ModeResult, Run
from traceinsight.ratio import RatioEstimate
from traceinsight.resample import median
from traceinsight.stats import RUN_TO_RUN_TOLERANCE, beyond, delta_ci

if TYPE_CHECKING:
    from collections.abc import Sequence

# the columns of ``PairDiff.ops``
OP_COLUMNS = ("op", "type", "thread", "family", "a_ms", "b_ms", "delta_ms", "change")
# what ``PairDiff.ops``' change column holds, B against A
OP_CHANGES = ("slower", "faster", "added", "removed", "same")

# from A's side of the comparison of A with B: an op only in A was removed in B; A slower = B faster
_CHANGE = {"only in b": "added", "only in a": "removed", "faster": "slower", "slower": "faster",
           "same": "same"}

# With rounds, the between-round spread is measured; a change must still exceed this share.
MIN_RELATIVE_EFFECT = 0.05


def _drift(samples: np.ndarray) -> float:
    """|median(first half) / median(second half) − 1| of steps in time order (0 with < 6 steps)."""
    s = np.asarray(samples, dtype=float)
    if len(s) < 6:
        return 0.0
    h = len(s) // 2
    m1, m2 = float(median(s[:h])), float(median(s[h:]))
    return abs(max(m1, m2) / min(m1, m2) - 1.0) if min(m1, m2) > 0 else 0.0


@dataclass(frozen=True)
class BetweenRuns:
    """``between_runs``' verdict on the same mode captured twice: the ratio B / A with its
    interval, whether the change beats run-to-run variation (``significant``), the share it had to
    exceed (``tolerance``), where that share came from (``basis``: "rounds", measured from the
    captures' interleaved rounds, or "assumed"), the ``verdict`` ("slower" | "faster" | "within
    noise" | "machine differed" | "no data"), each capture's load (``a_load`` / ``b_load``: the
    share of the CPUs other processes took while its steps were timed, ``Timing.other_cpu_busy``;
    None where not recorded) and whether that load explains the change (``load_explains``)."""

    ratio: float
    ratio_lo: float
    ratio_hi: float
    significant: bool
    tolerance: float
    basis: str
    verdict: str
    a_load: float | None = None
    b_load: float | None = None
    load_explains: bool = False


def between_runs(est: RatioEstimate, a_samples: np.ndarray, b_samples: np.ndarray, a_rounds=None,
                 b_rounds=None, a_load: float | None = None,
                 b_load: float | None = None) -> BetweenRuns:
    """Is B's median step different from A's, two separate captures of the same mode, beyond what
    run-to-run variation and the machine's load explain?

    ``est``: the ratio B / A as every page shows it (``mode_ratio``, through the comparison of the
    two modes), so the diff's table and sentence quote one figure; its ``orders`` (the interval
    excludes 1) is the first condition. On top of it, a change must exceed what each capture's
    own variation already shows. With interleaved rounds on both sides (>= 2 each), that is the
    spread of either capture's round medians ((max − min) / median, the larger of the two: a run
    whose rounds alone differ by 40 % cannot prove a 30 % change), at least MIN_RELATIVE_EFFECT.
    Without rounds a capture holds no measure of between-run variation, so the change counts only
    beyond RUN_TO_RUN_TOLERANCE, and ``basis`` says the variation was assumed, not measured
    (widened to the drift between the halves of either capture's steps, when larger).

    ``a_load`` / ``b_load``: each capture's other-process share of the CPUs. A change in the
    direction the load points (the slower capture ran disturbed, or busier by
    ``machineload.LOAD_EXPLAINS``) is never significant: the verdict is "machine differed".
    """
    a = np.asarray(a_samples, dtype=float)
    b = np.asarray(b_samples, dtype=float)
    ra = [float(median(x)) for x in (a_rounds or ()) if len(x)]
    rb = [float(median(x)) for x in (b_rounds or ()) if len(x)]
    ratio, lo, hi = est.ratio, est.lo, est.hi
    if len(ra) >= 2 and len(rb) >= 2:
        ra_, rb_ = np.asarray(ra), np.asarray(rb)
        spread_a = (ra_.max() - ra_.min()) / float(median(ra_))
        spread_b = (rb_.max() - rb_.min()) / float(median(rb_))
        tolerance, basis = max(MIN_RELATIVE_EFFECT, float(spread_a), float(spread_b)), "rounds"
    else:
        # a capture whose own halves differ shows at least that much drift over time
        tolerance, basis = max(RUN_TO_RUN_TOLERANCE, _drift(a), _drift(b)), "assumed"
    if not np.isfinite(ratio):
        return BetweenRuns(ratio, lo, hi, False, tolerance, basis, "no data", a_load, b_load)
    slower, faster = (b_load, a_load) if ratio > 1 else (a_load, b_load)
    explained = ratio != 1 and load_explains(slower, faster)
    counts = est.orders and beyond(ratio, tolerance)   # a change, were the machine the same
    significant = counts and not explained
    verdict = ("slower" if ratio > 1 else "faster") if significant else \
        "machine differed" if counts else "within noise"
    return BetweenRuns(ratio, lo, hi, bool(significant), tolerance, basis, verdict, a_load,
                       b_load, explained)


@dataclass(frozen=True)
class CategoryDelta:
    """One category of a pair: both means (ms/step of the traced steady steps: they add up to the
    pair's traced delta; None where a side has no such category), B − A, and its 95 % bootstrap
    interval with whether it counts (None: no interval)."""

    category: str
    a_ms: float | None
    b_ms: float | None
    delta_ms: float
    delta_lo: float | None = None
    delta_hi: float | None = None
    significant: bool | None = None


@dataclass(frozen=True)
class RetraceDelta:
    """One traced function of a pair: its traces and tracing / compile time on either side, summed
    over its retrace rows (NaN where a side never traced it)."""

    function: str
    a_traced: float
    b_traced: float
    a_tracing_ms: float
    b_tracing_ms: float
    a_compile_ms: float
    b_compile_ms: float


@dataclass(frozen=True)
class EnvChange:
    """An environment entry (``env NAME`` for an environment variable) that differs between A and B."""

    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class PairDiff:
    """Mode ``a`` (of A) against mode ``b`` (of B).

    ``comparison``: B against A (``Comparison.flipped`` of the comparison of A with B, so its own
    ``a`` is B): delta_ms = B − A, ratio = B / A with its interval, the medians, the traced means.
    ``between_runs``: two captures only, whether the change beats run-to-run variation.
    ``significant``: the pair's verdict (the comparison's for two modes of one run, the
    between-runs one for two captures); ``within_noise``: the steps alone order the two, but
    run-to-run variation or the machine's load (``between_runs.load_explains``) explains the
    change.
    ``ops``: the op differences (``OP_COLUMNS``; delta_ms = B − A, a side's ms None where the op
    ran only on the other; change one of ``OP_CHANGES``), largest |delta| first, matched by name or,
    for two different modes, by normalized op type (``ops_matched_by``). ``families``: op time per
    family, delta_ms = B − A."""

    a: str
    b: str
    comparison: Comparison
    between_runs: BetweenRuns | None
    significant: bool
    within_noise: bool
    categories: tuple[CategoryDelta, ...]
    ops: Columns
    ops_matched_by: str
    families: Columns
    retraces: tuple[RetraceDelta, ...]


@dataclass(frozen=True)
class RunDiff:
    """The diff of run ``a`` (before) and run ``b`` (after), or of two modes of one run
    (``same_run``: ``a`` is ``b``).

    ``pairs``: one ``PairDiff`` per pair compared; ``significant_pairs`` those that count.
    ``only_in_a`` / ``only_in_b``: mode names not paired (only in one run, or failed on one side;
    empty when the pairs were named). ``environment_changes``: none for one run.
    Two captures only (None otherwise, or without pairs): ``rounds_measured``, whether every pair's
    run-to-run variation was measured from interleaved rounds, and ``tolerance``, the smallest
    share of change any pair had to exceed; ``a_load`` / ``b_load``: the share of the CPUs other
    processes took while each run's paired modes were timed (the median over those modes;
    None where no mode recorded it), and ``load_differs``: whether the load explains a change
    of at least one pair (``BetweenRuns.load_explains``)."""

    a: Run
    b: Run
    same_run: bool
    pairs: tuple[PairDiff, ...]
    significant_pairs: tuple[PairDiff, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    environment_changes: tuple[EnvChange, ...]
    rounds_measured: bool | None = None
    tolerance: float | None = None
    a_load: float | None = None
    b_load: float | None = None
    load_differs: bool = False


def _run_load(modes: Sequence[ModeResult]) -> float | None:
    """The median share of the CPUs other processes took while these modes were timed."""
    vals = [m.timing.other_cpu_busy for m in modes if m.timing is not None]
    known = [v for v in vals if v is not None]
    return float(np.median(known)) if known else None


def match_modes(run_a: Run, run_b: Run) -> tuple[list[tuple[ModeResult, ModeResult]], list[str], list[str]]:
    """Pairs of ok modes with the same name; names only in A, only in B (or failed on one side)."""
    pairs = [(m, run_b.modes[n]) for n, m in run_a.modes.items()
             if n in run_b.modes and m.ok and run_b.modes[n].ok]
    paired = {a.name for a, _ in pairs}
    return (pairs, [n for n in run_a.modes if n not in paired],
            [n for n in run_b.modes if n not in paired])


def diff_runs(run_a: Run, run_b: Run,
              pairs: Sequence[tuple[ModeResult, ModeResult]] | None = None) -> RunDiff:
    """The diff of two runs (modes matched by name) or of explicit mode pairs (``run_a is run_b``:
    two modes of one run, compared as the run compares them)."""
    if pairs is None:
        pairs, only_a, only_b = match_modes(run_a, run_b)
    else:
        only_a, only_b = [], []
    same_run = run_a is run_b
    diffs = tuple(pair_diff(a, b, run_a.compare(a.name, b.name) if same_run else None,
                            across_runs=not same_run) for a, b in pairs)
    rounds_measured: bool | None = None
    tolerance: float | None = None
    a_load = b_load = None
    load_differs = False
    if diffs and not same_run:
        verdicts = [p.between_runs for p in diffs if p.between_runs is not None]
        rounds_measured = all(v.basis == "rounds" for v in verdicts)
        tolerance = min(v.tolerance for v in verdicts)
        a_load, b_load = _run_load([a for a, _ in pairs]), _run_load([b for _, b in pairs])
        load_differs = any(v.load_explains for v in verdicts)
    return RunDiff(a=run_a, b=run_b, same_run=same_run, pairs=diffs,
                   significant_pairs=tuple(p for p in diffs if p.significant),
                   only_in_a=tuple(only_a), only_in_b=tuple(only_b),
                   environment_changes=() if same_run else env_changes(run_a.environment,
                                                                         run_b.environment),
                   rounds_measured=rounds_measured, tolerance=tolerance, a_load=a_load,
                   b_load=b_load, load_differs=load_differs)


def pair_diff(a: ModeResult, b: ModeResult, ab: Comparison | None = None,
              across_runs: bool = False) -> PairDiff:
    """One pair of the diff. ``ab``: the comparison of A with B when the caller has it (two modes
    of one run: the run's own); ``across_runs``: A and B come from two captures, so significance
    must also beat run-to-run variation."""
    if ab is None:
        ab = compare_modes(a, b, same_run=not across_runs)
    c = ab.flipped()   # B against A: its delta is B − A
    v = None
    significant, within_noise = bool(c.significant), False
    if across_runs:
        v = between_runs(c.estimate, a.step_samples_ms, b.step_samples_ms,
                         a.timing.rounds if a.timing is not None else None,
                         b.timing.rounds if b.timing is not None else None,
                         a.timing.other_cpu_busy if a.timing is not None else None,
                         b.timing.other_cpu_busy if b.timing is not None else None)
        significant = v.significant
        within_noise = bool(not v.significant and c.orders and np.isfinite(v.ratio))
    by_type = a.name != b.name
    return PairDiff(a=a.name, b=b.name, comparison=c, between_runs=v, significant=significant,
                    within_noise=within_noise,
                    categories=category_deltas(a, b, v.tolerance if v is not None else None,
                                               _load_directions(v)),
                    ops=_op_changes(ab, by_type), ops_matched_by="type" if by_type else "name",
                    families=_family_changes(ab), retraces=retrace_deltas(a, b))


def _load_directions(v: BetweenRuns | None) -> tuple[bool, bool]:
    """(the load explains B slower, the load explains A slower) for two captures."""
    if v is None:
        return False, False
    return load_explains(v.b_load, v.a_load), load_explains(v.a_load, v.b_load)


def category_deltas(a: ModeResult, b: ModeResult, tolerance: float | None = None,
                    load: tuple[bool, bool] = (False, False)) -> tuple[CategoryDelta, ...]:
    """Per category: both means (the user's step, ``ModeResult.category_means``: they add up to
    the pair's untraced medians, so the deltas add up to their difference), B − A with its
    interval (from the traced steps, each corrected by its category's factor, so their mean is
    the mean above), largest |delta| first; ``tolerance`` (two captures): a change counts only
    when the larger side exceeds the smaller by that share as well (as for the step); ``load``
    (two captures, ``_load_directions``): a category slower on the side the machine's load
    explains as slower never counts."""
    ca, cb = a.category_means(), b.category_means()
    sa, sb = (m.table("steps").take(m.steady_mask()) for m in (a, b))

    def factor(m: ModeResult, c: str) -> float:
        fix = m.correction
        return fix.user[c] / fix.traced[c] if fix is not None and fix.traced[c] > 0 else 1.0

    rows = []
    for c in CATEGORIES:
        delta = float(cb.get(c, np.nan)) - float(ca.get(c, np.nan))
        lo = hi = sig = None
        if c in sa and c in sb and len(sa) and len(sb):
            _, lo_, hi_ = delta_ci(np.asarray(sa[c], dtype=float) * factor(a, c),
                                   np.asarray(sb[c], dtype=float) * factor(b, c), stat="mean")
            if np.isfinite(lo_):
                sig = bool(lo_ > 0 or hi_ < 0)
                if tolerance is not None:
                    small = min(abs(float(ca.get(c, 0) or 0)), abs(float(cb.get(c, 0) or 0)))
                    sig = sig and abs(delta) > tolerance * small
                if (delta > 0 and load[0]) or (delta < 0 and load[1]):
                    sig = False
                lo, hi = lo_, hi_
        rows.append(CategoryDelta(c, ca.get(c), cb.get(c), delta, lo, hi, sig))
    rows.sort(key=lambda r: -abs(r.delta_ms) if np.isfinite(r.delta_ms) else 0.0)
    return tuple(rows)


def _op_changes(ab: Comparison, by_type: bool) -> Columns:
    """The comparison of A with B read from B's side: ops added / removed / slower / faster / same
    in B, delta_ms = B − A. ``by_type`` (two different modes): ops matched by normalized type."""
    ops = op_type_diff(ab.table("ops")) if by_type else ab.table("ops")
    if ops.empty:
        return Columns.no_rows(OP_COLUMNS)
    change = ops["change"]

    def side(col: str, absent: str) -> np.ndarray:
        # an op only on one side has no time on the other: null, not 0
        v = np.asarray(ops[col], dtype=object).copy()
        v[change == absent] = None
        return v

    return Columns({"op": ops["op"], "type": ops["type"], "thread": ops["thread"],
                    "family": ops["family"], "a_ms": side("a_ms", "only in b"),
                    "b_ms": side("b_ms", "only in a"), "delta_ms": -ops["delta_ms"],
                    "change": text([_CHANGE.get(k, k) for k in change.tolist()])})


def _family_changes(ab: Comparison) -> Columns:
    """Op time per family (ops matched across modes and renames); delta_ms = B − A."""
    f = ab.table("families")
    return f if f.empty else Columns({n: -f[n] if n == "delta_ms" else f[n] for n in f.columns})


def retrace_deltas(a: ModeResult, b: ModeResult) -> tuple[RetraceDelta, ...]:
    """Per traced function of either mode: its traces and tracing / compile time on each side."""
    # A groupby and an outer merge: pandas, built here from the modes' columns and imported only
    # when a diff is made, so that importing the analysis (``traceinsight analyze``) stays
    # pandas-free. Kept in pandas because its outer merge decides the rows' order and the NaN of a
    # side that never traced a function, which the diff's pages show as they are.
    import pandas as pd

    cols = ["function", "traced_calls", "tracing_ms", "compile_ms"]

    def side(m: ModeResult) -> pd.DataFrame:
        r = m.table("retraces")
        if r.empty:
            return pd.DataFrame(columns=cols)
        return r.to_pandas().groupby("function", as_index=False)[cols[1:]].sum()

    m = side(a).merge(side(b), on="function", how="outer", suffixes=("_a", "_b"))
    return tuple(RetraceDelta(r.function, r.traced_calls_a, r.traced_calls_b, r.tracing_ms_a,
                              r.tracing_ms_b, r.compile_ms_a, r.compile_ms_b)
                 for r in m.itertuples(index=False))


def env_changes(a: dict, b: dict) -> tuple[EnvChange, ...]:
    """The environment entries that differ, A's keys first; environment variables as ``env NAME``."""
    def flat(env: dict) -> dict:
        out = {k: v for k, v in env.items() if k != "env_vars"}
        out.update({f"env {k}": v for k, v in (env.get("env_vars") or {}).items()})
        return out
    fa, fb = flat(a), flat(b)
    return tuple(EnvChange(k, fa.get(k), fb.get(k)) for k in dict.fromkeys([*fa, *fb])
                 if fa.get(k) != fb.get(k))
