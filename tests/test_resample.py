"""The resampling's medians and the medians and quantiles the analysis takes
(``traceinsight.resample``) are numpy's, to the last bit: they only cost less."""

from __future__ import annotations

import warnings

import numpy as np


def test_medians_of_draws_is_np_median_bit_for_bit():
    """The bootstrap's medians counted from the draws (``resample.medians_of_draws``) are
    ``np.median`` of the resamples themselves, to the last bit: odd and even counts, ties, zeros,
    values spread over many magnitudes, a NaN or a negative zero (left to ``np.median``), and
    more draws than the counting handles."""
    from traceinsight.resample import medians_of_draws
    rng = np.random.default_rng(3)
    for trial in range(300):
        n = int(rng.integers(1, 60)) if trial % 50 else 1200
        k = int(rng.integers(1, 7))
        rows = [rng.random((k, n)), rng.integers(0, 4, (k, n)).astype(float),
                np.round(rng.lognormal(0, 2, (k, n)), 3),
                rng.random((k, n)) * 10.0 ** rng.integers(-300, 300, (k, n))][trial % 4]
        if trial % 7 == 0:
            rows[0, int(rng.integers(0, n))] = [np.nan, -0.0, 0.0, np.inf][trial % 4]
        idx = rng.integers(0, n, size=(int(rng.integers(1, 300)), n))
        want = np.median(rows[:, idx], axis=2)
        got = medians_of_draws(rows, idx)
        assert got.shape == want.shape
        assert np.array_equal(got.view(np.int64), want.view(np.int64)), (trial, n, k)



def _same(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    return (type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape
            and np.atleast_1d(x).tobytes() == np.atleast_1d(y).tobytes())


def test_median_and_quantiles_are_numpys_bit_for_bit():
    """``resample.median`` is ``np.median`` and ``resample.quantiles`` ``np.quantile`` (and
    ``np.percentile`` of the quartiles), the same type and the same bits: odd and even counts,
    ties, positive and negative zeros, infinities, a NaN, integers, lists, many magnitudes."""
    from traceinsight.resample import median, quantiles
    rng = np.random.default_rng(11)
    qsets = [[0.025, 0.975], [0.25, 0.5, 0.75], [0.0, 1.0], [0.5], [0.005, 0.995]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(3000):
            n = int(rng.integers(1, 50)) if t % 10 else int(rng.integers(50, 3000))
            a = [rng.random(n), rng.integers(0, 5, n).astype(float), rng.integers(-10**6, 10**6, n),
                 np.round(rng.lognormal(0, 3, n), 2),
                 rng.choice(np.array([0.0, -0.0, 1.0, np.inf]), n),
                 rng.random(n) * 10.0 ** rng.integers(-300, 300, n)][t % 6]
            if t % 6 == 3:
                a[rng.integers(0, n)] = [np.nan, np.inf, -np.inf, -0.0][t % 4]
            assert _same(median(a), np.median(a)), (t, n)
            if t % 50 == 0:
                assert _same(median(a.tolist()), np.median(a.tolist())), (t, n)
            if a.dtype == np.float64:
                for q in qsets:
                    assert _same(quantiles(a, q), np.quantile(a, q)), (t, n, q)
                assert _same(quantiles(a, [0.25, 0.5, 0.75]), np.percentile(a, [25, 50, 75]))
        # what they hand to numpy: nothing, two dimensions, other types
        for a in (np.zeros(0), np.ones((3, 4)), np.arange(5, dtype=np.float32)):
            assert _same(median(a), np.median(a))


def test_unique_is_numpys_for_integer_arrays():
    """``resample.unique`` is ``np.unique`` (values, dtype, shape) of the integer arrays the
    analysis takes it of, without importing numpy.ma; other dtypes are numpy's own call."""
    from traceinsight.resample import unique
    rng = np.random.default_rng(3)
    cases = [np.zeros(0, dtype=np.int64), np.array([7]), np.array([[3, 1], [3, 2]]),
             np.array([5, 5, 5], dtype=np.uint8), np.array([-(2**62), 2**62, 0], dtype=np.int64)]
    cases += [rng.integers(-50, 50, size=int(rng.integers(0, 300))).astype(dt)
              for dt in (np.int8, np.int16, np.int32, np.int64, np.uint32) for _ in range(40)]
    for a in cases:
        got, want = unique(a), np.unique(a)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    f = np.array([1.0, np.nan, 1.0, np.nan])
    assert np.array_equal(unique(f), np.unique(f), equal_nan=True)


def test_isin_is_numpys_for_integer_arrays():
    """``resample.isin`` is ``np.isin`` of the 1-D integer arrays the analysis asks it of (rows,
    ids), without importing numpy.ma; other inputs are numpy's own call."""
    from traceinsight.resample import isin
    rng = np.random.default_rng(5)
    for _ in range(200):
        a = rng.integers(-40, 40, size=int(rng.integers(0, 60))).astype(rng.choice(
            [np.int16, np.int32, np.int64]))
        b = rng.integers(-40, 40, size=int(rng.integers(0, 60)))
        assert np.array_equal(isin(a, b), np.isin(a, b))
    assert isin(np.array([1, 2]), np.zeros(0, dtype=np.int64)).tolist() == [False, False]
    assert np.array_equal(isin(np.array([1.0, 2.0]), np.array([2.0])), [False, True])
