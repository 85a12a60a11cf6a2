"""The Keras-on-JAX vs TensorFlow finding on hand-made runs: it explains a measured difference by op
family and first-step compile, and stays silent without a measurable one."""

from __future__ import annotations

from unittest import mock

import pytest

from traceinsight.derive import complete
from traceinsight.findings import find
from traceinsight.model import Run
from traceinsight.testing import make_mode


def run_of(*modes) -> Run:
    return complete(Run(path=None, name="t", modes={m.name: m for m in modes}))


def test_jax_faster_by_op_family_and_compile():
    tf_mode = make_mode("train_on_batch", {"op": 6.0, "dispatch": 0.7, "python": 0.4}, untraced_ms=7.1,
                        ops=[("functional_1/conv1d_1/convolution", "_MklNativeFusedConv2D", "worker",
                              2, 4.0), ("Adam/update", "ResourceApplyAdam", "worker", 8, 1.0)])
    jax_mode = make_mode("jax:train_on_batch", {"op": 2.6, "dispatch": 0.4, "python": 0.5},
                         untraced_ms=3.5, first_extra={"compile": 2900.0, "tracing": 170.0},
                         ops=[("conv_general_dilated.5", "conv_general_dilated", "worker", 2, 1.2),
                              ("multiply_divide_fusion", "fusion", "worker", 1, 0.3)])
    hits = [f for f in find(run_of(tf_mode, jax_mode)) if f.rule.startswith("jax-backend")]
    assert len(hits) == 1
    f = hits[0]
    assert f.rule == "jax-backend-faster"
    assert f.title == ("jax:train_on_batch (Keras on JAX) is faster per step than train_on_batch "
                       "(TensorFlow), mostly in convolution")
    assert f.saving_ms == pytest.approx(7.1 - 3.5, abs=0.05)
    # convolution matched by family across the backends: TF's fused graph op vs XLA's HLO op
    assert "convolution costs most of the difference: jax:train_on_batch 1.20 vs train_on_batch 4.00" \
        in f.evidence
    assert "First-step compile: jax:train_on_batch 2900 ms." in f.evidence
    assert "KERAS_BACKEND" in f.fix and "'jax'" in f.fix
    assert f.modes == ("train_on_batch", "jax:train_on_batch")


def test_jax_backend_silent_without_a_measurable_difference():
    a = make_mode("predict_on_batch", {"op": 1.0, "python": 0.2}, untraced_ms=1.2)
    b = make_mode("jax:predict_on_batch", {"op": 1.0, "python": 0.2}, untraced_ms=1.2)
    assert not [f for f in find(run_of(a, b)) if f.rule.startswith("jax-backend")]


def test_jax_backend_needs_the_same_keras_call_on_tensorflow():
    a = make_mode("eager", {"op": 9.0, "python": 3.0}, untraced_ms=12.0)
    b = make_mode("jax:predict_on_batch", {"op": 1.0, "python": 0.2}, untraced_ms=1.2)
    assert not [f for f in find(run_of(a, b)) if f.rule.startswith("jax-backend")]


def test_jax_backend_silent_when_medians_and_ratio_disagree():
    """Paired rounds can give a ratio whose interval excludes 1 on one side while the medians of
    all steps lie the other way: the finding then names no direction."""
    from dataclasses import replace

    from traceinsight.findings import rule_jax_backend
    tf_mode = make_mode("train_on_batch", {"op": 3.0}, untraced_ms=3.84)
    jax_mode = make_mode("jax:train_on_batch", {"op": 3.0}, untraced_ms=3.94)
    run = run_of(tf_mode, jax_mode)
    c = run.compare("jax:train_on_batch", "train_on_batch")
    flipped = replace(c, ratio=0.78, ratio_lo=0.70, ratio_hi=0.86, significant=True)
    assert flipped.significant and flipped.delta_ms > 0
    with mock.patch("traceinsight.findings.pairing.compare_modes", lambda run, a, b: flipped):
        assert not list(rule_jax_backend(run))
