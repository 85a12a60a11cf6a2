"""Which modes a rule compares, found by their axes (``ModeKind.axes``: compile, call, input,
TF1/TF2, Keras, backend), never by their names:

* **same call, different compile**: an eager or XLA mode against the graph mode of the same call
  (``model(x)`` eager against ``tf.function(model)``, ``train_on_batch`` with ``run_eagerly``
  against the plain one, XLA against no XLA);
* **same compile, a cheaper call of the same work**: ``modekind.CHEAPER_CALLS`` (predict against
  predict_on_batch, a batch inside fit() against train_on_batch);
* **same call and compile, different input**: numpy arrays against tensors made once, a tf.data
  pipeline against numpy arrays;
* **same workload, TF1 or Keras 2 against TF2 with Keras 3** (``modekind.TF2_TWIN``, what the factor
  table's TF1-vs-TF2 gaps compare too);
* **same call, the other backend**: Keras on JAX against the compiled TensorFlow modes.

A new mode is paired by its row of the mode table: nothing here names a mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from traceinsight.findings import frames
from traceinsight.modekind import CALL, CHEAPER_CALLS, EAGER, GRAPH, TF2_SAME_KERAS, TF2_TWIN, XLA
from traceinsight.model import ModeResult
from traceinsight.runview import RunView

if TYPE_CHECKING:
    from traceinsight.compare import Comparison  # (a type: start-up time)


def compare_modes(run: RunView, a: ModeResult, b: ModeResult) -> Comparison:
    """The comparison of two of the run's modes a rule was handed (``RunView.compare``: computed
    before the rules, for the pairs ``pairs_compared`` names, and kept in the run's figures)."""
    return run.compare(a.name, b.name)


def _usable(m: ModeResult) -> bool:
    return m.ok and bool(len(m.step_samples_ms))


def twin(run: RunView, m: ModeResult, **changes: str) -> ModeResult | None:
    """The run's usable mode (ok, with steps) whose axes are ``m``'s with ``changes``
    (``Axes.moved``), or None. A mode without axes (a foreign trace's name) has only its tensor
    twin: the same kind with tensor inputs."""
    ax = m.kind.axes()
    if ax is None:
        if set(changes) != {"input"}:
            return None
        want_kind = m.kind.same_but(input=changes["input"])
        return next((o for o in run.modes.values() if o.kind == want_kind and _usable(o)), None)
    want = ax.moved(**changes)
    if want == ax:
        return None
    return next((o for o in run.modes.values() if o.kind.axes() == want and _usable(o)), None)


def compiled(m: ModeResult) -> str | None:
    """The mode's compile axis (EAGER, GRAPH, XLA; None: unknown). A mode whose kind says nothing
    of it (a script's own mode, a foreign trace's) is EAGER when its trace shows an eager step
    (``frames.runs_eagerly``); its other axes stay unknown, so it has no twins."""
    ax = m.kind.axes()
    if ax is not None:
        return ax.compile
    return EAGER if frames.runs_eagerly(m) else None


def modes_compiled(run: RunView, compile: str) -> list[ModeResult]:
    """The run's usable modes of one compile axis, in run order."""
    return [m for m in run.ok_modes() if _usable(m) and compiled(m) == compile]


def modes_calling(run: RunView, call: str) -> list[ModeResult]:
    """The run's usable modes whose step is called this way (``modekind.CALLS``), in run order."""
    return [m for m in run.ok_modes() if _usable(m) and m.kind.axes() is not None
            and m.kind.call == call]


def graph_twin(run: RunView, m: ModeResult) -> ModeResult | None:
    """Same call, different compile: the graph mode of ``m``'s call (for an eager or XLA mode)."""
    return twin(run, m, compile=GRAPH) if compiled(m) in (EAGER, XLA) else None


def eager_twin(run: RunView, m: ModeResult) -> ModeResult | None:
    """Same call, different compile: the eager mode of ``m``'s call."""
    return twin(run, m, compile=EAGER) if compiled(m) != EAGER else None


def cheaper_calls(run: RunView, m: ModeResult) -> list[ModeResult]:
    """The modes of the same work done with less per-call machinery (``modekind.CHEAPER_CALLS``),
    in the table's order."""
    found = [twin(run, m, call=c, compile=k) for c, k in CHEAPER_CALLS.get(m.kind.call or "", ())]
    return [o for o in found if o is not None]


def reference_call(run: RunView, m: ModeResult) -> ModeResult | None:
    """The first of ``cheaper_calls``' table for ``m``'s call: the pair it is compared in."""
    first = CHEAPER_CALLS.get(m.kind.call or "", ())[:1]
    return next((twin(run, m, call=c, compile=k) for c, k in first), None)


def tensor_twin(run: RunView, m: ModeResult) -> ModeResult | None:
    """Same call and compile, different input: the mode with its numpy inputs converted to tensors
    once, outside the step."""
    return None if m.kind.input != "numpy" else twin(run, m, input="tensor")


def numpy_twin(run: RunView, m: ModeResult) -> ModeResult | None:
    """Same call and compile, different input: for a mode fed by a tf.data pipeline, the mode fed
    the same batches as numpy arrays."""
    return twin(run, m, input="numpy") if m.kind.input == "dataset" else None


def tf2_twin(run: RunView, m: ModeResult) -> ModeResult | None:
    """Same workload, call, compile and input: for a TF1 or Keras 2 mode, its twin on TF2 with
    Keras 3 (``modekind.TF2_TWIN``); where the run has none (TensorFlow 2.12 - 2.15 bring Keras 2
    only), a TF1 mode's twin on TF2 with the same Keras (``modekind.TF2_SAME_KERAS``)."""
    ax = m.kind.axes()
    if ax is None or (ax.tf == TF2_TWIN["tf"] and ax.keras == TF2_TWIN["keras"]):
        return None
    return twin(run, m, **TF2_TWIN) or twin(run, m, **TF2_SAME_KERAS)


def tensorflow_peers(run: RunView, m: ModeResult) -> list[ModeResult]:
    """Same call, the other backend: for a Keras-on-JAX mode, the TensorFlow modes of the same call,
    flavour and input that compile their step (Keras on JAX always does), graph first, then XLA."""
    found = [twin(run, m, backend="tensorflow", compile=c) for c in (GRAPH, XLA)]
    return [o for o in found if o is not None]


def compared_pairs(run: RunView) -> list[tuple[ModeResult, ModeResult]]:
    """The pairs of ok modes of this run that the rules compare (incl. X vs X+tensor, Keras 2 vs 3);
    never two traces of different programs."""
    return [(a, b) for a, b in _pairs(run) if run.same_program(a.name, b.name)]


def _pairs(run: RunView) -> list[tuple[ModeResult, ModeResult]]:
    """Each mode's pairs in run order: same call with the graph compile, the same work's reference
    call, tensor inputs (numpy ones for a tf.data mode), the TF2 / Keras 3 twin."""
    out = []
    for m in run.ok_modes():
        if not len(m.step_samples_ms):
            continue
        for other in (graph_twin(run, m), reference_call(run, m), tensor_twin(run, m),
                      numpy_twin(run, m), tf2_twin(run, m)):
            if other is not None:
                out.append((m, other))
    return out


def pairs_compared(run: RunView) -> list[tuple[str, str]]:
    """Every pair of modes a rule compares, by name: what ``traceinsight.derive`` computes before
    the rules run and hands them (``RunView.compare`` serves the rules these pairs only, either
    way round). A rule that compares a new kind of pair names it here."""
    out: list[tuple[ModeResult, ModeResult]] = list(compared_pairs(run))
    for m in run.ok_modes():
        if not len(m.step_samples_ms):
            continue
        graph = graph_twin(run, m)                      # eager / XLA against graph
        if graph is not None:
            out.append((m, graph))
        if compiled(m) == GRAPH and m.kind.call == CALL:
            eager = eager_twin(run, m)                  # a graph function against eager
            if eager is not None:
                out.append((m, eager))
        out += [(m, o) for o in cheaper_calls(run, m)]  # predict, fit
        t = tensor_twin(run, m)                         # numpy against tensor inputs
        if t is not None:
            out.append((m, t))
        twin = tf2_twin(run, m)                         # TF2 against TF1 / Keras 2
        if twin is not None:
            out.append((twin, m))
        if m.kind.backend == "jax":
            out += [(m, o) for o in tensorflow_peers(run, m)]
    return list(dict.fromkeys((a.name, b.name) for a, b in out))


def traced_disagreements(run: RunView) -> list[Comparison]:
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


