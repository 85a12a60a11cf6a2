"""traceinsight export: the Chrome trace (ours, and XProf's converter) and the CSV / Parquet tables."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from traceinsight import cli
from traceinsight.errors import TraceinsightError
from traceinsight.report import chrome_trace, tables, write_files
from traceinsight.report.options import TableOptions
from traceinsight.testing import sample_run
from traceinsight.xplane import XSpace


def write_xspace(path: Path) -> Path:
    """A host plane with one thread line: a 'train' step holding two ops (times hand-chosen)."""
    space = XSpace()
    plane = space.planes.add(id=1, name="/host:CPU")
    for mid, name in ((1, "train"), (2, "EagerExecute"), (3, '<script>alert("x")</script>')):
        plane.event_metadata[mid].id = mid
        plane.event_metadata[mid].name = name
    plane.stat_metadata[10].id = 10
    plane.stat_metadata[10].name = "step_num"
    line = plane.lines.add(id=7, name="python", timestamp_ns=1_000_000)
    step = line.events.add(metadata_id=1, offset_ps=0, duration_ps=5_000_000_000)   # 5 ms
    step.stats.add(metadata_id=10, int64_value=0)
    line.events.add(metadata_id=2, offset_ps=1_000_000_000, duration_ps=2_000_000_000)
    line.events.add(metadata_id=3, offset_ps=3_500_000_000, duration_ps=500_000_000)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.SerializeToString())
    return path


def test_chrome_trace_from_xprof(tmp_path):
    pytest.importorskip("xprof")
    pb = write_xspace(tmp_path / "eager" / "host" / "plugins" / "profile" / "s" / "h.xplane.pb")
    doc = json.loads(chrome_trace.via_xprof([str(pb)]))
    assert doc["displayTimeUnit"] == "ns"
    assert all(e for e in doc["traceEvents"])           # the trailing {} is gone
    complete = {e["name"]: e for e in doc["traceEvents"] if e.get("ph") == "X"}
    assert complete["EagerExecute"]["dur"] == pytest.approx(2000.0)   # µs
    assert complete['<script>alert("x")</script>']["dur"] == pytest.approx(500.0)
    assert complete["train"]["ts"] == pytest.approx(1000.0)           # line timestamp_ns 1e6
    assert complete["EagerExecute"]["ts"] - complete["train"]["ts"] == pytest.approx(1000.0)
    threads = [e for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert threads[0]["args"]["name"] == "python"


def test_pass_paths_pick_the_pass():
    mode = dataclasses.replace(sample_run().modes["eager"], trace_paths=(
        "r/eager/host/plugins/profile/s/h.xplane.pb", "r/eager/python/plugins/profile/s/h.xplane.pb"))
    assert chrome_trace.pass_paths(mode, "python") == ["r/eager/python/plugins/profile/s/h.xplane.pb"]
    only_host = dataclasses.replace(mode, trace_paths=mode.trace_paths[:1])
    with pytest.raises(TraceinsightError, match="no python pass"):
        chrome_trace.pass_paths(only_host, "python")
    # a folder named like a pass higher up is not a pass
    odd = dataclasses.replace(mode, trace_paths=("/home/python/runs/r/eager/host/plugins/profile/s/h.xplane.pb",))
    assert chrome_trace.pass_paths(odd, "host") == list(odd.trace_paths)
    foreign = dataclasses.replace(mode, trace_paths=("x.xplane.pb",))
    assert chrome_trace.pass_paths(foreign, "host") == ["x.xplane.pb"]
    with pytest.raises(TraceinsightError, match="no trace files"):
        chrome_trace.pass_paths(sample_run().modes["eager"], "host")


def test_csv_tables_round_trip(tmp_path):
    run = sample_run()
    mode = run.modes["eager"]
    written = write_files(tmp_path, tables.render(run, TableOptions(mode="eager", format="csv")))
    assert sorted(p.name for p in written) == ["breakdown.csv", "hotspots.csv", "ops.csv",
                                               "steps.csv"]   # no retraces / other in eager
    ops = pd.read_csv(tmp_path / "ops.csv")
    assert ops["op"].tolist() == ["Conv2D", "MatMul", "BiasAdd"]
    assert ops["self_ms_per_step"].tolist() == [2.5, 1.2, 0.6]
    bd = pd.read_csv(tmp_path / "breakdown.csv").set_index("category")
    assert bd.loc["python", "median"] == pytest.approx(mode.breakdown.loc["python", "median"])


def test_parquet_needs_pyarrow(tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(TraceinsightError, match="Parquet needs pyarrow"):
            tables.render(sample_run(), TableOptions(mode="eager", format="parquet"))
    else:
        write_files(tmp_path, tables.render(sample_run(), TableOptions(mode="eager", format="parquet")))
        assert (tmp_path / "ops.parquet").exists()


def test_cli_export(monkeypatch, tmp_path, capsys):
    pytest.importorskip("xprof")
    import traceinsight
    pb = write_xspace(tmp_path / "run" / "eager" / "host" / "plugins" / "profile" / "s" / "h.xplane.pb")
    run = sample_run()
    # the sample mode's tables, with a small real trace as its trace file (the export draws that
    # file's analysis)
    run.modes["eager"] = dataclasses.replace(run.modes["eager"], trace_paths=(str(pb),))
    monkeypatch.setattr(traceinsight, "load", lambda path, **kw: run)
    out = tmp_path / "out"
    assert cli.main(["export", str(tmp_path / "run"), "--mode", "eager", "-o", str(out),
                     "--via-xprof"]) == 0
    assert json.loads((out / "trace.json").read_text())["traceEvents"]
    assert cli.main(["export", str(tmp_path / "run"), "--mode", "eager", "-o", str(out)]) == 0
    import gzip
    doc = json.loads(gzip.decompress((out / "trace.json.gz").read_bytes()))
    assert {e["name"] for e in doc["traceEvents"]} >= {"train", "EagerExecute", "step 0"}
    assert (out / "ops.csv").exists()
    assert cli.main(["export", str(tmp_path / "run"), "--mode", "nope"]) == 2
    assert "has no mode 'nope'" in capsys.readouterr().err


def test_chrome_trace_without_xprof_is_one_clear_line(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "xprof.convert", None)   # import fails as if not installed
    with pytest.raises(TraceinsightError, match="needs xprof: pip install xprof"):
        chrome_trace.via_xprof([str(tmp_path / "h.xplane.pb")])


def test_unreadable_trace_is_a_user_error(tmp_path):
    pytest.importorskip("xprof")
    bad = tmp_path / "bad.xplane.pb"
    bad.write_bytes(b"not a protobuf at all \xff\xfe")
    with pytest.raises(TraceinsightError):
        chrome_trace.via_xprof([str(bad)])
