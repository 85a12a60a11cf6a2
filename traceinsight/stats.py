"""Medians, spreads and confidence intervals of per-step times (numpy only, deterministic)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache, cached_property
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.columns import Columns
from traceinsight.resample import BOOTSTRAP_SAMPLES, SEED, bootstrap_medians, median, quantiles

if TYPE_CHECKING:
    # (imported where a ratio is made: a run of one mode takes none; start-up time)
    from traceinsight.ratio import RatioEstimate
    from traceinsight.runview import RunView

_DIFF_SEED = 20261121  # fixed: the same diff always shows the same intervals

# A change between two separate captures counts only beyond what run-to-run variation explains.
# Without interleaved rounds a capture cannot measure that variation, so a ratio within this share
# of 1 is called noise. On a shared machine, captures of one workload with nothing changed, minutes
# apart, can give medians about this far apart, and a mode caught by a burst of load far more
# (``tools/run_spread.py`` measures it on captures of your own). No fixed share covers a burst
# like that: the diff says the variation was assumed, not measured, and points to --rounds.
RUN_TO_RUN_TOLERANCE = 0.5


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = quantiles(values, [(1 - level) / 2, (1 + level) / 2])
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
# Two modes timed in the same interleaved rounds (round i of one right beside round i of the other)
# are compared round by round; an interval of their ratio needs at least this many such rounds. The
# rounds' spread is the machine's run-to-run variation, and a resample of fewer rounds has so few
# distinct draws (6 with 2 rounds) that its percentiles only repeat the rounds.
MIN_PAIRED_ROUNDS = 3
# With fewer paired rounds than this, even the range of the rounds' ratios covers the middle one
# with less than 95 % (all k on one side: 2 / 2**k), so the interval is never narrower than it.
_ROUNDS_FOR_PERCENTILES = MIN_STEPS_FOR_INTERVAL
NO_INTERVAL_ROUNDS = f"too few paired rounds for an interval (fewer than {MIN_PAIRED_ROUNDS})"
NOT_INTERLEAVED = ("not timed in interleaved rounds, so a change under "
                   f"{RUN_TO_RUN_TOLERANCE * 100:.0f} % is treated as run-to-run noise")
# How the ratio between two modes is estimated, in the words every page uses.
RATIO_METHOD = ("Ratio: for two modes timed in the same interleaved rounds, the geometric mean of "
                "their paired rounds' ratios (round i's median step over the other mode's round i; "
                "round 0 and rounds set aside are not paired), with a 95 % bootstrap interval that "
                "resamples the rounds and the steps within them, never narrower than the rounds' "
                f"own ratios with fewer than {_ROUNDS_FOR_PERCENTILES} rounds. With fewer than "
                f"{MIN_PAIRED_ROUNDS} paired rounds, or none, the two modes' median steps divided, with a "
                "bootstrap interval of their steps (none with fewer than "
                f"{MIN_STEPS_FOR_INTERVAL} steps a side), and a change under "
                f"{RUN_TO_RUN_TOLERANCE * 100:.0f} % is noise: those steps were not timed side by side. "
                "“No measurable difference” when the interval includes 1, the paired rounds order "
                "the two modes differently, or the change is within that noise.")


def _interval_around(est: float, lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) when they hold the estimate strictly inside, else NaNs: a percentile interval that
    ends at or excludes its own estimate (a bootstrap of few distinct values) says nothing."""
    if np.isfinite(lo) and np.isfinite(hi) and lo < est < hi:
        return lo, hi
    return float("nan"), float("nan")


@cache
def _shift() -> np.ndarray:
    """The permutation that pairs one side's resampled medians with the other's independently
    (drawn once: the same for every pair)."""
    perm = np.random.default_rng(SEED + 1).permutation(BOOTSTRAP_SAMPLES)
    perm.flags.writeable = False
    return perm


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
    ratio = float(median(a) / median(b))
    if len(a) < 2 or len(b) < 2:   # one step says nothing about the spread: no interval
        return ratio, float("nan"), float("nan")
    ma = bootstrap_medians(a) if boot_a is None else boot_a
    # the two sides must be paired with independent draws: shift b's resamples by a permutation
    mb = (bootstrap_medians(b) if boot_b is None else boot_b)[_shift()]
    lo, hi = _interval(ma / mb, level)
    return ratio, lo, hi


def difference_ci(a: np.ndarray, b: np.ndarray, boot_a: np.ndarray | None,
                  boot_b: np.ndarray | None, level: float = 0.95,
                  paired: PairedRounds | None = None) -> tuple[float, float]:
    """A 95 % interval of median(a) − median(b) (the measured saving every page quotes) from the
    same resampled medians the ratio's interval uses (NaN under the same conditions as
    ``mode_ratio``'s). For modes timed in the same interleaved rounds (``paired``, enough of
    them for the ratio's interval), never narrower than what those rounds show, as the ratio's
    interval is not: the steps alone miss the machine's variation from round to round, and an
    interval of the saving far narrower than the ratio's beside it would claim more than the
    rounds allow (``paired_difference_bounds``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nan = (float("nan"), float("nan"))
    d = float(median(a) - median(b)) if len(a) and len(b) else float("nan")
    lo, hi = nan
    if min(len(a), len(b)) >= MIN_STEPS_FOR_INTERVAL and boot_a is not None and boot_b is not None:
        mb = boot_b[_shift()]
        lo, hi = _interval_around(d, *_interval(boot_a - mb, level))
    if paired is not None and len(paired.rounds) >= MIN_PAIRED_ROUNDS and np.isfinite(d):
        plo, phi = paired_difference_bounds(paired, level)
        lo = min(plo, d) if not np.isfinite(lo) else min(lo, plo)
        hi = max(phi, d) if not np.isfinite(hi) else max(hi, phi)
        lo, hi = _interval_around(d, lo, hi)
    return lo, hi


def paired_difference_bounds(p: PairedRounds, level: float = 0.95) -> tuple[float, float]:
    """What paired rounds show of a difference in ms (their steps are seconds, as timed): a
    bootstrap interval of the mean of the rounds' differences (median(a_i) − median(b_i))
    drawing the rounds and each drawn round's steps, as ``paired_ratio`` does for the ratio;
    never narrower than the rounds' own differences with fewer than ``_ROUNDS_FOR_PERCENTILES``
    rounds."""
    k = len(p.rounds)
    dd = np.asarray([float(median(x)) - float(median(y)) for x, y in zip(p.a, p.b)]) * 1e3
    da, db = p.boots
    diff = (da - db) * 1e3                                  # rounds x resamples, ms
    pick = np.random.default_rng(SEED + 3).integers(0, k, size=(BOOTSTRAP_SAMPLES, k))
    stat = diff[pick, np.arange(BOOTSTRAP_SAMPLES)[:, None]].mean(axis=1)
    lo, hi = _interval(stat, level)
    if k < _ROUNDS_FOR_PERCENTILES or not np.any((dd >= lo) & (dd <= hi)):
        lo, hi = min(lo, float(dd.min())), max(hi, float(dd.max()))
    return float(lo), float(hi)


@dataclass(frozen=True)
class PairedRounds:
    """Two modes' steps in the rounds they were timed in together: round ``rounds[i]`` of a
    (``a[i]``) ran right beside the same round of b (``b[i]``)."""

    rounds: tuple[int, ...]
    a: tuple[np.ndarray, ...]
    b: tuple[np.ndarray, ...]

    def ratios(self) -> np.ndarray:
        """median(a_i) / median(b_i) per paired round."""
        return np.asarray([float(median(x)) / float(median(y)) for x, y in zip(self.a, self.b)],
                          dtype=float)

    @cached_property
    def boots(self) -> tuple[np.ndarray, np.ndarray]:
        """Each round's bootstrap medians (rounds x resamples, seconds), a's and b's: drawn once
        for both the ratio's interval (``paired_ratio``) and the saving's
        (``paired_difference_bounds``)."""
        return (np.stack([_round_boot(x, SEED + 2 * i) for i, x in enumerate(self.a)]),
                np.stack([_round_boot(y, SEED + 2 * i + 1) for i, y in enumerate(self.b)]))


# timestamps are written to the millisecond: windows this close count as touching
_WINDOW_SLACK_S = 0.002


def _windows(t) -> dict[int, tuple[float, float]] | None:
    """Round index -> the wall-clock span of all its attempts (used, re-run, set aside); None when
    a round has no window (older run folders)."""
    out: dict[int, tuple[float, float]] = {}
    for r in (*(t.round_loads or ()), *t.set_aside):
        if r.t_start is None or r.t_end is None:
            return None
        lo, hi = out.get(r.round, (r.t_start, r.t_end))
        out[r.round] = (min(lo, r.t_start), max(hi, r.t_end))
    return out


def interleaved(ta, tb) -> bool:
    """Whether two modes' untraced timings (``model.Timing``) were taken in the same interleaved
    rounds of one capture: every round index of either ran after the previous index had ended
    on both sides and before the next began (A0 B0 A1 B1 ...). Modes of another capture, a
    resumed one, ``run --into`` or a foreign trace (no rounds) were timed apart. Rounds recorded
    without windows (older run folders) are read as before: interleaved when both modes have the
    same number of rounds."""
    if ta is None or tb is None or not ta.rounds or not tb.rounds:
        return False
    wa, wb = _windows(ta), _windows(tb)
    if wa is None or wb is None or ta.round_loads is None or tb.round_loads is None:
        return len(ta.rounds) == len(tb.rounds)
    spans: dict[int, tuple[float, float]] = {}
    for w in (wa, wb):
        for i, (lo, hi) in w.items():
            l0, h0 = spans.get(i, (lo, hi))
            spans[i] = (min(l0, lo), max(h0, hi))
    order = sorted(spans)
    if not (set(wa) & set(wb)) - {0}:
        return False
    return all(spans[i][1] <= spans[j][0] + _WINDOW_SLACK_S for i, j in zip(order, order[1:]))


def pair_rounds(ta, tb) -> PairedRounds | None:
    """The rounds two modes' timings (``model.Timing``) were taken in together: the round indices
    both used, after round 0 (each mode's own timing phase, taken while the modes were captured one
    after another), each with steps on both sides. None when the two were not ``interleaved``."""
    if not interleaved(ta, tb):
        return None
    la, lb = ta.round_loads, tb.round_loads
    ia = [r.round for r in la] if la is not None else list(range(len(ta.rounds)))
    ib = [r.round for r in lb] if lb is not None else list(range(len(tb.rounds)))
    a_by, b_by = dict(zip(ia, ta.rounds)), dict(zip(ib, tb.rounds))
    common = [i for i in ia if i >= 1 and i in b_by and len(a_by[i]) and len(b_by[i])
              and float(median(b_by[i])) > 0]
    return PairedRounds(tuple(common), tuple(np.asarray(a_by[i], dtype=float) for i in common),
                        tuple(np.asarray(b_by[i], dtype=float) for i in common))


# rounds up to this many steps are resampled step by step (a few ms each)
_ROUND_RESAMPLED = 30


def _round_boot(x: np.ndarray, seed: int) -> np.ndarray:
    """Bootstrap medians of one round's steps; a round of more than ``_ROUND_RESAMPLED`` steps
    draws its (lower) median from the order statistics (the m-th smallest of n draws sits at rank
    ceil(n B), B ~ Beta(m, n + 1 - m)), so a round of many fast steps costs one sort."""
    x = np.asarray(x, dtype=float)
    if len(x) <= _ROUND_RESAMPLED:
        return bootstrap_medians(x, seed=seed)
    rng = np.random.default_rng(seed)
    n, m = len(x), (len(x) + 1) // 2
    ranks = np.ceil(n * rng.beta(m, n + 1 - m, size=BOOTSTRAP_SAMPLES)).astype(np.int64)
    return np.sort(x)[np.clip(ranks, 1, n) - 1]


def paired_ratio(p: PairedRounds, level: float = 0.95) -> RatioEstimate:
    """The ratio of two modes from their paired rounds alone: the geometric mean of the rounds'
    ratios, with a bootstrap interval that draws the rounds (the machine's variation from round
    to round) and each drawn round's steps (its own spread), never narrower than the rounds'
    ratios with fewer than ``_ROUNDS_FOR_PERCENTILES`` rounds; none with fewer than
    ``MIN_PAIRED_ROUNDS``. An interval that held none of the rounds' ratios would contradict
    every round: it is widened to them (it cannot happen below ``_ROUNDS_FOR_PERCENTILES``)."""
    from traceinsight.ratio import RatioEstimate
    rr = p.ratios()
    k = len(rr)
    basis = "paired rounds"
    if not k:
        return RatioEstimate(float("nan"), float("nan"), float("nan"), False, basis,
                             "no paired rounds with steps on both sides")
    ratio = float(np.exp(np.mean(np.log(rr))))
    rtuple = tuple(float(x) for x in rr)
    if k < MIN_PAIRED_ROUNDS:
        return RatioEstimate(ratio, float("nan"), float("nan"), False, basis,
                             NO_INTERVAL_ROUNDS, rtuple, paired=k)
    da, db = p.boots
    la, lb = np.log(da), np.log(db)
    logr = la - lb                                          # rounds x resamples
    rng = np.random.default_rng(SEED + 3)
    pick = rng.integers(0, k, size=(BOOTSTRAP_SAMPLES, k))  # the rounds each resample draws
    stat = np.exp(logr[pick, np.arange(BOOTSTRAP_SAMPLES)[:, None]].mean(axis=1))
    lo, hi = _interval(stat, level)
    if k < _ROUNDS_FOR_PERCENTILES or not np.any((rr >= lo) & (rr <= hi)):
        lo, hi = min(lo, float(rr.min())), max(hi, float(rr.max()))
    lo, hi = min(lo, ratio), max(hi, ratio)
    note = ""
    orders = excludes_one(lo, hi)
    if not (all(x > 1 for x in rr) or all(x < 1 for x in rr)):
        orders = False
        # said the same read either way round (``Comparison.flipped`` keeps the note)
        slower, faster = int((rr > 1).sum()), int((rr < 1).sum())
        note = (f"the interleaved rounds order them differently: {max(slower, faster)} of {k} "
                f"one way, {min(slower, faster)} the other")
    return RatioEstimate(ratio, lo, hi, bool(orders), basis, note, rtuple, bool(orders), k)


def _round_sizes(rounds) -> tuple[int, ...] | None:
    return tuple(len(r) for r in rounds) if rounds else None


def mode_ratio(a: np.ndarray, b: np.ndarray, a_rounds=None, b_rounds=None,
               boot_a: np.ndarray | None = None, boot_b: np.ndarray | None = None,
               level: float = 0.95, paired: PairedRounds | None = None) -> RatioEstimate:
    """The ratio of two modes' step times (a / b), its interval and whether it orders them: see
    ``RatioEstimate``. ``paired``: their paired rounds (``pair_rounds``) when they were timed in
    the same interleaved rounds: the estimate then comes from those alone (``paired_ratio``).
    Otherwise from all the steps (``boot_a`` / ``boot_b``: the modes' bootstrap medians,
    resampled within each mode's rounds: ``ModeResult.boot_medians``, when already computed),
    and a change counts only beyond ``RUN_TO_RUN_TOLERANCE``."""
    from traceinsight.ratio import RatioEstimate
    if paired is not None and len(paired.rounds) >= MIN_PAIRED_ROUNDS:
        return paired_ratio(paired, level)
    # too few paired rounds for an interval (a disturbed round set aside, ``--rounds 2``): the
    # steps of all rounds, as for modes timed apart, so that a large change is still one
    k = len(paired.rounds) if paired is not None else 0
    few = "" if paired is None else (
        ("no paired round with steps on both sides" if not k else
         f"only {k} paired round{'' if k == 1 else 's'} (fewer than {MIN_PAIRED_ROUNDS})")
        + ": compared by all their steps, as modes timed apart")
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
    basis = "steps within rounds" if a_rounds and b_rounds else "steps"
    if not np.isfinite(ratio):
        return RatioEstimate(ratio, lo, hi, False, basis, "no steps to compare")
    note = ""
    if not np.isfinite(lo):
        note = NO_INTERVAL_FEW if min(len(a), len(b)) < MIN_STEPS_FOR_INTERVAL else NO_INTERVAL_DEGENERATE
    orders = excludes_one(lo, hi)
    significant = orders and beyond(ratio, RUN_TO_RUN_TOLERANCE)
    if orders and not significant:
        note = NOT_INTERLEAVED
    if few:
        # they were interleaved, too thinly to pair: the run-to-run rule without "not interleaved"
        note = few + ("; so a change under "
                      f"{RUN_TO_RUN_TOLERANCE * 100:.0f} % is treated as run-to-run noise"
                      if note == NOT_INTERLEAVED else f"; {note}" if note else "")
    return RatioEstimate(ratio, lo, hi, bool(significant), basis, note, (), bool(orders))


def beyond(ratio: float, tolerance: float) -> bool:
    """The ratio is a change larger than ``tolerance`` either way (1.5 or 1 / 1.5 for 0.5)."""
    return bool(np.isfinite(ratio) and (ratio >= 1 + tolerance or ratio <= 1 / (1 + tolerance)))


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


def spread(samples: np.ndarray) -> dict[str, float]:
    """Median, quartiles, min, max and the coefficient of variation, in the samples' unit."""
    s = np.asarray(samples, dtype=float)
    if not len(s):
        nan = float("nan")
        return {"median": nan, "p25": nan, "p75": nan, "min": nan, "max": nan, "cv": nan, "n": 0}
    p25, med, p75 = quantiles(s, [0.25, 0.5, 0.75])     # as np.percentile(s, [25, 50, 75])
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


def summarize(run: RunView) -> Columns:
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
    med = float(median(v))
    sigma = 1.4826 * float(median(np.abs(v - med)))
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
