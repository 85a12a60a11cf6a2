"""Which modes a rule compares: a mode's twin of another base, input or flavour, found by its kind
(``ModeResult.kind``), and the pairs the run's findings explain.
"""

from __future__ import annotations

from traceinsight.compare import Comparison
from traceinsight.modekind import ModeKind
from traceinsight.model import ModeResult, Run


def compare_modes(run: Run, a: ModeResult, b: ModeResult) -> Comparison:
    """The run's comparison of two of its modes (``Run.compare``: each pair computed once, while
    the run's figures are made, and kept in them)."""
    return run.compare(a.name, b.name)


def kinds_of(run: Run) -> dict[str, ModeKind]:
    """Every mode's kind (``ModeResult.kind``, set once at load), by name."""
    return {n: x.kind for n, x in run.modes.items()}


def base_of(run: Run, m: ModeResult) -> str:
    return m.kind.base


def sibling(run: Run, m: ModeResult, base: str, input: str | None = None) -> ModeResult | None:
    """The ok mode of the same flavour (and input, unless given) as ``m`` with another base."""
    k = m.kind
    want = k.same_but(base=base, input=k.input if input is None else input)
    name = next((n for n, x in kinds_of(run).items() if x == want), None)
    o = run.modes.get(name) if name is not None else None
    return o if o is not None and o.ok and len(o.step_samples_ms) else None


def tensor_twin(run: Run, m: ModeResult) -> ModeResult | None:
    """The same mode with its inputs converted to tensors once, outside the step."""
    k = m.kind
    return None if k.input != "numpy" else sibling(run, m, k.base, input="tensor")


# the bases (``ModeKind.base``, the capture's mode table) whose steps run their ops eagerly: each op
# call pays Python and dispatch, which a graph function removes
EAGER_BASES = ("eager", "train_on_batch-eager")


def modes_with_base(run: Run, *bases: str) -> list[ModeResult]:
    return [m for m in run.ok_modes() if base_of(run, m) in bases and len(m.step_samples_ms)]


# (a, b) base pairs compared by the rules: the pairs users ask about.
_PAIRS = [("eager", "function"), ("xla", "function"), ("predict", "predict_on_batch"),
          ("fit", "train_on_batch"), ("train_on_batch-eager", "train_on_batch"),
          ("train_on_batch-xla", "train_on_batch"), ("fit-dataset", "fit"),
          ("v1-session", "function")]


def compared_pairs(run: Run) -> list[tuple[ModeResult, ModeResult]]:
    """The pairs of ok modes of this run that the rules compare (incl. X vs X+tensor, Keras 2 vs 3);
    never two traces of different programs."""
    return [(a, b) for a, b in _named_pairs(run) if run.same_program(a.name, b.name)]


def _named_pairs(run: Run) -> list[tuple[ModeResult, ModeResult]]:
    out = []
    for m in run.ok_modes():
        if not len(m.step_samples_ms):
            continue
        base = base_of(run, m)
        for a, b in _PAIRS:
            if base == a:
                other = sibling(run, m, b)
                if other is not None:
                    out.append((m, other))
        t = tensor_twin(run, m)
        if t is not None:
            out.append((m, t))
        twin = keras3_twin(run, m)
        if twin is not None:
            out.append((m, twin))
    return out


def keras3_twin(run: Run, m: ModeResult) -> ModeResult | None:
    """For a tf_keras (Keras 2) or TF1 mode, the Keras 3 / TF2 mode of the same base and input
    (from the modes' kinds, ``traceinsight.modekind``)."""
    kinds = kinds_of(run)
    k = kinds.get(m.name)
    if k is None or k.flavour == "keras3":
        return None
    name = next((n for n, x in kinds.items() if x == k.same_but(flavour="keras3")), None)
    t = run.modes.get(name) if name is not None else None
    return t if t is not None and t.ok and len(t.step_samples_ms) else None


def traced_disagreements(run: Run) -> list[Comparison]:
    """Compared pairs (and each mode against the fastest, of the same program) whose traced steps
    order the two modes the other way round from their untraced medians
    (``Comparison.traced_disagrees``), each as slower against faster: what the distortion finding
    and the report's summary line both name."""
    pairs = list(compared_pairs(run))
    if run.fastest is not None:
        pairs += [(m, run.modes[run.fastest]) for m in run.by_speed()
                  if m.name != run.fastest and run.same_program(m.name, run.fastest)]
    out, seen = [], set()
    for a, b in pairs:
        key = frozenset((a.name, b.name))
        if key in seen:
            continue
        seen.add(key)
        c = compare_modes(run, a, b)
        if c.traced_disagrees:
            out.append(c if c.delta_ms > 0 else compare_modes(run, b, a))
    return out


# ---- Keras on JAX against the same Keras call on TensorFlow ------------------------------
# The finding that compares a Keras model on its JAX backend with the same model on TensorFlow.
#
# Same workload file, same data, two backends: ``jax:<mode>`` against the TF mode that runs the same
# Keras call (``predict_on_batch``, ``train_on_batch``, ``fit``; for training also the XLA-compiled
# ``train_on_batch-xla``, since Keras on JAX always compiles its steps with XLA). The finding fires
# only when the untraced medians differ measurably (the run's comparison), and explains the
# difference as the XLA-vs-function finding does: by op family (ops matched across the two backends'
# traces), by the host categories (dispatch, Python) of the traced steps, and by each side's
# first-step compile.

# a JAX mode's base -> the bases of the TF modes running the same Keras call, in order of preference
TF_PEERS = {"predict_on_batch": ("predict_on_batch",),
             "train_on_batch": ("train_on_batch", "train_on_batch-xla"),
             "fit": ("fit",)}


def peers(run: Run, m: ModeResult) -> list[ModeResult]:
    """The TF modes of the same Keras call, flavour and input as the JAX mode ``m`` (by kind)."""
    k = m.kind
    out = []
    for base in TF_PEERS.get(k.base, ()):
        want = k.same_but(base=base, backend="tensorflow")
        out += [p for p in run.ok_modes() if p.kind == want and len(p.step_samples_ms)]
    return out
