"""``capture --verify``: which fix-applied modes a run's unmeasured findings ask for (decided on the
run's typed data, without TensorFlow), claimed against measured, and a real capture of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traceinsight.capture import verify
from traceinsight.derive import complete
from traceinsight.finding import SavingKind
from traceinsight.model import Run
from traceinsight.testing import make_mode

ROOT = Path(__file__).resolve().parents[1]
# eager: Python + dispatch are 60 % of the step, and no graph mode to measure the fix against
EAGER = {"op": 2.0, "python": 2.0, "dispatch": 1.0}


def run_of(modes) -> Run:
    return complete(Run(None, "r", {m.name: m for m in modes}))


def test_an_estimated_finding_asks_for_its_fix_applied():
    run = run_of([make_mode("eager", EAGER, untraced_ms=5.0)])
    f = next(f for f in run.findings if f.rule == "eager-dispatch-bound")
    assert f.saving_kind is not SavingKind.MEASURED
    checks, left = verify.plan(run)
    assert [(c.rule, c.mode, c.fix_mode) for c in checks] == [("eager-dispatch-bound", "eager", "function")]
    assert verify.modes_to_add(checks) == ["function"]
    # asked once: a mode already tried that did not run is said, not asked again
    checks, left = verify.plan(run, frozenset({"function"}))
    assert not checks and left[0]["rule"] == "eager-dispatch-bound"


def test_the_measured_saving_is_the_runs_comparison_with_the_fix_applied():
    before = run_of([make_mode("eager", EAGER, untraced_ms=5.0)])
    checks, _ = verify.plan(before)
    after = run_of([make_mode("eager", EAGER, untraced_ms=5.0),
                    make_mode("function", {"op": 2.0, "python": 0.3, "dispatch": 0.2}, untraced_ms=2.5)])
    (row,) = verify.measured(after, checks)
    c = after.compare("eager", "function")
    assert row["status"] == "measured" and row["measured_ms"] == c.delta_ms
    assert row["measured_ms"] == pytest.approx(2.5, rel=0.05)
    assert (row["ratio"], row["ratio_lo"], row["ratio_hi"]) == (c.ratio, c.ratio_lo, c.ratio_hi)
    assert row["finding_now_kind"] == SavingKind.MEASURED.value      # the rule now measures it too
    # once the fix-applied mode is in the run, nothing is left to add for that finding
    assert not [c for c in verify.plan(after)[0] if c.rule == "eager-dispatch-bound"]


def test_a_fix_that_is_not_a_mode_is_said_and_left_an_estimate():
    """An input-bound fit-dataset (an upper bound): its fix goes on the user's own tf.data map,
    which no mode changes, so nothing is added and the finding is said to stay unverified."""
    run = run_of([make_mode("fit-dataset", {"op": 1.0, "input": 0.5, "python": 0.1})])
    f = next(f for f in run.findings if f.rule == "input-bound")
    assert f.saving_kind is SavingKind.UPPER_BOUND
    checks, left = verify.plan(run)
    assert not checks
    assert left == [{"rule": "input-bound", "mode": "fit-dataset",
                     "why": "num_parallel_calls and prefetch go on the user's own tf.data map"}]


def test_a_factor_gap_without_its_middle_mode_asks_for_it():
    run = run_of([make_mode("tf1:predict", {"op": 1.0}, untraced_ms=1.0),
                  make_mode("predict", {"op": 3.6}, untraced_ms=3.6)])
    checks, _ = verify.plan(run)
    assert ("factor-gap", "tf_keras:predict") in {(c.rule, c.fix_mode) for c in checks}


def test_reports_show_claimed_against_measured():
    from traceinsight.report import render
    before = run_of([make_mode("eager", EAGER, untraced_ms=5.0)])
    checks, left = verify.plan(before)
    after = run_of([make_mode("eager", EAGER, untraced_ms=5.0),
                    make_mode("function", {"op": 2.0, "python": 0.3, "dispatch": 0.2}, untraced_ms=2.5)])
    manifest: dict = {}
    verify.record(manifest, 300.0, 42.0, 1, verify.measured(after, checks), left, [])
    run = complete(Run(None, "r", dict(after.modes), manifest=manifest))
    md = render(run, "md")
    assert "## Claimed against measured (capture --verify)" in md
    assert "| eager-dispatch-bound | `eager` | `function` |" in md
    html = render(run, "html")
    assert "<h2>Claimed against measured (capture --verify)</h2>" in html
    from importlib.resources import files

    import jsonschema
    doc = json.loads(render(run, "json"))
    jsonschema.validate(doc, json.loads((files("traceinsight") / "schemas/report.schema.json").read_text()))
    assert doc["verify"]["checked"][0]["fix_mode"] == "function"


@pytest.mark.capture
def test_capture_verify_adds_the_fix_applied_mode_and_measures_it(tmp_path):
    """A Python loop of tiny ops run eagerly: dispatch-bound, and the run has no graph mode; --verify
    adds ``function`` (the fix, tf.function around the step) and records the saving measured."""
    from traceinsight import runfolder
    from traceinsight.cli import main
    out = tmp_path / "runs"
    fast = ["--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
            "--host-trace-ms", "2500", "--host-max-steps", "10", "--no-python-tracer",
            "--rounds", "1"]
    assert main(["capture", str(ROOT / "samples" / "costly_loop.py"), "--modes", "eager",
                 "--out", str(out), "--name", "v", *fast, "--verify", "--verify-budget", "300"]) == 0
    manifest = runfolder.read_manifest(out / "v")
    v = manifest["verify"]
    assert manifest["modes"]["function"]["status"] == "ok"
    row = next(r for r in v["checked"] if r["fix_mode"] == "function")
    assert row["mode"] == "eager" and row["status"] == "measured" and row["measured_ms"] > 0


def test_a_retracing_function_step_is_checked_with_reduce_retracing():
    """A function workload's step retraced: the fix (``reduce_retracing=True``) is a mode of its
    own, function-relaxed, which --verify adds even where the rule reads its saving from the
    trace; in a Keras workload the same finding stays unverified, said why."""
    retraces = [("step", 40, 12, 300.0, 0.0, "shape", "shape", "")]
    m = make_mode("function", {"op": 1.0, "tracing": 0.5}, retraces=retraces)
    run = complete(Run(None, "r", {"function": m}, manifest={"workload": {"kind": "function"}}))
    assert any(f.rule == "retracing" for f in run.findings)
    checks, _ = verify.plan(run)
    assert [(c.rule, c.mode, c.fix_mode) for c in checks] == [("retracing", "function", "function-relaxed")]
    keras = complete(Run(None, "r", {"function": m}, manifest={"workload": {"kind": "keras"}}))
    checks, left = verify.plan(keras)
    assert not checks and [r["rule"] for r in left] == ["retracing"]
