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
    the first ``limit``): the evidence for why a tf.function retraced. ``record`` takes a call's
    arguments directly (``run``'s hook, which sees the script's calls; no source: None).

    Standard library only: ``run``'s hook loads this file by path into the script's interpreter."""

    def __init__(self, source: Callable[[int], tuple] | None, limit: int = 64):
        self.source = source
        self.limit = limit
        self.seen: dict[tuple, dict] = {}
        self.steps = 0

    def __call__(self, i: int) -> tuple:
        assert self.source is not None
        args = self.source(i)
        self.record(i, args)
        return args

    def record(self, i: int, args: tuple) -> None:
        """One step's arguments (step ``i``)."""
        sig = tuple(describe_arg(a) for a in args)
        self.steps += 1
        entry = self.seen.get(sig)
        if entry is not None:
            entry["steps"] += 1
        elif len(self.seen) < self.limit:
            self.seen[sig] = {"args": list(sig), "kinds": [arg_kind(a) for a in args],
                              "first_step": i, "steps": 1}

    def summary(self) -> dict:
        return {"steps": self.steps, "distinct": list(self.seen.values()),
                "truncated": len(self.seen) >= self.limit}



# The dtypes an input signature passed to a workload process may name: TensorFlow's plain dtype
# names (``tf.float32`` ...), each an attribute of ``tf`` that is a ``tf.DType``. The signature is
# data from a run folder: anything else (a resource, a variant, a name that is no dtype) is refused.
PLAIN_DTYPES = frozenset({"bool", "bfloat16", "float16", "float32", "float64", "complex64",
                          "complex128", "int8", "int16", "int32", "int64", "uint8", "uint16",
                          "uint32", "uint64", "string"})
# ranks a TensorSpec of a signature may have (the timings schema's limit on a recorded shape)
MAX_RANK = 64


def signature_of_data(data: Any) -> list[tuple[list[int | None] | None, str]]:
    """An input signature as the parent passes it (``[{"shape": [None, 30], "dtype": "float32"},
    ...]``: ``analysis.retraces.ArgSpec.to_dict``), checked: a list of (shape, dtype name) pairs,
    each shape a list of non-negative ints and None (None: any rank), each dtype a plain
    TensorFlow dtype name (``PLAIN_DTYPES``). Anything else is a ``WorkloadError`` in one line."""
    if not isinstance(data, list) or not data:
        raise WorkloadError("the input_signature must be a non-empty list of "
                            "{shape, dtype} objects")
    out: list[tuple[list[int | None] | None, str]] = []
    for i, spec in enumerate(data):
        where = f"input_signature argument {i + 1}"
        if not isinstance(spec, dict) or set(spec) != {"shape", "dtype"}:
            raise WorkloadError(f"{where}: expected an object with shape and dtype")
        dtype, shape = spec["dtype"], spec["shape"]
        if not isinstance(dtype, str) or dtype not in PLAIN_DTYPES:
            raise WorkloadError(f"{where}: dtype {str(dtype)[:40]!r} is not a plain TensorFlow "
                                f"dtype name ({', '.join(sorted(PLAIN_DTYPES))})")
        if shape is not None and not (
                isinstance(shape, list) and len(shape) <= MAX_RANK
                and all(d is None or (type(d) is int and d >= 0) for d in shape)):
            raise WorkloadError(f"{where}: shape must be null or a list of non-negative "
                                "integers and nulls")
        out.append((None if shape is None else list(shape), dtype))
    return out


def tensor_specs(tf, data: Any) -> list:
    """The ``tf.TensorSpec`` list of a signature passed as data (``signature_of_data``): built
    from its fields, never evaluated."""
    specs = []
    for shape, name in signature_of_data(data):
        dtype = getattr(tf, name, None)
        if not isinstance(dtype, tf.dtypes.DType):
            raise WorkloadError(f"input_signature: tf.{name} is not a dtype in TensorFlow "
                                f"{tf.__version__}")
        specs.append(tf.TensorSpec(shape, dtype))
    return specs
