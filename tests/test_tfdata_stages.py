"""tf.data by stage: the ``Iterator::*`` events per stage, checked against XProf's
input_pipeline_analyzer on the same files (its input op table: count, time and self time per
stage), computed once with the mode's analysis (``ModeResult.stages``), kept by the analysis
cache, shown by every renderer, and the input-bound finding naming the stage whose own work costs
most."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from markdown_it import MarkdownIt

import traceinsight
from traceinsight import cli
from traceinsight.analysis import cache
from traceinsight.analysis.tfdata import costliest_work_stage, stage_table
from traceinsight.columns import Columns
from traceinsight.derive import complete
from traceinsight.model import Run
from traceinsight.report import render
from traceinsight.report.json import load_schema
from traceinsight.testing import make_mode, sample_run

from test_report import EVIL, EVIL_Q, TagCollector, md_tables

DATA = Path(__file__).parent / "data"
TRACES = {"tfdata_stalls": DATA / "foreign" / "tfdata_stalls",
          "data-wait": DATA / "attribution" / "data-wait" / "function" / "host",
          # Keras predict over a dataset: nested stage names (Zip[0]::FlatMap[0]::...)
          "conv1d-predict": DATA / "runs" / "conv1d" / "predict" / "host"}


def _file(name: str) -> str:
    return str(next(TRACES[name].rglob("*.xplane.pb")))


def _xprof_stages(path: str) -> dict[str, dict]:
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data")
    out = raw.xspace_to_tool_data([path], "input_pipeline_analyzer", {})
    data = out[0] if isinstance(out, tuple) else out
    doc = json.loads(data.decode() if isinstance(data, bytes) else data)
    table = next(t for t in doc if isinstance(t, dict) and t.get("cols")
                 and t["cols"][0]["id"] == "opName")
    cols = [c["id"] for c in table["cols"]]
    return {r["opName"]: r for r in (dict(zip(cols, [c.get("v") for c in row["c"]]))
                                     for row in table.get("rows") or [])}


@pytest.mark.parametrize("name", sorted(TRACES))
def test_stage_table_matches_xprofs_input_pipeline_analyzer(name):
    xp = _xprof_stages(_file(name))
    assert xp, "XProf lists no tf.data stage in this trace"
    ours = stage_table([_file(name)])
    got = {s: i for i, s in enumerate(ours["stage"])}
    assert set(got) == set(xp)
    for stage, row in xp.items():
        i = got[stage]
        assert ours["count"][i] == row["count"]
        assert ours["total_ms"][i] == pytest.approx(row["timeInMs"], abs=1e-3)
        assert ours["self_ms"][i] == pytest.approx(row["selfTimeInMs"], abs=1e-3)


def test_input_bound_names_the_costliest_stage():
    run = traceinsight.load(_file("tfdata_stalls"), use_cache=False)
    f = next(f for f in run.findings if f.rule == "input-bound")
    best = costliest_work_stage(stage_table([_file("tfdata_stalls")]))
    # the map, which does the pipeline's work, not the Prefetch the step waits on
    assert best["kind"] == "MapAndBatch"
    assert f"By tf.data stage, {best['stage']} costs most" in f.evidence
    assert "num_parallel_calls" in f.fix.splitlines()[1]


@pytest.mark.parametrize("name", sorted(TRACES))
def test_each_stages_parallelism_is_what_its_events_record(name):
    """The stage table's parallel_calls / autotuned against the trace read by protobuf's own
    parser (not the C decoder): the largest ``parallelism`` stat of each stage's events, and
    whether any of them holds ``autotune`` = true."""
    from traceinsight.xplane import XSpace
    want: dict[str, list] = {}
    for plane in XSpace.FromString(Path(_file(name)).read_bytes()).planes:
        em, sm = plane.event_metadata, plane.stat_metadata
        for line in plane.lines:
            for e in line.events:
                stage = em[e.metadata_id].name
                if not stage.startswith("Iterator::"):
                    continue
                w = want.setdefault(stage, [0, False])
                for st in e.stats:
                    key = sm[st.metadata_id].name
                    if key == "parallelism":
                        w[0] = max(w[0], st.int64_value or st.uint64_value)
                    elif key == "autotune" and st.WhichOneof("value") == "ref_value":
                        w[1] = w[1] or sm[st.ref_value].name == "true"
    ours = stage_table([_file(name)])
    got = {s: [int(p), bool(a)] for s, p, a in
           zip(ours["stage"], ours["parallel_calls"], ours["autotuned"])}
    assert got == want
    # what the committed traces hold: a serial map fused with its batch, Keras' autotuned map
    if name == "tfdata_stalls":
        assert got["Iterator::Root::Prefetch::MapAndBatch"] == [1, False]
    if name == "conv1d-predict":
        assert any(k.endswith("ParallelMapV2") and v[0] >= 1 and v[1] for k, v in got.items())


def _mode(name: str):
    run = traceinsight.load(TRACES[name], use_cache=False)
    (m,) = run.modes.values()
    return run, m


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_modes_stage_table_is_xprofs(name):
    """Computed during the mode's analysis, from the table it already parsed: the same figures."""
    xp = _xprof_stages(_file(name))
    _, m = _mode(name)
    st = m.table("stages")
    assert sorted(st["stage"].tolist()) == sorted(xp)
    for i, stage in enumerate(st["stage"]):
        assert st["count"][i] == xp[stage]["count"]
        assert st["total_ms"][i] == pytest.approx(xp[stage]["timeInMs"], abs=1e-3)
        assert st["self_ms"][i] == pytest.approx(xp[stage]["selfTimeInMs"], abs=1e-3)


def test_per_step_figures_add_up_to_xprofs_when_every_call_is_in_a_steady_step():
    """tfdata_stalls starts mid-run: its 30 steps are all steady and hold every stage call (the
    root's 30 GetNext, one per step), so per step x steps is XProf's whole-trace figure."""
    xp = _xprof_stages(_file("tfdata_stalls"))
    _, m = _mode("tfdata_stalls")
    st = m.table("stages")
    n = m.n_steady
    assert n == 30 and xp["Iterator::Root"]["count"] == 30
    for i, stage in enumerate(st["stage"]):
        assert st["calls_per_step"][i] * n == pytest.approx(xp[stage]["count"])
        assert st["ms_per_step"][i] * n == pytest.approx(xp[stage]["selfTimeInMs"], abs=1e-3)


def test_per_step_figures_leave_out_the_first_step():
    """data-wait's first step is the process's first call: its stage calls are in the totals
    (as XProf has them) but not in the per-step figures (5 steady steps of 6 calls each)."""
    _, m = _mode("data-wait")
    st = m.table("stages")
    assert m.n_steady == 5
    assert (st["count"] == 6).all()
    np.testing.assert_allclose(st["calls_per_step"], 1.0)
    root = st["stage"].tolist().index("Iterator::Root::Map")
    assert st["ms_per_step"][root] * 5 < st["self_ms"][root]


def test_the_analysis_cache_keeps_the_stage_table():
    _, m = _mode("tfdata_stalls")
    data = json.loads(json.dumps(cache.to_dict(m, ["k"])))
    back = cache.from_dict(data, ["k"], None)
    a, b = m.table("stages"), back.table("stages")
    assert a.columns == b.columns and len(a) == len(b) == 4
    for c in a.columns:
        assert a[c].tolist() == b[c].tolist()
    # a damaged stage table is refused (analysed again), never shown
    data["stages"]["dtypes"][0] = "complex"
    assert cache.from_dict(data, ["k"], None) is None
    del data["stages"]
    assert cache.from_dict(data, ["k"], None) is None


def test_the_finding_reads_the_stage_table_not_the_trace_files():
    run, m = _mode("tfdata_stalls")
    moved = complete(Run(path=None, name=run.name,
                modes={m.name: m.replace(trace_paths=("/nonexistent/trace.xplane.pb",))}))
    f = next(f for f in moved.findings if f.rule == "input-bound")
    assert "By tf.data stage, Iterator::Root::Prefetch::MapAndBatch costs most" in f.evidence


def _stage_names(m) -> list[str]:
    return m.table("stages")["stage"].tolist()


def test_export_writes_the_stage_table():
    from traceinsight.report.tables import tables
    _, m = _mode("tfdata_stalls")
    df = tables(m)["stages"]
    assert df["stage"].tolist() == _stage_names(m)
    assert dict(zip(df["stage"], df["parallel_calls"]))["Iterator::Root::Prefetch::MapAndBatch"] == 1


def test_json_report_has_the_stage_table():
    run, m = _mode("tfdata_stalls")
    doc = json.loads(render(run, "json"))
    jsonschema.validate(doc, load_schema())
    (entry,) = doc["modes"]
    rows = entry["tfdata_stages"]
    assert [r["stage"] for r in rows] == _stage_names(m)
    xp = _xprof_stages(_file("tfdata_stalls"))
    for r in rows:
        assert r["self_ms"] == pytest.approx(xp[r["stage"]]["selfTimeInMs"], abs=1e-3)
    # a mode without tf.data has no such section
    assert all("tfdata_stages" not in e for e in json.loads(render(sample_run(), "json"))["modes"])


def test_markdown_report_has_the_stage_table():
    run, m = _mode("tfdata_stalls")
    md = render(run, "md")
    tables = md_tables(MarkdownIt("commonmark").enable("table").parse(md))
    (t,) = [t for t in tables if t[0][0] == "tf.data stage"]
    assert [r[0] for r in t[1:]] == _stage_names(m)
    header = t[0]
    row = dict(zip(header, t[1]))
    assert row["calls (trace)"] == "30" and row["self ms (trace)"] == "16.1"   # XProf: 16.05 (shown to 3 digits)
    assert "tf.data stage" not in render(sample_run(), "md")


def test_html_report_has_the_stage_table():
    run, m = _mode("tfdata_stalls")
    page = render(run, "html")
    p = TagCollector()
    p.feed(page)
    text = "".join(p.text)
    assert "tf.data stages" in text
    for stage in _stage_names(m):
        assert stage in text
    assert "tf.data stage" not in render(sample_run(), "html")


def test_analyze_prints_the_stage_table(capsys):
    assert cli.main(["analyze", str(TRACES["tfdata_stalls"])]) == 0
    out = capsys.readouterr().out
    assert "tf.data stages" in out
    for stage in _stage_names(_mode("tfdata_stalls")[1]):
        assert stage in out


def test_stage_names_are_escaped_in_every_renderer():
    stages = Columns({"stage": np.asarray([EVIL, EVIL_Q], dtype=object),
                      "kind": np.asarray(["x", "y"], dtype=object),
                      "count": np.asarray([3, 2]), "total_ms": np.asarray([2.0, 1.0]),
                      "self_ms": np.asarray([1.5, 1.0]), "share": np.asarray([0.6, 0.4]),
                      "calls_per_step": np.asarray([1.0, 1.0]),
                      "ms_per_step": np.asarray([0.5, 0.3])})
    m = make_mode("evil", {"op": 1.0, "input": 1.0}).replace(stages=stages)
    run = complete(Run(path=None, name="evil", modes={m.name: m}))
    html = MarkdownIt("commonmark").enable("table").render(render(run, "md"))
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    page = render(run, "html")
    p = TagCollector()
    p.feed(page)
    assert "script" not in p.tags and "img" not in p.tags
    assert EVIL in "".join(p.text) and EVIL_Q in "".join(p.text)
    # the terminal: a stage name cannot colour it or move its cursor
    import io

    from rich.console import Console

    from traceinsight.report import terminal
    esc_stage = "Iterator::Root::\x1b[31mRed\x1b[2J"
    m = m.replace(stages=Columns({c: stages[c][:1] for c in stages.columns} |
                                 {"stage": np.asarray([esc_stage], dtype=object)}))
    buf = io.StringIO()
    terminal.show(complete(Run(path=None, name="evil", modes={m.name: m})),
                  console=Console(file=buf, width=300, force_terminal=False))
    out = buf.getvalue()
    assert "\x1b" not in out and "Iterator::Root::" in out


def test_the_viewers_mode_detail_has_a_tf_data_tab():
    import asyncio

    from textual.widgets import TabbedContent

    from traceinsight.tui import get_app
    from traceinsight.tui.frame_table import FrameTable
    from traceinsight.tui.mode import ModeScreen

    run, m = _mode("tfdata_stalls")

    async def go() -> None:
        app = get_app(run)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("enter")
            assert isinstance(app.screen, ModeScreen)
            tabs = app.screen.query_one(TabbedContent)
            tabs.active = "tab-tfdata"
            await pilot.pause(0.3)
            table = app.screen.query_one("#tfdata", FrameTable)
            assert table.table.row_count == 4
            assert table.view["stage"].tolist() == _stage_names(m)
            # the serial map fused with its batch, as the reports show its parallelism
            par = dict(zip(table.view["stage"], table.view["parallel"]))
            assert par["Iterator::Root::Prefetch::MapAndBatch"] == "1"
            assert par["Iterator::Root"] == "–"

    asyncio.run(go())
