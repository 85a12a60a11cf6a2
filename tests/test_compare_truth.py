"""The comparison truth: ops matched by family across modes, paired interleaved rounds, traced vs
untraced orderings, overlapping savings, rules that fire only where their fix applies, one place
per figure; checked on hand-built modes and on the committed real runs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from traceinsight.analysis.hotspots import parse_frame
from traceinsight.analysis.opfamily import family, function_name
from traceinsight.analysis.retraces import GRAPH_BUILDS
from traceinsight.compare import compare_modes
from traceinsight.derive import complete
from traceinsight.findings import find
from traceinsight.model import Run, Timing
from traceinsight.report.data import report_data
from traceinsight.stats import pair_rounds
from traceinsight.testing import make_mode, sample_run

RUNS = Path(__file__).parent / "data" / "runs"


def run_of(*modes) -> Run:
    return complete(Run(path=None, name="t", modes={m.name: m for m in modes}))


# ---- op families -------------------------------------------------------------------------------

@pytest.mark.parametrize("op, op_type, fam", [
    ("Conv2D", "Conv2D", "convolution"),                                      # eager
    ("functional_1/conv1d_1/convolution", "_MklNativeFusedConv2D", "convolution"),  # graph
    ("convolution.3", "convolution", "convolution"),                          # XLA HLO
    ("convolution_add_fusion", "fusion", "convolution"),
    ("DepthwiseConv2dNative", "DepthwiseConv2dNative", "depthwise convolution"),
    ("block1/dwconv/depthwise", "_MklNativeDepthwiseConv2dNative", "depthwise convolution"),
    ("depthwise_convolution_add_fusion.2", "fusion", "depthwise convolution"),
    ("MatMul_61", "_MklMatMul", "matmul"),
    ("MatMul_98.2", "MatMul_98", "matmul"),     # an HLO op keeping its TF node name
    ("maximum_dot_fusion", "fusion", "matmul"),
    ("add_maximum_fusion", "fusion", "elementwise"),
    ("Relu", "Relu", "elementwise"),
    ("ynn_fusion", "fusion", "library fusion (ynn: dot or convolution)"),
    ("fusion.12", "fusion", "fusion (unnamed)"),
    ("slice_bitcast_fusion.780", "fusion", "data movement"),
    ("stack.2001", "stack", "data movement"),       # an HLO op named after the TF node (Pack)
    ("Mean", "Mean", "reduction"),
    ("__inference_step_503", "tf.function", "tf.function step"),
    ("__inference_step_8", "tf.function", "tf.function step"),
    ("MakeIterator", "MakeIterator", "tf.data"),
])
def test_family(op, op_type, fam):
    assert family(op, op_type) == fam


def test_function_names_match_across_processes():
    assert function_name("__inference_one_step_on_data_distributed_184") == \
        "one_step_on_data_distributed"


def test_ops_matched_by_family_across_modes():
    """Eager Conv2D 3.0 ms vs the graph's fused conv 1.0 ms: by name "only in a" / "only in b",
    by family one convolution row with both sides; a renamed tf.function meets its twin."""
    e = make_mode("eager", {"op": 4.0, "python": 4.0},
                  ops=[("Conv2D", "Conv2D", "main", 2, 3.0), ("Relu", "Relu", "main", 2, 1.0)])
    f = make_mode("function", {"op": 2.0, "python": 1.0},
                  ops=[("__inference_step_8", "tf.function", "main", 1, 1.5),
                       ("functional_1/conv1d_1/convolution", "_MklNativeFusedConv2D", "worker", 1,
                        1.0),
                       ("functional_1/conv1d_1/Relu", "Relu", "worker", 1, 0.25)])
    c = compare_modes(e, f)
    fam = c.families.set_index("family")
    assert fam.loc["convolution", "a_ms"] == 3.0 and fam.loc["convolution", "b_ms"] == 1.0
    assert fam.loc["elementwise", "delta_ms"] == pytest.approx(0.75)
    assert c.top_family(True).family == "convolution"
    g = make_mode("function", {"op": 2.0}, ops=[("__inference_step_503", "tf.function", "main", 1,
                                                 1.2)])
    fam2 = compare_modes(f, g).families.set_index("family")
    assert fam2.loc["tf.function step", "delta_ms"] == pytest.approx(0.3)


def test_real_xla_slower_names_the_family_with_both_sides():
    """conv1d (real): the op family table of xla against function, summed over both threads,
    equals the per-op self times of each mode's ops table (one figure, two groupings)."""
    from traceinsight.analysis.load import load_run
    run = load_run(RUNS / "conv1d")
    c = run.compare("xla", "function")
    fam = c.families.set_index("family")
    x, f = run.modes["xla"].ops, run.modes["function"].ops
    conv_x = x[x["op"].str.startswith("convolution")]["self_ms_per_step"].sum()
    conv_f = f[f["type"].str.endswith("Conv2D")]["self_ms_per_step"].sum()
    assert fam.loc["convolution", "a_ms"] == pytest.approx(conv_x)
    assert fam.loc["convolution", "b_ms"] == pytest.approx(conv_f)


# ---- paired rounds -----------------------------------------------------------------------------

def _rounds(medians_ms, n=10, spread=0.01):
    return tuple(np.full(n, ms * 1e-3) * (1 + spread * np.linspace(-1, 1, n)) for ms in medians_ms)


def _with_rounds(m, medians_ms):
    rounds = _rounds(medians_ms)
    return dataclasses.replace(m, timing=Timing(steps_s=np.concatenate(rounds), rounds=rounds))


def test_a_load_burst_in_one_round_leaves_the_paired_ratio():
    """A load burst doubles round 1 of both modes. The ratio comes from the paired rounds alone
    (rounds 1..3, each 1.5), not from the pooled medians; the interval holds every round's
    ratio; every paired round agrees, so the modes are ordered."""
    a = _with_rounds(make_mode("eager", {"op": 6.0}), [6.0, 12.0, 6.0, 6.0])
    b = _with_rounds(make_mode("function", {"op": 4.0}), [4.0, 8.0, 4.0, 4.0])
    r = pair_rounds(a.timing, b.timing)
    assert r is not None and r.rounds == (1, 2, 3) and r.ratios() == pytest.approx([1.5] * 3)
    c = compare_modes(a, b)
    assert c.basis == "paired rounds" and c.significant and c.paired == 3
    assert c.ratio == pytest.approx(1.5) and c.ratio_lo <= 1.5 <= c.ratio_hi
    s = run_of(a, b).summary().set_index("mode")
    assert s.loc["eager", "ratio"] == c.ratio and s.loc["eager", "ratio_basis"] == c.basis
    # without rounds: the steps' bootstrap, and the modes were timed apart
    c = compare_modes(make_mode("eager", {"op": 6.0}, rounds=1),
                      make_mode("function", {"op": 4.0}, rounds=1))
    assert c.basis == "steps" and c.paired == 0


def test_rounds_that_disagree_give_no_verdict():
    a = _with_rounds(make_mode("eager", {"op": 6.0}), [6.0, 4.0, 6.2, 3.9])
    b = _with_rounds(make_mode("function", {"op": 5.0}), [5.0, 5.0, 5.0, 5.0])
    c = compare_modes(a, b)
    assert not c.significant and "interleaved rounds order them differently" in c.note
    assert "no measurable difference" in c.sentence()


# ---- traced vs untraced ------------------------------------------------------------------------

def _contradicting_run() -> Run:
    """xla slower untraced (25.1 vs 16.0 ms) but faster traced, op 11 vs 45 ms (the medium
    sample's case)."""
    x = make_mode("xla", {"op": 11.0, "python": 2.0}, untraced_ms=25.1, traced_ms=13.0,
                  ops=[("convolution.3", "convolution", "worker", 1, 9.0)])
    f = make_mode("function", {"op": 45.0, "python": 2.0}, untraced_ms=16.0, traced_ms=47.0,
                  ops=[("c/convolution", "_MklNativeFusedConv2D", "worker", 1, 40.0)])
    return run_of(x, f)


def test_traced_categories_never_argue_for_an_ordering_they_contradict():
    run = _contradicting_run()
    c = run.compare("xla", "function")
    assert c.significant and c.delta_ms > 0 and c.traced_disagrees
    s = c.sentence()
    assert "order them the other way" in s and "op " not in s.split("but")[0]
    f = next(f for f in find(run) if f.rule == "xla-slower")
    assert "op time" not in f.evidence and "95 % CI). Caveat: the traced steps order them the other way" in f.evidence
    assert "costs most of the difference" not in f.evidence and "mostly in" not in f.title
    doc = report_data(run)
    assert "traced steps contradict the untraced medians for xla vs function" in doc["summary"]
    # the distortion finding says it too
    d = next(f for f in find(run) if f.rule == "profiler-distortion")
    assert "xla" in d.evidence


def test_report_and_finding_name_the_same_contradicting_pairs():
    """A pair the findings compare (eager against eager+tensor), neither of them the fastest:
    untraced, eager is slower (10 vs 9 ms); traced, faster (7 vs 8 ms). The summary line and the
    distortion finding name the same pairs, this one included."""
    e = make_mode("eager", {"op": 5.0, "python": 2.0}, untraced_ms=10.0, traced_ms=7.0)
    t = make_mode("eager+tensor", {"op": 6.0, "python": 2.0}, untraced_ms=9.0, traced_ms=8.0)
    f = make_mode("function", {"op": 4.0, "python": 1.0}, untraced_ms=5.0, traced_ms=5.0)
    run = run_of(e, t, f)
    assert run.compare("eager", "eager+tensor").traced_disagrees
    assert not run.compare("eager", "function").traced_disagrees
    assert not run.compare("eager+tensor", "function").traced_disagrees
    doc = report_data(run)
    assert "traced steps contradict the untraced medians for eager vs eager+tensor" in doc["summary"]
    d = next(f for f in find(run) if f.rule == "profiler-distortion")
    assert "eager" in d.modes and "eager+tensor" in d.modes


# ---- findings ----------------------------------------------------------------------------------

def test_overlapping_savings_say_so_and_never_exceed_the_step():
    """matmul_loop-like eager step of 10 ms where three rules each claim a large share."""
    e = make_mode("eager", {"op": 2.0, "python": 3.0, "dispatch": 3.0, "input": 2.0},
                  untraced_ms=10.0, ops=[("MatMul", "MatMul", "main", 300, 1.5),
                                         ("StridedSlice", "StridedSlice", "main", 300, 0.5)])
    f = make_mode("function", {"op": 1.0, "python": 0.2}, untraced_ms=1.2)
    found = find(run_of(e, f))
    on_eager = [x for x in found if x.modes and x.modes[0] == "eager" and x.saving_ms is not None]
    assert len(on_eager) >= 3
    # each at most the step, none cut to what the larger ones leave (each is what its own fix
    # saves); the later ones say they overlap and do not add up
    assert all(0 < x.saving_ms <= e.median_ms + 1e-9 for x in on_eager)
    later = sorted(on_eager, key=lambda x: x.rank)[1:]
    assert all(x.overlaps and "do not add up" in x.saving_basis for x in later)


@pytest.mark.parametrize("mode", ["train_on_batch", "fit", "train_on_batch-eager", "predict"])
def test_vectorize_is_not_advised_for_keras_steps(mode):
    """Keras' step as the trace shows it: a call of Keras' own tf.function (a real capture's
    ``__inference_one_step_on_data_distributed_184``); train_on_batch-eager runs none, so its
    mode says it."""
    keras_fn = [] if mode.endswith("-eager") else [
        ("__inference_one_step_on_data_distributed_184", "tf.function", "main", 1, 2.0)]
    m = make_mode(mode, {"op": 3.0, "dispatch": 2.0},
                  ops=[("MatMul", "MatMul", "main", 400, 2.0)] + keras_fn)
    assert "tiny-ops" not in [f.rule for f in find(run_of(m))]


def test_vectorize_is_not_advised_for_a_graph_while_loop():
    loop = [(f"while/body/MatMul_{i}", "_MklMatMul", "worker", 2, 0.01) for i in range(100)]
    m = make_mode("function", {"op": 3.0, "dispatch": 0.5}, ops=loop)
    assert "tiny-ops" not in [f.rule for f in find(run_of(m))]
    eager = make_mode("eager", {"op": 3.0, "dispatch": 2.0},
                      ops=[("MatMul", "MatMul", "main", 400, 2.0)])
    assert "tiny-ops" in [f.rule for f in find(run_of(eager))]


def test_a_function_slower_than_eager_is_explained():
    """costly_loop_vectorized-like: one Einsum per step, 3.9 ms eager, 6.2 ms inside the graph."""
    e = make_mode("eager", {"op": 3.9, "python": 0.15, "dispatch": 0.1}, untraced_ms=4.0,
                  ops=[("Einsum", "Einsum", "main", 1, 3.9)])
    f = make_mode("function", {"op": 6.5, "python": 0.15, "dispatch": 0.7}, untraced_ms=7.0,
                  ops=[("__inference_step_8", "tf.function", "main", 1, 6.5),
                       ("einsum/Einsum", "Einsum", "worker", 1, 6.2)])
    found = find(run_of(e, f))
    x = next(x for x in found if x.rule == "function-slower")
    assert re.match(r"function is 1\.7\d× slower than eager: its matmul kernels", x.title)
    assert "issues 1 op call(s) per step" in x.evidence
    assert "matmul kernels take 6.20 ms/step in function against 3.90 in eager" in x.evidence
    assert x.saving_ms == pytest.approx(3.0, abs=0.2)
    assert "eager-slower" not in [y.rule for y in found]
    check_claims(run_of(e, f))


def test_predict_names_what_it_traces_every_call():
    """conv1d (real, Keras 3.15 / TF 2.21): predict() traces its predict function once, and 3
    graphs per call outside any tf.function call: tf.data's map / flat_map functions of the dataset
    Keras builds from the arrays on every call (the python pass: get_tf_dataset once per call,
    structured_function.trace_tf_function 3 per call)."""
    from traceinsight.analysis.load import load_run
    run = load_run(RUNS / "conv1d")
    r = run.modes["predict"].retraces.set_index("function")
    assert r.loc["one_step_on_data_distributed", "traced_calls"] == 1
    builds = r.loc[GRAPH_BUILDS]
    assert builds["cause"] == "graph builds" and builds["cause_detail"] == "3 per step"
    f = next(f for f in find(run) if f.rule == "predict-overhead")
    assert "3 per step" in f.evidence
    assert "structured_function.py trace_tf_function ×3 per call" in f.evidence
    assert "array_data_adapter.py get_tf_dataset ×1 per call" in f.evidence
    assert not [f for f in find(run) if f.rule == "retracing"]


# ---- one place per figure ----------------------------------------------------------------------

def test_the_run_computes_its_figures_once():
    run = sample_run()
    assert run.table("summary") is run.table("summary")     # computed once; summary() copies it
    assert run.compare("eager", "function") is run.compare("eager", "function")
    assert run.findings is run.findings
    assert run.fastest == "function"
    # what a reader gets cannot change what the next reader sees: findings are a tuple of frozen
    # Findings, a comparison's tables are new DataFrames on every read
    assert isinstance(run.findings, tuple)
    c = run.compare("eager", "function")
    ops = c.ops
    assert len(ops)
    ops.loc[:, "delta_ms"] = 1e9
    assert (c.ops["delta_ms"] != 1e9).all() and len(c.ops) == len(ops)
    s = run.summary()
    assert s.loc[s["fastest"], "mode"].tolist() == ["function"]
    doc = report_data(run)
    assert [m["name"] for m in doc["modes"] if m.get("vs_fastest") == "fastest"] == ["function"]


def test_flipped_comparison_is_the_other_side():
    run = sample_run()
    ab = run.compare("eager", "function")
    ba = ab.flipped()
    assert (ba.a, ba.b, ba.delta_ms) == ("function", "eager", -ab.delta_ms)
    assert ba.ratio == pytest.approx(1 / ab.ratio) and ba.ratio_lo == pytest.approx(1 / ab.ratio_hi)
    assert set(ba.ops["change"]) <= {"only in a", "only in b", "slower", "faster", "same"}
    assert (ba.ops["change"] == "only in a").sum() == (ab.ops["change"] == "only in b").sum()


# ---- hotspots ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, parsed", [
    ("$<frozen abc>:117 __instancecheck__", ("<frozen abc>", 117, "__instancecheck__")),
    ("$<frozen importlib._bootstrap>:1207 _handle_fromlist",
     ("<frozen importlib._bootstrap>", 1207, "_handle_fromlist")),
    ("$<unknown> startswith", ("<unknown>", 0, "startswith")),
    ("$layer.py:872 __call__", ("layer.py", 872, "__call__")),
    ("$builtins isinstance", ("builtins", 0, "isinstance")),
])
def test_parse_frame(name, parsed):
    assert parse_frame(name) == parsed


def test_a_user_layers_call_is_in_the_report_hotspot_table():
    """A user layer's call: half the step inclusive, almost no self time (Keras and TF below it do
    the work). Ranked by self time it would be cut from the table; the report lists user frames
    first by inclusive time."""
    from traceinsight.report import render
    hot = [(f"f{i}", "ops.py", i, "tensorflow", 0.1 + i * 0.001, 0.2, 1) for i in range(100)]
    hot.append(("call", "model.py", 12, "user", 0.001, 5.0, 1))
    m = make_mode("eager", {"op": 4.0, "python": 6.0}, hotspots=hot)
    doc = report_data(run_of(m))
    assert doc["modes"][0]["hotspots"][0]["function"] == "call"
    assert "model.py:12" in render(run_of(m), "md")


# ---- every finding's evidence agrees with its claim --------------------------------------------

_VS = re.compile(r"^(?P<a>\S+) (?P<a_ms>[\d.]+) vs (?P<b>\S+) (?P<b_ms>[\d.]+) ms/step "
                 r"\((?P<r>[\d.]+)× \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]")
_SLOWER_RULES = {"eager-slower", "function-slower", "xla-slower", "predict-overhead", "fit-overhead",
                 "train-on-batch-overhead"}


def check_claims(run: Run) -> int:
    """Assert every finding's evidence agrees with its claim; returns how many were checked."""
    found = find(run)
    saved_on: set[str] = set()
    for f in found:
        if f.saving_ms is not None:
            # each saving is at most the whole untraced step; one on a step a larger one saves on
            # too names it, and says that they do not add up
            assert f.saving_ms >= 0, f
            step = run.modes[f.modes[0]].median_ms
            assert f.saving_ms <= step * (1 + 1e-9), (f.rule, f.saving_ms, step)
            if f.modes[0] in saved_on:
                assert f.overlaps and "do not add up" in f.saving_basis, f
            saved_on.add(f.modes[0])
        m = _VS.match(f.evidence)
        if f.rule in _SLOWER_RULES | {"xla-faster"}:
            assert m, f.evidence
            a_ms, b_ms, lo, hi = (float(m[k]) for k in ("a_ms", "b_ms", "lo", "hi"))
            if f.rule == "xla-faster":
                assert a_ms < b_ms and hi < 1.0, f.evidence
            else:
                assert a_ms > b_ms and lo > 1.0, f.evidence
                ratio = re.search(r"([\d.]+)× (?:as much|slower)", f.title)
                if ratio:
                    assert ratio.group(1) == m["r"], (f.title, f.evidence)
            c = run.compare(m["a"], m["b"])
            if c.traced_disagrees:
                assert "op time" not in f.evidence and "By category" not in f.evidence, f.evidence
        if f.rule == "retracing":
            n = int(re.search(r"retrace[sd] (\d+) times", f.title).group(1))
            assert f"was traced {n + 1} times" in f.evidence
        if f.rule == "no-difference":
            for lo, hi in re.findall(r"\[([\d.]+), ([\d.]+)\] includes 1", f.evidence):
                assert float(lo) <= 1.0 <= float(hi)
    return len(found)


@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
def test_evidence_agrees_with_claims_on_real_runs(name):
    from traceinsight.analysis.load import load_run
    assert check_claims(load_run(RUNS / name)) > 0


@pytest.mark.parametrize("make", [sample_run, _contradicting_run])
def test_evidence_agrees_with_claims_on_sample_runs(make):
    assert check_claims(make()) > 0


def test_one_step_per_side_has_no_interval_and_is_never_significant():
    """A single step says nothing about the spread: 1.5x from one step each is a ratio without an
    interval, not a significant difference (it used to get the interval [1.5, 1.5])."""
    from traceinsight.stats import excludes_one, median_ci, ratio_ci
    r, lo, hi = ratio_ci(np.array([15.0]), np.array([10.0]))
    assert r == 1.5 and np.isnan(lo) and np.isnan(hi)
    assert not excludes_one(lo, hi)
    assert all(np.isnan(median_ci(np.array([3.0]))))
    # between modes, three steps a side cannot hold a 95 % interval either (no order-statistic
    # interval of a median exists below 6 steps): the ratio alone, never significant
    from traceinsight.stats import NO_INTERVAL_FEW, mode_ratio
    e = mode_ratio(np.array([15.0, 15.1, 14.9]), np.array([10.0, 10.1, 9.9]))
    assert e.ratio == pytest.approx(1.5) and np.isnan(e.lo) and np.isnan(e.hi)
    assert not e.significant and e.note == NO_INTERVAL_FEW
    a = 15.0 + np.linspace(-0.1, 0.1, 8)
    e = mode_ratio(a, a / 1.5)
    assert 1.4 < e.lo < e.ratio < e.hi < 1.6 and e.significant
