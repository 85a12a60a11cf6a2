"""Each findings rule on hand-made runs: it fires with its evidence, and stays silent without it."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from traceinsight.derive import complete
from traceinsight.finding import SavingKind
from traceinsight.findings import Finding, find
from traceinsight.modekind import ModeKind, from_name
from traceinsight.model import Run
from traceinsight.retracecause import RetraceCause
from traceinsight.testing import make_mode, sample_run

EAGER = {"op": 4.3, "python": 4.0, "dispatch": 1.4, "input": 0.5}
FUNC = {"op": 3.8, "python": 0.9, "dispatch": 0.2, "input": 0.3}


def run_of(*modes) -> Run:
    return complete(Run(path=None, name="t", modes={m.name: m for m in modes}))


def rules(run: Run) -> list[str]:
    return [f.rule for f in find(run)]


def only(run: Run, rule: str) -> Finding:
    hits = [f for f in find(run) if f.rule == rule]
    assert len(hits) == 1, [f.rule for f in find(run)]
    return hits[0]


def test_mode_kinds_from_names_of_older_run_folders():
    assert from_name("tf_keras:eager+tensor") == ModeKind("eager", "tensor", "tf_keras")
    assert from_name("train_on_batch-xla") == ModeKind("train_on_batch-xla", "numpy", "keras3")
    assert from_name("tf1:predict_on_batch") == ModeKind("predict_on_batch", "numpy", "tf1")
    assert from_name("fit-dataset") == ModeKind("fit-dataset", "dataset", "keras3")
    assert from_name("jax:train_on_batch") == ModeKind("train_on_batch", "numpy", "keras3", "jax")
    assert from_name("train_on_batch").backend == "tensorflow"

def test_sample_run_findings_ranked_by_saving():
    fs = find(sample_run())
    assert [f.rule for f in fs] == ["eager-dispatch-bound", "xla-slower", "numpy-inputs",
                                    "profiler-distortion"]
    assert [f.rank for f in fs] == [1, 2, 3, 4]
    savings = [f.saving_ms for f in fs if f.saving_ms is not None]
    assert savings == sorted(savings, reverse=True)
    assert fs[-1].saving_ms is None and fs[-1].severity == "info"
    for f in fs:  # evidence names its modes and quotes figures
        assert all(m in f.evidence for m in f.modes)
        assert re.search(r"\d", f.evidence)


def test_eager_dispatch_bound_saving_is_the_measured_drop():
    """With the function mode in the run (the fix applied), the saving is exactly the difference
    of the two untraced medians the summary shows, with its interval; the category split is quoted
    as an estimate within the untraced step."""
    run = sample_run()
    f = only(run, "eager-dispatch-bound")
    s = {r["mode"]: r["median_ms"] for r in run.table("summary").records()}
    assert f.saving_ms == s["eager"] - s["function"]
    assert f.saving_kind is SavingKind.MEASURED
    assert f.saving_basis == "measured: median step of eager minus function, " + \
        run.compare("eager", "function").delta_text()
    assert f.modes == ("eager", "function")
    assert "tf.function" in f.fix
    # python + dispatch are 5.4 of the 10.2 ms per-step categories (53 %): ≈ 53 % of eager's
    # 9.5 ms untraced median, never more than the step
    e = run.modes["eager"]
    c = e.category_means()
    share = (c["python"] + c["dispatch"]) / sum(c.values())
    assert f"python + dispatch ≈ {share * e.median_ms:.2f} ms of its {e.median_ms:.2f} ms step (53 %" \
        in f.evidence
    assert run.compare("eager", "function").ratio_text() in f.evidence


def test_eager_dispatch_bound_without_function_mode_is_an_estimate():
    """No function mode: the saving is python + dispatch's share of the untraced step (5.4 of
    10.2 ms per step of categories, of a 9.5 ms median), called an estimate, at most medium."""
    f = only(run_of(make_mode("eager", EAGER, untraced_ms=9.5)), "eager-dispatch-bound")
    assert f.saving_kind is SavingKind.ESTIMATE and f.saving_basis.startswith("estimate")
    assert f.saving_ms == pytest.approx(9.5 * 5.4 / 10.2, rel=0.03)
    assert f.severity == "medium"


def test_eager_dispatch_bound_silent_when_op_bound():
    run = run_of(make_mode("eager", {"op": 9.0, "python": 1.0, "dispatch": 0.5}, untraced_ms=10.5),
                 make_mode("function", {"op": 8.8, "python": 0.3}, untraced_ms=9.1))
    assert "eager-dispatch-bound" not in rules(run)


def test_eager_dispatch_bound_silent_when_function_not_faster_and_rule_8_speaks():
    run = run_of(make_mode("eager", EAGER, untraced_ms=5.0),
                 make_mode("function", FUNC, untraced_ms=5.0))
    assert "eager-dispatch-bound" not in rules(run)
    f = only(run, "no-difference")
    assert "eager ≈ function" in f.title and f.saving_ms is None
    # the interval holds 1, or the paired rounds order them differently (the ratio's note)
    assert "includes 1" in f.evidence or "order them differently" in f.evidence


def test_eager_dispatch_bound_for_train_on_batch_and_tf_keras():
    run = run_of(make_mode("tf_keras:train_on_batch-eager", EAGER, untraced_ms=9.5),
                 make_mode("tf_keras:train_on_batch", FUNC, untraced_ms=4.6))
    f = only(run, "eager-dispatch-bound")
    assert f.modes == ("tf_keras:train_on_batch-eager", "tf_keras:train_on_batch")


@pytest.mark.parametrize("cause, detail, words, fix", [
    # the retrace table's cause / cause_detail columns (data, never parsed from a sentence)
    ("shapes", "argument 1 shape changed ((32, 140, 30), (16, 140, 30))", "shapes change",
     "input_signature"),
    ("python values", "argument 2 is a Python float: 15 distinct values", "Python values",
     "tf.constant"),
    ("shapes and python values", "argument 1 shape changed ((1,), (2,)); argument 2 is a Python "
     "float: 3 distinct values", "every new shape and every new Python value", "reduce_retracing"),
    ("new function object", "tracing_count stays 1 over 15 traced calls", "per call",
     "outside the loop"),
    ("arguments changed", "tracing_count 1→15", "tracing_count 1→15", "reduce_retracing=True"),
])
def test_retracing_names_the_cause(cause, detail, words, fix):
    m = make_mode("function", FUNC, untraced_ms=20.0,
                  retraces=[("train_step", 20, 15, 300.0, 0.0, "people's words", cause, detail)])
    f = only(run_of(m), "retracing")
    assert "train_step" in f.title and "14 times" in f.title
    assert "traced 15 times in 20 calls" in f.evidence
    assert words in f.evidence and fix in f.fix and detail in f.evidence
    assert "Recorded: people's words" in f.evidence
    # 14 retraces of 300/15 = 20 ms each = 280 ms over 20 calls
    assert f.saving_ms == pytest.approx(14.0)


def test_retracing_saving_never_exceeds_the_step():
    """14 ms of retracing per call against a 5.2 ms median step (most calls untraced in the
    median's samples): the saving is capped at the step, and says so."""
    m = make_mode("function", FUNC, retraces=[("f", 20, 15, 300.0, 0.0, "", "unknown", "")])
    f = only(run_of(m), "retracing")
    assert f.saving_ms == pytest.approx(m.median_ms) and "capped" in f.saving_basis


def test_retracing_unknown_cause_lists_the_usual_ones():
    m = make_mode("function", FUNC, untraced_ms=20.0, retraces=[("f", 10, 10, 50.0, 20.0, "")])
    f = only(run_of(m), "retracing")
    assert "not recorded" in f.evidence and "loop" in f.evidence
    assert "XLA compile" in f.evidence
    assert f.saving_ms == pytest.approx((50 + 20) * 9 / 10 / 10)


def test_retracing_cause_read_back_from_the_table():
    # the table holds the members' values (the cache's JSON and the reports keep them as text);
    # a value this version never writes reads as unknown, and the finding says it is not recorded
    assert all(RetraceCause.of(c.value) is c for c in RetraceCause)
    assert RetraceCause.of("new-function") is RetraceCause.UNKNOWN
    assert RetraceCause.of(float("nan")) is RetraceCause.UNKNOWN
    m = make_mode("function", FUNC, untraced_ms=20.0,
                  retraces=[("f", 10, 10, 50.0, 20.0, "", "new-function", "stays 1")])
    assert "not recorded" in only(run_of(m), "retracing").evidence


def test_retracing_silent_with_one_trace():
    assert "retracing" not in rules(sample_run())


def test_numpy_inputs_measured_against_tensor_variant():
    run = run_of(make_mode("eager", {"op": 3.0, "python": 1.0, "input": 2.0}, untraced_ms=6.0,
                           hotspots=[("convert_to_tensor", "c.py", 1, "tensorflow", 1.0, 2.0, 3)]),
                 make_mode("eager+tensor", {"op": 3.0, "python": 1.0, "input": 0.2}, untraced_ms=4.2))
    f = only(run, "numpy-inputs")
    assert f.saving_ms == pytest.approx(1.8, abs=0.05)
    assert f.saving_basis.startswith("measured")
    b = run.modes["eager"].breakdown
    share = b.loc["input", "mean"] / b.loc["total", "mean"]   # ≈ 2.0 / 6.0, with jitter
    assert f"({share * 100:.0f} % of its categories)" in f.evidence
    assert "prefetch" in f.fix


@pytest.mark.parametrize("base, fires", [("train_on_batch", True), ("fit", False)])
def test_numpy_inputs_sees_through_keras_wrapping_each_calls_arrays(base, fires):
    """A call whose tf.data is Keras' one-batch wrapping of the arrays (an IteratorGetNext in each
    step) is no pipeline of the user's (rule 7 leaves it), so its conversions are still the
    numpy-inputs rule's, measured against the tensor variant; fit's waits on its pipeline over the
    arrays are rule 7's."""
    get_next = [("IteratorGetNext", "IteratorGetNext", "main", 1.0, 0.05)]
    run = run_of(make_mode(base, {"op": 3.0, "python": 1.0, "input": 2.0}, untraced_ms=6.0,
                           ops=get_next),
                 make_mode(f"{base}+tensor", {"op": 3.0, "python": 1.0, "input": 0.2},
                           untraced_ms=4.2, ops=get_next))
    assert ("numpy-inputs" in rules(run)) is fires


def test_numpy_inputs_silent_when_tensor_variant_is_not_faster():
    run = run_of(make_mode("eager", {"op": 3.0, "python": 1.0, "input": 2.0}, untraced_ms=6.0),
                 make_mode("eager+tensor", {"op": 3.0, "python": 1.0, "input": 2.0}, untraced_ms=6.0))
    assert "numpy-inputs" not in rules(run)


def test_numpy_inputs_silent_when_input_is_small():
    run = run_of(make_mode("eager", {"op": 9.0, "input": 0.2}, untraced_ms=9.2))
    assert "numpy-inputs" not in rules(run)


def test_xla_slower_names_ops_and_compile():
    f = only(sample_run(), "xla-slower")
    assert f.saving_ms == pytest.approx(6.216 - 4.605, abs=0.01)
    # the op family that costs the difference, both sides' ms/step: XLA's convolution.1 (3.60)
    # against the graph's _MklNativeFusedConv2D (2.40), matched by family, not by name
    assert "convolution costs most of the difference: xla 3.60 vs function 2.40 ms/step" in f.evidence
    assert f.title.endswith("mostly in convolution")
    assert "140 ms compile never pays back" in f.evidence
    assert "jit_compile=False" in f.fix


def test_xla_faster_counts_steps_to_amortize_compile():
    run = run_of(make_mode("function", {"op": 8.0, "python": 1.0}, untraced_ms=9.0),
                 make_mode("xla", {"op": 4.0, "python": 1.0}, untraced_ms=5.0,
                           first_extra={"compile": 200.0}))
    f = only(run, "xla-faster")
    gain = f.saving_ms
    assert gain == pytest.approx(4.0, abs=0.1)
    assert f"paid back after {math.ceil(200.0 / gain)} steps" in f.evidence
    assert "xla-slower" not in rules(run)


def test_xla_silent_when_no_measurable_difference():
    run = run_of(make_mode("function", FUNC, untraced_ms=5.0), make_mode("xla", FUNC, untraced_ms=5.0))
    assert not {"xla-slower", "xla-faster"} & set(rules(run))
    assert "xla ≈ function" in only(run, "no-difference").title


def test_tiny_ops_fires_on_many_small_ops_only():
    ops = [(f"op{i}", "AddV2", "main", 2, 0.01) for i in range(150)]  # 300 calls, 5 µs each
    run = run_of(make_mode("eager", {"op": 1.5, "dispatch": 3.0, "python": 2.0}, ops=ops))
    f = only(run, "tiny-ops")
    assert "300 op calls per step" in f.evidence and "5.0 µs" in f.evidence
    assert f.saving_ms == pytest.approx(3.0, abs=0.1) and f.saving_basis.startswith("estimate")
    assert "vectorized_map" in f.fix
    few = run_of(make_mode("eager", {"op": 1.5}, ops=ops[:20]))
    assert "tiny-ops" not in rules(few)
    big = run_of(make_mode("eager", {"op": 150.0}, ops=[(f"op{i}", "MatMul", "main", 2, 1.0)
                                                        for i in range(150)]))
    assert "tiny-ops" not in rules(big)


def test_predict_overhead():
    run = run_of(make_mode("predict", {"python": 8.0, "op": 2.0}, untraced_ms=10.0),
                 make_mode("predict_on_batch", {"python": 1.0, "op": 2.0}, untraced_ms=3.0))
    f = only(run, "predict-overhead")
    assert f.saving_ms == pytest.approx(7.0, abs=0.2)
    assert "predict_on_batch" in f.fix
    same = run_of(make_mode("predict", {"op": 3.0}, untraced_ms=3.0),
                  make_mode("predict_on_batch", {"op": 3.0}, untraced_ms=3.0))
    assert "predict-overhead" not in rules(same)


def test_fit_overhead_and_silence():
    run = run_of(make_mode("fit", {"python": 6.0, "op": 4.0}, untraced_ms=10.0),
                 make_mode("train_on_batch", {"python": 2.0, "op": 4.0}, untraced_ms=6.0))
    f = only(run, "fit-overhead")
    assert f.saving_ms == pytest.approx(4.0, abs=0.2)
    assert "steps_per_execution" in f.fix and "python" in f.evidence
    rev = run_of(make_mode("fit", {"op": 4.0}, untraced_ms=6.0),
                 make_mode("train_on_batch", {"op": 4.0}, untraced_ms=8.0))
    assert "fit-overhead" not in rules(rev)


def test_input_bound_dataset_training():
    f = only(run_of(make_mode("fit-dataset", {"op": 4.0, "input": 3.0, "python": 1.0})), "input-bound")
    assert "38 %" in f.evidence and "prefetch" in f.fix
    assert f.saving_ms == pytest.approx(3.0, abs=0.1)
    quiet = run_of(make_mode("fit-dataset", {"op": 8.0, "input": 0.1}))
    assert "input-bound" not in rules(quiet) and "numpy-inputs" not in rules(quiet)


@pytest.mark.parametrize("base, fires", [("fit", True), ("train_on_batch", False),
                                         ("tf_keras:train_on_batch", False),
                                         ("predict_on_batch", False), ("predict", False)])
def test_input_bound_is_not_keras_wrapping_each_calls_arrays(base, fires):
    """Keras 2's train_on_batch / predict_on_batch / predict wrap each call's arrays in a
    one-batch tf.data dataset (an IteratorGetNext in every step), so such a step "waits on tf.data"
    with no pipeline of the user's to tune (seen: tf_keras:train_on_batch on TF 2.15, 6 % input,
    told to parallelise a map it has not got); fit's pipeline over the arrays is one."""
    m = make_mode(base, {"op": 4.0, "input": 1.0, "python": 1.0},
                  ops=[("IteratorGetNext", "IteratorGetNext", "main", 1.0, 0.05)])
    assert ("input-bound" in rules(run_of(m))) is fires


def test_profiler_distortion_says_by_how_much():
    f = only(sample_run(), "profiler-distortion")
    assert f.modes == ("function",) and "+17 %" in f.evidence
    quiet = run_of(make_mode("eager", EAGER, untraced_ms=9.5, traced_ms=10.0))
    assert "profiler-distortion" not in rules(quiet)


def test_traced_steps_faster_than_untraced_are_put_down_to_the_machine():
    """The profiler only adds time. A mode whose traced steps ran 30 % faster than its untraced
    ones (others took 5 % of the CPUs while traced, 70 % untraced) gets the loads in the finding,
    the reason the difference cannot be the profiler's, a note on every page, and the report's
    caveat does not say the profiler lengthened its steps."""
    import dataclasses

    from traceinsight.report.data import report_data
    from traceinsight.report.prose import distortion_note
    m = make_mode("eager", EAGER, untraced_ms=10.0, traced_ms=7.0, rounds=1)
    t = m.timing
    load = {"timing_phase": {"other_cpu_busy": 0.70}, "traced_phase": {"other_cpu_busy": 0.05}}
    m = dataclasses.replace(m, timing=dataclasses.replace(t, rounds=None, load=load))
    assert m.timing.other_cpu_busy == 0.70 and m.timing.traced_other_cpu_busy == 0.05
    f = only(run_of(m), "profiler-distortion")
    assert re.search(r"eager [\d.]+ vs [\d.]+ ms \(-3\d %; other processes took 5 % of the "
                     r"CPUs while traced, 70 % untraced\)", f.evidence)
    assert "The profiler only adds time" in f.evidence
    doc = report_data(run_of(m))
    note = distortion_note(doc["modes"], str)
    assert "lengthened" not in note and "ran more than 15 % faster than the untraced ones" in note

    from traceinsight.analysis.timings import load_notes
    notes = load_notes(m.timing)
    assert any(n.startswith("timed on a busy machine: other processes took 70 % of the CPUs "
                            "while its untraced steps ran") for n in notes)
    assert any(n.startswith("the machine's load changed between the traced and the untraced "
                            "steps: other processes took 5 %") for n in notes)
    # a quiet machine in both phases: neither note
    quiet = dataclasses.replace(t, rounds=None, load={"timing_phase": {"other_cpu_busy": 0.04},
                                                      "traced_phase": {"other_cpu_busy": 0.02}})
    assert load_notes(quiet) == ()
    # busy alike in both phases (69 % traced, 66 % untraced): busy, but the load did not change
    busy = dataclasses.replace(t, rounds=None, load={"timing_phase": {"other_cpu_busy": 0.66},
                                                     "traced_phase": {"other_cpu_busy": 0.69}})
    assert [n.split(":")[0] for n in load_notes(busy)] == ["timed on a busy machine"]


def test_a_scripts_mode_is_known_by_its_trace_never_by_its_label():
    """``run --mode function`` on an eager loop: the label is the user's. Its kind is the script's
    (no axes from the name), and what its trace shows decides: dispatch in its steps and no
    tf.function call is an eager step (compile it with tf.function, the script's fix); the same
    figures with the step's tf.function calls in the trace are not."""
    import dataclasses

    import pandas as pd

    from traceinsight.modekind import SCRIPT, mode_kind
    assert mode_kind("function", {"command": "python train.py"}) == SCRIPT
    assert mode_kind("function", {"command": "x", "kind": SCRIPT.to_dict()}).axes() is None
    assert mode_kind("function", {}).axes() is not None     # a capture's mode: its name is its kind
    eager_ops = [("MatMul", "MatMul", "main", 20, 2.5), ("AddV2", "AddV2", "main", 60, 1.8)]
    eager_loop = dataclasses.replace(make_mode("function", EAGER, ops=eager_ops), kind=SCRIPT)
    f = only(run_of(eager_loop), "eager-dispatch-bound")
    assert f.modes == ("function",) and "@tf.function" in f.fix and "model.compile" not in f.fix
    retraces = pd.DataFrame([("train_step", 20, 1, 0.0, 0.0, "", "", "")],
                            columns=["function", "calls", "traced_calls", "tracing_ms", "compile_ms",
                                     "changes", "cause", "cause_detail"])
    graph_step = dataclasses.replace(eager_loop, retraces=retraces)
    assert "eager-dispatch-bound" not in rules(run_of(graph_step))
    # ... or its ops on the runtime's threads (a graph run by a TF1 session, a foreign graph)
    worker_ops = [(o, t, "tf_Compute", c, ms) for o, t, _, c, ms in eager_ops]
    graph_run = dataclasses.replace(make_mode("function", EAGER, ops=worker_ops), kind=SCRIPT)
    assert "eager-dispatch-bound" not in rules(run_of(graph_run))


def test_xla_compile_unrecorded_is_the_two_first_calls_difference():
    """TF before 2.18 writes no compile events: the XLA mode's first step has no compile time.
    What XLA's compilation costs once is then its first call beyond the graph mode's (both
    timed by the capture): 3 + 300 vs 4 + 40 ms here, 259 ms, paid back after 259 / 1 steps."""
    f = make_mode("function", {"op": 4.0}, first_extra={"tracing": 40.0})
    x = make_mode("xla", {"op": 3.0}, first_extra={"op": 300.0}, untraced_ms=3.0)
    found = only(run_of(f, x), "xla-faster")
    expected = (x.timing.first_step_s - f.timing.first_step_s) * 1e3
    assert expected == pytest.approx(259.0)
    assert (f"Its first call, {expected:.0f} ms longer than function's" in found.evidence
            and "the trace records no compile events" in found.evidence)
    gain = found.saving_ms
    assert f"is paid back after {math.ceil(expected / gain)} steps" in found.evidence
    # with compile recorded in the first step, that figure is used as before
    x2 = make_mode("xla", {"op": 3.0}, first_extra={"compile": 120.0}, untraced_ms=3.0)
    assert "Its 120 ms compile is paid back" in only(run_of(f, x2), "xla-faster").evidence


def test_failed_and_empty_modes_never_fire():
    from traceinsight.model import ModeResult
    run = run_of(ModeResult(name="eager", status="failed", error="boom"),
                 ModeResult(name="function", status="ok"))
    assert find(run) == []


def test_finding_to_dict_is_json_ready():
    import json
    d = find(sample_run())[0].to_dict()
    assert json.loads(json.dumps(d))["modes"] == ["eager", "function"]


def test_retracing_cause_from_a_real_trace():
    """The committed retracing run: tracing_count climbs 1→25, so one function object retraced
    (the analysis records the cause as data; the finding words it)."""
    from pathlib import Path

    from traceinsight.analysis.load import load_run
    run = load_run(Path(__file__).parent / "data" / "runs" / "retracing")
    row = run.modes["function"].retraces.iloc[0]
    assert (row["cause"], row["cause_detail"]) == ("arguments changed", "tracing_count 1→25")
    assert RetraceCause.of(row["cause"]) is RetraceCause.ARGUMENTS_CHANGED
    f = only(run, "retracing")
    assert "one tf.function object retraced (tracing_count 1→25)" in f.evidence
    assert "reduce_retracing=True" in f.fix


def test_numpy_inputs_is_one_finding_for_the_run():
    run = run_of(make_mode("eager", {"op": 3.0, "python": 1.0, "input": 2.0}),
                 make_mode("function", {"op": 3.0, "input": 0.5}))
    f = only(run, "numpy-inputs")
    assert f.modes == ("eager", "function") and f.title.startswith("eager converts")
    assert "Also: function ≈ 0.50 ms/step (upper bound)" in f.evidence
    e = run.modes["eager"]
    c = e.category_means()
    assert f.saving_ms == pytest.approx(c["input"] / sum(c.values()) * e.median_ms)


def test_distortion_counts_traced_steps_faster_too():
    f = only(run_of(make_mode("xla", {"op": 3.0}, untraced_ms=8.0, traced_ms=3.0)),
             "profiler-distortion")
    assert f.title.startswith("Traced steps differ") and "(-62 %)" in f.evidence


def test_eager_slower_for_other_reasons_still_points_to_tf_function():
    # eager's gap is op time (e.g. slower eager kernels), not python + dispatch
    run = run_of(make_mode("eager", {"op": 16.8, "input": 5.8, "python": 4.6, "dispatch": 3.8},
                           untraced_ms=22.0),
                 make_mode("function", {"op": 2.0, "dispatch": 0.2}, untraced_ms=2.6))
    f = only(run, "eager-slower")
    assert "eager-dispatch-bound" not in rules(run)
    assert f.saving_ms == pytest.approx(22.0 - 2.6, abs=0.3)
    # the untraced step's categories (the traced split scaled to each median, this hand-made run
    # recording no calibration): eager's op 16.8 of 31.0 ms at 22.0 ms (11.9) minus function's
    # 2.0 of 2.2 ms at 2.6 ms (2.4)
    assert re.search(r"op \+9\.\d", f.evidence) and "(27 % of its categories)" in f.evidence
    assert f.title.startswith("eager is 8.") and "tf.function" in f.fix


def test_train_on_batch_slower_than_fit():
    run = run_of(make_mode("fit", {"python": 1.0, "op": 2.5}, untraced_ms=3.5),
                 make_mode("train_on_batch", {"python": 3.0, "op": 3.8}, untraced_ms=6.8))
    f = only(run, "train-on-batch-overhead")
    assert f.modes == ("train_on_batch", "fit") and f.saving_ms == pytest.approx(3.3, abs=0.2)
    assert "model.fit(" in f.fix and "fit-overhead" not in rules(run)


def test_tiny_ops_fix_fits_the_mode():
    ops = [(f"op{i}", "AddV2", "worker", 2, 0.01) for i in range(150)]
    graph = only(run_of(make_mode("function", {"op": 1.5, "dispatch": 0.3}, ops=ops)), "tiny-ops")
    assert "jit_compile=True" in graph.fix
    eager = only(run_of(make_mode("eager", {"op": 1.5, "dispatch": 3.0}, ops=ops)), "tiny-ops")
    assert "tf.function(step_fn)" in eager.fix and "jit_compile" not in eager.fix
    # the kind's base decides, equal to an eager base of the capture's table, never a part of a
    # name: a foreign session named "eager_run" is not known to run eagerly
    odd = make_mode("eager_run", {"op": 1.5, "dispatch": 0.3}, ops=ops)
    assert odd.kind == from_name("eager_run") and odd.kind.base == "eager_run"
    assert "jit_compile=True" in only(run_of(odd), "tiny-ops").fix
    tob = make_mode("tf_keras:train_on_batch-eager", {"op": 1.5, "dispatch": 3.0}, ops=ops)
    assert tob.kind.base == "train_on_batch-eager" and "tiny-ops" not in rules(run_of(tob))


def test_eager_dispatch_saving_is_the_measured_step_difference_not_the_categories():
    # traced categories say 8 ms of python + dispatch, untraced steps differ by 2 ms only: the
    # saving is the measured difference, the categories an estimate within the 5 ms step
    run = run_of(make_mode("eager", {"op": 2.0, "python": 6.0, "dispatch": 2.0}, untraced_ms=5.0),
                 make_mode("function", {"op": 2.0, "python": 0.5}, untraced_ms=3.0))
    f = only(run, "eager-dispatch-bound")
    assert f.saving_ms == run.compare("eager", "function").delta_ms
    assert f.saving_ms == pytest.approx(2.0, abs=0.1)
    e = run.modes["eager"]
    assert f"python + dispatch ≈ {0.8 * e.median_ms:.2f} ms of its {e.median_ms:.2f} ms step (80 %" \
        in f.evidence


def test_tiny_ops_skip_keras_own_step_functions_seen_in_the_trace_whatever_the_mode_name():
    """A foreign trace named ``train`` whose steps call Keras' own train function: its many small
    graph ops are Keras', not the user's to vectorize; the same ops called from the user's own
    tf.function are."""
    ops = [(f"op{i}", "AddV2", "worker", 2, 0.01) for i in range(150)]
    for fn in ("__inference_multi_step_on_iterator_262", "__inference_train_function_1234"):
        keras = make_mode("train", {"op": 1.5, "dispatch": 0.3},
                          ops=ops + [(fn, "tf.function", "main", 1, 1.5)])
        assert "tiny-ops" not in rules(run_of(keras))
    own = make_mode("train", {"op": 1.5, "dispatch": 0.3},
                    ops=ops + [("__inference_step_12", "tf.function", "main", 1, 1.5)])
    assert "tiny-ops" in rules(run_of(own))


def test_no_fix_contradicts_another():
    """XLA measured slower (its finding says jit_compile=False): no other finding's fix may say
    jit_compile=True."""
    ops = [(f"op{i}", "AddV2", "worker", 2, 0.01) for i in range(150)]
    run = run_of(make_mode("function", {"op": 1.5, "dispatch": 0.3}, ops=ops, untraced_ms=2.0),
                 make_mode("xla", {"op": 3.0, "dispatch": 0.3}, untraced_ms=4.0))
    found = find(run)
    assert any("jit_compile=False" in f.fix for f in found if f.rule == "xla-slower")
    tiny = next(f for f in found if f.rule == "tiny-ops")
    assert not any("jit_compile=True" in f.fix for f in found)
    assert "XLA left out: it was measured slower" in tiny.fix
    # decided on the changes the fixes recommend, as the rules tagged them
    from traceinsight.finding import Change
    assert [f.rule for f in found if f.recommends(Change.XLA_OFF)] == ["xla-slower"]
    assert not any(f.recommends(Change.XLA_ON) for f in found)
    alone = find(run_of(make_mode("function", {"op": 1.5, "dispatch": 0.3}, ops=ops, untraced_ms=2.0)))
    assert next(f for f in alone if f.rule == "tiny-ops").recommends(Change.XLA_ON)


def test_a_saving_without_the_fix_applied_is_an_estimate_and_never_high():
    """eager's conversions, with no eager+tensor mode to measure passing tensors against: the
    saving is called an estimate, and an estimate is at most medium however large its share; with
    the +tensor mode, the measured difference with its interval."""
    e = make_mode("eager", {"op": 1.0, "input": 2.0}, untraced_ms=3.0)
    f = only(run_of(e), "numpy-inputs")
    # no python pass says whose conversions these are: all of them, an upper bound
    assert f.saving_kind is SavingKind.UPPER_BOUND and f.severity == "medium"
    assert f.saving_ms == pytest.approx(2.0, rel=0.05)
    t = make_mode("eager+tensor", {"op": 1.0, "input": 0.1}, untraced_ms=1.1)
    run = run_of(e, t)
    f = only(run, "numpy-inputs")
    c = run.compare("eager", "eager+tensor")
    assert f.saving_ms == pytest.approx(c.delta_ms) and f.severity == "high"
    assert f.saving_basis.endswith(c.delta_text()) and c.delta_lo < c.delta_ms < c.delta_hi


def test_tf1_against_its_tf2_twin_is_a_finding_with_its_cause():
    """tf1:predict_on_batch (TF1 graph, Session) 1.05 ms against predict_on_batch (TF2) 2.0 ms:
    paired by the modes' kinds (base and input the same, flavour tf1 vs keras3), with the
    difference and where it lies."""
    tf1 = make_mode("tf1:predict_on_batch", {"op": 0.8, "python": 0.25}, untraced_ms=1.05)
    tf2 = make_mode("predict_on_batch", {"op": 0.8, "python": 0.7, "dispatch": 0.5},
                    untraced_ms=2.0)
    run = run_of(tf2, tf1)
    f = only(run, "tf1-vs-tf2")
    c = run.compare("predict_on_batch", "tf1:predict_on_batch")
    assert f.modes == ("predict_on_batch", "tf1:predict_on_batch")
    assert f.saving_ms == pytest.approx(c.delta_ms) and "TF1 graph" in f.title
    assert "python +" in f.evidence and "dispatch +" in f.evidence
    # run.json's kinds decide, not the names: a mode named oddly but recorded as the TF2 twin
    odd = make_mode("pob-v2", {"op": 0.8, "python": 0.7, "dispatch": 0.5}, untraced_ms=2.0)
    run = complete(Run(path=None, name="r", modes={"pob-v2": odd, "tf1:predict_on_batch": tf1}))
    assert "tf1-vs-tf2" not in rules(run)
    odd = odd.replace(kind=ModeKind("predict_on_batch", "numpy", "keras3"))
    run = complete(Run(path=None, name="r", modes={"pob-v2": odd, "tf1:predict_on_batch": tf1}))
    assert "tf1-vs-tf2" in rules(run)


def test_the_loader_sets_each_modes_kind_from_run_json(tmp_path):
    """run.json's kind (what the capture ran) is the mode's kind, also when the analysis comes
    from the cache; a mode run.json records no kind for (an older folder) has it from its name."""
    import json
    import shutil

    import traceinsight
    run_dir = tmp_path / "conv1d"
    shutil.copytree(Path(__file__).parent / "data" / "runs" / "conv1d", run_dir,
                    ignore=shutil.ignore_patterns(".traceinsight"))
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["modes"]["eager"]["kind"] = {"base": "eager", "input": "tensor", "flavour": "tf_keras"}
    (run_dir / "run.json").write_text(json.dumps(manifest))
    for _ in range(2):    # analysed, then read from the cache
        run = traceinsight.load(run_dir)
        assert run.modes["eager"].kind == ModeKind("eager", "tensor", "tf_keras")
        assert run.modes["xla"].kind == from_name("xla") == ModeKind("xla", "numpy", "keras3")
    assert list((run_dir / ".traceinsight").rglob("*.json"))


def test_a_new_mode_is_paired_by_its_row_of_the_mode_table(monkeypatch):
    """The rules pair modes by their axes, never by name: a base added to the mode table (here an
    XLA-compiled predict(), as one row) is compared with the graph mode of its call (same call,
    different compile) and its XLA finding speaks, with no rule naming it."""
    from traceinsight import modekind
    from traceinsight.findings import compared_pairs
    row = modekind.Base("predict-xla", modekind.XLA, modekind.PREDICT, "predict() with jit_compile=True")
    monkeypatch.setitem(modekind.BASES, row.name, row)
    slow = make_mode("predict-xla", {"op": 3.0, "python": 0.2}, untraced_ms=3.2)
    fast = make_mode("predict", {"op": 1.0, "python": 0.2}, untraced_ms=1.2)
    run = run_of(fast, slow)
    assert slow.kind.compile == modekind.XLA and slow.kind.call == modekind.PREDICT
    assert [(a.name, b.name) for a, b in compared_pairs(run)] == [("predict-xla", "predict")]
    assert only(run, "xla-slower").modes == ("predict-xla", "predict")


def test_a_tf_data_mode_is_compared_with_the_same_call_on_numpy():
    """Same call and compile, different input: fit on a tf.data pipeline against fit on numpy
    arrays (the old table named this pair, but looked for a fit mode with tf.data input, which
    no capture makes, so it never compared them)."""
    from traceinsight.findings import compared_pairs
    ds = make_mode("fit-dataset", {"op": 1.0, "input": 0.1}, untraced_ms=1.1)
    fit = make_mode("fit", {"op": 1.0, "input": 0.1}, untraced_ms=1.1)
    run = run_of(fit, ds)
    assert ds.kind.input == "dataset" and ds.kind.call == fit.kind.call
    assert [(a.name, b.name) for a, b in compared_pairs(run)] == [("fit-dataset", "fit")]
    assert "fit-dataset ≈ fit" in only(run, "no-difference").title
