"""The finding that compares a Keras model on its JAX backend with the same model on TensorFlow.

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

from traceinsight.findings import (
    Finding,
    _cat,
    _family_dominates,
    _family_evidence,
    _finite,
    _first_compile_ms,
    _kind,
    _modes_with_base,
    _vs,
    compare_modes,
    fmt_ms,
)
from traceinsight.model import ModeResult, Run

# a JAX mode's base -> the bases of the TF modes running the same Keras call, in order of preference
_TF_PEERS = {"predict_on_batch": ("predict_on_batch",),
             "train_on_batch": ("train_on_batch", "train_on_batch-xla"),
             "fit": ("fit",)}


def _peers(run: Run, m: ModeResult) -> list[ModeResult]:
    """The TF modes of the same Keras call, flavour and input as the JAX mode ``m`` (by kind)."""
    k = _kind(run, m)
    out = []
    for base in _TF_PEERS.get(k.base, ()):
        want = k.same_but(base=base, backend="tensorflow")
        out += [p for p in run.ok_modes() if _kind(run, p) == want and len(p.step_samples_ms)]
    return out


def _host_split(m: ModeResult) -> str:
    parts = [(c, _cat(m, c)) for c in ("op", "dispatch", "python")]
    return ", ".join(f"{c} {fmt_ms(v)}" for c, v in parts if _finite(v))


def rule_jax_backend(run: Run) -> Iterable[Finding]:
    for j in _modes_with_base(run, *_TF_PEERS):
        if _kind(run, j).backend != "jax":
            continue
        for t in _peers(run, j):
            c = compare_modes(run, j, t)
            if not c.significant:
                continue
            slower = c.delta_ms > 0
            if slower != (c.ratio > 1):
                # the medians of all steps and the ratio's interval (paired rounds) point opposite
                # ways: no direction to explain
                continue
            fam = None if c.traced_disagrees else c.top_family(slower)
            fam = fam if _family_dominates(c, fam) else None
            jc, tc = _first_compile_ms(j), _first_compile_ms(t)
            evidence = _vs(c) + ", untraced."
            if not c.traced_disagrees:
                evidence += (f" Traced steps: {j.name} {_host_split(j)}; {t.name} {_host_split(t)} "
                             "ms/step." + _family_evidence(c, slower=slower))
            else:
                evidence += f" Caveat: {c.caveat()}."
            compile_bits = [f"{m.name} {fmt_ms(v)} ms" for m, v in ((j, jc), (t, tc))
                            if _finite(v) and v > 0]
            if compile_bits:
                evidence += " First-step compile: " + ", ".join(compile_bits) + "."
            faster, slow_m = (t, j) if slower else (j, t)
            yield Finding(
                rule="jax-backend-slower" if slower else "jax-backend-faster",
                title=(f"{j.name} (Keras on JAX) is {'slower' if slower else 'faster'} per step "
                       f"than {t.name} (TensorFlow)"
                       + (f", mostly in {fam['family']}" if fam is not None else "")),
                evidence=evidence, saving_ms=abs(c.delta_ms),
                saving_basis=f"measured: median step of {slow_m.name} minus {faster.name}",
                modes=(slow_m.name, faster.name),
                fix=("import os; os.environ['KERAS_BACKEND'] = "
                     f"{'tensorflow' if slower else 'jax'!r}  # before `import keras`"))
