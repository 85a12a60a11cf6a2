"""What a run costs beside its typical step: per-category means adding up to the mean traced step,
and a cost concentrated in a few steps (input stalls, periodic work) found with the steps it hit,
checked against XProf's input-bound share on a stock tf.data trace written without this tool
(tools/make_foreign_traces.py tfdata_stalls)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.derive import complete
from traceinsight.findings import find
from traceinsight.model import Run
from traceinsight.stats import concentrated, concentrated_costs
from traceinsight.testing import make_mode

STALLS = Path(__file__).parent / "data" / "foreign" / "tfdata_stalls"


def _trace() -> str:
    return str(next(STALLS.rglob("*.xplane.pb")))


def test_concentrated_finds_the_few_steps_and_their_share():
    # 30 steps of 1 ms, input 0.1 ms, three stalls of +4, +2.5, +0.9 ms
    inp = np.full(30, 0.1)
    inp[[6, 14, 22]] += [4.0, 2.5, 0.9]
    wall = 1.0 + inp
    hit = concentrated(inp, np.arange(30), float(wall.sum()))
    assert [n for n, _ in hit["steps"]] == [6, 14, 22]
    assert hit["excess_ms"] == pytest.approx(7.4)
    assert hit["share"] == pytest.approx(7.4 / wall.sum())
    # a cost spread over every step is not concentrated; nor is one in too many steps
    assert concentrated(np.linspace(0.1, 0.2, 30), np.arange(30), 40.0) is None
    many = np.full(30, 0.1)
    many[::3] = 3.0
    assert concentrated(many, np.arange(30), 100.0) is None


def test_periodic_python_work_is_a_finding_with_its_steps():
    """Python work every 10th step (a checkpoint-like spike): the median step hides it, the mean
    and the finding do not."""
    m = make_mode("fit", {"op": 2.0, "python": 0.2}, n_steps=40, jitter=0.01)
    steps = m.steps.copy()
    spike = steps["step_num"] % 10 == 5
    steps.loc[spike, "python"] += 3.0
    steps.loc[spike, "wall_ms"] += 3.0
    from traceinsight.testing import _breakdown
    m = m.replace(steps=steps, breakdown=_breakdown(steps))
    run = complete(Run(path=None, name="periodic", modes={"fit": m}))
    assert m.category_medians()["python"] == pytest.approx(0.2, rel=0.05)
    assert m.category_means()["python"] == pytest.approx(0.2 + 3.0 * 4 / 40, rel=0.05)
    f = next(f for f in find(run) if f.rule == "concentrated-cost")
    assert "4 of 40 steps" in f.title
    assert all(f"step {n} " in f.evidence for n in (5, 15, 25, 35))
    # the spikes' 0.3 ms per traced step, as their share of the traced step (2.5 ms of
    # categories) applied to the untraced median: never more than the step
    c = m.traced_category_means()
    assert f.saving_ms == pytest.approx(3.0 * 4 / 40 / sum(c.values()) * m.median_ms, rel=0.05)
    assert f.saving_basis.startswith("estimate")


@pytest.mark.skipif(not STALLS.is_dir(), reason="stock tf.data trace not committed")
def test_input_stalls_on_a_stock_tfdata_trace_match_xprofs_input_share():
    """XProf's overview says what share of the summed step time waited for input; the input-bound
    finding's share (mean input over the mean traced step) is the same figure, within a point
    (XProf counts the first step too; here it is set apart)."""
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data")
    out = raw.xspace_to_tool_data([_trace()], "overview_page", {})
    data = out[0] if isinstance(out, tuple) else out
    ov = json.loads(data.decode() if isinstance(data, bytes) else data)
    conclusion = next(t["p"]["input_conclusion"] for t in ov
                      if (t.get("p") or {}).get("input_conclusion"))
    xprof_pct = float(re.search(r"([\d.]+)% of the total step time", conclusion).group(1))
    run = traceinsight.load(_trace(), use_cache=False)
    (m,) = run.ok_modes()
    share = m.category_shares()["input"] * 100
    assert share == pytest.approx(xprof_pct, abs=1.5)
    f = next(f for f in run.findings if f.rule == "input-bound")
    assert f"({share:.0f} % of its categories)" in f.evidence
    # the stalls: a few steps, named, holding a material share of the time
    hit = concentrated_costs(m)["input"]
    assert 1 <= len(hit["steps"]) <= 5 and hit["share"] >= 0.05
    assert all(f"step {n} " in f.evidence for n, _ in hit["steps"][:3])
    # the median step hides them: its input is well under the mean
    assert m.category_medians()["input"] < 0.8 * m.category_means()["input"]


@pytest.mark.skipif(not STALLS.is_dir(), reason="stock tf.data trace not committed")
def test_the_report_shows_the_stalled_steps():
    from traceinsight.report import render

    run = traceinsight.load(_trace())
    doc = json.loads(render(run, "json"))
    hit = doc["modes"][0]["concentrated"]["input"]
    assert hit["material"] and hit["share"] >= 0.05
    note = next(line for line in render(run, "md").splitlines() if line.startswith("In a few steps"))
    assert all(f"{s['step_num']} (" in note for s in hit["steps"][:3]) and "input in" in note
