"""The analysis's numpy tables against pandas, which computed them before: row orders, groupings,
medians / quartiles / means (random data with ties and NaN, fixed seeds), and the light column
form's DataFrame and its round trip through the analysis cache's JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from traceinsight.analysis import codec
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


def test_mode_tables_are_columns_inside_and_new_dataframes_outside():
    t = Columns({"op": text(["a", "b"]), "self_ms_per_step": np.array([2.0, 1.0])})
    m = ModeResult(name="m", ops=t)
    assert m.table("ops") is t                             # the package reads the stored columns
    ops = m.ops
    assert isinstance(ops, pd.DataFrame) and ops is not m.ops   # a new DataFrame per read
    assert ops["op"].tolist() == ["a", "b"] and str(ops["op"].dtype) == "str"
    ops.loc[0, "self_ms_per_step"] = 99.0                  # the reader's own copy
    del ops["op"]
    assert m.ops["self_ms_per_step"].tolist() == [2.0, 1.0] and list(m.ops.columns) == ["op", "self_ms_per_step"]
    assert t["self_ms_per_step"].tolist() == [2.0, 1.0]
    with pytest.raises(KeyError):
        m.table("nope")
    assert ModeResult(name="empty").steps.empty and isinstance(ModeResult(name="empty").table("steps"), Columns)


def test_a_dataframe_given_by_hand_is_converted_once_and_never_shared():
    hand = pd.DataFrame({"op": ["c"], "self_ms_per_step": [3.0]})
    m = ModeResult(name="m").replace(ops=hand, first_step=pd.Series({"op": 1.5}))
    assert isinstance(m.table("ops"), Columns) and m.table("ops")["op"].tolist() == ["c"]
    assert m.ops is not hand
    hand.loc[0, "self_ms_per_step"] = 7.0                  # the caller changes its DataFrame
    assert m.ops["self_ms_per_step"].tolist() == [3.0] and m.table("ops")["self_ms_per_step"].tolist() == [3.0]
    first = m.first_step                                   # a dict, the reader's own
    assert first == {"op": 1.5} and type(first) is dict
    first["op"] = 0.0
    assert m.first_step == {"op": 1.5}


def test_a_runs_tables_read_through_the_api_are_new_dataframes():
    from traceinsight.testing import sample_run
    run = sample_run()
    summary = run.summary()
    assert isinstance(summary, pd.DataFrame) and isinstance(run.table("summary"), Columns)
    before = summary.copy()
    summary.loc[:, "median_ms"] = -1.0
    pd.testing.assert_frame_equal(run.summary(), before)
    steps = run.modes["eager"].steps
    steps["wall_ms"] = 0.0
    assert (run.modes["eager"].steps["wall_ms"] > 0).all()
    steady = run.modes["eager"].steady_steps
    assert len(steady) == run.modes["eager"].n_steady and not steady["first"].any()
    # breakdown(): mode x category, each mode's category medians
    b = run.breakdown()
    assert list(b.columns) == list(CATEGORIES) and list(b.index) == [m.name for m in run.ok_modes()]
    for m in run.ok_modes():
        assert b.loc[m.name].tolist() == pytest.approx(list(m.category_medians().values()), nan_ok=True)
    with pytest.raises(KeyError):
        run.table("ops")


def test_no_twin_table_reads_remain():
    from traceinsight.model import Run
    for name in ("summary_table", "steps_frame", "steps_table"):
        assert not hasattr(Run, name) and not hasattr(ModeResult, name), name
    for name in ("category_ms", "first_step_ms"):
        assert not hasattr(ModeResult, name), name
    assert hasattr(ModeResult, "category_medians") and hasattr(Run, "breakdown")


def test_cache_json_round_trip_keeps_dtypes_and_nan():
    t = Columns({"i": np.array([1, 2], dtype=np.int64), "f": np.array([np.nan, 0.1]),
                 "b": np.array([True, False]), "s": text(["x", "y\n"])}, index=["r1", "r2"])
    back = codec.table_from_json(json.loads(json.dumps(codec.table_to_json(t), allow_nan=False)))
    pd.testing.assert_frame_equal(back.to_pandas(), t.to_pandas(), check_exact=True)
