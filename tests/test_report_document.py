"""The typed report document and its writers: the document's types name the schema's keys, every
format is one row of ``report.WRITERS``, and the CSV summary reads back (with the csv module) to
the JSON report's own figures."""

from __future__ import annotations

import csv
import io
import json
import typing
from dataclasses import replace
from pathlib import Path

import pytest

from traceinsight import cli
from traceinsight.derive import complete
from traceinsight.model import CATEGORIES, Run
from traceinsight.report import EXTENSIONS, REPORT_FORMATS, WRITERS, format_for, render
from traceinsight.report import document as d
from traceinsight.report.json import load_schema
from traceinsight.testing import sample_run

ROOT = Path(__file__).resolve().parent.parent
RUNS = sorted(p for p in (ROOT / "tests" / "data" / "runs").iterdir() if (p / "run.json").exists())


@pytest.mark.parametrize("typed, definition", [(d.ReportJSON, "report"), (d.ModeEntry, "mode"),
                                               (d.RunInfo, "run"), (d.FindingEntry, "finding"),
                                               (d.HostSession, "host_session")])
def test_the_document_types_name_the_schemas_keys(typed, definition):
    """Every key the schema defines is a key of the type mypy checks the writers against, and the
    type's required keys are the schema's required ones (a key the schema leaves out of
    ``required`` but the builder always writes may be required in the type)."""
    schema = load_schema()["$defs"][definition]
    keys = set(typing.get_type_hints(typed))
    # the mode entry also carries what the report shows beside the schema's figures
    extra = {"concentrated", "categories_distorted"} if definition == "mode" else set()
    assert keys == set(schema["properties"]) | extra
    assert set(schema.get("required", ())) <= typed.__required_keys__


def test_each_format_is_one_writer_row():
    for w in WRITERS:
        module = w.load()
        assert callable(getattr(module, "write", None)) == w.reports, w
        assert callable(getattr(module, "render_diff", None)) == w.diffs, w
        for ext in w.extensions:
            assert EXTENSIONS[ext] == w.name
    assert format_for("summary.csv") == "csv" and "csv" in REPORT_FORMATS


def _read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _same(cell: str, value) -> bool:
    """A cell read back by the csv module is the JSON document's value: empty for null, the
    number itself (read by ``float``), the text itself."""
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return float(cell) == float(value)
    return cell == value


@pytest.mark.parametrize("run", [*RUNS, None], ids=[p.name for p in RUNS] + ["sample"])
def test_csv_summary_reads_back_to_the_json_reports_figures(run):
    import traceinsight
    r = traceinsight.load(run, use_cache=False) if run is not None else sample_run()
    doc = json.loads(render(r, "json"))
    rows = _read(render(r, "csv"))
    assert [row["mode"] for row in rows] == [m["name"] for m in doc["modes"]]
    for row, m in zip(rows, doc["modes"]):
        assert row["run"] == doc["run"]["name"] and row["status"] == m["status"]
        pairs = [("median_ms", m.get("median_ms")), ("ci_lo_ms", m.get("ci_lo_ms")),
                 ("ci_hi_ms", m.get("ci_hi_ms")), ("ratio", m.get("ratio")),
                 ("ratio_lo", m.get("ratio_lo")), ("ratio_hi", m.get("ratio_hi")),
                 ("vs_fastest", m.get("vs_fastest")), ("steps", m.get("n")),
                 ("first_step_ms", m.get("first_step_ms")), ("step_ms", m.get("category_total_ms"))]
        pairs += [(f"{c}_ms", m["category_means"][c]) for c in CATEGORIES]
        pairs += [(f"{c}_share", m["category_shares"][c]) for c in CATEGORIES]
        for column, value in pairs:
            assert _same(row[column], value), (m["name"], column, row[column], value)
        # the means add up to the step they split (the untraced median), as the report says
        means = [row[f"{c}_ms"] for c in CATEGORIES]
        if m["status"] == "ok" and all(means):
            assert sum(map(float, means)) == pytest.approx(float(row["step_ms"]), rel=1e-4)


def test_csv_summary_keeps_names_inert():
    run = sample_run()
    evil = "=HYPERLINK(\"x\")\x1b[31m"
    hostile = complete(Run(None, "r", {evil: replace(run.modes["eager"], name=evil),
                                       "function": run.modes["function"]}))
    rows = _read(render(hostile, "csv"))
    assert rows[0]["mode"] == "'=HYPERLINK(\"x\")\\x1b[31m"
    assert rows[1]["mode"] == "function"


def test_report_command_writes_the_csv_by_extension(tmp_path, monkeypatch):
    monkeypatch.setattr("traceinsight.report.load_run", lambda path: sample_run())
    out = tmp_path / "summary.csv"
    assert cli.main(["report", "anything", "-o", str(out)]) == 0
    rows = _read(out.read_text())
    assert {r["mode"] for r in rows} == set(sample_run().modes)


def test_a_float_column_is_cleaned_as_each_value_is():
    """``data._clean_floats`` (a float column's values to 6 significant digits, at once) gives
    what ``float(f"{v:.6g}")`` gives for every value, to the bit (None where not finite):
    magnitudes from 1e-30 to 1e30, decimals that end in a half (ties), integers of 7 digits,
    values next to powers of ten, zeros of both signs, the smallest and largest doubles."""
    import numpy as np

    from traceinsight.report.data import _clean_float, _clean_floats
    rng = np.random.default_rng(5)
    n = 20_000
    v = np.concatenate([
        rng.lognormal(0, 6, n), -rng.lognormal(0, 6, n),
        rng.random(n) * 10.0 ** rng.integers(-30, 30, n),
        np.round(rng.random(n) * 1e6) / 10.0 ** rng.integers(0, 12, n),
        (np.round(rng.random(n) * 1e6) + 0.5) / 10.0 ** rng.integers(0, 12, n),
        rng.integers(1, 10**7, n).astype(float),
        10.0 ** rng.integers(-25, 25, n) * (1 + rng.integers(-3, 4, n) * 2.0 ** -52),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308, 123456.5,
         1234565.0, 999999.5, 99999.95, 0.1, 1 / 3]])
    got = _clean_floats(v)
    want = [_clean_float(x) for x in v.tolist()]
    assert [None if g is None else np.float64(g).tobytes() for g in got] == \
        [None if w is None else np.float64(w).tobytes() for w in want]
    assert all(type(g) is float for g in got if g is not None)
