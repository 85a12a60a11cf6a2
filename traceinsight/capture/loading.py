"""Loading the workload file in the workload process, and calling its functions safely.

Errors raised by the user's code become ``WorkloadError`` with one line naming the root cause.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable


class WorkloadError(Exception):
    """The workload's own code failed (shown to the user as one line)."""


class SetupError(Exception):
    """This Python cannot capture at all (TensorFlow or xprof missing): not the workload's fault."""


def load_workload(path: str):
    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))
    name = "_traceinsight_workload_" + Path(path).stem.replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{Path(path).name} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:
        raise WorkloadError(f"importing {Path(path).name} raised {one_line(e)}") from e
    return module


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# "MemoryError: Unable to allocate ..." as the last line of a message that quotes the user's code
_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))(?::\s*(.*))?$")
# lines of TF / Keras wrappers that say where, not what
_WRAPPER_LINES = ("in user code:", "Exception encountered when calling", "Arguments received by",
                  "Traceback (most recent call last)", "File ", "•", "During handling of")


def _root(e: BaseException) -> BaseException:
    seen = {id(e)}
    while e.__cause__ is not None and id(e.__cause__) not in seen:
        e = e.__cause__
        seen.add(id(e))
    return e


def one_line(e: BaseException, limit: int = 300) -> str:
    """The exception in one line, naming its root cause.

    TF's ``StagingError`` (an exception while a tf.function traces) says only "in user code:" on its
    first line and quotes the user's frames; the real error (``MemoryError: ...``) is its last line.
    Keras 3 starts with "Exception encountered when calling X.call()." and gives the cause later.
    """
    root = _root(e)
    lines = [ln.strip() for ln in _ANSI.sub("", str(root)).splitlines() if ln.strip()]
    inner = own = None
    for ln in reversed(lines):
        m = _ERROR_LINE.match(ln)
        if m and m.group(1) != type(root).__name__:
            inner = f"{m.group(1)}: {m.group(2)}" if m.group(2) else m.group(1)
            break
        if m and own is None and m.group(2) and len(lines) > 1:
            # the error quoted under the frames TF adds to an error raised in a tf.function
            # ("in user code: File ... raise ValueError(...)  ValueError: msg", TF 2.12 - 2.21):
            # its message, not the quoted source line above it
            own = m.group(2)
    if inner is None and own is not None:
        text = f"{type(root).__name__}: {own}"
    elif inner is None:
        useful = [ln for ln in lines if not ln.startswith(_WRAPPER_LINES)]
        first = useful[0] if useful else (lines[0] if lines else "")
        text = f"{type(root).__name__}: {first}" if first else type(root).__name__
    else:
        text = f"{type(root).__name__}, caused by {inner}"
    if root is not e:
        text = f"{type(e).__name__} from {text}"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def call_user(fn: Callable, what: str, *args):
    try:
        return fn(*args)
    except BaseException as e:
        raise WorkloadError(f"{what} raised {one_line(e)}") from e


def keras_batch(module) -> tuple[Any, Any]:
    batch = call_user(module.data, "data()")
    if isinstance(batch, dict):
        raise WorkloadError("data() must return x or (x, y), not a dict")
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None
        if len(batch) == 2:
            return batch[0], batch[1]
        raise WorkloadError(f"data() returned {len(batch)} items; expected x or (x, y)")
    return batch, None


def input_source(module) -> Callable[[int], tuple]:
    """``step number -> args``: ``inputs()`` once, or ``inputs(i)`` before every step."""
    try:
        n_params = len([p for p in inspect.signature(module.inputs).parameters.values()
                        if p.default is inspect.Parameter.empty
                        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n_params = 0

    def as_tuple(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,)

    if n_params >= 1:
        return lambda i: as_tuple(call_user(module.inputs, f"inputs({i})", i))
    fixed = as_tuple(call_user(module.inputs, "inputs()"))
    return lambda i: fixed



def describe_arg(v: Any) -> str:
    """What tf.function keys a trace on, for one argument: a Python value by its value, an array
    or tensor by dtype and shape, anything else by its type."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return f"Python {type(v).__name__} {v!r}"[:80]
    shape, dtype = getattr(v, "shape", None), getattr(v, "dtype", None)
    if shape is not None and dtype is not None:
        dims = tuple(None if d is None else int(d) for d in (shape.as_list()
                     if hasattr(shape, "as_list") and shape.rank is not None else tuple(shape)))
        kind = "ndarray" if type(v).__module__ == "numpy" else "tensor"
        return f"{kind} {getattr(dtype, 'name', dtype)} shape {dims}"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of {len(v)}: " + ", ".join(describe_arg(x) for x in v[:4])
    return f"{type(v).__module__}.{type(v).__name__} object"


def arg_kind(v: Any) -> dict:
    """The same argument as ``describe_arg``, as data: ``{"kind": "python", "type": "float"}``,
    ``{"kind": "array", "container": "ndarray" | "tensor", "dtype": "float32", "shape": [100,
    None]}`` or ``{"kind": "other", "type": ...}``; what the analysis decides a retrace's cause
    on (``analysis.retraces.signature_changes``), never the text."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"kind": "python", "type": type(v).__name__}
    shape, dtype = getattr(v, "shape", None), getattr(v, "dtype", None)
    if shape is not None and dtype is not None:
        dims = [None if d is None else int(d) for d in (shape.as_list()
                if hasattr(shape, "as_list") and shape.rank is not None else tuple(shape))]
        return {"kind": "array", "container": "ndarray" if type(v).__module__ == "numpy" else "tensor",
                "dtype": str(getattr(dtype, "name", dtype)), "shape": dims}
    return {"kind": "other", "type": f"{type(v).__module__}.{type(v).__name__}"}


class SignatureLog:
    """Wraps a step's input source and records the distinct argument signatures it fed (kept to
    the first ``limit``): the evidence for why a tf.function retraced."""

    def __init__(self, source: Callable[[int], tuple], limit: int = 64):
        self.source = source
        self.limit = limit
        self.seen: dict[tuple, dict] = {}
        self.steps = 0

    def __call__(self, i: int) -> tuple:
        args = self.source(i)
        sig = tuple(describe_arg(a) for a in args)
        self.steps += 1
        entry = self.seen.get(sig)
        if entry is not None:
            entry["steps"] += 1
        elif len(self.seen) < self.limit:
            self.seen[sig] = {"args": list(sig), "kinds": [arg_kind(a) for a in args],
                              "first_step": i, "steps": 1}
        return args

    def summary(self) -> dict:
        return {"steps": self.steps, "distinct": list(self.seen.values()),
                "truncated": len(self.seen) >= self.limit}

