"""Tables for fleets: ``traceinsight export RUN --tables parquet`` over the committed real runs,
read back and queried together by DuckDB (the README's query), against the loaded runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import traceinsight
from traceinsight import cli
from traceinsight.report import tables

DATA = Path(__file__).parent / "data" / "runs"
README = Path(__file__).resolve().parents[1] / "docs" / "reports.md"   # README links it
RUNS = sorted(p for p in DATA.iterdir() if (p / "run.json").is_file())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    pytest.importorskip("pyarrow")
    import shutil
    out = tmp_path_factory.mktemp("exports")
    copies = tmp_path_factory.mktemp("runs")    # loading a run caches its analysis in it
    for run in RUNS:
        copy = shutil.copytree(run, copies / run.name, ignore=shutil.ignore_patterns(".traceinsight"))
        assert cli.main(["export", str(copy), "--tables", "parquet", "-o", str(out / run.name)]) == 0
    return out


def readme_query() -> str:
    text = README.read_text(encoding="utf-8")
    return re.search(r"```sql\n(.*?)```", text, re.S).group(1)


def test_readme_query_over_several_runs(exported, real_runs):
    duckdb = pytest.importorskip("duckdb")
    sql = readme_query().replace("exports/", str(exported) + "/")
    got = duckdb.sql(sql).df()
    assert len(RUNS) >= 2 and got["run"].nunique() == len(RUNS)
    for row in got.itertuples():
        mode = real_runs[row.run].modes[row.mode]
        steady = mode.steady_steps
        # DuckDB's count and median over the Parquet rows vs the analysis' own steady steps
        assert row.steps == len(steady)
        assert row.median_ms == pytest.approx(float(steady["wall_ms"].median()), rel=1e-12)
        assert row.median_ms == pytest.approx(float(mode.breakdown.loc["total", "median"]), rel=1e-12)
        assert row.op_ms == pytest.approx(float(mode.breakdown.loc["op", "median"]), rel=1e-12)
        assert row.tensorflow == real_runs[row.run].environment["tensorflow"]
    want = {(r, m) for r, run in real_runs.items() for m, mode in run.modes.items()
            if mode.ok and len(mode.steady_steps)}
    assert set(zip(got["run"], got["mode"])) == want


def test_every_table_has_the_run_columns(exported, real_runs):
    for name in tables.FLEET_TABLES:
        for run in RUNS:
            df = pd.read_parquet(exported / run.name / f"{name}.parquet")
            assert list(df.columns[:len(tables.RUN_COLUMNS)]) == list(tables.RUN_COLUMNS), name
            assert (df["run"] == run.name).all()
            assert df["run_path"].str.endswith(run.name).all()
    duckdb = pytest.importorskip("duckdb")
    ops = duckdb.sql(f"SELECT run, mode, op, thread, self_ms_per_step FROM read_parquet("
                     f"'{exported}/*/ops.parquet', union_by_name = true)").df()
    for (run, mode), df in ops.groupby(["run", "mode"]):
        mine = real_runs[run].modes[mode].ops
        assert len(df) == len(mine)
        assert df["self_ms_per_step"].sum() == pytest.approx(mine["self_ms_per_step"].sum())
    modes = duckdb.sql(f"SELECT run, mode, host, median_ms FROM read_parquet("
                       f"'{exported}/*/modes.parquet', union_by_name = true)").df()
    for row in modes.itertuples():
        assert row.median_ms == pytest.approx(real_runs[row.run].modes[row.mode].median_ms)
        assert row.host.startswith("localhost")


def test_csv_and_errors(tmp_path, monkeypatch, capsys):
    import shutil
    run = shutil.copytree(RUNS[0], tmp_path / RUNS[0].name,
                          ignore=shutil.ignore_patterns(".traceinsight"))
    assert cli.main(["export", str(run), "--tables", "csv", "-o", str(tmp_path / "c")]) == 0
    steps = pd.read_csv(tmp_path / "c" / "steps.csv")
    assert len(steps) == sum(len(m.steps) for m in traceinsight.load(run).modes.values() if m.ok)
    capsys.readouterr()
    assert cli.main(["export", str(run), "--trace", "python"]) == 2
    assert "add --mode" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert cli.main(["export", str(run), "--tables", "parquet", "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Parquet needs pyarrow" in err
