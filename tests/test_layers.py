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
    # eager ops carry no scope: the python-tracer pass's layer frames place the host pass's
    # step, every category of it once (the run predates the capture's layer record: the rows
    # are named by their frames)
    eager = run.modes["eager"]
    lay = eager.table("layers")
    assert set(lay["source"][lay["placed"]].tolist()) == {"python-tracer frames"}
    assert "call (conv1d.py:144)" in lay["layer"].tolist()
    assert float(np.sum(lay["ms_per_step"])) == pytest.approx(
        float(eager.table("breakdown").row("total")["mean"]), rel=1e-6)
    md = render(run, "md")
    assert present.LAYERS_TITLE in md and \
        "| layer | `eager` | `function` | `xla` | `predict` |" in md
    # a graph mode says what its table sums (work over threads) beside its op category (the
    # main thread's wall, mostly the function call's own wait): the XLA step's op time the
    # layers cannot hold is said, not left out; an eager table adds up to its step and needs none
    for name in ("function", "xla", "predict"):
        (note,) = [n for n in run.modes[name].notes if n.startswith("layers: ")]
        assert "summed over every thread" in note and "tf.function call's own time" in note
    assert not [n for n in eager.notes if n.startswith("layers: ")]


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
            # the eager layers (python-tracer frames) show their split by category too
            app.screen.query_one(TabbedContent).active = "tab-layers"
            await pilot.pause()
            table = app.screen.query_one("#layers", FrameTable)
            assert table.table.row_count == len(run.modes["eager"].table("layers"))
            labels = [str(c.label) for c in table.table.columns.values()]
            assert "python ms" in labels and "layer calls/step" in labels

    asyncio.run(drive())


# an eager step as the python-tracer pass records it (times in µs; see the test below)
_PY_STEP = [
    ("$train.py:5 loop", 0, 200),
    ("$layer.py:872 __call__", 10, 100),            # the model's Layer.__call__
    ("$functional.py:174 call", 15, 90),
    ("$function.py:173 _run_through_graph", 20, 80),
    ("$layer.py:872 __call__", 25, 40),             # the custom layer's
    ("$model.py:28 call", 30, 30),
    ("TFE_Py_FastPathExecute_C", 35, 20),
    ("EagerLocalExecute: Mul", 36, 18),
    ("KernelAndDeviceFunc::Run", 40, 10),
    ("$layer.py:872 __call__", 70, 25),             # a convolution's
    ("$base_conv.py:255 call", 72, 20),
    ("TFE_Py_FastPathExecute_C", 75, 15),
    ("EagerLocalExecute: Conv2D", 76, 13),
    ("KernelAndDeviceFunc::Run", 78, 10),
    ("$trainer.py:10 on_batch_end", 120, 30),       # Keras' own (a callback)
]
_LAYER_CALLS = {"model.py:28": {"function": "Sliced.call", "layers": ["sliced"]},
                "base_conv.py:255": {"function": "BaseConv.call", "layers": ["c1", "c2", "c3", "c4"]},
                "functional.py:174": {"function": "Functional.call", "layers": ["m"]}}


def _eager_passes(tmp_path: Path) -> tuple[Path, Path]:
    """The host pass: two steady steps of 100 µs with the same two ops (op 20, dispatch 15,
    python 65 per step); the python pass: the same steps, 200 µs each with the frames."""
    from xspace_builder import Space
    host, py = Space(), Space()
    host.task_environment()
    py.task_environment(python_level=1)
    hm, pm = host.host().line("python"), py.host().line("python")
    for k, num in enumerate((0, 1, 2)):
        t0 = k * 1000
        hm.event("train", t0, 100, step_num=num, _r=1)
        pm.event("train", t0, 200, step_num=num, _r=1)
        for name, start, dur in _PY_STEP:
            pm.event(name, t0 + start, dur)
            if not name.startswith("$"):
                hm.event(name, t0 + start, dur)
    return (host.write(tmp_path / "h" / "h.xplane.pb"), py.write(tmp_path / "p" / "p.xplane.pb"))


def test_eager_layers_from_the_python_pass_by_hand(tmp_path):
    from traceinsight.analysis.layers import KERAS_OWN, PYTHON_FRAMES
    from traceinsight.analysis.mode import analyze_mode
    h, p = _eager_passes(tmp_path)
    groups = {f: ["keras"] for f in ("layer.py", "functional.py", "function.py", "base_conv.py",
                                     "trainer.py")}
    m = analyze_mode("eager", [h], [p], user_files=frozenset({"train.py", "model.py"}),
                     file_groups=groups, layer_calls=_LAYER_CALLS)
    assert m.breakdown.loc[["op", "dispatch", "python"], "mean"].tolist() == \
        pytest.approx([0.020, 0.015, 0.065])
    t = m.layers.set_index("layer")
    py = 0.065 / 165        # the pass's python (165 µs a step) scaled to the host pass's (65 µs)
    # by hand: each layer's wrapper frames and call, the ops under them; the model's call keeps
    # its own frames (the graph walk between its layers); the callback is Keras' own; the loop
    # the user wrote around it all is not placed
    want = {"Sliced.call [sliced]": (0.010, 0.010, 20 * py, 1, 1),
            "BaseConv.call [c1, c2, c3, … (4 layers)]": (0.010, 0.005, 10 * py, 1, 1),
            "Functional.call [m]": (0, 0, 35 * py, 0, 0),
            KERAS_OWN: (0, 0, 30 * py, 0, 0),
            NOT_PLACED: (0, 0, 70 * py, 0, 0)}
    assert list(t.index) == ["Sliced.call [sliced]", "BaseConv.call [c1, c2, c3, … (4 layers)]",
                             "Functional.call [m]", KERAS_OWN, NOT_PLACED]
    for row, (op, dispatch, python, calls, ops) in want.items():
        assert t.loc[row, "op_ms"] == pytest.approx(op), row
        assert t.loc[row, "dispatch_ms"] == pytest.approx(dispatch), row
        assert t.loc[row, "python_ms"] == pytest.approx(python), row
        assert t.loc[row, "ms_per_step"] == pytest.approx(op + dispatch + python), row
        assert t.loc[row, "calls_per_step"] == calls and t.loc[row, "ops"] == ops, row
    assert t.loc["Sliced.call [sliced]", "layer_calls_per_step"] == 1
    assert t["placed"].tolist() == [True, True, True, False, False]
    assert t.loc["Sliced.call [sliced]", "source"] == PYTHON_FRAMES
    # the rows hold all of the host pass's step, and say how much no layer holds
    assert t["ms_per_step"].sum() == pytest.approx(0.100)
    assert t.loc[NOT_PLACED, "share"] == pytest.approx(70 * py / 0.100)


def test_eager_layers_without_the_capture_record_are_named_by_their_frame(tmp_path):
    from traceinsight.analysis.mode import analyze_mode
    h, p = _eager_passes(tmp_path)
    groups = {f: ["keras"] for f in ("layer.py", "functional.py", "function.py", "base_conv.py",
                                     "trainer.py")}
    m = analyze_mode("eager", [h], [p], user_files=frozenset({"train.py", "model.py"}),
                     file_groups=groups)
    assert m.layers["layer"].tolist()[:3] == ["call (model.py:28)", "call (base_conv.py:255)",
                                              "call (functional.py:174)"]


@pytest.mark.capture
def test_a_real_eager_capture_places_each_layer_class_and_adds_up(tmp_path):
    """samples/slow_layers.py captured eager (python-tracer pass on): the capture records each
    layer class's call frame, the python tracer names the frames the same way, and the table puts
    the host pass's steady step, category by category, once over its rows."""
    from traceinsight.cli import main
    from traceinsight.model import CATEGORIES
    sample = Path(__file__).resolve().parents[1] / "samples" / "slow_layers.py"
    assert main(["capture", str(sample), "--modes", "eager", "--out", str(tmp_path), "--name", "r",
                 "--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
                 "--host-trace-ms", "2500", "--host-max-steps", "6", "--python-trace-ms", "2000",
                 "--python-max-steps", "3", "--rounds", "1"]) == 0
    m = traceinsight.load(tmp_path / "r", use_cache=False).modes["eager"]
    assert m.ok, m.error
    t = m.layers.set_index("layer")
    rows = list(t.index)
    dw = next(r for r in rows if r.startswith("BaseDepthwiseConv.call ["))
    conv = next(r for r in rows if r.startswith("BaseConv.call ["))
    # one call frame per layer per step: 8 depthwise layers, 9 convolutions, 1 custom layer
    assert t.loc[dw, "layer_calls_per_step"] == 8 and "(8 layers)" in dw
    assert t.loc[conv, "layer_calls_per_step"] == 9
    assert t.loc["Sliced.call [sliced]", "layer_calls_per_step"] == 1
    assert t.loc["Sliced.call [sliced]", "layer_class"] == "Sliced.call"
    # the custom layer's Python loop: 16 channels, each a slice and a multiply at least
    assert t.loc["Sliced.call [sliced]", "calls_per_step"] >= 32
    bd = m.breakdown
    for c in CATEGORIES:
        assert t[f"{c}_ms"].sum() == pytest.approx(bd.loc[c, "mean"], rel=1e-6, abs=1e-9), c
    assert t["ms_per_step"].sum() == pytest.approx(bd.loc["total", "mean"], rel=1e-6)


def test_the_cross_mode_matrix_sums_graph_layers_by_class_beside_an_eager_mode():
    eager = {"name": "eager", "layers": [
        {"layer": "BaseConv.call [c1, c2]", "placed": True, "ms_per_step": 5.0, "python_ms": 2.0,
         "layer_class": "BaseConv.call"},
        {"layer": NOT_PLACED, "placed": False, "ms_per_step": 0.5, "python_ms": 0.5,
         "layer_class": ""}]}
    graph = {"name": "function", "layers": [
        {"layer": "m/c1_1", "placed": True, "ms_per_step": 1.0, "layer_class": "BaseConv.call"},
        {"layer": "m/c2_1", "placed": True, "ms_per_step": 1.5, "layer_class": "BaseConv.call"},
        {"layer": NOT_PLACED, "placed": False, "ms_per_step": 0.1, "layer_class": ""}]}
    names, rows = present.layer_matrix([eager, graph])
    assert names == ["eager", "function"]
    assert rows == [("BaseConv.call", [5.0, 2.5]), (NOT_PLACED, [0.5, 0.1])]
    # graph modes alone keep their layers one by one
    _, rows = present.layer_matrix([graph])
    assert [r[0] for r in rows] == ["m/c2_1", "m/c1_1", NOT_PLACED]
