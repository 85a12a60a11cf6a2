"""The mode table and what a mode is, as data.

The mode table is one row per base (``Base``: ``KERAS_BASES``, ``FUNCTION_BASES``): its compile axis
(eager / graph / XLA), its call axis (how a step is called: ``model(x)`` or ``step(x)``, predict,
predict_on_batch, train_on_batch, fit) and where else it runs (TF1, JAX); the capture builds its
modes from it (``traceinsight.capture.modes``). A mode's kind is its base, its input (numpy /
tensor / dataset), its flavour (keras3 / tf_keras / tf1) and its backend (tensorflow / jax: Keras 3
on JAX); its axes (``ModeKind.axes``) come from its row, so that the findings and the factor table
pair modes by these fields, never by cutting their names apart.

A capture writes a mode's kind into run.json (each mode's ``kind``); a run folder written before
that, or a foreign trace, gets it derived from its name, once, at load (``mode_kind``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

FLAVOURS = ("keras3", "tf_keras", "tf1")
INPUTS = ("numpy", "tensor", "dataset")
BACKENDS = ("tensorflow", "jax")
# the name's prefixes and suffix: the capture builds its mode names with them
# (traceinsight.capture.modes), and a name without a recorded kind is read back with them here
LEGACY_PREFIX = "tf_keras:"
TF1_PREFIX = "tf1:"
JAX_PREFIX = "jax:"
TENSOR_SUFFIX = "+tensor"
_PREFIX = {LEGACY_PREFIX: "tf_keras", TF1_PREFIX: "tf1"}

# The compile axis: how a step's ops run. Eager: one by one from Python; graph: one traced graph
# (tf.function, a Keras step function, a TF1 graph run by a Session); XLA: a graph compiled by XLA.
EAGER, GRAPH, XLA = "eager", "graph", "xla"
COMPILES = (EAGER, GRAPH, XLA)
# The call axis: how a step is called. "call": the model or the step called directly
# (``model(x)``, ``step(x)``, a TF1 Session running the step's graph); then Keras' calls.
CALL, PREDICT, PREDICT_ON_BATCH, TRAIN_ON_BATCH, FIT = ("call", "predict", "predict_on_batch",
                                                        "train_on_batch", "fit")
CALLS = (CALL, PREDICT, PREDICT_ON_BATCH, TRAIN_ON_BATCH, FIT)
# the work a call does: inference or a training step (different work, never compared as a factor)
TASK_OF_CALL = {CALL: "infer", PREDICT: "infer", PREDICT_ON_BATCH: "infer",
                TRAIN_ON_BATCH: "train", FIT: "train"}
# For a call with per-call machinery of its own, the (call, compile) of the same work done with
# less of it, cheapest first by what they leave out: the findings compare the call with these, the
# first its reference pair (predict's batch loop against predict_on_batch; a batch inside fit()
# against train_on_batch).
CHEAPER_CALLS: dict[str, tuple[tuple[str, str], ...]] = {
    PREDICT: ((PREDICT_ON_BATCH, GRAPH), (CALL, EAGER), (CALL, GRAPH)),
    FIT: ((TRAIN_ON_BATCH, GRAPH),),
}


@dataclass(frozen=True)
class Base:
    """One row of the mode table: a base (a mode without its prefix or suffix), what it compiles
    and how it calls a step, and where it also runs. The capture builds its modes from these rows
    (``traceinsight.capture.modes``: the ``+tensor``, ``tf_keras:``, ``tf1:`` and ``jax:``
    variants), run.json records their kinds, and the findings and the factor table pair modes by
    their axes. A new mode is one row here (and a driver, if its call is new)."""

    name: str
    compile: str                    # EAGER | GRAPH | XLA
    call: str                       # one of CALLS
    help: str
    dataset: bool = False           # the step reads a tf.data pipeline (its input is "dataset")
    tf1_graph: bool = False         # a TF1 graph run by a Session: eager disabled in its process
    relaxed_retracing: bool = False  # tf.function(reduce_retracing=True): the retracing fix
    # tf.function(input_signature=...): the retracing fix with the signature the finding quotes;
    # the signature is the mode's own data (run.json's mode entry, handed to its process)
    fixed_signature: bool = False
    default: bool = True            # captured for a workload without MODES
    tf1_help: str | None = None     # the same call on a TF1 graph (tf_keras, eager disabled)
    jax_help: str | None = None     # the same call under Keras 3 on JAX

    @property
    def task(self) -> str:
        return TASK_OF_CALL[self.call]

    @property
    def retracing_fix(self) -> bool:
        """A graph function that differs from its base only in how it retraces (no factor)."""
        return self.relaxed_retracing or self.fixed_signature


KERAS_BASES: tuple[Base, ...] = (
    Base("eager", EAGER, CALL, "model(x): eager call"),
    Base("function", GRAPH, CALL, "tf.function(model)(x): graph function, no XLA"),
    Base("xla", XLA, CALL, "tf.function(model, jit_compile=True)(x): XLA-compiled call"),
    Base("predict", GRAPH, PREDICT, "model.predict(x, batch_size=len(x)): one predict() call per step",
         tf1_help="model.predict(x, batch_size=len(x)) on a TF1 graph (tf_keras, eager disabled, "
         "Session.run): one predict() call per step"),
    Base("predict_on_batch", GRAPH, PREDICT_ON_BATCH, "model.predict_on_batch(x)",
         tf1_help="model.predict_on_batch(x) on a TF1 graph (tf_keras, eager disabled, Session.run)",
         jax_help="model.predict_on_batch(x) under the JAX backend (a jitted predict step)"),
    Base("train_on_batch-eager", EAGER, TRAIN_ON_BATCH,
         "model.train_on_batch(x, y) compiled with run_eagerly=True"),
    Base("train_on_batch", GRAPH, TRAIN_ON_BATCH, "model.train_on_batch(x, y) compiled with jit_compile=False",
         tf1_help="model.train_on_batch(x, y) on a TF1 graph (tf_keras, eager disabled, "
         "v1 optimizer, Session.run)",
         jax_help="model.train_on_batch(x, y) under the JAX backend (a jitted train step)"),
    Base("train_on_batch-xla", XLA, TRAIN_ON_BATCH, "model.train_on_batch(x, y) compiled with jit_compile=True"),
    Base("fit", GRAPH, FIT, "model.fit(x, y) on numpy arrays; one step = one batch inside a fit() call",
         tf1_help="model.fit(x, y) on a TF1 graph (tf_keras, eager disabled); one step = one batch",
         jax_help="model.fit(x, y) under the JAX backend; one step = one batch inside a fit() call"),
    Base("fit-dataset", GRAPH, FIT,
         "model.fit(tf.data.Dataset ... .prefetch(AUTOTUNE)); one step = one batch", dataset=True),
)
FUNCTION_BASES: tuple[Base, ...] = (
    Base("eager", EAGER, CALL, "step(*inputs): eager Python + TF ops"),
    Base("function", GRAPH, CALL, "tf.function(step)(*inputs): graph function, no XLA"),
    Base("xla", XLA, CALL, "tf.function(step, jit_compile=True)(*inputs): XLA-compiled"),
    Base("v1-session", GRAPH, CALL, "tf.compat.v1 graph of step built once (what changes per step is "
         "fed), Session.run; eager disabled in that process (the TF1 way)", tf1_graph=True),
    Base("function-relaxed", GRAPH, CALL, "tf.function(step, reduce_retracing=True)(*inputs): the "
         "retracing fix applied (capture --verify adds it; not a default mode)",
         relaxed_retracing=True, default=False),
    Base("function-signature", GRAPH, CALL, "tf.function(step, input_signature=<the finding's>)"
         "(*inputs): traces once, or fails (--verify adds it)",
         fixed_signature=True, default=False),
)
# every base by name: a base in both tables (eager, function, xla) has the same axes in both
# (tests/test_factors.py checks it)
BASES: dict[str, Base] = {b.name: b for b in FUNCTION_BASES + KERAS_BASES}
# the bases whose step reads a tf.data pipeline (their input is "dataset")
DATASET_BASES = frozenset(b.name for b in BASES.values() if b.dataset)


@dataclass(frozen=True)
class Axes:
    """A mode on each axis that can make two modes' steps differ, as data: what the factor table
    (``traceinsight.factors``) pairs modes by. Two modes that differ on exactly one axis measure
    that axis' effect alone.

    tf:        "tf2" | "tf1" (eager disabled, a graph run by a Session)
    execution: "eager" | "graph" (ops run one by one from Python, or as one traced graph)
    jit:       "off" | "on" (XLA)
    keras:     "3" | "2" (Keras 3, or Keras 2: tf_keras and the TF1 modes)
    backend:   "tensorflow" | "jax" (Keras 3's backend)
    input:     "numpy" | "tensor" | "dataset"
    task:      "infer" | "train": different work, so never a factor of its own
    call:      how a step is called: "call" (``model(x)`` or ``step(x)``), "predict",
               "predict_on_batch", "train_on_batch" or "fit"
    """

    tf: str
    execution: str
    jit: str
    keras: str
    backend: str
    input: str
    task: str
    call: str

    def differing(self, other: Axes) -> tuple[str, ...]:
        """The axes (field names) on which the two modes differ, in field order."""
        return tuple(f for f in AXES if getattr(self, f) != getattr(other, f))

    @property
    def compile(self) -> str:
        """The compile axis (EAGER, GRAPH or XLA) its execution and jit axes make."""
        return EAGER if self.execution == EAGER else XLA if self.jit == "on" else GRAPH

    def moved(self, **changes: str) -> Axes:
        """These axes with some changed (``compile=``: the execution and jit axes it makes)."""
        c = changes.pop("compile", None)
        if c is not None:
            changes.update(execution=EAGER if c == EAGER else GRAPH, jit="on" if c == XLA else "off")
        return replace(self, **changes)


AXES = ("tf", "execution", "jit", "keras", "backend", "input", "task", "call")
# a TF1 or Keras 2 mode's twin of the same workload on TF2 with Keras 3 (on TensorFlow): the same
# call, compile and input (``Axes.moved(**TF2_TWIN)``), what the TF1-vs-TF2 gap and finding compare
TF2_TWIN = {"tf": "tf2", "keras": "3", "backend": "tensorflow"}
# where the run's TensorFlow brings Keras 2 only (2.12 - 2.15: ``tf.keras`` is Keras 2, and no mode
# can run Keras 3), a TF1 mode's TF2 twin is the same Keras on TF2
TF2_SAME_KERAS = {"tf": "tf2", "backend": "tensorflow"}


@dataclass(frozen=True)
class ModeKind:
    """What a mode runs, as data: its base (the mode table's row), its input, the Keras it uses
    and the backend Keras runs on (``mode_kind`` parses a mode's name into one)."""

    base: str           # eager, function, xla, predict, predict_on_batch, fit, train_on_batch ...
    input: str          # numpy | tensor | dataset
    flavour: str        # keras3 | tf_keras | tf1
    backend: str = "tensorflow"   # tensorflow | jax (Keras 3 with KERAS_BACKEND=jax)

    def to_dict(self) -> dict:
        return {"base": self.base, "input": self.input, "flavour": self.flavour,
                "backend": self.backend}

    def same_but(self, **changes: str) -> ModeKind:
        fields = self.to_dict()
        fields.update(changes)
        return ModeKind(**fields)

    @property
    def row(self) -> Base | None:
        """The mode table's row of its base (None: a base the capture does not make, such as a
        foreign trace's mode name)."""
        return BASES.get(self.base)

    @property
    def compile(self) -> str | None:
        """Its compile axis (``COMPILES``), None when unknown."""
        row = self.row
        return row.compile if row is not None else None

    @property
    def call(self) -> str | None:
        """Its call axis (``CALLS``), None when unknown."""
        row = self.row
        return row.call if row is not None else None

    def axes(self) -> Axes | None:
        """The mode on every axis of ``Axes`` (None for a base the capture does not make, and for
        the retracing fixes' modes: they differ from their graph function only in how it
        retraces, which is no factor of the table)."""
        row = self.row
        if row is None or row.retracing_fix:
            return None
        tf1 = self.flavour == "tf1" or row.tf1_graph
        return Axes(tf="tf1" if tf1 else "tf2", execution=EAGER if row.compile == EAGER else GRAPH,
                    jit="on" if row.compile == XLA else "off",
                    keras="3" if self.flavour == "keras3" else "2", backend=self.backend,
                    input=self.input, task=row.task, call=row.call)


def from_name(name: str) -> ModeKind:
    """A mode's kind from its capture name (``tf_keras:fit+tensor`` -> fit, tensor, tf_keras;
    ``jax:fit`` -> fit, numpy, keras3, on jax)."""
    backend = "tensorflow"
    if name.startswith(JAX_PREFIX):
        name, backend = name[len(JAX_PREFIX):], "jax"
    flavour = "keras3"
    for prefix, fl in _PREFIX.items():
        if name.startswith(prefix):
            name, flavour = name[len(prefix):], fl
            break
    tensor = name.endswith(TENSOR_SUFFIX)
    if tensor:
        name = name[: -len(TENSOR_SUFFIX)]
    return ModeKind(name, input_of(name, tensor), flavour, backend)


def name_of(kind: ModeKind) -> str:
    """The capture's name of a mode of this kind (``from_name``'s inverse): what a user passes to
    ``capture --modes`` to add it. A tf.data base carries its input in the base."""
    prefix = next((p for p, fl in _PREFIX.items() if fl == kind.flavour), "")
    suffix = TENSOR_SUFFIX if kind.input == "tensor" else ""
    return f"{JAX_PREFIX if kind.backend == 'jax' else ''}{prefix}{kind.base}{suffix}"


def all_kinds(workload: str | None = None) -> tuple[ModeKind, ...]:
    """Every kind of mode the capture can make for a workload of this kind ("keras" or
    "function"; None: both), from the mode table: what the factor table may name as a mode to
    add."""
    if workload == "function":
        return tuple(ModeKind(b.name, "numpy", "keras3") for b in FUNCTION_BASES)
    out: list[ModeKind] = []
    for flavour in ("keras3", "tf_keras"):
        for b in KERAS_BASES:
            out += [ModeKind(b.name, input_of(b.name, t), flavour)
                    for t in ((False,) if b.dataset else (False, True))]
    out += [ModeKind(b.name, "numpy", "tf1") for b in KERAS_BASES if b.tf1_help]
    out += [ModeKind(b.name, "numpy", "keras3", "jax") for b in KERAS_BASES if b.jax_help]
    if workload is None:
        out += [ModeKind(b.name, "numpy", "keras3") for b in FUNCTION_BASES if b.name not in
                {k.name for k in KERAS_BASES}]
    return tuple(out)


def input_of(base: str, tensor_inputs: bool) -> str:
    """A mode's input: tensors made once outside the step, a tf.data pipeline, or numpy arrays."""
    return "tensor" if tensor_inputs else "dataset" if base in DATASET_BASES else "numpy"


# A mode the user's own script made (``run``, ``profile()``, the Keras callback): its name is the
# user's label, never a capture base, so nothing about how its step compiles or is called can be
# read from it ("function" may well name an eager loop). Its base has no row of the mode table (no
# axes, no twins); what its step did is read from its trace. Its input is "numpy" in the sense of
# "whatever the script passes": the input rules then decide on the conversions the trace holds.
SCRIPT = ModeKind("script", "numpy", "keras3")


def mode_kind(name: str, entry: dict | None = None, keras_version: object = None) -> ModeKind:
    """The kind run.json records for a mode (``entry["kind"]``); ``SCRIPT`` for a script's mode
    recorded without one (its entry holds the script's ``command``); else derived from its name.
    ``keras_version``: the ``keras`` the run's interpreter had (run.json's environment), which
    says whether a mode without the ``tf_keras:`` prefix ran Keras 3 (``with_keras``)."""
    k = (entry or {}).get("kind") if isinstance(entry, dict) else None
    if isinstance(k, dict) and all(isinstance(k.get(f), str) for f in ("base", "input", "flavour")):
        backend = k.get("backend", "tensorflow")
        kind = ModeKind(k["base"], k["input"], k["flavour"],
                        backend if backend in BACKENDS else "tensorflow")
    elif isinstance(entry, dict) and "command" in entry:
        kind = SCRIPT
    else:
        kind = from_name(name)
    return with_keras(kind, keras_version)


def with_keras(kind: ModeKind, keras_version: object) -> ModeKind:
    """The kind as its process ran it: a mode named as Keras 3's (no ``tf_keras:`` prefix) in an
    interpreter whose ``keras`` is Keras 2 (TensorFlow 2.12 - 2.15, where ``tf.keras`` is Keras 2)
    ran Keras 2, its ``tf_keras:`` twin's Keras: its flavour is ``tf_keras``, so that no factor
    says "Keras 2 vs 3" between two modes that both ran Keras 2. An unknown version changes
    nothing."""
    if kind.flavour == "keras3" and kind.backend == "tensorflow" and keras_major(keras_version) == "2":
        return kind.same_but(flavour="tf_keras")
    return kind


def keras_major(keras_version: object) -> str | None:
    """"2" for "2.12.0" (a version string's major); None for anything else."""
    return keras_version.split(".", 1)[0] if isinstance(keras_version, str) else None
