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
            await pilot.press("escape")
            # the same layers in the mode each is compared with: the cross-mode view's rows
            app.show_mode("xla")
            await pilot.pause()
            app.screen.query_one(TabbedContent).active = "tab-layer-ratios"
            await pilot.pause()
            table = app.screen.query_one("#layer-ratios", FrameTable)
            rows = [r for r in run.layer_matrix.records() if r["mode"] == "xla" and r["versus"]]
            assert table.table.row_count == len(rows) and rows[0]["versus"] == "function"
            shown = {str(table.table.get_row_at(i)[-1]): str(table.table.get_row_at(i)[0])
                     for i in range(table.table.row_count)}
            assert shown == {r["layer"]: present.layer_ratio(r) for r in rows}
            # the fastest mode is compared with none: no such tab
            await pilot.press("escape")
            app.show_mode("function")
            await pilot.pause()
            assert not app.screen.query("#tab-layer-ratios")

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


def _graph_space(conv_us: list[float], dense_us: list[float]):
    """A graph mode's host trace by hand: one tf.function call per step, its ops on a worker
    thread with the layer scopes of their names (conv: two ops; dense: one, and a gradient op of
    the same layer), each step's op times given."""
    from xspace_builder import Space
    sp = Space()
    sp.task_environment()
    h = sp.host()
    main, worker = h.line("python"), h.line("tf_Compute/1")
    for k, (conv, dense) in enumerate(zip(conv_us, dense_us)):
        t0 = k * 1000
        main.event("train", t0, 500, step_num=k + 1, _r=1)
        main.event("f", t0 + 10, 480, tf_function_call="notTraced-nonXla", tracing_count=1)
        main.event("EagerExecute", t0 + 20, 460, eager_op="__inference_f_1", is_func=1)
        worker.event("m/conv/Conv2D:Conv2D", t0 + 30, conv)
        worker.event("m/conv/Relu:Relu", t0 + 30 + conv, 5)
        worker.event("m/dense/MatMul:MatMul", t0 + 200, dense)
        worker.event("gradient_tape/m/dense/MatMul:MatMul", t0 + 200 + dense, 1)
        worker.event("ReadVariableOp:ReadVariableOp", t0 + 400, 2)
    return sp


def test_a_graph_modes_layers_step_by_step_by_hand(tmp_path):
    """Each step's layer time is that step's ops' self time, placed as the table places it."""
    from traceinsight.analysis.mode import analyze_mode
    conv, dense = [10.0, 30.0, 20.0], [4.0, 4.0, 8.0]
    m = analyze_mode("function", [_graph_space(conv, dense).write(tmp_path / "h.xplane.pb")])
    s = m.table("layer_steps")
    # no step holds a first call (step numbers from 1, no tracing): all three are steady
    assert s["step_num"].tolist() == [1, 2, 3] * 3
    got = {(r["layer"], r["step_num"]): r["ms"] for r in s.records()}
    for k in range(3):
        assert got["m/conv", k + 1] == pytest.approx((conv[k] + 5) * 1e-3)
        assert got["m/dense", k + 1] == pytest.approx((dense[k] + 1) * 1e-3)   # the gradient op too
        assert got[NOT_PLACED, k + 1] == pytest.approx(2e-3)
    # the table's ms/step is the steps' mean
    t = {r["layer"]: r["ms_per_step"] for r in m.table("layers").records()}
    assert t["m/conv"] == pytest.approx((sum(conv) / 3 + 5) * 1e-3)


def test_the_per_step_rows_add_up_to_each_layers_table():
    """On the committed run, every mode's rows step by step average to its layers table: the graph
    and XLA modes' from the ops cut by step (the ops table sums them without the cut), the eager
    mode's from its python-tracer pass, scaled as its table."""
    run = traceinsight.load(RUNS / "conv1d", use_cache=False)
    for name in ("eager", "function", "xla", "predict"):
        m = run.modes[name]
        t, s = m.table("layers"), m.table("layer_steps")
        n = len(s) // len(t)
        assert n * len(t) == len(s) and n >= 3
        per = np.asarray(s["ms"]).reshape(len(t), n)
        assert s["layer"].tolist()[::n] == t["layer"].tolist()
        np.testing.assert_allclose(per.mean(axis=1), np.asarray(t["ms_per_step"]), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("name, layer", [
    ("jit(predict_step)/block1_dwconv/conv_general_dilated", "block1_dwconv"),
    ("jit(predict_step)/block4_project/jit(relu)/max", "block4_project"),
    ("jit(train_step)/transpose(jvp(functional))/block1_dwconv/conv_general_dilated",
     "block1_dwconv"),                                                  # JAX's backward pass
    ("jit(predict_step)/concatenate", None),
    ("state[0][0]", None),
])
def test_a_jax_op_names_transformations_are_no_layers(name, layer):
    assert layer_of(name) == layer


def _matrix_mode(name: str, rows: list[tuple[str, str, list[float]]], eager: bool = False,
                 median_ms: float = 1.0):
    """A mode whose layers table has ``rows`` (label, class, ms in each steady step)."""
    from traceinsight.analysis.layers import STEP_COLUMNS
    from traceinsight.testing import make_mode
    per = np.array([r[2] for r in rows], dtype=float)
    cols = {"layer": text([r[0] for r in rows]),
            "placed": np.array([r[0] != NOT_PLACED for r in rows]),
            "ms_per_step": per.mean(axis=1), "calls_per_step": np.ones(len(rows)),
            "ops": np.ones(len(rows), dtype=np.int64), "share": per.mean(axis=1) / per.mean(axis=1).sum(),
            "source": text(["scope"] * len(rows)), "layer_class": text([r[1] for r in rows])}
    if eager:
        cols["python_ms"] = per.mean(axis=1)
    n = per.shape[1]
    steps = Columns({"layer": text([r[0] for r in rows for _ in range(n)]),
                     "step_num": np.tile(np.arange(1, n + 1), len(rows)),
                     "ms": per.reshape(-1)})
    assert tuple(steps.columns) == STEP_COLUMNS
    return make_mode(name, {"op": median_ms}, untraced_ms=median_ms).replace(
        layers=Columns(cols), layer_steps=steps)


def test_the_cross_mode_view_gives_each_layers_ratio_with_its_interval():
    """An eager class row beside the graph instances of its class (summed step by step), each
    ratio the median over the median of the compared mode's, with the interval where both sides
    have 6 steps; what no layer holds gets none."""
    from traceinsight.derive import complete
    from traceinsight.model import Run
    rng = np.random.default_rng(1)
    base = 1.0 + 0.05 * rng.standard_normal(8)
    eager = _matrix_mode("eager", [("BaseConv.call [c1, c2]", "BaseConv.call", list(12 * base)),
                                   ("Sliced.call [s]", "Sliced.call", list(4 * base[::-1])),
                                   (NOT_PLACED, "", list(3 * base))], eager=True, median_ms=20.0)
    graph = _matrix_mode("function", [("m/c1_1", "BaseConv.call", list(1.0 * base[::-1])),
                                      ("m/c2_1", "BaseConv.call", list(2.0 * base[::-1])),
                                      ("m/s_1", "Sliced.call", list(0.5 * base)),
                                      (NOT_PLACED, "", list(0.1 * base))], median_ms=4.0)
    run = complete(Run(path=None, name="t", modes={"eager": eager, "function": graph}))
    rows = {(r["layer"], r["mode"]): r for r in run.layer_matrix.records()}
    conv = rows["BaseConv.call", "eager"]
    assert conv["versus"] == "function"
    # by hand: the graph's two instances summed step by step, then the medians divided
    want = np.median(12 * base) / np.median(1.0 * base[::-1] + 2.0 * base[::-1])
    assert conv["ratio"] == pytest.approx(want, rel=1e-12)
    assert conv["ratio_lo"] < want < conv["ratio_hi"] and conv["significant"]
    assert rows["BaseConv.call", "function"]["ms_per_step"] == pytest.approx(3.0 * base.mean())
    assert rows["BaseConv.call", "function"]["versus"] == ""        # the mode compared with
    sliced = rows["Sliced.call", "eager"]
    assert sliced["ratio"] == pytest.approx(np.median(4 * base) / np.median(0.5 * base), rel=1e-12)
    assert sliced["significant"] and sliced["steps"] == 8
    # a mode without per-step times (a table made before them) has no ratio, and says so
    bare = complete(Run(path=None, name="t", modes={
        "eager": eager.replace(layer_steps=Columns()), "function": graph}))
    (r,) = [r for r in bare.layer_matrix.records() if r["layer"] == "Sliced.call"
            and r["mode"] == "eager"]
    assert not np.isfinite(r["ratio"]) and r["note"] == "no per-step times"
    # what no layer holds is not the same work in two modes: no ratio
    assert rows[NOT_PLACED, "eager"]["versus"] == "" and not np.isfinite(rows[NOT_PLACED, "eager"]["ratio"])
    # the report shows the ratio cell beside each mode's ms/step
    md = render(run, "md")
    assert "| layer | `eager` | `function` | `eager ÷ function` |" in md
    assert present.LAYER_RATIO_NOTE in md


def test_too_few_steps_give_a_ratio_without_an_interval():
    from traceinsight.derive import complete
    from traceinsight.model import Run
    from traceinsight.stats import NO_INTERVAL_FEW
    eager = _matrix_mode("eager", [("Sliced.call [s]", "Sliced.call", [4.0, 4.4, 3.6, 4.2])],
                         eager=True, median_ms=20.0)
    graph = _matrix_mode("function", [("m/s_1", "Sliced.call", [0.5, 0.4, 0.6, 0.5, 0.5, 0.45])],
                         median_ms=4.0)
    run = complete(Run(path=None, name="t", modes={"eager": eager, "function": graph}))
    (r,) = [r for r in run.layer_matrix.records() if r["mode"] == "eager"]
    assert r["ratio"] == pytest.approx(np.median([4.0, 4.4, 3.6, 4.2]) / 0.5)
    assert not np.isfinite(r["ratio_lo"]) and r["note"] == NO_INTERVAL_FEW and not r["significant"]
    assert present.layer_ratio(r) == f"8.20× ({NO_INTERVAL_FEW})"
    # the API's view of the same rows
    df = run.layers()
    assert list(df.columns)[:3] == ["layer", "placed", "mode"] and len(df) == 2


@pytest.mark.capture
def test_a_jax_mode_places_its_layers_by_the_hlo_metadata(tmp_path):
    """samples/slow_layers.py on Keras' JAX backend: JAX's HLO ops carry the layer in their
    op_name metadata (``jit(predict_step)/block1_dwconv/conv_general_dilated``), so the mode's
    layers are the model's own layers, each with its class from the capture's layer record."""
    from traceinsight.capture import modes as modes_mod
    from traceinsight.cli import main
    if not modes_mod.jax_installed():
        pytest.skip("JAX is not installed (pip install 'traceinsight-tf[jax]')")
    sample = Path(__file__).resolve().parents[1] / "samples" / "slow_layers.py"
    assert main(["capture", str(sample), "--modes", "jax:predict_on_batch", "--out", str(tmp_path),
                 "--name", "r", "--min-steps", "5", "--min-time", "0", "--max-time", "3",
                 "--warmup", "2", "--host-trace-ms", "1500", "--host-max-steps", "8",
                 "--no-python-tracer", "--rounds", "1"]) == 0
    m = traceinsight.load(tmp_path / "r", use_cache=False).modes["jax:predict_on_batch"]
    assert m.ok, m.error
    t = m.layers
    placed = t[t["placed"]]
    assert set(placed["source"]) == {"hlo metadata"}
    # the model's layers by name (no JAX transformation in a row's name), with their classes
    by_class = placed.groupby("layer_class")["layer"].apply(set).to_dict()
    assert by_class["BaseDepthwiseConv.call"] == {f"block{i}_dwconv" for i in range(1, 9)}
    assert by_class["Sliced.call"] == {"sliced"}
    assert {"stem", "head", "pool"} <= set(placed["layer"])
    assert not any("(" in lay for lay in placed["layer"])
    # step by step: one row per layer and steady step
    assert len(m.layer_steps) == len(t) * m.n_steady


def test_owned_time_split_by_window_adds_up_to_the_native_sums():
    """``results.owned_by_window`` (numpy: the timeline cut at the windows' edges) against
    ``owned_time`` (the C kernel): per event and category the same picoseconds, on a committed
    eager python-tracer pass (many segments) with windows that cut segments."""
    from traceinsight.analysis.attribute import N_CAT
    from traceinsight.analysis.mode import analyze_trace
    from traceinsight.analysis.results import owned_by_window, owned_time
    files = sorted((RUNS / "conv1d" / "eager" / "python").rglob("*.xplane.pb"))
    a = analyze_trace(files).attribution
    # the steps, and windows whose edges fall inside segments
    b = a.timeline.times()
    span = (int(b[0]), int(b[-1]))
    cuts = np.linspace(*span, 9).astype(np.int64) + 12345
    for ws, we in ((a.step_start, a.step_end), (cuts[:-1:2], cuts[1::2])):
        for c in range(N_CAT):
            want = owned_time(a, ws, we, c)
            ev, win, ps = owned_by_window(a, ws, we, c)
            got = np.bincount(ev, weights=ps, minlength=len(want)) if len(ev) else np.zeros(len(want))
            np.testing.assert_array_equal(got, want.astype(float))
            assert ((win >= 0) & (win < len(ws))).all()


@pytest.mark.parametrize("n", [1, 6, 24, 1000, 1001])
def test_a_modes_layers_are_resampled_at_once_with_the_same_draws(n):
    """``bootstrap_medians_rows`` gives each row exactly ``bootstrap_medians(row)`` (the same
    seed and draws), so the cross-mode view's intervals are the step ratios' bootstrap's."""
    from traceinsight.resample import bootstrap_medians, bootstrap_medians_rows
    rows = np.random.default_rng(n).standard_normal((4, n))
    np.testing.assert_array_equal(bootstrap_medians_rows(rows),
                                  np.stack([bootstrap_medians(r) for r in rows]))
