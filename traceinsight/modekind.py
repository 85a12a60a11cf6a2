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
