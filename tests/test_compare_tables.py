"""A comparison's tables are computed with numpy (``compare.op_diff``, ``family_diff``,
``op_type_diff``, ``category_diff``, ``Comparison.flipped``); these tests hold them to the pandas
code they replace, written out here as it was (a groupby and an outer merge), on the committed
real runs' op tables and on hand-made tables with duplicate keys, ties, missing values and ops on
one side only: the same rows in the same order, the same change labels, the same figures to the
last bit, the same DataFrame dtypes from the public properties. And reading a run's findings and
comparisons imports no pandas."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from traceinsight.analysis.opfamily import family
from traceinsight.columns import Columns
from traceinsight.compare import OP_KEY, Comparison, FamilyDelta, category_diff, family_diff, normalized_type, op_diff, op_type_diff
from traceinsight.model import CATEGORIES, ModeResult
from traceinsight.testing import make_mode

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "data" / "runs"
OP_COLS = OP_KEY + ["family", "a_ms", "b_ms", "delta_ms", "change"]


# ---- the reference: the pandas code these tables were computed with ----------------------------

SAME_REL, SAME_ABS_MS = 0.05, 0.01      # within this share (and 0.01 ms) an op is "same"
FLIP_CHANGE = {"only in a": "only in b", "only in b": "only in a", "slower": "faster",
               "faster": "slower"}

def ref_category_diff(a: ModeResult, b: ModeResult) -> pd.DataFrame:
    ca, cb = a.category_means(), b.category_means()
    cats = pd.DataFrame({"category": list(CATEGORIES), "a_ms": [ca[c] for c in CATEGORIES],
                         "b_ms": [cb[c] for c in CATEGORIES]})
    cats["delta_ms"] = cats["a_ms"] - cats["b_ms"]
    cats["_abs"] = cats["delta_ms"].abs().fillna(-1.0)
    cats = cats.sort_values("_abs", ascending=False, kind="stable").drop(columns="_abs")
    return cats.reset_index(drop=True)


def ref_by_abs_delta(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    df = df.assign(_abs=df["delta_ms"].abs())
    return df.sort_values(["_abs"] + key, ascending=[False] + [True] * len(key),
                          kind="stable").drop(columns="_abs").reset_index(drop=True)


def ref_op_diff(ops_a: pd.DataFrame, ops_b: pd.DataFrame) -> pd.DataFrame:
    if ops_a.empty and ops_b.empty:
        return pd.DataFrame(columns=OP_COLS)

    def per_op(ops: pd.DataFrame, col: str) -> pd.DataFrame:
        if ops.empty:
            return pd.DataFrame(columns=OP_KEY + [col])
        return ops.groupby(OP_KEY, as_index=False)["self_ms_per_step"].sum().rename(
            columns={"self_ms_per_step": col})

    m = per_op(ops_a, "a_ms").merge(per_op(ops_b, "b_ms"), on=OP_KEY, how="outer")
    only_a = m["b_ms"].isna()
    only_b = m["a_ms"].isna()
    m[["a_ms", "b_ms"]] = m[["a_ms", "b_ms"]].astype(float).fillna(0.0)
    m["delta_ms"] = m["a_ms"] - m["b_ms"]
    m["family"] = [family(str(o), str(t)) for o, t in zip(m["op"], m["type"])]
    same = (m["delta_ms"].abs() <= np.maximum(SAME_ABS_MS, SAME_REL * m[["a_ms", "b_ms"]].max(axis=1)))
    m["change"] = np.select([only_a, only_b, same, m["delta_ms"] > 0],
                            ["only in a", "only in b", "same", "slower"], "faster")
    return ref_by_abs_delta(m, OP_KEY)[OP_COLS]


def ref_op_type_diff(ops: pd.DataFrame) -> pd.DataFrame:
    if ops.empty:
        return pd.DataFrame(columns=OP_COLS)
    df = ops.assign(op=[normalized_type(str(t)) for t in ops["type"]])
    df = df.assign(type=df["op"], thread="both",
                   _a=df["change"] != "only in b", _b=df["change"] != "only in a")
    g = df.groupby(["op", "type", "thread"], as_index=False).agg(
        family=("family", "first"), a_ms=("a_ms", "sum"), b_ms=("b_ms", "sum"),
        in_a=("_a", "any"), in_b=("_b", "any"))
    g["delta_ms"] = g["a_ms"] - g["b_ms"]
    same = (g["delta_ms"].abs() <= np.maximum(SAME_ABS_MS, SAME_REL * g[["a_ms", "b_ms"]].max(axis=1)))
    g["change"] = np.select([~g["in_b"], ~g["in_a"], same, g["delta_ms"] > 0],
                            ["only in a", "only in b", "same", "slower"], "faster")
    return ref_by_abs_delta(g, OP_KEY)[OP_COLS]


def ref_family_diff(ops: pd.DataFrame) -> pd.DataFrame:
    cols = ["family", "a_ms", "b_ms", "delta_ms"]
    if ops.empty:
        return pd.DataFrame(columns=cols)
    g = ops.groupby("family", as_index=False)[["a_ms", "b_ms", "delta_ms"]].sum()
    return ref_by_abs_delta(g, ["family"])[cols]


def ref_swap(df: pd.DataFrame) -> pd.DataFrame:
    out = df.rename(columns={"a_ms": "b_ms", "b_ms": "a_ms"}).assign(delta_ms=-df["delta_ms"])
    if "change" in out:
        out["change"] = out["change"].map(FLIP_CHANGE).fillna(out["change"])
    return out[list(df.columns)]


# ---- checks ------------------------------------------------------------------------------------

def same_table(mine: Columns, ref: pd.DataFrame) -> None:
    """The same columns, rows in the same order, every value equal (floats to the last bit, NaN
    where NaN), and the DataFrame the Python API builds has the reference's dtypes."""
    assert isinstance(mine, Columns)
    assert mine.columns == list(ref.columns) and len(mine) == len(ref)
    for c in ref.columns:
        got, want = mine[c], ref[c].to_numpy()
        if want.dtype.kind == "f":
            assert got.dtype == np.float64, c
            assert np.array_equal(got, want, equal_nan=True), (c, got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want)), c
        else:
            assert got.dtype == object, c
            assert got.tolist() == want.tolist(), c
    assert_frame_equal(mine.to_pandas(), ref, check_exact=True)


def ops_frame(m: ModeResult) -> pd.DataFrame:
    return m.table("ops").to_pandas()


def check_pair(a: ModeResult, b: ModeResult) -> None:
    ops = op_diff(a.table("ops"), b.table("ops"))
    ref_ops = ref_op_diff(ops_frame(a), ops_frame(b))
    same_table(ops, ref_ops)
    same_table(family_diff(ops), ref_family_diff(ref_ops))
    same_table(op_type_diff(ops), ref_op_type_diff(ref_ops))
    same_table(category_diff(a, b), ref_category_diff(a, b))


@pytest.mark.parametrize("run_name", ["conv1d", "costly-loop", "retracing"])
def test_the_tables_of_every_pair_of_a_real_run_are_the_pandas_ones(run_name, real_runs):
    run = real_runs[run_name]
    names = [m.name for m in run.ok_modes()]
    assert len(names) >= 2
    for a in names:
        for b in names:
            if a != b:
                check_pair(run.modes[a], run.modes[b])


def random_ops(rng: np.random.Generator, n: int, names: list[tuple[str, str, str]]) -> list[tuple]:
    """Rows drawn (with repeats: duplicate keys) from ``names``, their times on a coarse grid (ties
    of |delta|, equal sums) with a few NaN."""
    rows = []
    for i in rng.integers(0, len(names), n):
        op, typ, thread = names[i]
        ms = float(rng.choice([0.0, -0.0, 0.25, 0.5, 1.0, 1e-3, 3.0, 1e16, np.nan, 0.1, 0.2, 0.3]))
        rows.append((op, typ, thread, float(rng.integers(1, 4)), ms))
    return rows


NAMES = [("Conv2D", "Conv2D", "main"), ("conv/convolution", "_MklNativeFusedConv2D", "worker"),
         ("MatMul", "_MklMatMul", "main"), ("MatMul", "MatMul", "main"), ("MatMul", "MatMul", "worker"),
         ("b", "Relu", "main"), ("a", "Relu", "main"), ("B", "Relu", "main"), ("é", "Relu", "main"),
         ("__inference_step_8", "tf.function", "main"), ("__inference_step_12", "tf.function", "main"),
         ("fusion.12", "fusion", "worker"), ("ynn_fusion", "fusion", "worker"),
         ("add_maximum_fusion", "fusion", "worker"), ("Mean", "Mean", "main"), ("x", "_FusedMatMul", "main")]


@pytest.mark.parametrize("seed", range(12))
def test_hand_made_tables_with_duplicates_ties_and_one_sided_ops_are_the_pandas_ones(seed):
    rng = np.random.default_rng(seed)
    names_a = [NAMES[i] for i in rng.choice(len(NAMES), 10, replace=False)]
    names_b = [NAMES[i] for i in rng.choice(len(NAMES), 10, replace=False)]
    a = make_mode("eager", {"op": 2.0, "python": 1.0},
                  ops=random_ops(rng, int(rng.integers(1, 30)), names_a))
    b = make_mode("function", {"op": 1.0, "python": 1.0},
                  ops=random_ops(rng, int(rng.integers(1, 30)), names_b))
    check_pair(a, b)
    check_pair(b, a)


def test_one_side_or_both_without_ops_and_rows_with_a_missing_key():
    ops = [("MatMul", "MatMul", "main", 1.0, 2.0), ("MatMul", "MatMul", "main", 1.0, 1.0),
           ("Relu", "Relu", "worker", 1.0, 0.5)]
    with_ops = make_mode("eager", {"op": 2.0}, ops=ops)
    without = make_mode("function", {"op": 1.0})
    check_pair(with_ops, without)
    check_pair(without, with_ops)
    check_pair(without, make_mode("xla", {"op": 1.0}))
    # pandas' groupby drops a row whose key is missing; so does the numpy code
    holes = ModeResult("holes", ops=Columns({"op": np.array(["MatMul", None, "Relu"], dtype=object),
                                             "type": np.array(["MatMul", "Relu", None], dtype=object),
                                             "thread": np.array(["main", "main", "main"], dtype=object),
                                             "self_ms_per_step": np.array([1.0, 2.0, 3.0])}))
    ops_h = op_diff(holes.table("ops"), with_ops.table("ops"))
    same_table(ops_h, ref_op_diff(ops_frame(holes), ops_frame(with_ops)))


def test_category_ties_keep_the_categories_order_and_a_missing_difference_goes_last():
    a = make_mode("eager", {"op": 2.0, "python": 1.0, "dispatch": 1.0}, jitter=0.0)
    b = make_mode("function", {"op": 1.0, "python": 0.0, "dispatch": 0.0}, jitter=0.0)
    cats = category_diff(a, b)
    same_table(cats, ref_category_diff(a, b))
    assert cats["category"].tolist()[:3] == ["op", "dispatch", "python"]   # three ties of 1 ms
    nan = ModeResult("nan")      # no breakdown: every category NaN
    same_table(category_diff(a, nan), ref_category_diff(a, nan))


def test_flipped_tables_are_the_swapped_pandas_ones(real_runs):
    run = real_runs["conv1d"]
    c = run.compare("eager", "xla")
    f = c.flipped()
    for name in ("categories", "ops", "families"):
        same_table(f.table(name), ref_swap(c.table(name).to_pandas()))
    assert f.flipped().table("ops").records() == c.table("ops").records()
    # a comparison made without tables has empty ones, and flips them
    bare = Comparison("a", "b", 2.0, 1.0, 1.0, 2.0, 1.5, 2.5, True)
    assert bare.table("families").columns == ["family", "a_ms", "b_ms", "delta_ms"]
    assert bare.flipped().ops.empty and list(bare.flipped().ops.columns) == OP_COLS


def test_the_api_reads_new_dataframes_the_package_reads_the_columns(real_runs):
    c = real_runs["conv1d"].compare("xla", "function")
    assert isinstance(c.ops, pd.DataFrame) and c.ops is not c.ops
    assert c.table("ops") is c.table("ops")
    assert_frame_equal(c.families, c.table("families").to_pandas())
    with pytest.raises(KeyError):
        c.table("steps")
    top = c.top_family(True)
    assert isinstance(top, FamilyDelta) and top.delta_ms > 0
    fam = c.families
    kernel = fam[~fam["family"].str.startswith("tf.function") & (fam["family"] != "(runtime)")]
    row = kernel[kernel["delta_ms"] > 0].iloc[0]
    assert (top.family, top.a_ms, top.b_ms, top.delta_ms) == (row["family"], row["a_ms"],
                                                             row["b_ms"], row["delta_ms"])


def test_findings_and_comparisons_of_a_run_import_no_pandas():
    """The whole run's figures (summary, findings, each mode against the fastest) are numpy: a
    fresh process that loads committed runs and reads them never imports pandas."""
    code = f"""
import sys
import traceinsight
for name in ("retracing", "conv1d", "costly-loop"):
    run = traceinsight.load({str(RUNS)!r} + "/" + name, use_cache=False)
    run.table("summary")
    findings = run.findings
    assert findings, name
    for f in findings:
        f.title, f.evidence
    fastest = run.fastest
    for m in run.ok_modes():
        if m.name != fastest:
            c = run.compare(m.name, fastest)
            c.sentence(), c.table("ops"), c.table("families"), c.top_family(True), c.flipped()
print(sorted(m for m in sys.modules if m.split(".")[0] in ("pandas", "pyarrow")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "TRACEINSIGHT_JOBS": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"
