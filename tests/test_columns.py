"""The analysis's numpy tables against pandas, which computed them before: row orders, groupings,
medians / quartiles / means (random data with ties and NaN, fixed seeds), and the light column
form's DataFrame and its round trip through the analysis cache's JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from traceinsight.analysis import cache
from traceinsight.analysis.results import BREAKDOWN_COLUMNS, breakdown_table, factorize, sort_order
from traceinsight.columns import Columns, text
from traceinsight.model import CATEGORIES, ModeResult


def _table(rng: np.random.Generator, n: int) -> Columns:
    names = np.array(["b", "a", "Conv2D", "ä", "a b", ""], dtype=object)
    x = rng.integers(0, 4, n).astype(float) / 4       # many ties
    x[rng.random(n) < 0.1] = np.nan
    return Columns({"x": x, "y": rng.integers(-3, 3, n), "s": names[rng.integers(0, len(names), n)]})


@pytest.mark.parametrize("seed", range(5))
def test_sort_order_is_pandas_stable_sort(seed):
    rng = np.random.default_rng(seed)
    t = _table(rng, 200)
    df = t.to_pandas()
    for by, asc in ((["x", "s", "y"], [False, True, True]), (["s", "x"], [True, False]),
                    (["y", "x", "s"], [False, False, True])):
        want = df.sort_values(by, ascending=asc, kind="stable").index.to_numpy()
        got = sort_order([(t[c], a) for c, a in zip(by, asc)])
        assert got.tolist() == want.tolist(), by


def test_factorize_is_pandas_factorize():
    values = text(["x", "b", "x", "a", "b", "zz", "a"])
    codes, uniq = factorize(values)
    want_codes, want_uniq = pd.factorize(pd.Series(values, dtype=object))
    assert codes.tolist() == want_codes.tolist()
    assert uniq.tolist() == list(want_uniq)


@pytest.mark.parametrize("seed,n", [(0, 2), (1, 3), (2, 20), (3, 37), (4, 71), (5, 700), (6, 1301)])
def test_breakdown_is_pandas_median_quantile_mean(seed, n):
    rng = np.random.default_rng(seed)
    cols = {c: rng.exponential(1.0, n) for c in CATEGORIES}
    cols["tracing"][rng.random(n) < 0.3] = np.nan       # NaN are skipped
    cols["compile"][:] = np.nan                          # a category not recorded at all
    first = np.zeros(n, dtype=bool)
    first[0] = True
    steps = Columns({"step_num": np.arange(n), "wall_ms": rng.exponential(5.0, n), "first": first,
                     "partial": rng.random(n) < 0.1, **cols})
    got = breakdown_table(steps).to_pandas()
    df = steps.to_pandas()
    values = df[~df["first"] & ~df["partial"]][list(CATEGORIES) + ["wall_ms"]].astype(float)
    want = pd.DataFrame({"median": values.median(), "p25": values.quantile(0.25),
                         "p75": values.quantile(0.75), "mean": values.mean()})
    want = want.rename(index={"wall_ms": "total"})
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == BREAKDOWN_COLUMNS


def test_no_rows_is_an_empty_frame_with_those_columns():
    pd.testing.assert_frame_equal(Columns.no_rows(["a", "b"]).to_pandas(), pd.DataFrame(columns=["a", "b"]))
    assert Columns().to_pandas().empty and Columns().empty


def test_mode_tables_read_as_dataframes_built_once():
    t = Columns({"op": text(["a", "b"]), "self_ms_per_step": np.array([2.0, 1.0])})
    m = ModeResult(name="m", ops=t)
    assert m.ops is m.ops                                  # built once, then kept
    assert m.ops["op"].tolist() == ["a", "b"] and str(m.ops["op"].dtype) == "str"
    assert m.table("ops") is t
    hand = pd.DataFrame({"op": ["c"], "self_ms_per_step": [3.0]})
    m2 = m.replace(ops=hand, first_step={"op": 1.5})
    assert m2.ops is hand and m2.table("ops")["op"].tolist() == ["c"]
    assert m2.first_step_ms == {"op": 1.5} and m2.first_step["op"] == 1.5
    assert ModeResult(name="empty").steps.empty


def test_cache_json_round_trip_keeps_dtypes_and_nan():
    t = Columns({"i": np.array([1, 2], dtype=np.int64), "f": np.array([np.nan, 0.1]),
                 "b": np.array([True, False]), "s": text(["x", "y\n"])}, index=["r1", "r2"])
    back = cache._table_from_json(json.loads(json.dumps(cache._table_to_json(t), allow_nan=False)))
    pd.testing.assert_frame_equal(back.to_pandas(), t.to_pandas(), check_exact=True)
