"""Medians, spreads and confidence intervals of per-step times (numpy only, deterministic)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from traceinsight.model import Run

BOOTSTRAP_SAMPLES = 2000
_SEED = 20240521  # fixed: the same run always shows the same interval


def median_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Bootstrap percentile interval of the median."""
    samples = np.asarray(samples, dtype=float)
    if len(samples) < 2:
        v = float(samples[0]) if len(samples) else float("nan")
        return v, v
    rng = np.random.default_rng(_SEED)
    meds = np.median(rng.choice(samples, size=(BOOTSTRAP_SAMPLES, len(samples))), axis=1)
    lo, hi = np.quantile(meds, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def ratio_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """median(a) / median(b) with a bootstrap percentile interval (resampling both sides)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    ratio = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:
        return ratio, ratio, ratio
    rng = np.random.default_rng(_SEED)
    ma = np.median(rng.choice(a, size=(BOOTSTRAP_SAMPLES, len(a))), axis=1)
    mb = np.median(rng.choice(b, size=(BOOTSTRAP_SAMPLES, len(b))), axis=1)
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
