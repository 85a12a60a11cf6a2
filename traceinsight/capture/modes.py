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
    DATASET_BASES,
    JAX_PREFIX,
    LEGACY_PREFIX,
    TENSOR_SUFFIX,
    TF1_PREFIX,
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
    tf1: bool = False             # eager disabled in the process: a TF1 graph run by a Session
    backend: str = "tensorflow"   # Keras 3's backend in the mode's process ("jax": KERAS_BACKEND=jax)

    def mode_kind(self) -> ModeKind:
        """What the mode is, as data (``traceinsight.modekind``): what run.json records and the
        findings pair modes by."""
        flavour = "tf1" if self.tf1 else "tf_keras" if self.legacy_keras else "keras3"
        return ModeKind(self.base, input_of(self.base, self.tensor_inputs), flavour, self.backend)


_KERAS_BASE: list[tuple[str, str, bool, str]] = [
    # name, help, needs_y, driver
    ("eager", "model(x): eager call", False, "call"),
    ("function", "tf.function(model)(x): graph function, no XLA", False, "call"),
    ("xla", "tf.function(model, jit_compile=True)(x): XLA-compiled call", False, "call"),
    ("predict", "model.predict(x, batch_size=len(x)): one predict() call per step", False, "call"),
    ("predict_on_batch", "model.predict_on_batch(x)", False, "call"),
    ("train_on_batch-eager", "model.train_on_batch(x, y) compiled with run_eagerly=True", True, "call"),
    ("train_on_batch", "model.train_on_batch(x, y) compiled with jit_compile=False", True, "call"),
    ("train_on_batch-xla", "model.train_on_batch(x, y) compiled with jit_compile=True", True, "call"),
    ("fit", "model.fit(x, y) on numpy arrays; one step = one batch inside a fit() call", True, "fit"),
    ("fit-dataset", "model.fit(tf.data.Dataset ... .prefetch(AUTOTUNE)); one step = one batch", True, "fit"),
]

# Keras 2 (tf_keras) in a TF1 graph: eager disabled before the model is built, so Keras builds a
# v1 graph and runs it with a Session (training_v1); Keras 2 optimizers replaced by their v1
# (``optimizers.legacy``) twins, the only ones that work without eager.
_TF1_BASE: list[tuple[str, str, bool, str]] = [
    ("predict", "model.predict(x, batch_size=len(x)) on a TF1 graph (tf_keras, eager disabled, "
     "Session.run): one predict() call per step", False, "call"),
    ("predict_on_batch", "model.predict_on_batch(x) on a TF1 graph (tf_keras, eager disabled, Session.run)",
     False, "call"),
    ("train_on_batch", "model.train_on_batch(x, y) on a TF1 graph (tf_keras, eager disabled, "
     "v1 optimizer, Session.run)", True, "call"),
    ("fit", "model.fit(x, y) on a TF1 graph (tf_keras, eager disabled); one step = one batch", True, "fit"),
]

_FUNCTION_BASE: list[tuple[str, str]] = [
    ("eager", "step(*inputs): eager Python + TF ops"),
    ("function", "tf.function(step)(*inputs): graph function, no XLA"),
    ("xla", "tf.function(step, jit_compile=True)(*inputs): XLA-compiled"),
    ("v1-session", "tf.compat.v1 graph of step built once (what changes per step is fed), "
                   "Session.run; eager disabled in that process (the TF1 way)"),
    ("function-relaxed", "tf.function(step, reduce_retracing=True)(*inputs): the retracing fix "
                         "applied (capture --verify adds it; not a default mode)"),
]
# modes that apply a finding's fix to the workload (capture --verify adds them), not captured by
# default
_FIX_ONLY_BASES = frozenset({"function-relaxed"})


# Keras 3 on its JAX backend (KERAS_BACKEND=jax in the mode's process, traced with jax.profiler:
# traceinsight.capture.jax_driver); needs the `jax` extra.
JAX_INSTALL = 'pip install "traceinsight-tf[jax]"  (jax[cpu])'
_JAX_BASE: list[tuple[str, str, bool, str]] = [
    ("predict_on_batch", "model.predict_on_batch(x) under the JAX backend (a jitted predict step)",
     False, "call"),
    ("train_on_batch", "model.train_on_batch(x, y) under the JAX backend (a jitted train step)",
     True, "call"),
    ("fit", "model.fit(x, y) under the JAX backend; one step = one batch inside a fit() call",
     True, "fit"),
]


def _build() -> dict[str, Mode]:
    table: dict[str, Mode] = {}
    for legacy in (False, True):
        prefix = LEGACY_PREFIX if legacy else ""
        for base, help_, needs_y, driver in _KERAS_BASE:
            for tensor in (False, True):
                if tensor and base in DATASET_BASES:
                    continue  # already tensors (a tf.data pipeline)
                name = f"{prefix}{base}{TENSOR_SUFFIX if tensor else ''}"
                h = help_ + (" — inputs converted to tensors once, outside the step" if tensor else "")
                if legacy:
                    h += " — under tf_keras (Keras 2, TF_USE_LEGACY_KERAS=1)"
                table[name] = Mode(name, KERAS, base, h, tensor, legacy, needs_y, driver)
    for base, help_, needs_y, driver in _TF1_BASE:
        name = f"{TF1_PREFIX}{base}"
        table[name] = Mode(name, KERAS, base, help_, False, True, needs_y, driver, tf1=True)
    for base, help_, needs_y, driver in _JAX_BASE:
        name = f"{JAX_PREFIX}{base}"
        table[name] = Mode(name, KERAS, base, help_, needs_y=needs_y, driver=driver, backend="jax")
    for base, help_ in _FUNCTION_BASE:
        table[f"fn:{base}"] = Mode(base, FUNCTION, base, help_)
    return table


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
        return [m.name for m in function_modes() if m.base not in _FIX_ONLY_BASES]
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
