"""``capture --verify``: which fix-applied modes a run's unmeasured findings ask for (decided on the
run's typed data, without TensorFlow), claimed against measured, and a real capture of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traceinsight.capture import verify
from traceinsight.derive import complete
from traceinsight.finding import SavingKind
from traceinsight.model import ModeResult, Run
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


# what the capture recorded of samples/retracing.py's inputs: vectors of two lengths, a Python float
RECORDED = {"steps": 10, "truncated": False, "distinct": [
    {"args": ["ndarray float32 shape (100,)", "Python float 0.0"],
     "kinds": [{"kind": "array", "container": "ndarray", "dtype": "float32", "shape": [100]},
               {"kind": "python", "type": "float"}]},
    {"args": ["ndarray float32 shape (200,)", "Python float 0.01"],
     "kinds": [{"kind": "array", "container": "ndarray", "dtype": "float32", "shape": [200]},
               {"kind": "python", "type": "float"}]}]}
SIGNATURE_DATA = [{"shape": [None], "dtype": "float32"}, {"shape": [], "dtype": "float32"}]
SIGNATURE_SOURCE = "[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)]"


def retracing_run(cause: str = "shapes and python values", extra=(), manifest=None) -> Run:
    retraces = [("step", 40, 12, 300.0, 0.0, "shape", cause, "")]
    m = make_mode("function", {"op": 1.0, "tracing": 0.5}, retraces=retraces)
    return complete(Run(None, "r", {"function": m, **{x.name: x for x in extra}},
                        manifest={"workload": {"kind": "function"}, **(manifest or {})}))


def test_a_retraced_step_is_checked_with_the_signature_its_finding_quotes_beside_reduce_retracing():
    """Two checks of one finding: reduce_retracing (function-relaxed) and the input_signature the
    finding quotes (function-signature), that signature carried as (shape, dtype) data, the same
    the retrace table's column quotes as source."""
    from traceinsight.analysis.retraces import input_signature
    run = retracing_run()
    checks, _ = verify.plan(run, recorded={"function": RECORDED}.get)
    assert [(c.rule, c.mode, c.fix_mode) for c in checks] == [
        ("retracing", "function", "function-relaxed"), ("retracing", "function", "function-signature")]
    relaxed, fixed = checks
    assert relaxed.signature is None and fixed.signature_data() == SIGNATURE_DATA
    row = fixed.to_dict()
    assert relaxed.to_dict()["fix"] == "reduce_retracing=True"
    assert row["fix"] == f"input_signature={SIGNATURE_SOURCE}"
    assert row["input_signature"] == SIGNATURE_DATA
    assert row["input_signature_source"] == input_signature(RECORDED) == SIGNATURE_SOURCE
    assert fixed.claimed_ms == relaxed.claimed_ms          # the one finding's claim, twice
    assert verify.modes_to_add(checks) == ["function-relaxed", "function-signature"]
    # asked once: a signature mode tried that did not run is said, not asked again
    checks, left = verify.plan(run, frozenset({"function-signature"}),
                               recorded={"function": RECORDED}.get)
    assert [c.fix_mode for c in checks] == ["function-relaxed"]
    assert any("function-signature" in r["why"] for r in left)


@pytest.mark.parametrize("cause, recorded", [
    ("new function object", RECORDED),     # a tf.function per call: no signature is the fix
    ("shapes and python values", None),    # nothing recorded: the finding quotes the template
    ("shapes", {"distinct": RECORDED["distinct"][:1]}),   # one signature: nothing varied
])
def test_no_signature_check_where_the_finding_quotes_none(cause, recorded):
    run = retracing_run(cause)
    checks, _ = verify.plan(run, recorded=lambda mode: recorded)
    assert [c.fix_mode for c in checks] == ["function-relaxed"]


def test_a_keras_workload_gets_no_signature_mode():
    retraces = [("step", 40, 12, 300.0, 0.0, "shape", "shapes", "")]
    m = make_mode("function", {"op": 1.0, "tracing": 0.5}, retraces=retraces)
    run = complete(Run(None, "r", {"function": m}, manifest={"workload": {"kind": "keras"}}))
    assert not verify.plan(run, recorded={"function": RECORDED}.get)[0]


def _after(fix_ok: bool, traces: int | None, error: str | None = None) -> Run:
    """The run after --verify added function-signature: its run.json entry holds the traces its
    process counted."""
    fixed = (make_mode("function-signature", {"op": 1.0}, untraced_ms=1.0) if fix_ok else
             ModeResult(name="function-signature", status="failed", error=error))
    entry = {"status": "ok" if fix_ok else "failed", "details": {"traces": traces}}
    return retracing_run(extra=[fixed], manifest={"modes": {"function-signature": entry}})


def test_the_signature_check_reports_the_traces_and_the_saving_measured():
    (_, fixed), _ = verify.plan(retracing_run(), recorded={"function": RECORDED}.get)
    after = _after(True, 1)
    (row,) = verify.measured(after, [fixed])
    c = after.compare("function", "function-signature")
    assert row["status"] == "measured" and row["traces"] == 1 and row["signature_held"] is True
    assert row["measured_ms"] == c.delta_ms and row["ratio"] == c.ratio
    # a count other than one is never a measured saving (the process fails such a mode first)
    (row,) = verify.measured(_after(True, 3), [fixed])
    assert row["status"] == "not measured" and row["signature_held"] is False
    assert row["why"] == "the input_signature did not hold: 3 traces recorded"
    # the mode failed: its own one-line error is the reason
    why = "the input_signature did not hold: step 7 (inputs: ...) raised TypeError: Binding inputs"
    (row,) = verify.measured(_after(False, None, why), [fixed])
    assert row["status"] == "not measured" and row["why"] == why and row["signature_held"] is None


def test_reports_say_which_fix_each_row_of_one_finding_applied():
    from traceinsight.report import render
    before = retracing_run()
    checks, left = verify.plan(before, recorded={"function": RECORDED}.get)
    after = _after(True, 1)
    manifest: dict = {}
    verify.record(manifest, 300.0, 42.0, 1, verify.measured(after, checks), left, [])
    run = complete(Run(None, "r", dict(after.modes), manifest=manifest))
    md = render(run, "md")
    assert "| retracing | `function` | `function-relaxed` with `reduce_retracing=True` |" in md
    assert (f"| retracing | `function` | `function-signature` with `input_signature={SIGNATURE_SOURCE}`: "
            "traced once, the signature held |") in md
    assert ("retracing in `function` is checked against 2 fixes applied, one row each: "
            "`function-relaxed`, `function-signature`.") in md
    html = render(run, "html")
    assert "traced once, the signature held" in html and "2 fixes applied" in html
    assert manifest["verify"]["several_fixes"] == [
        {"rule": "retracing", "mode": "function", "fix_modes": ["function-relaxed", "function-signature"]}]
    from traceinsight.report import verify_text as vt
    failed = {"fix_mode": "function-signature", "fix": f"input_signature={SIGNATURE_SOURCE}",
              "traces": None}
    assert vt.fix_applied(failed, str, str) == f"function-signature with input_signature={SIGNATURE_SOURCE}"
    # a run.json written before rows said their fix: the mode's name alone
    assert vt.fix_applied({"fix_mode": "function"}, str, str) == "function"


def test_a_run_gives_the_signature_mode_added_by_name_its_function_modes_inputs(tmp_path):
    """--resume RUN --modes function-signature: the signature of the run's graph function's
    recorded inputs, else one line."""
    from traceinsight import runfolder
    from traceinsight.errors import TraceinsightError
    (tmp_path / "function").mkdir()
    runfolder.atomic_write_json(tmp_path / "function" / "timings.json",
                                {"steps_s": [0.01], "input_signatures": RECORDED})
    manifest = {"modes": {"eager": {"dir": "eager", "status": "ok"},
                          "function": {"dir": "function", "status": "ok"}}}
    assert verify.signature_for(tmp_path, manifest, "function-signature") == ("function", SIGNATURE_DATA)
    runfolder.atomic_write_json(tmp_path / "function" / "timings.json",
                                {"steps_s": [0.01], "input_signatures": {"distinct": RECORDED["distinct"][:1]}})
    with pytest.raises(TraceinsightError, match="give no input_signature"):
        verify.signature_for(tmp_path, manifest, "function-signature")
    manifest["modes"]["function"]["status"] = "failed"
    with pytest.raises(TraceinsightError, match="no graph function mode captured ok"):
        verify.signature_for(tmp_path, manifest, "function-signature")


# ---- the signature as data: built from (shape, dtype) fields, never evaluated -------------------

@pytest.mark.parametrize("data, says", [
    ([{"shape": [None], "dtype": "variant"}], "dtype 'variant' is not a plain TensorFlow dtype name"),
    ([{"shape": [None], "dtype": "resource"}], "is not a plain TensorFlow dtype name"),
    ([{"shape": [1], "dtype": "float32); import os; os.system('x'"}], "is not a plain TensorFlow dtype"),
    ([{"shape": [1], "dtype": "DType"}], "is not a plain TensorFlow dtype name"),
    ([{"shape": [1], "dtype": 1}], "is not a plain TensorFlow dtype name"),
    ([{"shape": [-1], "dtype": "float32"}], "shape must be null or a list of non-negative"),
    ([{"shape": [True], "dtype": "float32"}], "shape must be null or a list"),
    ([{"shape": "[None]", "dtype": "float32"}], "shape must be null or a list"),
    ([{"shape": [None], "dtype": "float32", "name": "x"}], "expected an object with shape and dtype"),
    ("[tf.TensorSpec([None], tf.float32)]", "must be a non-empty list"),
    ([], "must be a non-empty list"),
])
def test_a_signature_passed_as_data_is_refused_unless_plain_shapes_and_dtype_names(data, says):
    from traceinsight.capture.loading import WorkloadError, signature_of_data
    with pytest.raises(WorkloadError, match=".*") as e:
        signature_of_data(data)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_the_signature_data_round_trips_from_the_analysis_to_the_workload_process():
    from traceinsight.analysis.retraces import ArgSpec, signature_source, signature_specs
    from traceinsight.capture.loading import signature_of_data
    specs = signature_specs(RECORDED)
    assert specs == (ArgSpec((None,), "float32"), ArgSpec((), "float32"))
    assert signature_source(specs) == SIGNATURE_SOURCE
    assert signature_of_data([a.to_dict() for a in specs]) == [([None], "float32"), ([], "float32")]
    assert ArgSpec(None, "int64").to_dict() == {"shape": None, "dtype": "int64"}
    # a recorded dtype that is no plain TensorFlow dtype name gives no signature at all
    odd = {"distinct": [{"args": [a], "kinds": [{"kind": "array", "dtype": "str160", "shape": [n]}]}
                        for a, n in (("a", 1), ("b", 2))]}
    assert signature_specs(odd) is None


class _Traced:
    """A tf.function stand-in whose trace count the test sets."""

    def __init__(self):
        self.count = 0

    def __call__(self, *args):
        self.count = max(self.count, 1)
        return args

    def experimental_get_tracing_count(self):
        return self.count


def test_a_retrace_under_the_signature_fails_the_mode_in_one_line():
    from types import SimpleNamespace

    from traceinsight.capture.function_driver import SignatureDriver
    from traceinsight.capture.loading import WorkloadError
    fn = _Traced()
    fake_tf = SimpleNamespace(function=lambda step, input_signature: fn)
    details: dict = {}
    d = SignatureDriver(fake_tf, None, ["spec"], lambda i: (float(i),), details)
    d.inputs(0)
    fn(0.0)
    assert d.inputs(1) == (1.0,) and details["traces"] == 1
    fn.count = 2           # the call of step 1 traced again
    with pytest.raises(WorkloadError) as e:
        d.inputs(2)
    assert str(e.value) == ("the input_signature did not hold: step() traced 2 times, again at "
                            "step 1 (inputs: Python float 1.0)")
    assert details["traces"] == 2


def test_a_new_run_refuses_the_signature_mode_in_one_line(tmp_path, capsys):
    from traceinsight.cli import main
    out = tmp_path / "runs"
    assert main(["capture", str(ROOT / "samples" / "retracing.py"), "--modes",
                 "function,function-signature", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("traceinsight: error: retracing.py: mode "
                                                         "'function-signature' runs the step with")
    assert "--resume RUN --modes function-signature" in err
    assert not out.exists()


# ---- real captures --------------------------------------------------------------------------

SMALL = ["--min-steps", "8", "--min-time", "0", "--max-time", "3", "--warmup", "2",
         "--host-trace-ms", "2500", "--host-max-steps", "10", "--no-python-tracer",
         "--round-time", "0.2"]


@pytest.mark.capture
def test_capture_verify_runs_the_retracing_sample_with_the_signature_its_finding_quotes(tmp_path):
    """samples/retracing.py: step() retraces for every new vector length and Python float. --verify
    adds function-relaxed and function-signature; the latter's process built the signature from the
    data the parent handed it, and its step traced once: counted by the process, and seen in the
    mode's own trace (one traced call in its retrace table, where function's every call traced)."""
    from traceinsight import load, runfolder
    from traceinsight.cli import main
    out = tmp_path / "runs"
    assert main(["capture", str(ROOT / "samples" / "retracing.py"), "--modes", "function",
                 "--out", str(out), "--name", "r", *SMALL, "--rounds", "2",
                 "--verify", "--verify-budget", "300"]) == 0
    manifest = runfolder.read_manifest(out / "r")
    entry = manifest["modes"]["function-signature"]
    assert entry["status"] == "ok" and entry["input_signature_from"] == "function"
    assert entry["input_signature"] == SIGNATURE_DATA
    assert entry["details"]["traces"] == 1 and entry["details"]["input_signature"] == SIGNATURE_DATA
    rows = {r["fix_mode"]: r for r in manifest["verify"]["checked"]}
    assert set(rows) == {"function-relaxed", "function-signature"}
    row = rows["function-signature"]
    assert row["rule"] == "retracing" and row["mode"] == "function"
    assert row["input_signature_source"] == SIGNATURE_SOURCE
    assert row["status"] == "measured" and row["traces"] == 1 and row["signature_held"] is True
    run = load(out / "r")
    assert row["measured_ms"] == run.compare("function", "function-signature").delta_ms
    traced = {m: {r["function"]: r["traced_calls"] for r in run.modes[m].table("retraces").records()}
              for m in ("function", "function-signature")}
    assert traced["function-signature"]["step"] == 1
    assert traced["function"]["step"] > 1
    # the signature run is the one the finding quotes: its retrace table's column, its fix
    (quoted,) = [r["signature"] for r in run.modes["function"].table("retraces").records()
                 if r["function"] == "step"]
    assert quoted == SIGNATURE_SOURCE
    finding = next(f for f in run.findings if f.rule == "retracing" and f.modes == ("function",))
    assert f"input_signature={SIGNATURE_SOURCE}" in finding.fix


_CHANGES_RANK = '''"""A step fed vectors of two lengths, then (from step 12 on) a matrix."""
import numpy as np
import tensorflow as tf


def step(x):
    return tf.reduce_sum(x * x)


def inputs(i):
    if i >= 12:
        return (np.ones((2, 3), np.float32),)
    return (np.ones(100 if i % 2 else 200, np.float32),)
'''


def _with_signature(run_path: Path, signature: list) -> None:
    """The fixed-signature mode's run.json entry, as --verify writes it, with this signature."""
    from traceinsight import runfolder
    from traceinsight.capture import modes, planning
    manifest = runfolder.read_manifest(run_path)
    entry = planning.mode_entry("function-signature", modes.get("function", "function-signature"))
    entry.update(input_signature=signature, input_signature_from="function")
    manifest["modes"]["function-signature"] = entry
    planning.RunWriter(run_path, manifest).save()


@pytest.mark.capture
def test_a_signature_that_does_not_hold_fails_its_mode_in_one_line(tmp_path):
    """Inputs that do not fit the signature: TensorFlow raises at the call, in the capture's first
    steps, or in an interleaved round after the capture (step 12 on): either way the mode fails,
    its error one line saying the signature did not hold, never recorded ok."""
    from traceinsight import runfolder
    from traceinsight.cli import main
    wl = tmp_path / "changes_rank.py"
    wl.write_text(_CHANGES_RANK)
    out = tmp_path / "runs"
    small = ["--min-steps", "3", "--min-time", "0", "--max-time", "3", "--warmup", "1",
             "--host-trace-ms", "2500", "--host-max-steps", "3", "--no-python-tracer",
             "--round-time", "0.2"]
    assert main(["capture", str(wl), "--modes", "eager", "--out", str(out), "--name", "r",
                 *small, "--rounds", "1"]) == 0
    run = out / "r"
    # only length-100 vectors fit: step 0's length 200 does not
    _with_signature(run, [{"shape": [100], "dtype": "float32"}])
    assert main(["capture", "--resume", str(run), "--modes", "function-signature", *small]) == 1
    entry = runfolder.read_manifest(run)["modes"]["function-signature"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("the input_signature did not hold: step 0 (inputs: ndarray "
                                     "float32 shape (200,)) raised ")
    assert "\n" not in entry["error"].split("; full output:")[0]
    # vectors of any length fit; the matrix of step 12 does not, in round 1 of the interleaved
    # rounds (the capture itself stops before)
    _with_signature(run, [{"shape": [None], "dtype": "float32"}])
    assert main(["capture", "--resume", str(run), "--modes", "function,function-signature",
                 *small, "--rounds", "3"]) == 1
    manifest = runfolder.read_manifest(run)
    assert manifest["modes"]["function"]["status"] == "ok"
    entry = manifest["modes"]["function-signature"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("round 1: the input_signature did not hold: step 12 (inputs: "
                                     "ndarray float32 shape (2, 3)) raised ")


def test_a_function_workload_under_keras_2_gets_both_checks_by_their_names():
    """TF 2.12 - 2.15: the loader gives a function workload's modes the Keras 2 flavour (the
    interpreter's Keras is Keras 2), which is no part of their names: the fixes are still
    function-relaxed and function-signature, not tf_keras: ones."""
    import dataclasses
    run = retracing_run()
    m = run.modes["function"]
    old = complete(Run(None, "r", {"function": dataclasses.replace(
        m, kind=m.kind.same_but(flavour="tf_keras"))}, manifest=dict(run.manifest)))
    checks, _ = verify.plan(old, recorded={"function": RECORDED}.get)
    assert [c.fix_mode for c in checks] == ["function-relaxed", "function-signature"]


@pytest.mark.capture
def test_capture_verify_checks_the_signature_on_the_oldest_tensorflow(tmp_path):
    """TF 2.12 (Keras 2 as tf.keras: the loader gives the function modes the Keras 2 flavour)
    through --python: the same two fixes added by their names, the signature built in that
    TensorFlow from the data handed to it, traced once."""
    import importlib.util
    import os
    import sys

    from traceinsight import runfolder
    from traceinsight.cli import main
    if sys.version_info >= (3, 12):
        pytest.skip("tensorflow-cpu 2.12.1 has no wheel for this Python")
    spec = importlib.util.spec_from_file_location("make_tf_envs", ROOT / "tools" / "make_tf_envs.py")
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    python = str(tools.make_env("2.12.1", Path(os.environ.get("TRACEINSIGHT_TF_ENVS") or tools.DEFAULT_CACHE)))
    out = tmp_path / "runs"
    assert main(["capture", str(ROOT / "samples" / "retracing.py"), "--python", python,
                 "--modes", "function", "--out", str(out), "--name", "r", *SMALL, "--rounds", "2",
                 "--verify", "--verify-budget", "300"]) == 0
    manifest = runfolder.read_manifest(out / "r")
    assert manifest["environment"]["tensorflow"] == "2.12.1"
    rows = {r["fix_mode"]: r for r in manifest["verify"]["checked"]}
    assert set(rows) == {"function-relaxed", "function-signature"}
    assert manifest["modes"]["function-signature"]["details"]["traces"] == 1
    assert rows["function-signature"]["status"] == "measured"
    assert rows["function-signature"]["signature_held"] is True


def test_a_step_still_retracing_for_python_values_under_reduce_retracing_is_said_so():
    """function-relaxed retraced for new Python values (its retrace table's cause): the option
    relaxes shapes only, which the left row says instead of the generic sentence."""
    retraces = [("step", 40, 40, 300.0, 0.0, "shape", "shapes and python values", "")]
    relaxed = make_mode("function-relaxed", {"op": 1.0, "tracing": 0.5}, retraces=retraces)
    run = complete(Run(None, "r", {"function-relaxed": relaxed},
                       manifest={"workload": {"kind": "function"}}))
    _, left = verify.plan(run, recorded=lambda mode: None)
    assert [r["why"] for r in left if r["mode"] == "function-relaxed"] == [
        "reduce_retracing=True is applied and the step still retraces for new Python values, which "
        "it does not relax: pass them as tensors (tf.constant) or give an input_signature"]
    shapes = complete(Run(None, "r", {"function-relaxed": make_mode(
        "function-relaxed", {"op": 1.0, "tracing": 0.5},
        retraces=[("step", 40, 40, 300.0, 0.0, "shape", "new function object", "")])},
        manifest={"workload": {"kind": "function"}}))
    assert [r["why"] for r in verify.plan(shapes, recorded=lambda mode: None)[1]] == [
        "the mode has the fix applied already: what is left needs the workload's code changed"]
