"""A real capture of a Keras workload under the JAX backend beside its TensorFlow modes (small:
few steps, short traces). Skipped when JAX is not installed (the `jax` extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceinsight
from traceinsight.capture import modes as modes_mod
from traceinsight.cli import main

pytestmark = [pytest.mark.capture,
              pytest.mark.skipif(not modes_mod.jax_installed(),
                                 reason="JAX is not installed (pip install 'traceinsight-tf[jax]')")]

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
FAST = ["--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
        "--host-trace-ms", "500", "--host-max-steps", "6", "--no-python-tracer"]


def test_keras_model_captured_under_jax_and_tensorflow(tmp_path):
    out = tmp_path / "runs"
    assert main(["capture", str(SAMPLES / "tf2_vs_tf1_small.py"), "--modes",
                 "train_on_batch,jax:train_on_batch", "--out", str(out), "--name", "r", *FAST]) == 0
    run = traceinsight.load(out / "r", use_cache=False)
    tf_mode, jax_mode = run.modes["train_on_batch"], run.modes["jax:train_on_batch"]
    assert tf_mode.ok and jax_mode.ok
    timings = json.loads((out / "r" / "jax-train_on_batch" / "timings.json").read_text())
    assert timings["details"]["keras_backend"] == "jax"
    # the host pass holds the first step (JAX's tracing and XLA's compile) and steady steps
    assert jax_mode.step_rule.startswith("step markers 'train'")
    assert jax_mode.first_step is not None and jax_mode.first_step["compile"] > 0
    steady = jax_mode.steady_steps
    assert len(steady) >= 2 and (steady["compile"] == 0).all()
    # the step markers are the timed calls: traced step numbers are those the capture recorded
    traced = timings["traced"]["host"]["step_nums"]
    assert set(steady["step_num"]) <= set(traced)
    # untraced perf_counter steps were timed in the same process
    assert len(jax_mode.timing.steps_s) >= 5
