"""Keras on JAX against the same Keras call on TensorFlow.

Same workload file, same data, two backends: ``jax:<mode>`` against the TF mode that runs the same
Keras call (``predict_on_batch``, ``train_on_batch``, ``fit``; for training also the XLA-compiled
``train_on_batch-xla``, since Keras on JAX always compiles its steps with XLA). The finding fires
only when the untraced medians differ measurably (the run's comparison), and explains the
difference as the XLA-vs-function finding does: by op family (ops matched across the two backends'
traces), by the host categories (dispatch, Python) of the traced steps, and by each side's
first-step compile.
"""

from __future__ import annotations

from typing import Iterable

from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import pairing
from traceinsight.model import ModeResult, Run


def _host_split(m: ModeResult) -> str:
    """op, dispatch and python as estimates within the mode's untraced step (``evidence.in_step``)."""
    parts = [(c, ev.est(m, c)) for c in ("op", "dispatch", "python")]
    return ", ".join(f"{c} ≈ {ev.fmt_ms(v)}" for c, v in parts if ev.finite(v))


def rule_jax_backend(run: Run) -> Iterable[Finding]:
    for j in run.ok_modes():
        if j.kind.backend != "jax" or not len(j.step_samples_ms):
            continue
        for t in pairing.tensorflow_peers(run, j):
            c = pairing.compare_modes(run, j, t)
            if not c.significant:
                continue
            slower = c.delta_ms > 0
            if slower != (c.ratio > 1):
                # the medians of all steps and the ratio's interval (paired rounds) point opposite
                # ways: no direction to explain
                continue
            fam = None if c.traced_disagrees else c.top_family(slower)
            fam = fam if ev.family_dominates(c, fam) else None
            jc, tc = ev.first_compile_ms(j), ev.first_compile_ms(t)
            evidence = ev.vs(c) + ", untraced."
            if not c.traced_disagrees:
                evidence += (f" By category (their share of each untraced step): {j.name} "
                             f"{_host_split(j)}; {t.name} {_host_split(t)} ms/step."
                             + ev.family_evidence(c, slower=slower))
            else:
                evidence += f" Caveat: {c.caveat()}."
            compile_bits = [f"{m.name} {ev.fmt_ms(v)} ms" for m, v in ((j, jc), (t, tc))
                            if ev.finite(v) and v > 0]
            if compile_bits:
                evidence += " First-step compile: " + ", ".join(compile_bits) + "."
            faster, slow_m = (t, j) if slower else (j, t)
            yield Finding(
                rule="jax-backend-slower" if slower else "jax-backend-faster",
                title=(f"{j.name} (Keras on JAX) is {'slower' if slower else 'faster'} per step "
                       f"than {t.name} (TensorFlow)"
                       + (f", mostly in {fam.family}" if fam is not None else "")),
                evidence=evidence, saving_ms=abs(c.delta_ms),
                saving_basis=f"measured: median step of {slow_m.name} minus {faster.name}",
                saving_kind=SavingKind.MEASURED,
                modes=(slow_m.name, faster.name),
                fix=("import os; os.environ['KERAS_BACKEND'] = "
                     f"{'tensorflow' if slower else 'jax'!r}  # before `import keras`"))
