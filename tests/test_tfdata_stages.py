"""tf.data by stage: the ``Iterator::*`` events per stage, checked against XProf's
input_pipeline_analyzer on the same files (its input op table: count, time and self time per
stage), and the input-bound finding naming the stage whose own work costs most."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceinsight
from traceinsight.analysis.tfdata import costliest_work_stage, stage_table

DATA = Path(__file__).parent / "data"
TRACES = {"tfdata_stalls": DATA / "foreign" / "tfdata_stalls",
          "data-wait": DATA / "attribution" / "data-wait" / "function" / "host"}


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
