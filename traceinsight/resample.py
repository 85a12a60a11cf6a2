"""The bootstrap of a median (numpy only, deterministic), and the medians and quantiles the
analysis takes.

It sits at the bottom of the package, beside the model: a ``ModeResult`` resamples its own step
samples once (``ModeResult.boot_medians``) and every interval and ratio the analysis computes
(``traceinsight.stats``) reuses them.

``median`` and ``quantiles`` are ``np.median`` and ``np.quantile`` (linear) of a 1-D array, bit
for bit: the same partition, the same arithmetic; ``unique`` is ``np.unique`` of a 1-D integer
array (what the analysis takes it of: ids, timestamps), ``isin`` ``np.isin`` of two. numpy's own functions import numpy's
masked-array module on their first call (a check for masked input), a few milliseconds of every
command's start-up, and cost several times more per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_WORK_MAX = 200_000_000  # resamples x samples drawn one by one; beyond: order statistics
SEED = 20240521  # fixed: the same run always shows the same interval
# up to this many draws a resample, counting the draws (``medians_of_draws``) is faster than
# partitioning each resample; beyond it, slower
_COUNTED_DRAWS_MAX = 1000


_F8, _I8 = np.dtype(np.float64), np.dtype(np.int64)


def median(a: Any) -> Any:
    """``np.median(a)``, bit for bit (a numpy float64 scalar; NaN where ``a`` holds one), for a
    1-D array or sequence of float64 or int64 values; anything else is handed to ``np.median``."""
    a = np.asarray(a)
    n = a.size
    if a.ndim != 1 or not n or (a.dtype != _F8 and a.dtype != _I8):
        return np.median(a)
    floats = a.dtype == _F8
    # np.median's partition: the middle rank(s), and the last (a NaN sorts there)
    kth = [(n - 1) // 2] if n % 2 else [n // 2 - 1, n // 2]
    if floats:
        kth.append(-1)
    part = np.partition(a, kth)
    if floats and np.isnan(part[-1]):
        return part[-1]
    # np.mean of the middle one or two: their sum in float64, from 0.0 as numpy's sum starts
    # (a negative zero comes out positive), divided by their count
    if n % 2:
        return 0.0 + np.float64(part[n // 2])
    return (0.0 + np.float64(part[n // 2 - 1]) + np.float64(part[n // 2])) / 2


def unique(a: Any) -> np.ndarray:
    """``np.unique(a)`` of an integer array: its distinct values, sorted, flattened (a sort and
    the places where the value changes; ``np.unique`` without its ``return_*`` options imports
    numpy.ma on its first call). Other dtypes (floats: NaN's place) are left to ``np.unique``."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        return np.unique(a)
    s = np.sort(a, axis=None)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def isin(a: Any, b: Any) -> np.ndarray:
    """``np.isin(a, b)`` of 1-D integer arrays (a's shape, bool): a search of ``a`` in ``b``'s
    sorted distinct values (``np.isin`` imports numpy.ma on its first call where it sorts).
    Other dtypes are left to ``np.isin``."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu" or a.ndim != 1:
        return np.isin(a, b)
    v = unique(b)
    if not len(v):
        return np.zeros(len(a), dtype=bool)
    at = np.minimum(np.searchsorted(v, a), len(v) - 1)
    return v[at] == a


def quantiles(a: Any, q: Sequence[float]) -> np.ndarray:
    """``np.quantile(a, q)`` (method "linear"), bit for bit, for a 1-D array of float64 values
    and quantiles in [0, 1]; anything else is handed to ``np.quantile``."""
    a = np.asarray(a)
    qs = np.asarray(q)
    n = a.size
    if a.ndim != 1 or not n or a.dtype != _F8 or qs.ndim != 1 or qs.dtype != _F8 \
            or not ((qs >= 0) & (qs <= 1)).all():
        return np.quantile(a, qs)
    virtual = (n - 1) * qs
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1          # the largest value
    prev[above] = -1
    nxt[above] = -1
    below = virtual < 0
    prev[below] = 0
    nxt[below] = 0
    prev_i, next_i = prev.astype(np.intp), nxt.astype(np.intp)
    part = a.copy()
    part.partition(sorted({0, -1, *prev_i.tolist(), *next_i.tolist()}))
    lo, hi = part[prev_i], part[next_i]
    gamma = virtual - prev_i
    # numpy's lerp: from below under one half, from above at or over it
    diff = hi - lo
    out = lo + diff * gamma
    upper = gamma >= 0.5
    out[upper] = (hi - diff * (1 - gamma))[upper]
    if np.isnan(part[-1]):
        out[:] = part[-1]
    return out


def samples_digest(samples: np.ndarray, strata: tuple[int, ...] | None) -> str:
    """What ``bootstrap_medians`` resamples, as a sha256: the samples' bits, the strata and the
    resampling's own constants. Bootstrap medians kept beside it (the analysis cache) are reused
    only where the digest of the samples read now is the same."""
    import hashlib
    h = hashlib.sha256(np.ascontiguousarray(np.asarray(samples, dtype="<f8")).tobytes())
    h.update(repr((strata, BOOTSTRAP_SAMPLES, BOOTSTRAP_WORK_MAX, SEED)).encode())
    return h.hexdigest()


def bootstrap_medians(samples: np.ndarray, seed: int = SEED,
                      strata: tuple[int, ...] | None = None) -> np.ndarray:
    """Medians of BOOTSTRAP_SAMPLES resamples (fixed seed). Callers keep them where the samples
    live (``ModeResult.boot_medians``), so each mode's are computed once.

    ``strata``: the sizes of consecutive groups of ``samples`` (a mode's interleaved rounds, in
    order): each resample then draws every group's steps from that group alone, so every resample
    keeps the rounds' mix of machine states (a round under load stays one round's worth of
    steps), which is how the steps were collected."""
    samples = np.asarray(samples, dtype=float)
    if not len(samples):
        return np.full(BOOTSTRAP_SAMPLES, np.nan)
    rng = np.random.default_rng(seed)
    if strata is not None and len(strata) > 1 and sum(strata) == len(samples) and min(strata) > 0 \
            and len(samples) * BOOTSTRAP_SAMPLES <= BOOTSTRAP_WORK_MAX:
        bounds = np.cumsum((0,) + tuple(strata))
        meds = np.empty(BOOTSTRAP_SAMPLES)
        block = max(1, 2_000_000 // max(len(samples), 1))
        for lo in range(0, BOOTSTRAP_SAMPLES, block):
            hi = min(lo + block, BOOTSTRAP_SAMPLES)
            # each group's draws as rng.choice(samples[a:b], size=(hi - lo, b - a)) draws them
            parts = [rng.integers(0, b - a, size=(hi - lo, b - a)) + a
                     for a, b in zip(bounds[:-1], bounds[1:])]
            meds[lo:hi] = medians_of_draws(samples[None, :], np.concatenate(parts, axis=1))[0]
        return meds
    if len(samples) * BOOTSTRAP_SAMPLES > BOOTSTRAP_WORK_MAX:
        # Too many samples to resample element by element (10 million steps would take hours):
        # draw each resample's median directly. The m-th smallest of n draws with replacement is
        # the sample at rank ceil(n * B), B ~ Beta(m, n + 1 - m) (the m-th order statistic of n
        # uniforms), so the bootstrap distribution of the (lower) median costs one sort.
        n = len(samples)
        m = (n + 1) // 2
        ranks = np.ceil(n * rng.beta(m, n + 1 - m, size=BOOTSTRAP_SAMPLES)).astype(np.int64)
        return np.sort(samples)[np.clip(ranks, 1, n) - 1]
    meds = np.empty(BOOTSTRAP_SAMPLES)
    # in blocks, so a long run's resample matrix stays small
    block = max(1, 2_000_000 // max(len(samples), 1))
    for lo in range(0, BOOTSTRAP_SAMPLES, block):
        hi = min(lo + block, BOOTSTRAP_SAMPLES)
        # the indices rng.choice(samples, size=(hi - lo, n)) draws
        meds[lo:hi] = medians_of_draws(samples[None, :],
                                       rng.integers(0, len(samples), size=(hi - lo, len(samples))))[0]
    return meds


def bootstrap_medians_rows(rows: np.ndarray, seed: int = SEED) -> np.ndarray:
    """``bootstrap_medians`` of each row of ``rows`` (rows x samples, no strata) at once: the
    resamples draw the same steps for every row, as ``bootstrap_medians`` draws them for one
    (the same seed, the same draws), so each row's medians are exactly ``bootstrap_medians(row,
    seed)``. For many series of the same steps (a layer's per-step times, layer by layer): one
    draw instead of one per row."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    k, n = rows.shape
    if not n or n * BOOTSTRAP_SAMPLES > BOOTSTRAP_WORK_MAX or n > 2_000_000 // BOOTSTRAP_SAMPLES:
        # several blocks or order statistics: row by row, as bootstrap_medians does it
        return np.stack([bootstrap_medians(r, seed) for r in rows]) if k else \
            np.zeros((0, BOOTSTRAP_SAMPLES))
    idx = np.random.default_rng(seed).integers(0, n, size=(BOOTSTRAP_SAMPLES, n))
    counts = _draw_counts(idx)
    out = np.empty((k, BOOTSTRAP_SAMPLES))
    per = max(1, 4_000_000 // (BOOTSTRAP_SAMPLES * n))     # rows per chunk: a bounded matrix
    for lo in range(0, k, per):
        out[lo:lo + per] = medians_of_draws(rows[lo:lo + per], idx, counts)
    return out


def _draw_counts(idx: np.ndarray) -> np.ndarray:
    """How many times each resample (a row of ``idx``) draws each sample: resamples x samples."""
    b, n = idx.shape
    return np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(),
                       minlength=b * n).reshape(b, n)


def medians_of_draws(rows: np.ndarray, idx: np.ndarray,
                     counts: np.ndarray | None = None) -> np.ndarray:
    """``np.median(rows[:, idx], axis=2)``, bit for bit, without building the resamples: each
    resample's median is the sample at the rank where its draws' counts, taken in the row's
    sorted order, reach the middle (the two middle ranks' values averaged, ``(a + b) / 2`` as
    ``np.median`` averages them, for an even count). A row holding a NaN or a negative zero
    (whose order against zero ``np.median`` leaves to its partition) is left to ``np.median``.
    ``rows``: series x samples; ``idx``: resamples x draws (indices into a row); ``counts``:
    ``_draw_counts(idx)`` where the caller has it. Returns series x resamples. Beyond
    ``_COUNTED_DRAWS_MAX`` draws a resample, ``np.median``'s partition is the faster."""
    rows = np.asarray(rows, dtype=float)
    k, n = rows.shape
    b, draws = idx.shape
    if not (k and b and draws) or draws > _COUNTED_DRAWS_MAX or np.isnan(rows).any() \
            or (np.signbit(rows) & (rows == 0)).any():
        return np.median(rows[:, idx], axis=2)
    counts = _draw_counts(idx) if counts is None else counts
    order = np.argsort(rows, axis=1, kind="stable")
    ranked = np.take_along_axis(rows, order, axis=1)
    # each resample's draws counted up the row's ranks: series x samples x resamples, summed
    # in place rank by rank (each step one add over all resamples, far faster than a cumsum
    # along the short axis)
    reached = counts.T[order]
    for j in range(1, n):
        reached[:, j] += reached[:, j - 1]
    r = np.arange(k)[:, None]
    if draws % 2:
        return ranked[r, (reached < (draws + 1) // 2).sum(axis=1)]
    lo = ranked[r, (reached < draws // 2).sum(axis=1)]
    hi = ranked[r, (reached < draws // 2 + 1).sum(axis=1)]
    return (lo + hi) / 2
