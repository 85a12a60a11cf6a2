"""Medians, spreads and confidence intervals of per-step times (numpy only, deterministic)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from traceinsight.model import Run

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_WORK_MAX = 200_000_000  # resamples x samples drawn one by one; beyond: order statistics
_SEED = 20240521  # fixed: the same run always shows the same interval


_BOOT_CACHE: dict[tuple[int, bytes], np.ndarray] = {}


def bootstrap_medians(samples: np.ndarray) -> np.ndarray:
    """Medians of BOOTSTRAP_SAMPLES resamples (fixed seed), computed once per sample set: every
    interval of a mode (its median, its ratio to each other mode) reuses them."""
    samples = np.asarray(samples, dtype=float)
    key = (len(samples), hashlib.blake2b(samples.tobytes(), digest_size=16).digest())
    meds = _BOOT_CACHE.get(key)
    if meds is None and len(samples) * BOOTSTRAP_SAMPLES > BOOTSTRAP_WORK_MAX:
        # Too many samples to resample element by element (10 million steps would take hours):
        # draw each resample's median directly. The m-th smallest of n draws with replacement is
        # the sample at rank ceil(n * B), B ~ Beta(m, n + 1 - m) (the m-th order statistic of n
        # uniforms), so the bootstrap distribution of the (lower) median costs one sort.
        rng = np.random.default_rng(_SEED)
        n = len(samples)
        m = (n + 1) // 2
        ranks = np.ceil(n * rng.beta(m, n + 1 - m, size=BOOTSTRAP_SAMPLES)).astype(np.int64)
        meds = np.sort(samples)[np.clip(ranks, 1, n) - 1]
        _BOOT_CACHE[key] = meds
    if meds is None:
        rng = np.random.default_rng(_SEED)
        meds = np.empty(BOOTSTRAP_SAMPLES)
        # in blocks, so a long run's resample matrix stays small
        block = max(1, 2_000_000 // max(len(samples), 1))
        for lo in range(0, BOOTSTRAP_SAMPLES, block):
            hi = min(lo + block, BOOTSTRAP_SAMPLES)
            meds[lo:hi] = np.median(rng.choice(samples, size=(hi - lo, len(samples))), axis=1)
        if len(_BOOT_CACHE) > 256:
            _BOOT_CACHE.clear()
        _BOOT_CACHE[key] = meds
    return meds


def median_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Bootstrap percentile interval of the median."""
    samples = np.asarray(samples, dtype=float)
    if len(samples) < 2:
        v = float(samples[0]) if len(samples) else float("nan")
        return v, v
    lo, hi = np.quantile(bootstrap_medians(samples), [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def ratio_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """median(a) / median(b) with a bootstrap percentile interval (both sides resampled
    independently)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    ratio = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:
        return ratio, ratio, ratio
    ma = bootstrap_medians(a)
    # the two sides must be paired with independent draws: shift b's resamples by a permutation
    mb = bootstrap_medians(b)[np.random.default_rng(_SEED + 1).permutation(BOOTSTRAP_SAMPLES)]
    lo, hi = np.quantile(ma / mb, [(1 - level) / 2, (1 + level) / 2])
    return ratio, float(lo), float(hi)


def significantly_different(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> bool:
    """True when the interval of median(a)/median(b) excludes 1."""
    _, lo, hi = ratio_ci(a, b, level)
    return bool(np.isfinite(lo) and (lo > 1.0 or hi < 1.0))


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


SUMMARY_COLUMNS = ["mode", "status", "median_ms", "p25_ms", "p75_ms", "ci_lo_ms", "ci_hi_ms", "n",
                   "ratio", "ratio_lo", "ratio_hi", "first_step_ms", "distortion", "error"]


def summarize(run: "Run") -> pd.DataFrame:
    """One row per mode: median ms/step with quartiles and CI, ratio to the fastest mode with a 95 %
    bootstrap interval, first-step cost, profiler distortion, and the error of failed modes."""
    samples = {m.name: m.step_samples_ms for m in run.modes.values() if m.ok}
    medians = {k: float(np.median(v)) for k, v in samples.items() if len(v)}
    fastest = min(medians, key=medians.get) if medians else None
    rows = []
    for m in run.modes.values():
        row: dict = {"mode": m.name, "status": m.status, "error": m.error}
        s = samples.get(m.name)
        if s is not None and len(s):
            sp = spread(s)
            lo, hi = median_ci(s)
            ratio, rlo, rhi = ratio_ci(s, samples[fastest])
            row.update(median_ms=sp["median"], p25_ms=sp["p25"], p75_ms=sp["p75"], ci_lo_ms=lo,
                       ci_hi_ms=hi, n=sp["n"], ratio=ratio, ratio_lo=rlo, ratio_hi=rhi)
        first = None
        if m.timing is not None and m.timing.first_step_s is not None:
            first = m.timing.first_step_s * 1e3
        elif m.first_step is not None:
            first = float(m.first_step.sum())
        row["first_step_ms"] = first
        row["distortion"] = m.timing.distortion if m.timing is not None else None
        rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
