"""Findings: rules that read a Run's analysis results and say what to change, ranked by saving.

Every rule is a pure function of the Run. A rule fires only when the figures it quotes are in the
run (never on a mode name alone), and its evidence quotes those figures with the mode names they
come from. ``saving_ms`` is in ms/step; ``saving_kind`` says how it was found, and
``saving_basis`` says it in words:

* ``SavingKind.MEASURED``: the mode of the same run with the fix applied exists, and the saving is
  exactly the difference of the two modes' untraced medians (``Comparison.delta_ms``, the summary's
  medians), the figure every page shows for that pair;
* ``SavingKind.ESTIMATE``: no mode with the fix applied; derived from the category split
  (``ModeResult.category_means``) as that share of the untraced median (``in_step``), or from the
  untraced steps themselves, and the basis says how;
* ``SavingKind.UPPER_BOUND``: all of a cost the fix can remove at most.

No saving and no part of a step a finding quotes is larger than the whole untraced step (the
mode's median): a category's figure is its share of that step. Findings without a saving (no
measurable difference, profiler distortion, a one-time cost) are informational and rank last.

Advice is for the code the user wrote: where the python-tracer pass recorded frames, the rules read
which frames issued the ops and conversions (``analysis.hotspots``: the user's, Keras', TF's, the
tool's) and name the user's file and line; loop, slice and vectorize advice is given only where
the user's own code issues the ops.

The package, by concern: ``pairing`` (which modes a rule compares), ``evidence`` (how a finding
quotes its figures), ``frames`` (whose code issues a mode's ops), one module of rules per theme
(``dispatch``: eager and per-op dispatch; ``retracing``; ``inputs``: numpy inputs and tf.data;
``xla``: compile; ``keras_calls``: predict / fit / train_on_batch; ``tf1``: TF1 against TF2;
``backend``: Keras on JAX; ``steadiness``: concentrated costs, no difference, the profiler's
distortion, untraced host; ``memory``), ``registry`` (the rules and their ids) and ``ranking``.
"""

from __future__ import annotations

from traceinsight.finding import Finding
from traceinsight.findings.backend import rule_jax_backend
from traceinsight.findings.dispatch import rule_eager_dispatch_bound, rule_function_slower, rule_tiny_ops
from traceinsight.findings.evidence import fmt_ms, fmt_ratio, in_step, traced_in_step
from traceinsight.findings.inputs import rule_input_bound, rule_numpy_inputs
from traceinsight.findings.keras_calls import rule_fit_overhead, rule_predict
from traceinsight.findings.memory import rule_memory
from traceinsight.findings.pairing import compare_modes, compared_pairs, traced_disagreements, twin
from traceinsight.findings.registry import REGISTRY, RULE_IDS, RULES, find
from traceinsight.findings.retracing import retrace_cause, rule_retracing
from traceinsight.findings.steadiness import rule_concentrated, rule_distortion, rule_host_not_recorded, rule_no_difference
from traceinsight.findings.tf1 import rule_tf1_vs_tf2, tf2_fix
from traceinsight.findings.xla import rule_xla

__all__ = [
    "REGISTRY", "RULES", "RULE_IDS", "Finding", "compare_modes", "compared_pairs", "find", "fmt_ms",
    "fmt_ratio", "in_step", "retrace_cause", "rule_concentrated", "rule_distortion",
    "rule_eager_dispatch_bound", "rule_fit_overhead", "rule_function_slower",
    "rule_host_not_recorded", "rule_input_bound", "rule_jax_backend", "rule_memory",
    "rule_no_difference", "rule_numpy_inputs", "rule_predict", "rule_retracing", "rule_tf1_vs_tf2",
    "rule_tiny_ops", "rule_xla", "tf2_fix", "traced_disagreements", "traced_in_step", "twin"]
