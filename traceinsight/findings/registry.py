"""The registry of rules: one row per rule function, with the rule ids its findings carry.

Adding a finding is one ``rule_*`` function in the theme module it belongs to
(``traceinsight/findings/<theme>.py``) and one row here. ``RULE_IDS`` is read from these rows;
the JSON report's schema lists the same ids (``schemas/report.schema.json``, the finding's
``rule``) so that a consumer can rely on them, and tests/test_finding_rules.py checks that the
schema, these rows and every ``rule=`` of the package agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from traceinsight.finding import Finding
from traceinsight.findings import (
    backend,
    dispatch,
    inputs,
    keras_calls,
    layers,
    memory,
    ranking,
    retracing,
    steadiness,
    tf1,
    xla,
)
from traceinsight.runview import RunView


@dataclass(frozen=True)
class Rule:
    """A rule of the registry: its function and the finding ids it can give."""

    function: Callable[[RunView], Iterable[Finding]]
    ids: tuple[str, ...]      # every ``Finding.rule`` the function can give


REGISTRY: tuple[Rule, ...] = (
    Rule(dispatch.rule_eager_dispatch_bound, ("eager-dispatch-bound", "eager-slower")),
    Rule(dispatch.rule_function_slower, ("function-slower",)),
    Rule(retracing.rule_retracing, ("retracing",)),
    Rule(inputs.rule_numpy_inputs, ("numpy-inputs",)),
    Rule(xla.rule_xla, ("xla-slower", "xla-faster")),
    Rule(dispatch.rule_tiny_ops, ("tiny-ops",)),
    Rule(keras_calls.rule_predict, ("predict-overhead",)),
    Rule(keras_calls.rule_fit_overhead, ("fit-overhead", "train-on-batch-overhead")),
    Rule(inputs.rule_input_bound, ("input-bound",)),
    Rule(steadiness.rule_concentrated, ("concentrated-cost",)),
    Rule(tf1.rule_tf1_vs_tf2, ("tf1-vs-tf2",)),
    Rule(backend.rule_jax_backend, ("jax-backend-slower", "jax-backend-faster")),
    Rule(steadiness.rule_no_difference, ("no-difference",)),
    Rule(steadiness.rule_distortion, ("profiler-distortion",)),
    Rule(steadiness.rule_host_not_recorded, ("host-not-recorded",)),
    Rule(memory.rule_memory, ("memory",)),
    Rule(layers.rule_layer_explains, ("layer-explains",)),
)

# Every rule id a finding can carry (``Finding.rule``): the one list of them.
RULE_IDS: tuple[str, ...] = tuple(i for r in REGISTRY for i in r.ids)
RULES: tuple[Callable[[RunView], Iterable[Finding]], ...] = tuple(r.function for r in REGISTRY)


def find(run: RunView) -> list[Finding]:
    """All findings of a run, ranked: the largest estimated saving first, informational last.
    Pure: called once per run, by ``traceinsight.derive`` while the run's figures are made."""
    return ranking.rank([f for rule in RULES for f in rule(run)], run)
