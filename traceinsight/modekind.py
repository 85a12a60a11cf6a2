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
# the name's prefixes and suffix as the capture writes them (traceinsight.capture.modes)
_PREFIX = {"tf_keras:": "tf_keras", "tf1:": "tf1"}
_JAX = "jax:"
_TENSOR = "+tensor"


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
    if name.startswith(_JAX):
        name, backend = name[len(_JAX):], "jax"
    flavour = "keras3"
    for prefix, fl in _PREFIX.items():
        if name.startswith(prefix):
            name, flavour = name[len(prefix):], fl
            break
    inp = "numpy"
    if name.endswith(_TENSOR):
        name, inp = name[: -len(_TENSOR)], "tensor"
    elif name == "fit-dataset":
        inp = "dataset"
    return ModeKind(name, inp, flavour, backend)


def mode_kind(name: str, entry: dict | None = None) -> ModeKind:
    """The kind run.json records for a mode (``entry["kind"]``), else derived from its name."""
    k = (entry or {}).get("kind") if isinstance(entry, dict) else None
    if isinstance(k, dict) and all(isinstance(k.get(f), str) for f in ("base", "input", "flavour")):
        backend = k.get("backend", "tensorflow")
        return ModeKind(k["base"], k["input"], k["flavour"],
                        backend if backend in BACKENDS else "tensorflow")
    return from_name(name)
