"""What a mode is, as data: its base (eager / function / xla / predict / fit ...), its input
(numpy / tensor / dataset), its flavour (keras3 / tf_keras / tf1) and its backend (tensorflow /
jax: Keras 3 on JAX), so that the findings pair modes by these fields, never by cutting their
names apart.

A capture writes them into run.json (each mode's ``kind``); a run folder written before that, or a
foreign trace, gets them derived from its name, once, at load (``mode_kind``).
"""

from __future__ import annotations

from dataclasses import dataclass

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
# the bases whose step reads a tf.data pipeline (their input is "dataset")
DATASET_BASES = frozenset({"fit-dataset"})


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


AXES = ("tf", "execution", "jit", "keras", "backend", "input", "task", "call")
# what each base calls (task, call, execution, jit); a base not here (a foreign trace's mode
# name) has no axes and stays out of the factor table. "v1-session" is a function workload's
# TF1 graph: its call is the step's, in a TF1 graph.
_BASE_AXES: dict[str, tuple[str, str, str, str]] = {
    "eager": ("infer", "call", "eager", "off"),
    "function": ("infer", "call", "graph", "off"),
    "xla": ("infer", "call", "graph", "on"),
    "v1-session": ("infer", "call", "graph", "off"),
    "predict": ("infer", "predict", "graph", "off"),
    "predict_on_batch": ("infer", "predict_on_batch", "graph", "off"),
    "train_on_batch-eager": ("train", "train_on_batch", "eager", "off"),
    "train_on_batch": ("train", "train_on_batch", "graph", "off"),
    "train_on_batch-xla": ("train", "train_on_batch", "graph", "on"),
    "fit": ("train", "fit", "graph", "off"),
    "fit-dataset": ("train", "fit", "graph", "off"),
}
# "function-relaxed" (a function workload's tf.function with reduce_retracing) has no axes: it
# differs from "function" only in how it retraces, which is no factor of the table.
# bases whose graph is a TF1 one whatever the flavour (a function workload has no flavour)
_TF1_BASES = frozenset({"v1-session"})


@dataclass(frozen=True)
class ModeKind:
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

    def axes(self) -> Axes | None:
        """The mode on every axis of ``Axes`` (None for a base the capture does not make)."""
        got = _BASE_AXES.get(self.base)
        if got is None:
            return None
        task, call, execution, jit = got
        tf1 = self.flavour == "tf1" or self.base in _TF1_BASES
        return Axes(tf="tf1" if tf1 else "tf2", execution=execution, jit=jit,
                    keras="3" if self.flavour == "keras3" else "2", backend=self.backend,
                    input=self.input, task=task, call=call)


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


# The kinds a capture makes (``traceinsight.capture.modes``' table, which this mirrors without
# importing the capture; tests/test_factors.py checks they agree): what the factor table may name
# as a mode to add.
_TF1_CAPTURE_BASES = ("predict", "predict_on_batch", "train_on_batch", "fit")
_JAX_CAPTURE_BASES = ("predict_on_batch", "train_on_batch", "fit")
_KERAS_CAPTURE_BASES = tuple(b for b in _BASE_AXES if b != "v1-session")


def all_kinds(workload: str | None = None) -> tuple[ModeKind, ...]:
    """Every kind of mode the capture can make for a workload of this kind ("keras" or
    "function"; None: both)."""
    if workload == "function":
        return tuple(ModeKind(b, "numpy", "keras3")
                     for b in ("eager", "function", "xla", "v1-session", "function-relaxed"))
    out: list[ModeKind] = []
    for flavour in ("keras3", "tf_keras"):
        for base in _KERAS_CAPTURE_BASES:
            out += [ModeKind(base, input_of(base, t), flavour)
                    for t in ((False,) if base in DATASET_BASES else (False, True))]
    out += [ModeKind(b, "numpy", "tf1") for b in _TF1_CAPTURE_BASES]
    out += [ModeKind(b, "numpy", "keras3", "jax") for b in _JAX_CAPTURE_BASES]
    if workload is None:
        out += [ModeKind("v1-session", "numpy", "keras3"), ModeKind("function-relaxed", "numpy", "keras3")]
    return tuple(out)


def input_of(base: str, tensor_inputs: bool) -> str:
    """A mode's input: tensors made once outside the step, a tf.data pipeline, or numpy arrays."""
    return "tensor" if tensor_inputs else "dataset" if base in DATASET_BASES else "numpy"


def mode_kind(name: str, entry: dict | None = None) -> ModeKind:
    """The kind run.json records for a mode (``entry["kind"]``), else derived from its name."""
    k = (entry or {}).get("kind") if isinstance(entry, dict) else None
    if isinstance(k, dict) and all(isinstance(k.get(f), str) for f in ("base", "input", "flavour")):
        backend = k.get("backend", "tensorflow")
        return ModeKind(k["base"], k["input"], k["flavour"],
                        backend if backend in BACKENDS else "tensorflow")
    return from_name(name)
