"""Medians, spreads and confidence intervals of per-step times (numpy only, deterministic)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.columns import Columns
from traceinsight.resample import BOOTSTRAP_SAMPLES, SEED, bootstrap_medians

if TYPE_CHECKING:
    from traceinsight.model import Run

_DIFF_SEED = 20261121  # fixed: the same diff always shows the same intervals

# A change between two separate captures counts only beyond what run-to-run variation explains.
# Without interleaved rounds a capture cannot measure that variation, so a ratio within this share
# of 1 is called noise. On a shared machine, captures of one workload with nothing changed, minutes
# apart, can give medians about this far apart, and a mode caught by a burst of load far more
# (``tools/run_spread.py`` measures it on captures of your own). No fixed share covers a burst
# like that: the diff says the variation was assumed, not measured, and points to --rounds.
RUN_TO_RUN_TOLERANCE = 0.5
# With rounds, the between-round spread is measured; a change must still exceed this share.
MIN_RELATIVE_EFFECT = 0.05


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def median_ci(samples: np.ndarray, level: float = 0.95,
              boot: np.ndarray | None = None) -> tuple[float, float]:
    """Bootstrap percentile interval of the median (``boot``: the samples' bootstrap medians when
    the caller already has them)."""
    samples = np.asarray(samples, dtype=float)
    if len(samples) < 2:   # one step says nothing about the spread: no interval
        return float("nan"), float("nan")
    return _interval(bootstrap_medians(samples) if boot is None else boot, level)


# A 95 % interval of a median needs at least 6 steps on a side: with fewer, even the
# distribution-free interval (from the order statistics: all n steps on one side of the true median
# has probability 2 / 2**n) cannot reach 95 %, and a bootstrap of so few steps only repeats them.
MIN_STEPS_FOR_INTERVAL = 6
NO_INTERVAL_FEW = "too few steps for an interval"
NO_INTERVAL_DEGENERATE = "no interval: the resampled steps do not spread around the ratio"
# How the ratio between two modes is estimated, in the words every page uses.
RATIO_METHOD = ("Ratio: the two modes' median steps divided, with a 95 % bootstrap interval "
                "(each mode's steps resampled within its interleaved rounds; no interval with "
                f"fewer than {MIN_STEPS_FOR_INTERVAL} steps on a side). “No measurable difference” "
                "when the interval includes 1 or the interleaved rounds order the two modes "
                "differently.")


def _interval_around(est: float, lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) when they hold the estimate strictly inside, else NaNs: a percentile interval that
    ends at or excludes its own estimate (a bootstrap of few distinct values) says nothing."""
    if np.isfinite(lo) and np.isfinite(hi) and lo < est < hi:
        return lo, hi
    return float("nan"), float("nan")


def ratio_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95, boot_a: np.ndarray | None = None,
             boot_b: np.ndarray | None = None) -> tuple[float, float, float]:
    """median(a) / median(b) with a bootstrap percentile interval (both sides resampled
    independently; ``boot_a`` / ``boot_b``: their bootstrap medians when already computed). No
    interval (NaN) with fewer than 2 steps on a side (``mode_ratio`` asks more of an interval
    between modes)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    ratio = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:   # one step says nothing about the spread: no interval
        return ratio, float("nan"), float("nan")
    ma = bootstrap_medians(a) if boot_a is None else boot_a
    # the two sides must be paired with independent draws: shift b's resamples by a permutation
    mb = (bootstrap_medians(b) if boot_b is None else boot_b)[
        np.random.default_rng(SEED + 1).permutation(BOOTSTRAP_SAMPLES)]
    lo, hi = _interval(ma / mb, level)
    return ratio, lo, hi


def difference_ci(a: np.ndarray, b: np.ndarray, boot_a: np.ndarray | None,
                  boot_b: np.ndarray | None, level: float = 0.95) -> tuple[float, float]:
    """A 95 % interval of median(a) − median(b) from the same resampled medians the ratio's
    interval uses (NaN under the same conditions as ``mode_ratio``'s)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nan = (float("nan"), float("nan"))
    if min(len(a), len(b)) < MIN_STEPS_FOR_INTERVAL or boot_a is None or boot_b is None:
        return nan
    mb = boot_b[np.random.default_rng(SEED + 1).permutation(BOOTSTRAP_SAMPLES)]
    d = float(np.median(a) - np.median(b))
    return _interval_around(d, *_interval(boot_a - mb, level))


def paired_rounds(a_rounds, b_rounds) -> np.ndarray | None:
    """Per-round ratios median(a_i) / median(b_i) of two modes captured in the same interleaved
    rounds (round i of a ran next to round i of b), or None when they cannot be paired (no rounds,
    different round counts, fewer than 2 interleaved rounds with steps on both sides).

    Round 0 is each mode's own timing phase, run right after its capture while no other mode was
    timed (modes one after another), so it is not paired: only rounds 1.. ran interleaved."""
    if not a_rounds or not b_rounds or len(a_rounds) != len(b_rounds):
        return None
    r = [float(np.median(x)) / float(np.median(y)) for x, y in zip(a_rounds[1:], b_rounds[1:])
         if len(x) and len(y) and np.median(y) > 0]
    return np.asarray(r, dtype=float) if len(r) >= 2 else None


@dataclass(frozen=True)
class RatioEstimate:
    """The one estimate of how two modes' step times compare; every page shows this one.

    ratio: median(a) / median(b) of all their untraced steps (the medians shown beside it, and
    the ones the fastest mode is picked by). lo, hi: its 95 % percentile bootstrap interval,
    resampling each mode's steps within each of its interleaved rounds (NaN: no valid interval,
    ``note`` says why). significant: the interval excludes 1 and, when the modes ran in
    interleaved rounds, every paired round orders them the same way (a load burst that flips
    one round leaves the order unproven)."""

    ratio: float
    lo: float
    hi: float
    significant: bool
    basis: str          # "steps" | "steps within rounds"
    note: str = ""      # why there is no interval, or why it is not significant
    round_ratios: tuple[float, ...] = ()


def _round_sizes(rounds) -> tuple[int, ...] | None:
    return tuple(len(r) for r in rounds) if rounds else None


def mode_ratio(a: np.ndarray, b: np.ndarray, a_rounds=None, b_rounds=None,
               boot_a: np.ndarray | None = None, boot_b: np.ndarray | None = None,
               level: float = 0.95) -> RatioEstimate:
    """The ratio of two modes' median steps (a / b), its interval and whether it orders them:
    see ``RatioEstimate``. ``boot_a`` / ``boot_b``: the modes' bootstrap medians (resampled within
    rounds: ``ModeResult.boot_medians``) when already computed."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if boot_a is None and len(a) >= MIN_STEPS_FOR_INTERVAL:
        boot_a = bootstrap_medians(a, strata=_round_sizes(a_rounds))
    if boot_b is None and len(b) >= MIN_STEPS_FOR_INTERVAL:
        boot_b = bootstrap_medians(b, strata=_round_sizes(b_rounds))
    ratio, lo, hi = ratio_ci(a, b, level, boot_a=boot_a, boot_b=boot_b)
    if min(len(a), len(b)) < MIN_STEPS_FOR_INTERVAL:
        lo, hi = float("nan"), float("nan")
    lo, hi = _interval_around(ratio, lo, hi)
    paired = paired_rounds(a_rounds, b_rounds)
    basis = "steps within rounds" if a_rounds and b_rounds else "steps"
    note = ""
    if not np.isfinite(ratio):
        return RatioEstimate(ratio, lo, hi, False, basis, "no steps to compare")
    if not np.isfinite(lo):
        note = NO_INTERVAL_FEW if min(len(a), len(b)) < MIN_STEPS_FOR_INTERVAL else NO_INTERVAL_DEGENERATE
    significant = excludes_one(lo, hi)
    rr: tuple[float, ...] = ()
    if paired is not None:
        rr = tuple(float(x) for x in paired)
        if not (all(x > 1 for x in rr) or all(x < 1 for x in rr)) and not note:
            significant = False
            note = (f"the interleaved rounds order them differently (per-round ratios "
                    f"{min(rr):.2f} to {max(rr):.2f})")
    return RatioEstimate(ratio, lo, hi, bool(significant), basis, note, rr)


def delta_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95,
             stat: str = "median") -> tuple[float, float, float]:
    """stat(b) − stat(a) (``stat``: "median" or "mean") with a bootstrap percentile interval
    (independent resamples); no interval when it would not hold the difference strictly inside."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    f = np.mean if stat == "mean" else np.median
    d = float(f(b) - f(a))
    if len(a) < 2 or len(b) < 2:
        return d, float("nan"), float("nan")
    rng = np.random.default_rng(_DIFF_SEED)
    ma = f(rng.choice(a, size=(BOOTSTRAP_SAMPLES, len(a))), axis=1)
    mb = f(rng.choice(b, size=(BOOTSTRAP_SAMPLES, len(b))), axis=1)
    lo, hi = _interval(mb - ma, level)
    if d == 0.0 and lo == hi == 0.0:
        return d, lo, hi    # a category neither side spends time in: exactly no difference
    lo, hi = _interval_around(d, lo, hi)
    return d, lo, hi


def excludes_one(lo: float, hi: float) -> bool:
    return bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 1.0 or hi < 1.0))


def _drift(samples: np.ndarray) -> float:
    """|median(first half) / median(second half) − 1| of steps in time order (0 with < 6 steps)."""
    s = np.asarray(samples, dtype=float)
    if len(s) < 6:
        return 0.0
    h = len(s) // 2
    m1, m2 = float(np.median(s[:h])), float(np.median(s[h:]))
    return abs(max(m1, m2) / min(m1, m2) - 1.0) if min(m1, m2) > 0 else 0.0


@dataclass(frozen=True)
class BetweenRuns:
    """``between_runs``' verdict on the same mode captured twice: the ratio B / A with its
    interval, whether the change beats run-to-run variation (``significant``), the share it had to
    exceed (``tolerance``), where that share came from (``basis``: "rounds", measured from the
    captures' interleaved rounds, or "assumed") and the ``verdict`` ("slower" | "faster" |
    "within noise" | "no data")."""

    ratio: float
    ratio_lo: float
    ratio_hi: float
    significant: bool
    tolerance: float
    basis: str
    verdict: str


def between_runs(est: RatioEstimate, a_samples: np.ndarray, b_samples: np.ndarray, a_rounds=None,
                 b_rounds=None) -> BetweenRuns:
    """Is B's median step different from A's, two separate captures of the same mode, beyond what
    run-to-run variation explains?

    ``est``: the ratio B / A as every page shows it (``mode_ratio``, through the comparison of the
    two modes), so the diff's table and sentence quote one figure. On top of its interval, a change
    must exceed what each capture's own variation already shows. With interleaved rounds on both
    sides (>= 2 each), that is the spread of either capture's round medians ((max − min) / median,
    the larger of the two: a run whose rounds alone differ by 40 % cannot prove a 30 % change), at
    least MIN_RELATIVE_EFFECT. Without rounds a capture holds no measure of between-run variation,
    so the change counts only beyond RUN_TO_RUN_TOLERANCE, and ``basis`` says the variation was
    assumed, not measured (widened to the drift between the halves of either capture's steps,
    when larger).

    Returns a ``BetweenRuns``.
    """
    a = np.asarray(a_samples, dtype=float)
    b = np.asarray(b_samples, dtype=float)
    ra = [float(np.median(x)) for x in (a_rounds or ()) if len(x)]
    rb = [float(np.median(x)) for x in (b_rounds or ()) if len(x)]
    ratio, lo, hi = est.ratio, est.lo, est.hi
    if len(ra) >= 2 and len(rb) >= 2:
        ra_, rb_ = np.asarray(ra), np.asarray(rb)
        spread_a = (ra_.max() - ra_.min()) / float(np.median(ra_))
        spread_b = (rb_.max() - rb_.min()) / float(np.median(rb_))
        tolerance, basis = max(MIN_RELATIVE_EFFECT, float(spread_a), float(spread_b)), "rounds"
    else:
        # a capture whose own halves differ shows at least that much drift over time
        tolerance, basis = max(RUN_TO_RUN_TOLERANCE, _drift(a), _drift(b)), "assumed"
    if not np.isfinite(ratio):
        return BetweenRuns(ratio, lo, hi, False, tolerance, basis, "no data")
    beyond = ratio >= 1 + tolerance or ratio <= 1 / (1 + tolerance)
    significant = est.significant and beyond
    verdict = ("slower" if ratio > 1 else "faster") if significant else "within noise"
    return BetweenRuns(ratio, lo, hi, bool(significant), tolerance, basis, verdict)


def spread(samples: np.ndarray) -> dict[str, float]:
    """Median, quartiles, min, max and the coefficient of variation, in the samples' unit."""
    s = np.asarray(samples, dtype=float)
    if not len(s):
        nan = float("nan")
        return {"median": nan, "p25": nan, "p75": nan, "min": nan, "max": nan, "cv": nan, "n": 0}
    p25, med, p75 = np.percentile(s, [25, 50, 75])
    mean = float(np.mean(s))
    return {"median": float(med), "p25": float(p25), "p75": float(p75), "min": float(s.min()),
            "max": float(s.max()), "cv": float(np.std(s) / mean) if mean else float("nan"),
            "n": int(len(s))}


ANOTHER_PROGRAM = "another program: its ops differ from the fastest's, so not compared"



class VsFastest(str, Enum):
    """Where a mode stands against the run's fastest mode (the summary's ``vs_fastest``; every
    page that orders the modes reads it, none decides it again)."""
    FASTEST = "fastest"
    SLOWER = "slower"                       # its ratio's interval lies above 1
    SAME = "no measurable difference"       # the interval holds 1, or the rounds disagree
    ANOTHER_PROGRAM = "another program"     # its ops show another program: not compared


SUMMARY_COLUMNS = ["mode", "status", "median_ms", "p25_ms", "p75_ms", "ci_lo_ms", "ci_hi_ms", "n",
                   "ratio", "ratio_lo", "ratio_hi", "ratio_basis", "ratio_significant", "ratio_note",
                   "first_step_ms", "distortion", "fastest", "error", "vs_fastest"]


def summarize(run: "Run") -> Columns:
    """One row per mode: median ms/step with quartiles and CI, ratio to the fastest mode with its 95 %
    interval and whether it orders the two (``mode_ratio``, through ``Run.compare``: the figure
    every page shows; the fastest mode's own row is 1 without an interval) and the verdict it
    gives (``vs_fastest``: a ``VsFastest`` value, None without one), first-step cost,
    profiler distortion, and the error of failed modes. Use
    ``Run.summary()`` (a DataFrame) or ``Run.table("summary")``: one of the run's figures,
    computed when the run is made (``traceinsight.derive``)."""
    fastest = run.modes[run.fastest] if run.fastest is not None else None
    rows = []
    for m in run.modes.values():
        row: dict = {"mode": m.name, "status": m.status, "error": m.error}
        s = m.step_samples_ms if m.ok else np.array([])
        if len(s) and fastest is not None:
            sp = spread(s)
            lo, hi = median_ci(s, boot=m.boot_medians)
            row.update(median_ms=sp["median"], p25_ms=sp["p25"], p75_ms=sp["p75"], ci_lo_ms=lo,
                       ci_hi_ms=hi, n=sp["n"])
            if m.name == fastest.name:
                row.update(ratio=1.0, ratio_lo=float("nan"), ratio_hi=float("nan"),
                           ratio_basis=None, ratio_significant=False, ratio_note="",
                           vs_fastest=VsFastest.FASTEST.value)
            elif not run.same_program(m.name, fastest.name):
                row.update(ratio=float("nan"), ratio_lo=float("nan"), ratio_hi=float("nan"),
                           ratio_basis=None, ratio_significant=False, ratio_note=ANOTHER_PROGRAM,
                           vs_fastest=VsFastest.ANOTHER_PROGRAM.value)
            else:
                c = run.compare(m.name, fastest.name)
                row.update(ratio=c.ratio, ratio_lo=c.ratio_lo, ratio_hi=c.ratio_hi,
                           ratio_basis=c.basis, ratio_significant=c.significant,
                           ratio_note=c.note)
                if np.isfinite(c.ratio):
                    row["vs_fastest"] = (VsFastest.SLOWER if c.significant and c.ratio > 1.0
                                         else VsFastest.SAME).value
        first = None
        if m.timing is not None and m.timing.first_step_s is not None:
            first = m.timing.first_step_s * 1e3
        elif (split := m.first_step) is not None:
            first = float(np.nansum(list(split.values())))
        row["first_step_ms"] = first
        row["distortion"] = m.timing.distortion if m.timing is not None else None
        row["fastest"] = m.name == run.fastest
        rows.append(row)
    return Columns.from_records(rows, SUMMARY_COLUMNS)


# A step's category time is a stall when it exceeds the steps' median by this many robust standard
# deviations (1.4826 x the median absolute deviation) and by STALL_MIN_MS; stalls count as
# concentrated only when they hit at most STALL_MAX_STEP_SHARE of the steps.
STALL_SIGMAS = 5.0
STALL_MIN_MS = 0.05
STALL_MAX_STEP_SHARE = 0.25


def concentrated(values_ms: np.ndarray, step_nums: np.ndarray, total_ms: float) -> dict | None:
    """A cost concentrated in a few steps (input stalls, periodic checkpoints, retraces): the
    steps whose value stands out of the others (``STALL_SIGMAS`` robust deviations above the
    median), with their excess over the median summed and its share of ``total_ms`` (the traced
    steps' summed wall time). None when no step stands out, or too many do to call it a few.

    Returns steps ([(step_num, ms)], largest first), n_steps (steps looked at), excess_ms (summed
    over those steps, above the median), share (excess_ms / total_ms), median_ms, mean_ms."""
    v = np.asarray(values_ms, dtype=float)
    ok = np.isfinite(v)
    v, nums = v[ok], np.asarray(step_nums)[ok]
    if len(v) < 8 or not np.isfinite(total_ms) or total_ms <= 0:
        return None
    med = float(np.median(v))
    sigma = 1.4826 * float(np.median(np.abs(v - med)))
    hit = v > med + max(STALL_SIGMAS * sigma, STALL_MIN_MS)
    if not hit.any() or hit.sum() > STALL_MAX_STEP_SHARE * len(v):
        return None
    order = np.argsort(-v[hit], kind="stable")
    excess = float(np.sum(v[hit] - med))
    return {"steps": [(int(n), float(x)) for n, x in zip(nums[hit][order], v[hit][order])],
            "n_steps": int(len(v)), "excess_ms": excess, "share": excess / total_ms,
            "median_ms": med, "mean_ms": float(np.mean(v))}


# Categories whose few-step spikes have a cause the user controls (input stalls, retraces and
# compiles, periodic Python work); a few slow op or dispatch steps on a shared machine are as often
# another process taking the CPU.
SPIKE_CATEGORIES = ("input", "tracing", "compile", "python", "other")


def material(category: str, hit: dict) -> bool:
    """A concentrated cost worth showing: a spike category, at least 1 % of the traced time and
    50 µs per step on average."""
    return (category in SPIKE_CATEGORIES and hit["share"] >= 0.01
            and hit["excess_ms"] / hit["n_steps"] >= 0.05)


def concentrated_costs(m) -> dict[str, dict]:
    """Per category of a mode's steady traced steps, its ``concentrated`` cost (only the
    categories that have one), largest share first."""
    from traceinsight.model import CATEGORIES

    steps = m.table("steps")
    if steps.empty or "step_num" not in steps:
        return {}
    mask = m.steady_mask()
    wall = np.asarray(steps["wall_ms"], dtype=float)[mask]
    nums = np.asarray(steps["step_num"])[mask]
    total = float(np.nansum(wall))
    out = {}
    for c in CATEGORIES:
        if c not in steps:
            continue
        hit = concentrated(np.asarray(steps[c], dtype=float)[mask], nums, total)
        if hit is not None:
            out[c] = hit
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["share"]))
