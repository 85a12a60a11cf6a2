"""The factor table (``traceinsight.factors``) on hand-made runs whose effects are chosen by hand:
each factor's effect from the pair that differs in it alone, gaps split step by step, interactions,
factors with no pair; and the modes' axes it pairs them by."""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from traceinsight.derive import complete
from traceinsight.factors import FACTORS, gap_of
from traceinsight.findings import tf2_fix
from traceinsight.modekind import Axes, ModeKind, all_kinds, from_name, name_of
from traceinsight.model import Run
from traceinsight.testing import make_mode


def run_of(ms: dict[str, float]) -> Run:
    """A run whose modes' steps have these medians (2 % noise, 40 untraced steps each)."""
    return complete(Run(None, "r", {n: make_mode(n, {"op": v}, untraced_ms=v) for n, v in ms.items()}))


# TF1 1.0 ms; TF2 (Keras 2) 3x; Keras 3 1.2x more: predict. predict_on_batch: 0.5, 1.6x, 1.5x
MLP = {"tf1:predict": 1.0, "tf_keras:predict": 3.0, "predict": 3.6,
       "tf1:predict_on_batch": 0.5, "tf_keras:predict_on_batch": 0.8, "predict_on_batch": 1.2}


def test_the_capture_table_and_the_kinds_agree():
    """The factor table names modes to add from ``all_kinds``: exactly the capture's kinds, each
    named as the capture names it, each with its axes."""
    from traceinsight.capture import modes
    table = {m.mode_kind(): m.name for m in modes.keras_modes()}
    function = {m.mode_kind() for m in modes.function_modes()}
    assert set(all_kinds()) == set(table) | function
    assert set(all_kinds("keras")) == set(table) and set(all_kinds("function")) == function
    for kind, name in table.items():
        assert name_of(kind) == name and from_name(name) == kind
        assert kind.axes() is not None
    assert modes.get("keras", "tf1:predict").tf1   # the TF1 predict mode exists


def test_a_base_in_both_tables_has_the_same_axes():
    """eager, function and xla are rows of the Keras and the function table: one kind, so one
    compile and call axis whichever workload made it."""
    from traceinsight import modekind
    keras = {b.name: b for b in modekind.KERAS_BASES}
    shared = [b for b in modekind.FUNCTION_BASES if b.name in keras]
    assert [b.name for b in shared] == ["eager", "function", "xla"]
    for b in shared:
        assert (b.compile, b.call) == (keras[b.name].compile, keras[b.name].call)
        assert modekind.BASES[b.name].compile == b.compile


def test_axes_say_what_a_mode_is():
    assert from_name("tf1:predict").axes() == Axes("tf1", "graph", "off", "2", "tensorflow", "numpy",
                                                   "infer", "predict")
    assert from_name("train_on_batch-eager+tensor").axes() == Axes(
        "tf2", "eager", "off", "3", "tensorflow", "tensor", "train", "train_on_batch")
    assert from_name("fit-dataset").axes().input == "dataset"
    assert ModeKind("pob-v2", "numpy", "keras3").axes() is None   # a foreign name: no axes


def test_each_factor_is_measured_on_the_pair_that_differs_in_it_alone():
    run = run_of(MLP)
    t = run.factors
    got = {(s.factor, s.from_mode, s.to_mode): s.comparison.ratio for s in t.effects}
    want = {("tf", "tf1:predict", "tf_keras:predict"): 3.0,
            ("tf", "tf1:predict_on_batch", "tf_keras:predict_on_batch"): 1.6,
            ("keras", "tf_keras:predict", "predict"): 1.2,
            ("keras", "tf_keras:predict_on_batch", "predict_on_batch"): 1.5,
            ("call", "tf1:predict_on_batch", "tf1:predict"): 2.0,
            ("call", "tf_keras:predict_on_batch", "tf_keras:predict"): 3.0 / 0.8,
            ("call", "predict_on_batch", "predict"): 3.0}
    assert set(got) == set(want)
    for k, r in want.items():
        assert got[k] == pytest.approx(r, rel=0.03), k
    for s in t.effects:      # the run's own comparison, with its interval: the same object
        assert s.comparison is run.compare(s.to_mode, s.from_mode)
        assert s.comparison.significant and s.comparison.ratio_lo < s.comparison.ratio < s.comparison.ratio_hi
    # tf1:predict vs predict_on_batch differ in two factors: never an effect
    assert not any({s.from_mode, s.to_mode} == {"tf1:predict", "predict_on_batch"} for s in t.effects)


def test_a_gap_is_split_into_steps_that_multiply_to_it():
    run = run_of(MLP)
    g = gap_of(run.factors, "tf1:predict", "predict")
    assert g is not None and g.why == "tf1-vs-tf2" and g.factors == ("tf", "keras")
    assert [(s.factor, s.from_mode, s.to_mode) for s in g.steps] == [
        ("tf", "tf1:predict", "tf_keras:predict"), ("keras", "tf_keras:predict", "predict")]
    assert math.prod(s.comparison.ratio for s in g.steps) == pytest.approx(g.comparison.ratio, rel=1e-12)
    assert sum(s.comparison.delta_ms for s in g.steps) == pytest.approx(g.comparison.delta_ms, rel=1e-12)
    assert g.comparison.ratio == pytest.approx(3.6, rel=0.03)


def test_interacting_factors_are_the_measured_pair_against_the_product():
    """tf1:predict_on_batch 0.5 -> tf_keras:predict_on_batch 0.8 (TF2 1.6x) and -> tf1:predict 1.0
    (predict 2x): product 3.2x; tf_keras:predict measured 3.0 / 0.5 = 6x: 1.875x of the product."""
    run = run_of(MLP)
    by = {(i.factors, i.corner): i for i in run.factors.interactions}
    i = by[(("tf", "call"), "tf1:predict_on_batch")]
    assert i.both.a == "tf_keras:predict"
    assert i.product == pytest.approx(3.2, rel=0.03)
    assert i.both.ratio == pytest.approx(6.0, rel=0.03)
    assert i.ratio == pytest.approx(1.875, rel=0.03) and i.significant and i.lo < i.ratio < i.hi
    # the gap across both factors says its split depends on the order
    g = gap_of(run.factors, "tf1:predict_on_batch", "predict")
    assert g is not None and g.why == "slowest-vs-fastest" and ("tf", "call") in g.interacting


def test_independent_factors_do_not_interact():
    """Effects that multiply (2x and 3x, together 6x): the interaction is 1."""
    run = run_of({"tf1:predict_on_batch": 1.0, "tf_keras:predict_on_batch": 2.0,
                  "tf1:predict": 3.0, "tf_keras:predict": 6.0})
    (i,) = run.factors.interactions
    assert i.ratio == pytest.approx(1.0, abs=0.03)
    assert i.product == pytest.approx(6.0, rel=0.03)


def test_a_gap_without_the_modes_between_says_which_to_add():
    """tf1:predict against predict differ in TF1 vs TF2 and Keras 2 vs 3; without tf_keras:predict
    the run cannot split them, and neither factor has a pair."""
    run = run_of({"tf1:predict": 1.0, "predict": 3.6})
    (g,) = run.factors.gaps
    assert not g.split and g.factors == ("tf", "keras") and g.missing == ("tf_keras:predict",)
    absent = {f: add for f, _, add in run.factors.absent}
    assert absent["tf"] == ("tf_keras:predict",) and absent["keras"] == ("tf_keras:predict",)
    assert absent["device"] == ()            # one run, one machine: no mode can give CPU vs GPU
    assert set(absent) == set(FACTORS) | {"device"}
    assert not run.factors.effects


def test_a_run_of_other_work_has_no_gap_across_tasks():
    """Training and inference are different work: never a factor, never a gap."""
    run = run_of({"predict_on_batch": 1.0, "train_on_batch": 3.0})
    assert not run.factors.effects and not run.factors.gaps


def test_reports_show_the_table_and_the_json_follows_its_schema():
    from traceinsight.report import render
    run = run_of(MLP)
    doc = json.loads(render(run, "json"))
    jsonschema.validate(doc, json.loads((files("traceinsight") / "schemas/report.schema.json").read_text()))
    assert len(doc["factors"]["effects"]) == len(run.factors.effects)
    md = render(run, "md")
    assert "## Factors: what separates the modes" in md and "`tf1:predict` → `tf_keras:predict`" in md
    html = render(run, "html")
    assert "<h2>Factors: what separates the modes</h2>" in html and "<code>tf_keras:predict</code>" in html


def test_a_pair_without_a_measurable_difference_says_why_once():
    """The ratio's note (why its interval does not settle it) is in the ratio cell; "no
    measurable difference" follows it without repeating the note."""
    from traceinsight.report.factor_text import effect_rows
    factors = {"effects": [{"factor_label": "TF1 vs TF2", "change": "TF1 → TF2", "from_mode": "a",
                            "to_mode": "b", "ratio": 0.71, "ratio_lo": 0.64, "ratio_hi": 0.80,
                            "note": "no paired round", "significant": False,
                            "delta_ms": -1.0, "delta_lo": -1.2, "delta_hi": -0.7}]}
    (row,) = effect_rows(factors, str, str)
    assert row[3] == "0.71× [0.64, 0.80] (no paired round) (no measurable difference)"


def test_a_mode_name_from_a_run_folder_is_escaped_in_the_factor_section():
    """Mode names are data: a run.json may record a capture kind under any name; the factor
    section shows the name escaped, never as markup."""
    from traceinsight.report import render
    odd = "<b>x</b>"
    modes = {n: make_mode(n, {"op": v}, untraced_ms=v) for n, v in MLP.items() if n != "predict"}
    modes[odd] = make_mode(odd, {"op": 3.6}, untraced_ms=3.6).replace(kind=from_name("predict"))
    run = complete(Run(None, "r", modes))
    assert any(s.to_mode == odd for s in run.factors.effects)
    factors_html = render(run, "html").split("<h2>Factors", 1)[1]
    assert "&lt;b&gt;x&lt;/b&gt;" in factors_html and odd not in factors_html
    factors_md = render(run, "md").split("## Factors", 1)[1]
    assert "`<b>x</b>`" in factors_md and "\n<b>" not in factors_md


@pytest.mark.parametrize("mode, words", [
    ("predict", "predict_on_batch"), ("train_on_batch", "GradientTape"), ("fit", "tf.data"),
    ("predict_on_batch", "tf.function")])
def test_the_tf1_vs_tf2_fix_follows_the_call(mode, words):
    """The fix for a TF2 mode slower than TF1 names the call that removes its own overhead."""
    from traceinsight.findings import RULES, rule_tf1_vs_tf2
    assert rule_tf1_vs_tf2 in RULES
    assert words in tf2_fix(from_name(mode))
    run = run_of({f"tf1:{mode}": 1.0, mode: 3.0})
    (f,) = [f for f in run.findings if f.rule == "tf1-vs-tf2"]
    assert f.fix == tf2_fix(from_name(mode))


def test_the_viewer_shows_the_split_beside_the_tf1_vs_tf2_finding():
    from traceinsight.tui.findings import finding_detail
    run = run_of(MLP)
    f = next(f for f in run.findings if f.rule == "tf1-vs-tf2" and "tf1:predict" in f.modes)
    shown = finding_detail(f, run).plain
    assert "Factors\n" in shown and "Split: TF1 → TF2 (tf1:predict → tf_keras:predict)" in shown
    assert "Factors\n" not in finding_detail(f).plain


def test_beside_a_gap_the_twos_own_input_cost_is_its_share():
    """tf1:train_on_batch 1.0 ms against train_on_batch 2.0 ms (via tf_keras:train_on_batch 1.5):
    train_on_batch+tensor 1.6 ms says TF2's numpy input costs 0.4 ms of the 1.0 ms gap."""
    run = run_of({"tf1:train_on_batch": 1.0, "tf_keras:train_on_batch": 1.5, "train_on_batch": 2.0,
                  "train_on_batch+tensor": 1.6})
    g = gap_of(run.factors, "tf1:train_on_batch", "train_on_batch")
    assert g is not None and g.split
    (b,) = g.beside
    assert (b.factor, b.from_mode, b.to_mode) == ("input", "train_on_batch+tensor", "train_on_batch")
    assert b.comparison.delta_ms / g.comparison.delta_ms == pytest.approx(0.4, rel=0.1)
    md = __import__("traceinsight.report", fromlist=["render"]).render(run, "md")
    assert "Beside the gap, at `train_on_batch`: input type: tensor → numpy" in md


@pytest.mark.capture
@pytest.mark.skipif(not __import__("traceinsight.capture.modes", fromlist=["x"]).tf_keras_installed(),
                    reason="tf_keras (legacy Keras 2) is not installed")
def test_tf1_predict_runs_keras_2_predict_in_a_session(tmp_path):
    """A real capture of tf1:predict: Keras 2's predict() with eager disabled, one call per step,
    run by a Session; its kind (run.json) puts it on the factor table's TF1 side, the call predict."""
    from pathlib import Path

    from traceinsight import runfolder
    from traceinsight.cli import main
    from traceinsight.modekind import mode_kind
    from traceinsight.xplane import XSpace

    sample = Path(__file__).resolve().parents[1] / "samples" / "tf2_vs_tf1_small.py"
    out = tmp_path / "runs"
    assert main(["capture", str(sample), "--modes", "tf1:predict", "--out", str(out), "--name", "tf1p",
                 "--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
                 "--host-trace-ms", "2500", "--host-max-steps", "10", "--no-python-tracer",
                 "--rounds", "1"]) == 0
    entry = runfolder.read_manifest(out / "tf1p")["modes"]["tf1:predict"]
    assert entry["status"] == "ok", entry["error"]
    timings = runfolder.read_json(out / "tf1p" / entry["dir"] / runfolder.TIMINGS)
    assert len(timings["steps_s"]) >= 5 and all(s > 0 for s in timings["steps_s"])
    assert entry["details"]["keras_module"] == "tf_keras"
    assert "executing eagerly: False" in entry["details"]["graph"]
    axes = mode_kind("tf1:predict", entry).axes()
    assert axes is not None and (axes.tf, axes.call, axes.keras) == ("tf1", "predict", "2")
    names = set()
    for path in runfolder.pass_traces(out / "tf1p", entry["dir"], "host"):
        space = XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            names |= {m.name for m in plane.event_metadata.values()}
    assert "SessionRun" in names or any(n.startswith("Session") for n in names), sorted(names)[:80]


def keras2_run(ms: dict[str, float]) -> Run:
    """``run_of`` captured where ``keras`` is Keras 2 (TensorFlow 2.12 - 2.15), each mode's kind as
    the loader reads it beside that environment."""
    from traceinsight.modekind import mode_kind
    modes = {n: make_mode(n, {"op": v}, untraced_ms=v).replace(kind=mode_kind(n, None, "2.12.0"))
             for n, v in ms.items()}
    manifest = {"environment": {"tensorflow": "2.12.1", "keras": "2.12.0"},
                "workload": {"kind": "keras"}}
    return complete(Run(None, "r", modes, manifest=manifest))


def test_under_keras_2_a_mode_without_the_tf_keras_prefix_ran_keras_2():
    """On TensorFlow 2.12 - 2.15 ``tf.keras`` is Keras 2: ``fit`` and ``tf_keras:fit`` run the same
    Keras, so no factor says "Keras 2 vs 3" between them, a TF1 mode's TF2 twin is ``fit`` (the
    gap is TF1 vs TF2 alone, split), and the Keras factor says why no run of this TensorFlow can
    measure it instead of naming a mode to add that would run Keras 2 again."""
    from traceinsight.modekind import mode_kind, with_keras
    assert mode_kind("fit", None, "2.12.0").flavour == "tf_keras"
    assert mode_kind("fit", None, "3.15.1").flavour == "keras3"
    assert mode_kind("fit", None, None).flavour == "keras3"       # unknown: as named
    assert mode_kind("tf1:fit", None, "2.12.0").flavour == "tf1"
    assert with_keras(from_name("jax:fit"), "2.12.0").backend == "jax"   # never re-labelled
    same = keras2_run({"fit": 1.1, "tf_keras:fit": 1.0})
    assert same.modes["fit"].kind.axes() == same.modes["tf_keras:fit"].kind.axes()
    assert not same.factors.effects and not same.factors.gaps
    run = keras2_run({"tf1:fit": 1.0, "fit": 1.5})
    (g,) = run.factors.gaps
    assert g.split and g.factors == ("tf",) and (g.from_mode, g.to_mode) == ("tf1:fit", "fit")
    assert [s.factor for s in run.factors.effects] == ["tf"]
    absent = {f: (why, add) for f, why, add in run.factors.absent}
    assert absent["keras"][1] == () and "2.12.0" in absent["keras"][0]
    assert absent["backend"][1] == ()
    assert all("jax:" not in n and "tf_keras:" not in n for _, add in absent.values() for n in add)
    assert [f.rule for f in run.findings if f.rule == "tf1-vs-tf2"] == ["tf1-vs-tf2"]


RUNS = Path(__file__).parent / "data" / "runs"


def test_the_loader_reads_each_modes_keras_from_the_runs_environment(tmp_path):
    """A mode named as Keras 3's (its kind recorded so, or derived from its name as here) is read
    with the environment's ``keras``: the same folder says Keras 3 under 3.15.1, Keras 2 under
    2.12.0 (a folder captured on TensorFlow 2.12 before this was read so too)."""
    import shutil

    import traceinsight
    run = tmp_path / "conv1d"
    shutil.copytree(RUNS / "conv1d", run, ignore=shutil.ignore_patterns(".traceinsight"))
    manifest = json.loads((run / "run.json").read_text())
    manifest["environment"]["keras"] = "2.12.0"
    (run / "run.json").write_text(json.dumps(manifest))
    before = {n: m.kind.flavour for n, m in traceinsight.load(RUNS / "conv1d").modes.items()}
    flavours = {n: m.kind.flavour for n, m in traceinsight.load(run).modes.items()}
    assert set(before.values()) == {"keras3"} and set(flavours.values()) == {"tf_keras"}
