"""The workload file (``model.py``), checked without running it and without importing TensorFlow.

A workload file defines one of:

* a Keras workload: ``model()`` returning a ``keras.Model`` and ``data()`` returning one batch
  ``(x, y)`` as numpy arrays (``y`` optional: inference modes only); optional ``compile_kwargs()``
  for the training modes (default: Adam and a loss that fits ``y``);
* a function workload: ``step(*args)`` -- plain Python using TF ops, not decorated -- and
  ``inputs()`` returning its arguments (a tuple). ``inputs(i)`` (one parameter) is called before
  every step ``i``, outside the timed region, so arguments may change from step to step.

Optionally ``MODES = [...]``: the modes captured by default for this file.

Here we only parse the file (``ast``): missing file, syntax error, missing functions and a
malformed ``MODES`` are reported in one line before anything is written. Whether the functions run
is checked by the runner's probe in a child process.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from traceinsight.capture.modes import FUNCTION, KERAS
from traceinsight.errors import TraceinsightError


@dataclass(frozen=True)
class WorkloadFile:
    path: Path
    name: str                  # the file's stem: run folder suffix
    kind: str                  # "keras" | "function"
    sha256: str
    modes: tuple[str, ...] | None   # MODES from the file, when it has one
    capture: dict | None            # CAPTURE from the file: default capture settings
    functions: frozenset[str]
    doc: str                   # the module docstring (the sample's question)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def inspect_file(path: str | Path) -> WorkloadFile:
    path = Path(path)
    if not path.exists():
        raise TraceinsightError(f"{path}: no such file")
    if not path.is_file():
        raise TraceinsightError(f"{path}: not a file (give the workload's model.py)")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TraceinsightError(f"{path}: cannot read ({e})") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise TraceinsightError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None

    functions: set[str] = set()
    modes: tuple[str, ...] | None = None
    capture: dict | None = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in ("model", "data", "step", "inputs",
                                                        "compile_kwargs"):
                    functions.add(t.id)  # e.g. model = build_model
                if isinstance(t, ast.Name) and t.id == "MODES" and node.value is not None:
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        raise TraceinsightError(
                            f"{path}:{node.lineno}: MODES must be a literal list of mode names") from None
                    if isinstance(value, str):
                        value = [v.strip() for v in value.split(",") if v.strip()]
                    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                        raise TraceinsightError(f"{path}:{node.lineno}: MODES must be a list of strings")
                    modes = tuple(value)
                if isinstance(t, ast.Name) and t.id == "CAPTURE" and node.value is not None:
                    capture = _capture_settings(path, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in ("model", "data", "step", "inputs"):
                        functions.add(alias.asname or alias.name)

    keras = {"model", "data"} <= functions
    function = {"step", "inputs"} <= functions
    if keras and function:
        raise TraceinsightError(f"{path}: defines both model()/data() and step()/inputs(): keep one kind")
    if not keras and not function:
        have = sorted(functions & {"model", "data", "step", "inputs"})
        missing = (sorted({"model", "data"} - functions) if {"model", "data"} & functions
                   else sorted({"step", "inputs"} - functions) if {"step", "inputs"} & functions
                   else None)
        if missing:
            raise TraceinsightError(f"{path}: defines {', '.join(f'{h}()' for h in have)} but not "
                                    f"{', '.join(f'{m}()' for m in missing)}")
        raise TraceinsightError(f"{path}: not a workload: define model() and data() (Keras) or "
                                "step() and inputs() (function)")
    doc = ast.get_docstring(tree) or ""
    return WorkloadFile(path=path.resolve(), name=path.stem, kind=KERAS if keras else FUNCTION,
                        sha256=sha256_of(path), modes=modes, capture=capture,
                        functions=frozenset(functions), doc=doc)


# CAPTURE keys: the capture command's settings, named like its flags (--host-trace-ms -> host_trace_ms)
CAPTURE_KEYS = {"timeout": float, "min_steps": int, "min_time": float, "max_time": float,
                "warmup_steps": int, "host_trace_ms": int, "host_max_steps": int,
                "python_tracer": bool, "python_trace_ms": int, "python_max_steps": int,
                "rounds": int, "round_time": float, "round_min_steps": int}


def _capture_settings(path: Path, node) -> dict:
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        raise TraceinsightError(f"{path}:{node.lineno}: CAPTURE must be a literal dict") from None
    if not isinstance(value, dict):
        raise TraceinsightError(f"{path}:{node.lineno}: CAPTURE must be a dict")
    for k, v in value.items():
        if k not in CAPTURE_KEYS:
            raise TraceinsightError(f"{path}:{node.lineno}: CAPTURE key {k!r} is not one of "
                                    f"{', '.join(CAPTURE_KEYS)}")
        want = CAPTURE_KEYS[k]
        ok = isinstance(v, bool) if want is bool else (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                       and (want is float or float(v).is_integer()))
        if not ok:
            raise TraceinsightError(f"{path}:{node.lineno}: CAPTURE[{k!r}] must be {want.__name__}")
    return value
