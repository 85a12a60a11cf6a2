"""traceinsight diff: two modes of one run, two runs matched by mode name, formats, CLI."""

from __future__ import annotations

import json

import jsonschema
import pytest
from markdown_it import MarkdownIt

from traceinsight import cli
from traceinsight.derive import complete
from traceinsight.model import Run
from traceinsight.report import render_diff
from traceinsight.report.diff import diff_data
from traceinsight.report.json import load_schema
from traceinsight.stats import delta_ci
from traceinsight.testing import make_mode, sample_run

CONV = ("functional_1/conv1d_1/convolution", "_MklNativeFusedConv2D")


def two_runs(after_conv_ms: float = 5.4) -> tuple[Run, Run]:
    """before: function 4.4 ms; after: the conv op got slower (2.4 -> 5.4 ms: the step 4.4 -> 7.4,
    beyond the assumed run-to-run tolerance), a retrace appeared, TensorFlow changed; eager is
    unchanged. Each mode timed in one phase (no rounds): run-to-run variation is assumed."""
    def run(name, conv_ms, tf, retraced):
        modes = {
            "eager": make_mode("eager", {"op": 4.3, "python": 4.0, "dispatch": 1.4}, untraced_ms=9.7,
                               rounds=1),
            "function": make_mode("function", {"op": 1.1 + conv_ms, "python": 0.9},
                                  ops=[(*CONV, "worker", 1, conv_ms),
                                       ("functional_1/dense_1/MatMul", "MatMul", "worker", 2, 1.1)],
                                  retraces=[("function", 21, retraced, 85.0 * retraced, 0.0, "")],
                                  untraced_ms=2.0 + conv_ms, rounds=1),
        }
        if name == "before":
            modes["xla"] = make_mode("xla", {"op": 5.0}, untraced_ms=5.0, rounds=1)
        env = {"tensorflow": tf, "python": "3.11.7", "env_vars": {"TF_ENABLE_ONEDNN_OPTS": None}}
        return complete(Run(path=None, name=name, modes=modes, manifest={"environment": env}))
    return run("before", 2.4, "2.20.0", 1), run("after", after_conv_ms, "2.21.0", 3)


def pair(doc, a):
    return next(p for p in doc["pairs"] if p["a"] == a)


def test_two_runs_matched_by_mode_name():
    a, b = two_runs()
    doc = diff_data(a, b)
    assert [p["a"] for p in doc["pairs"]] == ["eager", "function"]
    assert doc["only_in_a"] == ["xla"] and doc["only_in_b"] == []
    assert doc["environment_changes"] == [{"key": "tensorflow", "a": "2.20.0", "b": "2.21.0"}]
    f = pair(doc, "function")
    assert f["significant"] and f["delta_ms"] == pytest.approx(3.0, abs=0.2)  # B − A
    assert f["basis"] == "assumed" and f["verdict"] == "slower"
    assert f["sentence"].startswith("function: B − A = +")
    assert "run-to-run variation is not measured" in f["sentence"]
    op = {c["category"]: c for c in f["categories"]}["op"]
    assert op["significant"] and op["delta_ms"] == pytest.approx(3.0, abs=0.1)
    assert op["delta_lo"] > 0
    assert [o["op"] for o in f["ops"]["slower"]] == [CONV[0]]
    assert f["ops"]["slower"][0]["a_ms"] == 2.4 and f["ops"]["slower"][0]["b_ms"] == 5.4
    assert f["ops"]["slower"][0]["delta_ms"] == pytest.approx(3.0)
    fam = {r["family"]: r for r in f["families"]}
    assert fam["convolution"]["a_ms"] == 2.4 and fam["convolution"]["delta_ms"] == pytest.approx(3.0)
    assert f["ops"]["same_count"] == 1 and not f["ops"]["added"] and not f["ops"]["removed"]
    assert f["retraces"] == [{"function": "function", "a_traced": 1, "b_traced": 3,
                              "a_tracing_ms": 85.0, "b_tracing_ms": 255.0,
                              "a_compile_ms": 0.0, "b_compile_ms": 0.0}]
    e = pair(doc, "eager")
    assert not e["significant"] and "no measurable difference" in e["sentence"]
    jsonschema.validate(doc, load_schema())


def test_runs_that_name_their_modes_apart_are_told_how_to_pair_them():
    a = complete(Run(path=None, name="a", modes={"fit": make_mode("fit", {"op": 4.0})}))
    b = complete(Run(path=None, name="b", modes={"fit_fixed": make_mode("fit_fixed", {"op": 2.0})}))
    doc = diff_data(a, b)
    assert doc["pairs"] == []
    assert doc["summary"] == ("no mode ran in both A and B; to compare mode fit of A with mode "
                              "fit_fixed of B: traceinsight diff A B --modes fit,fit_fixed.")


def test_two_modes_of_one_run_added_removed_ops():
    run = sample_run()
    doc = diff_data(run, run, [(run.modes["eager"], run.modes["function"])])
    p = doc["pairs"][0]
    assert p["significant"] and p["delta_ms"] < 0
    # two modes: ops matched by normalized type (eager Conv2D meets the graph's fused
    # _MklNativeFusedConv2D, MatMul its graph MatMul); only the fused-away BiasAdd is removed
    assert p["ops"]["matched_by"] == "type"
    assert {o["op"] for o in p["ops"]["removed"]} == {"BiasAdd"}
    assert p["ops"]["added"] == []
    assert "MatMul" in {o["op"] for o in p["ops"]["slower"] + p["ops"]["faster"]}
    assert p["ops"]["same_count"] == 1     # Conv2D: 2.5 vs 2.4 ms, within 5 %
    assert all(o["b_ms"] is None for o in p["ops"]["removed"])
    assert doc["environment_changes"] == []
    jsonschema.validate(doc, load_schema())


def test_small_change_between_runs_is_noise_without_rounds():
    """A 23 % slower step in a second capture, no interleaved rounds: within the run-to-run
    variation measured between two captures of the same sample, so not called a change, and the
    sentence says the variation was assumed, not measured."""
    a, b = two_runs(after_conv_ms=3.4)
    f = pair(diff_data(a, b), "function")
    assert f["ratio_lo"] > 1.0            # the steps alone would call it significant
    assert not f["significant"] and f["verdict"] == "within noise"
    assert "within run-to-run variation" in f["sentence"] and "not measured" in f["sentence"]


def _with_rounds(m, medians_ms, n=8):
    """The mode with interleaved rounds whose steps sit at these medians (±1 %)."""
    import dataclasses

    import numpy as np
    rounds = tuple(np.full(n, ms * 1e-3) * (1 + 0.01 * np.linspace(-1, 1, n)) for ms in medians_ms)
    timing = dataclasses.replace(m.timing, rounds=rounds, steps_s=np.concatenate(rounds))
    return dataclasses.replace(m, timing=timing)


def test_rounds_measure_run_to_run_variation():
    """With rounds on both sides the between-round spread is the noise: a 10 % change that every
    round shows counts; the same 10 % against rounds that themselves wander by 30 % does not."""
    a, b = two_runs()
    fa, fb = a.modes["function"], b.modes["function"]
    steady_a = _with_rounds(fa, [4.0, 4.02, 3.98, 4.01])
    steady_b = _with_rounds(fb, [4.4, 4.42, 4.38, 4.41])
    ra = complete(Run(path=None, name="a", modes={"function": steady_a}))
    rb = complete(Run(path=None, name="b", modes={"function": steady_b}))
    p = diff_data(ra, rb)["pairs"][0]
    assert p["basis"] == "rounds" and p["significant"] and p["ratio"] == pytest.approx(1.1, abs=0.01)
    wander_a = _with_rounds(fa, [4.0, 5.2, 3.9, 4.1])
    wander_b = _with_rounds(fb, [4.4, 5.7, 4.3, 4.5])
    p = diff_data(complete(Run(path=None, name="a", modes={"function": wander_a})),
                  complete(Run(path=None, name="b", modes={"function": wander_b})))["pairs"][0]
    assert p["basis"] == "rounds" and not p["significant"]
    assert "interleaved rounds" in p["sentence"]


def test_delta_ci_excludes_zero_only_for_real_changes():
    import numpy as np
    rng = np.random.default_rng(1)
    x = 1 + 0.02 * rng.standard_normal(50)
    d, lo, hi = delta_ci(x, x + 0.5)
    assert d == pytest.approx(0.5) and lo > 0
    _, lo, hi = delta_ci(x, x)
    assert lo <= 0 <= hi


@pytest.mark.parametrize("fmt", ["text", "md", "html", "json"])
def test_every_format_renders(fmt):
    a, b = two_runs()
    out = render_diff(diff_data(a, b), fmt)
    assert CONV[0] in out and "2.21.0" in out
    if fmt == "md":
        html = MarkdownIt("commonmark").enable("table").render(out)
        assert html.count("<table>") >= 4
    if fmt == "json":
        jsonschema.validate(json.loads(out), load_schema())


@pytest.fixture
def fake_runs(monkeypatch, tmp_path):
    import traceinsight
    before, after = two_runs()
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    monkeypatch.setattr(traceinsight, "load",
                        lambda path, **kw: before if path.name == "before" else after)
    return tmp_path / "before", tmp_path / "after"


def test_cli_diff(fake_runs, tmp_path, capsys):
    a, b = fake_runs
    assert cli.main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "function: B − A = +" in out and "only in A" in out
    assert cli.main(["diff", str(a), "--modes", "eager,function"]) == 0
    out = capsys.readouterr().out
    # two modes of one run: the run named once, not as A and B alike
    assert "== eager → function" in out and out.startswith("A and B: modes of one run, ")
    assert "\nB: " not in out
    assert cli.main(["diff", str(a), str(b), "-o", str(tmp_path / "d.html")]) == 0
    assert (tmp_path / "d.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("argv, message", [
    (["--modes", "eager"], "two mode names"),
    (["--modes", "eager,nope"], "has no mode 'nope'"),
    ([], "name the two modes"),
])
def test_cli_diff_user_errors(fake_runs, capsys, argv, message):
    a, _ = fake_runs
    assert cli.main(["diff", str(a), *argv]) == 2
    assert message in capsys.readouterr().err


def test_markdown_diff_stays_under_githubs_limit():
    from traceinsight.report.markdown import GITHUB_LIMIT

    def big(name, scale):
        ops = [(f"scope_{i}/" + "y" * 120, "MatMul", "worker", 1, scale / (i + 1)) for i in range(2000)]
        return complete(Run(path=None, name=name, modes={n: make_mode(n, {"op": 5.0 * scale}, ops=ops,
                                                             untraced_ms=5.0 * scale)
                                                for n in ("eager", "function", "xla")}))
    md = render_diff(diff_data(big("a", 1.0), big("b", 2.0)), "md")
    assert len(md) <= GITHUB_LIMIT and "more ops not shown" in md
    assert all(line.endswith("|") for line in md.splitlines() if line.startswith("|"))


def test_html_diff_escapes_trace_strings():
    from test_report import ALLOWED_TAGS, EVIL, TagCollector, hostile_run
    a, b = hostile_run(), hostile_run()
    page = render_diff(diff_data(a, b), "html")
    p = TagCollector()
    p.feed(page)
    assert set(p.tags) <= ALLOWED_TAGS and "script" not in p.tags
    assert EVIL in "".join(p.text)
    md = MarkdownIt("commonmark").enable("table").render(render_diff(diff_data(a, b), "md"))
    assert "<script" not in md and "<img" not in md


def test_one_captures_own_round_spread_explains_a_change():
    """A is steady (rounds within 1 %), B's rounds wander by a third on a shared machine: a 20 %
    slower median in B is within what B's own rounds show, so not significant (the larger of the
    two captures' spreads is the tolerance, not the smaller)."""
    a, b = two_runs()
    fa, fb = a.modes["function"], b.modes["function"]
    steady_a = _with_rounds(fa, [4.0, 4.02, 3.98, 4.01])
    loaded_b = _with_rounds(fb, [4.8, 4.0, 5.6, 4.8])
    p = diff_data(complete(Run(path=None, name="a", modes={"function": steady_a})),
                  complete(Run(path=None, name="b", modes={"function": loaded_b})))["pairs"][0]
    assert p["ratio_lo"] > 1.0              # the steps' interval alone would call it a change
    assert p["tolerance"] == pytest.approx((5.6 - 4.0) / 4.8, abs=0.01)   # B's round spread
    assert not p["significant"] and p["verdict"] == "within noise"


def test_two_modes_ops_meet_by_type_and_the_text_shows_families():
    """eager against function of the committed conv1d run: by name nearly every op would be
    'removed' and another 'added' (Conv2D vs model/conv1d/convolution); matched by normalized
    type they meet (Conv2D slower, not removed + added), and the text diff lists op families."""
    from conftest import RUNS

    import traceinsight
    from traceinsight.report import render_diff

    run = traceinsight.load(RUNS / "conv1d")
    d = diff_data(run, run, [(run.modes["function"], run.modes["eager"])])
    ops = d["pairs"][0]["ops"]
    assert ops["matched_by"] == "type"
    assert "Conv2D" in [o["op"] for o in ops["slower"] + ops["faster"]]
    assert len(ops["added"]) + len(ops["removed"]) < 10
    text = render_diff(d, "text")
    assert "op families (ops matched by family" in text and "convolution" in text
    assert "(matched by op type)" in text
