"""Where in the model (analysis/layers.py): op names and HLO metadata to layers on hand-made
tables with known answers; on a committed run, every op's time is in exactly one row, and the
graph and XLA modes of one model name the same layers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import present
from traceinsight.analysis.layers import NOT_PLACED, hlo_scopes, layer_of, layers_table
from traceinsight.columns import Columns, text
from traceinsight.report import render

RUNS = Path(__file__).parent / "data" / "runs"


@pytest.mark.parametrize("name, ops, layer", [
    ("model/dense/MatMul", (), "model/dense"),
    ("gradient_tape/model/dense/MatMul", (), "model/dense"),            # training's backward ops
    ("model/block_1/sub/conv/Conv2D", (), "model/block_1/sub/conv"),    # nested models
    ("model/Cast", (), "model"),                                       # the model's own ops
    ("Conv2D", (), None),                                              # an eager op: no scope
    ("model/conv/convolution/ExpandDims_1", ("model/conv/convolution",), "model/conv"),
    ("model/dense/BiasAdd/ReadVariableOp", (), "model/dense"),          # named like an op
    ("model//x", (), "model"),
])
def test_an_op_name_gives_its_layer(name, ops, layer):
    assert layer_of(name, frozenset(ops)) == layer


def test_hlo_ops_take_the_layer_of_their_metadata_where_modules_agree():
    hlo = hlo_scopes({("m1", "convolution.3"): "model/conv/convolution",
                      ("m1", "fusion.1"): "model/dense/MatMul",
                      ("m2", "fusion.1"): "model/other/MatMul",      # two modules disagree
                      ("m1", "param_0"): ""})                          # no metadata
    assert hlo == {"convolution.3": "model/conv/convolution"}


def test_the_table_groups_ops_and_keeps_what_no_layer_holds():
    ops = Columns({"op": text(["__inference_step_1", "model/conv/Conv2D", "model/conv/Relu",
                               "gradient_tape/model/conv/Conv2DBackpropInput", "model/dense/MatMul",
                               "ReadVariableOp", "convolution.3"]),
                   "type": text(["tf.function", "Conv2D", "Relu", "Conv2DBackpropInput", "MatMul",
                                 "ReadVariableOp", "convolution"]),
                   "thread": text(["main", "worker", "worker", "worker", "worker", "main", "worker"]),
                   "calls_per_step": np.array([1.0, 1, 1, 1, 2, 4, 1]),
                   "self_ms_per_step": np.array([9.0, 2.0, 0.5, 3.0, 1.0, 0.4, 0.1]),
                   "share": np.zeros(7)})
    t = layers_table(ops, {"convolution.3": "model/dense/MatMul"})
    rows = {r["layer"]: r for r in t.records()}
    assert list(rows) == ["model/conv", "model/dense", NOT_PLACED]
    assert rows["model/conv"]["ms_per_step"] == pytest.approx(5.5)    # 2 + 0.5 + 3 (backward)
    assert rows["model/conv"]["ops"] == 3 and rows["model/conv"]["calls_per_step"] == 3
    assert rows["model/dense"]["ms_per_step"] == pytest.approx(1.1)   # MatMul + the HLO op
    assert rows["model/dense"]["source"] == "hlo metadata + scope"
    # the tf.function call's own row is its wait for the graph: counted nowhere
    assert rows[NOT_PLACED]["ms_per_step"] == pytest.approx(0.4) and not rows[NOT_PLACED]["placed"]
    assert sum(r["share"] for r in rows.values()) == pytest.approx(1.0)
    # nothing with a scope: no table (an eager mode)
    eager = ops.take(np.array([5]))
    assert layers_table(eager).empty


def test_a_committed_run_places_every_op_once_and_modes_agree_on_the_layers():
    run = traceinsight.load(RUNS / "conv1d")
    for name in ("function", "xla", "predict"):
        m = run.modes[name]
        ops = m.table("ops")
        counted = np.asarray(ops["type"], dtype=object) != "tf.function"
        # every op's self time is in exactly one row: the rows add up to the ops table's
        assert float(np.sum(m.table("layers")["ms_per_step"])) == pytest.approx(
            float(np.sum(np.asarray(ops["self_ms_per_step"])[counted])), rel=1e-9)
    layers = {n: {r["layer"] for r in run.modes[n].table("layers").records() if r["placed"]}
              for n in ("function", "xla")}
    # the same model in two processes: the XLA ops' metadata names the graph's layers
    assert layers["function"] == layers["xla"] and len(layers["xla"]) == 5
    xla = run.modes["xla"].table("layers")
    assert set(xla["source"][xla["placed"]].tolist()) == {"hlo metadata"}
    assert run.modes["eager"].table("layers").empty       # eager ops carry no scope
    md = render(run, "md")
    assert present.LAYERS_TITLE in md and "| layer | `function` | `xla` | `predict` |" in md


def test_the_viewer_has_a_layers_tab_where_a_mode_has_layers():
    import asyncio

    from traceinsight.tui import get_app
    from traceinsight.tui.frame_table import FrameTable

    from tui_runs import load_committed, settle

    async def drive() -> None:
        run = load_committed("conv1d")
        app = get_app(run)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            app.show_mode("function")
            await pilot.pause()
            assert app.screen.query("#tab-layers")
            from textual.widgets import TabbedContent
            app.screen.query_one(TabbedContent).active = "tab-layers"
            await pilot.pause()
            table = app.screen.query_one("#layers", FrameTable)
            assert table.table.row_count == len(run.modes["function"].table("layers"))
            await pilot.press("escape")
            app.show_mode("eager")
            await pilot.pause()
            assert not app.screen.query("#tab-layers")

    asyncio.run(drive())
