"""The finding that names a layer (``traceinsight.findings.layers``), on hand-made runs whose layers
tables hold known figures: the group of layers that explains most of the gap between two modes is
named with its figures, a gap spread over many layers names none, and an eager mode whose Python
is mostly one layer class's says so."""

from __future__ import annotations

import numpy as np

from traceinsight.analysis.layers import LAYER_COLUMNS, NOT_PLACED
from traceinsight.columns import Columns, text
from traceinsight.derive import complete
from traceinsight.model import Run
from traceinsight.testing import make_mode

DW = "BaseDepthwiseConv.call"


def _table(rows: list[tuple], eager: bool = False) -> Columns:
    """rows: (layer, ms, class[, python_ms])."""
    total = sum(r[1] for r in rows)
    cols = {"layer": text([r[0] for r in rows]),
            "placed": np.array([r[0] != NOT_PLACED for r in rows]),
            "ms_per_step": np.array([float(r[1]) for r in rows]),
            "calls_per_step": np.ones(len(rows)), "ops": np.ones(len(rows), dtype=np.int64),
            "share": np.array([r[1] / total for r in rows]),
            "source": text(["python-tracer frames" if eager else "scope"] * len(rows)),
            "layer_class": text([r[2] for r in rows])}
    if eager:
        cols["python_ms"] = np.array([float(r[3]) for r in rows])
    assert set(LAYER_COLUMNS) <= set(cols)
    return Columns(cols)


def _mode(name: str, ms: float, rows: list[tuple], eager: bool = False):
    return make_mode(name, {"op": ms}, untraced_ms=ms).replace(layers=_table(rows, eager))


def _run(*modes) -> Run:
    return complete(Run(path=None, name="t", modes={m.name: m for m in modes}))


def _layer_findings(run: Run):
    return [f for f in run.findings if f.rule == "layer-explains"]


def test_the_group_that_explains_most_of_a_gap_is_named():
    graph = [(f"m/block{i}_dwconv_1", 0.3, DW) for i in range(1, 5)] + \
        [("m/block1_dwconv_1/depthwise", 0.0, DW), ("m/sliced_1", 1.0, "Sliced.call"),
         (NOT_PLACED, 0.1, "")]
    xla = [(f"m/block{i}_dwconv_1", 5.0, DW) for i in range(1, 5)] + \
        [("m/sliced_1", 0.5, "Sliced.call"), (NOT_PLACED, 0.1, "")]
    run = _run(_mode("function", 4.0, graph), _mode("xla", 22.0, xla))
    (f,) = _layer_findings(run)
    # 4 x 5.0 = 20.0 against 4 x 0.3 = 1.2: 18.8 of the 18.3 ms/step between the two tables
    assert f.title == ("xla is slower than function mostly in the 4 layers block*_dwconv "
                       f"({DW}): 20.0 vs 1.2 ms/step")
    assert f.modes == ("xla", "function") and f.saving_ms is None and f.severity == "info"
    assert "18.8 of the 18.3 ms/step" in f.evidence
    assert "jit_compile=False" in f.fix


def test_a_training_step_is_never_set_beside_an_inference_step():
    """train_on_batch's layers also run their backward pass: against predict_on_batch the same
    layer costs more for work the inference step does not do, not for how it is run (seen on TF
    2.15's tf_keras modes: "train_on_batch is slower than predict_on_batch mostly in conv1d")."""
    infer = [("m/conv1d", 0.6, "Conv.call"), ("m/dense", 0.1, "Dense.call")]
    train = [("m/conv1d", 2.7, "Conv.call"), ("m/dense", 0.2, "Dense.call")]
    run = _run(_mode("predict_on_batch", 1.0, infer), _mode("train_on_batch", 3.5, train))
    assert _layer_findings(run) == []
    # two training modes are compared
    run = _run(_mode("train_on_batch", 3.5, train),
               _mode("train_on_batch-xla", 9.0, [("m/conv1d", 8.0, "Conv.call"),
                                                  ("m/dense", 0.2, "Dense.call")]))
    (f,) = _layer_findings(run)
    assert f.modes == ("train_on_batch-xla", "train_on_batch") and "conv1d" in f.title


def test_an_eager_class_row_meets_the_graph_instances_of_its_class():
    graph = [("m/sliced_1", 1.0, "Sliced.call"), ("m/conv_1", 2.0, "BaseConv.call"),
             ("m/conv_2", 2.0, "BaseConv.call")]
    eager = [("Sliced.call [sliced]", 12.0, "Sliced.call", 2.0),
             ("BaseConv.call [conv, conv_2]", 5.0, "BaseConv.call", 1.0),
             (NOT_PLACED, 0.5, "", 1.5)]     # its Python under half in any one layer
    run = _run(_mode("function", 5.0, graph), _mode("eager", 17.5, eager, eager=True))
    (f,) = _layer_findings(run)
    assert f.title == ("eager is slower than function mostly in layer sliced (Sliced.call): "
                       "12.0 vs 1.0 ms/step")
    assert "tf.function(model)" in f.fix


def test_a_gap_spread_over_the_layers_names_none():
    graph = [(f"m/l{i}", 1.0, f"C{i}.call") for i in range(4)]
    slow = [(f"m/l{i}", 2.0, f"C{i}.call") for i in range(4)]    # each layer 25 % of the gap
    run = _run(_mode("function", 4.0, graph), _mode("xla", 8.0, slow))
    assert _layer_findings(run) == []


def test_an_eager_mode_whose_python_is_mostly_one_layer_class():
    eager = [("Sliced.call [sliced]", 6.0, "Sliced.call", 3.5),
             ("BaseConv.call [c]", 3.0, "BaseConv.call", 1.0), (NOT_PLACED, 1.0, "", 0.5)]
    run = _run(_mode("eager", 10.0, eager, eager=True))
    (f,) = _layer_findings(run)
    assert f.title == "eager spends 70% of its Python in Sliced.call [sliced]"
    assert "3.5 of 5.0 ms/step" in f.evidence


def test_graph_and_xla_without_the_capture_record_match_by_path():
    graph = [("m/a", 0.5, ""), ("m/b", 0.5, "")]
    xla = [("m/a", 9.0, ""), ("m/b", 0.6, "")]
    run = _run(_mode("function", 1.0, graph), _mode("xla", 9.6, xla))
    (f,) = _layer_findings(run)
    assert f.title == "xla is slower than function mostly in layer m/a: 9.0 vs 0.5 ms/step"


def _with_steps(m, per_step: dict[str, list[float]]):
    """``m`` with its layers' times step by step (``per_step``: layer -> ms in each step)."""
    t = m.table("layers")
    n = len(next(iter(per_step.values())))
    labels = [str(x) for x in t["layer"]]
    return m.replace(layer_steps=Columns({
        "layer": text([lab for lab in labels for _ in range(n)]),
        "step_num": np.tile(np.arange(1, n + 1), len(labels)),
        "ms": np.concatenate([np.asarray(per_step[lab], dtype=float) for lab in labels])}))


def test_a_layer_is_named_only_where_its_per_step_times_say_it_differs():
    """The layer's ratio between the two modes (the cross-mode view's: medians of its per-step
    times, with their interval) must say the slow mode is slower in it beyond noise; a gap the
    means show but the steps do not (one slow step in eight) names no layer."""
    graph = [("m/a", 0.5, "A.call"), ("m/b", 0.5, "B.call")]
    xla = [("m/a", 9.0, "A.call"), ("m/b", 0.6, "B.call")]
    quiet = [0.5, 0.52, 0.48, 0.5, 0.51, 0.49, 0.5, 0.5]
    fast = _with_steps(_mode("function", 1.0, graph), {"m/a": quiet, "m/b": quiet})
    # every step of m/a 18 times slower: named, with its ratio and interval
    slow = _with_steps(_mode("xla", 9.6, xla), {"m/a": [9.0 * q / 0.5 for q in quiet],
                                                  "m/b": [0.6] * 8})
    (f,) = _layer_findings(_run(fast, slow))
    assert "mostly in layer A.call" in f.title
    ratio = np.median([9.0 * q / 0.5 for q in quiet]) / np.median(quiet)
    assert f"Its median per traced step is {ratio:.2f}x in xla what it is in function (95 % " \
        "interval" in f.evidence
    # the same mean (9.0 ms/step) from one step of 65 ms and seven like function's: not named
    spiky = [65.0] + quiet[1:]
    slow = _with_steps(_mode("xla", 9.6, xla), {"m/a": spiky, "m/b": [0.6] * 8})
    assert _layer_findings(_run(fast, slow)) == []
