"""The execution modes capture can run a workload in: stable names, what each one calls.

This module imports nothing heavy; the runner (``traceinsight.capture.runner``) is where a mode is
turned into TensorFlow calls. Mode names are part of the run folder's contract (run.json keys,
folder names via ``runfolder.mode_dir``): never rename one.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from traceinsight.capture import compat
from traceinsight.modekind import (
    BASES,
    FIT,
    FUNCTION_BASES,
    JAX_PREFIX,
    KERAS_BASES,
    LEGACY_PREFIX,
    TENSOR_SUFFIX,
    TF1_PREFIX,
    Base,
    ModeKind,
    input_of,
)

KERAS = "keras"
FUNCTION = "function"

__all__ = ["JAX_PREFIX", "LEGACY_PREFIX", "TENSOR_SUFFIX", "TF1_PREFIX"]   # re-exported names
# tf-keras 2.21 declares a dependency on the full `tensorflow` package; beside tensorflow-cpu it is
# installed without dependencies (everything else it needs comes with TensorFlow). Without a known
# TensorFlow: the newest supported one's.
TF_KERAS_INSTALL = f'pip install --no-deps "tf-keras=={compat.NEWEST[0]}.{compat.NEWEST[1]}.*"'


def tf_keras_install(tf_version: str | None = None) -> str:
    """The install line for the tf-keras matching this TensorFlow (the newest supported one's when
    not known)."""
    v = compat.version_tuple(tf_version)
    return f'pip install --no-deps "tf-keras=={v[0]}.{v[1]}.*"' if v else TF_KERAS_INSTALL


@dataclass(frozen=True)
class Mode:
    name: str
    kind: str                 # "keras" | "function": the workload kind it applies to
    base: str                 # the mode without prefix / suffix
    help: str
    tensor_inputs: bool = False   # inputs converted to tensors once, outside the step
    legacy_keras: bool = False    # run under tf_keras (Keras 2) with TF_USE_LEGACY_KERAS=1
    needs_y: bool = False         # training modes need data() to return (x, y)
    driver: str = "call"          # "call": one call per step; "fit": one batch of a fit() per step
    tf1: bool = False             # Keras 2 on a TF1 graph run by a Session (the tf1: modes)
    backend: str = "tensorflow"   # Keras 3's backend in the mode's process ("jax": KERAS_BACKEND=jax)

    @property
    def row(self) -> Base:
        """Its row of the mode table (``modekind.KERAS_BASES`` / ``FUNCTION_BASES``): its compile
        and call axes, what the drivers decide on."""
        return BASES[self.base]

    @property
    def tf1_graph(self) -> bool:
        """Eager disabled in its process: a TF1 graph run by a Session."""
        return self.tf1 or self.row.tf1_graph

    def mode_kind(self) -> ModeKind:
        """What the mode is, as data (``traceinsight.modekind``): what run.json records and the
        findings pair modes by."""
        flavour = "tf1" if self.tf1 else "tf_keras" if self.legacy_keras else "keras3"
        return ModeKind(self.base, input_of(self.base, self.tensor_inputs), flavour, self.backend)


# Keras 2 (tf_keras) in a TF1 graph: eager disabled before the model is built, so Keras builds a
# v1 graph and runs it with a Session (training_v1); Keras 2 optimizers replaced by their v1
# (``optimizers.legacy``) twins, the only ones that work without eager.

# Keras 3 on its JAX backend (KERAS_BACKEND=jax in the mode's process, traced with jax.profiler:
# traceinsight.capture.jax_driver); needs the `jax` extra.
JAX_INSTALL = 'pip install "traceinsight-tf[jax]"  (jax[cpu])'


def _build() -> dict[str, Mode]:
    """Every mode, from the rows of the mode table: a Keras base under Keras 3 and tf_keras, with
    numpy and tensor inputs (a tf.data base only as itself), then on a TF1 graph and on JAX where
    its row says so; a function base as itself."""
    table: dict[str, Mode] = {}
    for legacy in (False, True):
        prefix = LEGACY_PREFIX if legacy else ""
        for b in KERAS_BASES:
            for tensor in (False, True):
                if tensor and b.dataset:
                    continue  # already tensors (a tf.data pipeline)
                name = f"{prefix}{b.name}{TENSOR_SUFFIX if tensor else ''}"
                h = b.help + (" — inputs converted to tensors once, outside the step" if tensor else "")
                if legacy:
                    h += " — under tf_keras (Keras 2, TF_USE_LEGACY_KERAS=1)"
                table[name] = Mode(name, KERAS, b.name, h, tensor, legacy, b.task == "train", _driver(b))
    for b in KERAS_BASES:
        if b.tf1_help:
            name = f"{TF1_PREFIX}{b.name}"
            table[name] = Mode(name, KERAS, b.name, b.tf1_help, False, True, b.task == "train",
                               _driver(b), tf1=True)
    for b in KERAS_BASES:
        if b.jax_help:
            name = f"{JAX_PREFIX}{b.name}"
            table[name] = Mode(name, KERAS, b.name, b.jax_help, needs_y=b.task == "train",
                               driver=_driver(b), backend="jax")
    for b in FUNCTION_BASES:
        table[f"fn:{b.name}"] = Mode(b.name, FUNCTION, b.name, b.help)
    return table


def _driver(b: Base) -> str:
    return "fit" if b.call == FIT else "call"


_TABLE = _build()


def keras_modes() -> list[Mode]:
    return [m for m in _TABLE.values() if m.kind == KERAS]


def function_modes() -> list[Mode]:
    return [m for m in _TABLE.values() if m.kind == FUNCTION]


def jax_installed() -> bool:
    return importlib.util.find_spec("jax") is not None


def tf_keras_installed() -> bool:
    """Keras 2 in this interpreter: the tf_keras package, or ``keras`` itself when it is Keras 2
    (TF 2.15); see ``compat.legacy_keras``."""
    from traceinsight.capture.compat import legacy_keras_available
    return legacy_keras_available()


def get(kind: str, name: str) -> Mode | None:
    if kind == FUNCTION:
        return _TABLE.get(f"fn:{name}")
    return _TABLE.get(name) if not name.startswith("fn:") else None


def default_modes(kind: str, has_y: bool) -> list[str]:
    """What a workload without MODES captures: every base mode that applies (no +tensor, no tf_keras)."""
    if kind == FUNCTION:
        return [m.name for m in function_modes() if m.row.default]
    return [m.name for m in keras_modes()
            if not m.tensor_inputs and not m.legacy_keras and m.backend == "tensorflow"
            and (has_y or not m.needs_y)]


def check(kind: str, name: str, has_y: bool, legacy_keras: bool | None = None,
          tf_version: str | None = None, jax: bool | None = None) -> Mode:
    """The mode, or a ValueError saying in one line why it does not apply to this workload.

    ``legacy_keras`` / ``jax``: whether the workload's interpreter (``capture --python``) has
    Keras 2 / JAX (None: ask this one)."""
    mode = get(kind, name)
    if mode is None:
        other = FUNCTION if kind == KERAS else KERAS
        if get(other, name) is not None:
            raise ValueError(f"mode {name!r} applies to {other} workloads only "
                             f"(this is a {kind} workload: {', '.join(default_modes(kind, True))} ...)")
        import difflib
        known = [m.name for m in (keras_modes() if kind == KERAS else function_modes())]
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(f"unknown mode {name!r} ({hint}see: traceinsight capture --list-modes)")
    if mode.needs_y and not has_y:
        raise ValueError(f"mode {name!r} trains, and data() returned no y: return (x, y) to train")
    if mode.legacy_keras and not (tf_keras_installed() if legacy_keras is None else legacy_keras):
        raise ValueError(f"mode {name!r} needs tf_keras (legacy Keras 2): {tf_keras_install(tf_version)}")
    if mode.backend == "jax" and not (jax_installed() if jax is None else jax):
        raise ValueError(f"mode {name!r} runs Keras 3 on JAX, and JAX is not installed (or the "
                         f"interpreter's Keras is Keras 2): {JAX_INSTALL}")
    return mode
