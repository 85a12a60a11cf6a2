"""The run folder: the one on-disk form of a capture, written by ``capture`` and read by ``load``.

Layout (schema version 1)::

    runs/<YYYYmmddTHHMMSSZ>-<workload>/
      run.json                         manifest: workload, command, environment, modes + status
      <mode dir>/timings.json          raw per-step seconds (untraced + traced phases), options check
      <mode dir>/host/plugins/profile/<session>/<host>.xplane.pb     host tracer pass (level 3)
      <mode dir>/python/plugins/profile/<session>/<host>.xplane.pb   python tracer pass (optional)

``tensorboard --logdir runs/<run>`` therefore shows every mode as runs ``<mode dir>/host`` and
``<mode dir>/python``. Every file is written atomically (temp file + rename), so an interrupted
capture leaves a readable run holding what finished.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

from traceinsight.errors import TraceinsightError

# (json is imported where a run folder's files are read or written: analysing a trace alone, which
# never does, does not import it)

SCHEMA_VERSION = 1
MANIFEST = "run.json"
TIMINGS = "timings.json"
PASSES = ("host", "python")
# the TraceMe around each block of the capture's profiler calibration (``capture/calibrate.py``),
# on the main thread before the first step of the host pass; the analysis counts its events
CALIBRATION_MARKER = "traceinsight calibration"
Pass = Literal["host", "python"]      # a capture pass, typed (one of PASSES)


# a mode folder's name is kept well under the 255 bytes a file name may have
MAX_DIR_NAME = 100


def mode_dir(mode: str) -> str:
    """File-system-safe folder name of a mode (``tf_keras:predict`` -> ``tf_keras-predict``): one
    path component, never hidden nor ``.`` / ``..``, at most ``MAX_DIR_NAME`` characters (a longer
    name is cut and keeps a digest of the whole, so two long names stay two folders)."""
    name = re.sub(r"[^A-Za-z0-9_.+-]", "-", mode)
    name = re.sub(r"^\.", "-", name) or "-"
    if len(name) > MAX_DIR_NAME:
        import hashlib
        name = name[: MAX_DIR_NAME - 17] + "-" + hashlib.sha256(mode.encode("utf-8", "replace")
                                                                 ).hexdigest()[:16]
    return name


def inside(run_path: Path, rel: Any, what: str = "path") -> Path:
    """``run_path / rel``, refused (TraceinsightError, one line) unless it stays inside the run
    folder: ``rel`` is a relative path of plain components (no ``..``, not absolute, no empty or
    over-long component) and the path, symlinks resolved, is inside the resolved run folder. A
    run folder comes from elsewhere: its run.json must not make us read or write beyond it."""
    from traceinsight.present import safe
    if not isinstance(rel, str) or not rel:
        raise TraceinsightError(f"{run_path}: {what} {safe(repr(rel), 80)} is not a relative path")
    parts = rel.split("/")
    if (rel.startswith("/") or "\0" in rel or any(p in ("", ".", "..") for p in parts)
            or any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts)):
        raise TraceinsightError(f"{run_path}: {what} {safe(rel, 80)} leaves the run folder or is "
                                "not a plain relative path: refused")
    root = Path(run_path).resolve()
    target = Path(run_path) / rel
    try:
        real = target.resolve()
    except (OSError, RuntimeError) as e:   # a symlink loop
        raise TraceinsightError(f"{run_path}: {what} {safe(rel, 80)} cannot be resolved "
                                f"({safe(e, 80)}): refused") from None
    if real != root and root not in real.parents:
        raise TraceinsightError(f"{run_path}: {what} {safe(rel, 80)} is a symlink out of the run "
                                "folder: refused")
    return target


def is_inside(run_path: Path, path: Path) -> bool:
    """Whether ``path`` (symlinks resolved) is inside the run folder."""
    try:
        root = Path(run_path).resolve()
        real = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return real == root or root in real.parents


def open_regular(path: Path, max_bytes: int | None = None):
    """``path`` opened for binary reading, only if it is a regular file (a FIFO or a device is
    refused without blocking: opened non-blocking, checked with fstat) and, with ``max_bytes``,
    no larger than that. OSError or TraceinsightError otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TraceinsightError(f"{path}: not a regular file (a FIFO, device or folder): "
                                    "not read")
        if max_bytes is not None and st.st_size > max_bytes:
            raise TraceinsightError(f"{path}: {st.st_size:,} bytes, more than the "
                                    f"{max_bytes >> 20} MiB a {Path(path).name} may hold: "
                                    "refused before reading it")
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_regular(path: Path) -> bool:
    """A regular file (symlinks followed), without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _umask() -> int:
    """The process's umask, read without changing it where the OS allows (Linux), since setting
    it to read it races with threads creating files."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename). The file gets the mode any file
    the user creates gets, 0666 minus the umask (mkstemp's temp file alone would be 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # here: loading a run writes nothing (start-up)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    import json
    atomic_write_bytes(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default)
                       .encode() + b"\n")


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


# A run.json or timings.json larger than this is not one capture wrote (a timings.json of a
# million steps is ~20 MB): refused before it is read, so a damaged or hostile file cannot take the
# memory of the process.
MAX_JSON_BYTES = 64 << 20


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES) -> dict[str, Any]:
    import json
    path = Path(path)
    try:
        with open_regular(path, max_bytes) as f:
            raw = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise TraceinsightError(f"{path}: no such file") from None
    except OSError as e:
        raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise TraceinsightError(f"{path}: not readable JSON (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise TraceinsightError(f"{path}: not readable JSON ({_short(str(e), 120)})") from None
    if not isinstance(data, dict):
        raise TraceinsightError(f"{path}: expected a JSON object")
    return data


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _short(s: str, n: int = 60) -> str:
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def _describe(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    if isinstance(value, str):
        return f"the string {_short(repr(value), 40)}"
    if isinstance(value, bool) or value is None:
        import json
        return json.dumps(value)
    return _short(repr(value), 40)


_VALIDATORS: dict[str, Any] = {}
_COMPILED: dict[str, Any] = {}


def _schema(schema: str) -> dict[str, Any]:
    import json
    return json.loads((Path(__file__).parent / "schemas" / schema).read_text(encoding="utf-8"))


def _validator(schema: str):
    """jsonschema's validator of a schema: only used to word the error of a document the
    compiled check refused (importing jsonschema and walking a document with it cost far more
    than the compiled check)."""
    if schema not in _VALIDATORS:
        from jsonschema import Draft202012Validator
        _VALIDATORS[schema] = Draft202012Validator(_schema(schema))
    return _VALIDATORS[schema]


def _compiled(schema: str):
    """The schema compiled to a Python function (fastjsonschema), once per process: the module
    tools/make_schema_validators.py wrote from it (compiling a schema took more than the rest of
    a small run's loading), or, where that module's digest is not the schema's (a schema changed
    without writing it again), compiled here. The schemas use only keywords whose meaning is the
    same in draft 7, which fastjsonschema implements, and in draft 2020-12
    (tests/test_validation.py checks that both validators agree on mutated documents)."""
    if schema not in _COMPILED:
        import hashlib
        import importlib
        text = (Path(__file__).parent / "schemas" / schema).read_bytes()
        try:
            module = importlib.import_module(f"traceinsight.schemas._{schema.split('.')[0]}_validator")
        except ImportError:
            module = None
        if module is not None and module.SCHEMA_SHA256 == hashlib.sha256(text).hexdigest():
            _COMPILED[schema] = module.validate
        else:
            import json

            import fastjsonschema
            _COMPILED[schema] = fastjsonschema.compile(json.loads(text))
    return _COMPILED[schema]


def validate(data: dict[str, Any], schema: str, path: Path) -> None:
    """Check a run.json / timings.json against its schema (traceinsight/schemas); the first error
    as one line naming the file and the field.

    The check is the compiled one; a refused document is checked again by jsonschema, whose
    errors say which field and why in the words every message uses. Every load checks again: a
    record of documents found valid would have to live in the run folder, which is someone
    else's data (a forged record would let any run.json through)."""
    try:
        _compiled(schema)(data)
        return
    except ValueError as e:     # fastjsonschema's exception, or schemas.refused's (a ValueError)
        refused = e
    import json

    from jsonschema.exceptions import best_match
    err = best_match(_validator(schema).iter_errors(data))
    if err is None:
        # refused by the compiled check alone (a pattern's ``$`` matches only at the very end
        # there, before a final newline too in jsonschema): its own words
        raise TraceinsightError(f"{path}: {_short(str(refused), 160)}")
    field = ".".join(str(p) for p in err.absolute_path) or "(the top level)"
    want = err.validator_value
    if err.validator == "type":
        what = f"expected {' or '.join(want) if isinstance(want, list) else want}"
    elif err.validator in ("minimum", "maximum", "maxItems", "maxProperties", "minLength",
                           "maxLength", "pattern", "const", "enum"):
        what = f"{err.validator} {_short(json.dumps(want), 80)}"
    else:
        what = f"fails {err.validator}"
    raise TraceinsightError(f"{path}: field {field}: {what}, got {_describe(err.instance)}")


def _check_seconds(path: Path, field: str, values: Any, max_items: int = 10_000_000) -> None:
    """A list of per-step seconds, checked with numpy (a schema validator visiting millions of
    items one by one would take minutes)."""
    import numpy as np
    if values is None:
        return
    if not isinstance(values, list):
        raise TraceinsightError(f"{path}: field {field}: expected array, got {_describe(values)}")
    if len(values) > max_items:
        raise TraceinsightError(f"{path}: field {field}: {len(values):,} values, more than "
                                f"{max_items:,}")
    bad = next((i for i, v in enumerate(values) if type(v) not in (int, float)), None)
    if bad is not None:
        raise TraceinsightError(f"{path}: field {field}.{bad}: expected number, got "
                                f"{_describe(values[bad])}")
    arr = np.asarray(values, dtype=float)
    wrong = np.nonzero(~np.isfinite(arr) | (arr < 0) | (arr > 86400))[0]
    if len(wrong):
        i = int(wrong[0])
        raise TraceinsightError(f"{path}: field {field}.{i}: a step time must be finite, not "
                                f"negative and at most a day (86400 s), got {_describe(values[i])}")


def read_timings(path: Path) -> dict[str, Any]:
    """A mode's timings.json, validated (schema ``timings.schema.json``; its long lists of seconds
    with numpy)."""
    data = read_json(path)
    big = {"steps_s": data.get("steps_s"), "step_nums": data.get("step_nums")}
    traced = data.get("traced")
    passes = {}
    if isinstance(traced, dict):
        for p in PASSES:
            if isinstance(traced.get(p), dict):
                passes[p] = traced[p].get("steps_s")
    _check_seconds(path, "steps_s", big["steps_s"])
    for p, values in passes.items():
        _check_seconds(path, f"traced.{p}.steps_s", values)
    rounds = data.get("rounds")
    if isinstance(rounds, list):
        for i, r in enumerate(rounds):
            if isinstance(r, dict):
                _check_seconds(path, f"rounds.{i}.steps_s", r.get("steps_s"))
    nums = big["step_nums"]
    if isinstance(nums, list) and len(nums) > 10_000_000:
        raise TraceinsightError(f"{path}: field step_nums: {len(nums):,} values, more than "
                                "10,000,000")
    # the schema checks the rest, with the long lists (already checked) left out
    light = dict(data)
    for k in big:
        if isinstance(light.get(k), list):
            light[k] = []
    if passes and isinstance(traced, dict):
        light["traced"] = {k: (dict(v, steps_s=[]) if k in passes and isinstance(v, dict) and
                               isinstance(v.get("steps_s"), list) else v)
                           for k, v in traced.items()}
    if isinstance(rounds, list):
        light["rounds"] = [dict(r, steps_s=[]) if isinstance(r, dict) and
                           isinstance(r.get("steps_s"), list) else r for r in rounds]
    validate(light, "timings.schema.json", path)
    return data


def is_run_folder(path: Path) -> bool:
    return is_regular(Path(path) / MANIFEST)


def read_manifest(run_path: Path) -> dict[str, Any]:
    path = Path(run_path) / MANIFEST
    manifest = read_json(path)
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION or type(version) is not int:
        raise TraceinsightError(
            f"{run_path}: run.json schema version {_describe(version)} is not supported "
            f"(expected {SCHEMA_VERSION})")
    validate(manifest, "run.schema.json", path)
    return manifest


# How deep below the given folder traces are looked for: a run folder's
# <mode>/<pass>/plugins/profile/<session>/<host>.xplane.pb is 5 folders down; a folder of logdirs
# one more. Beyond that, a folder is not a logdir (``analyze /tmp`` must not walk the disk).
MAX_TRACE_DEPTH = 6
MAX_FOLDERS = 20_000


def find_xplanes(folder: Path) -> list[Path]:
    """Every ``*.xplane.pb`` in a folder and its subfolders down to ``MAX_TRACE_DEPTH`` levels
    (hidden folders and folder links skipped; XProf leaves cache files beside the traces: ignored).
    Only folders that can hold traces are entered: inside a ``plugins`` folder only ``profile``
    (TensorBoard's other plugins keep their own data there), and a profile session's folder
    (``plugins/profile/<session>``) holds its traces itself, so nothing below it is read. More
    than ``MAX_FOLDERS`` folders on the way: not a logdir, an error that says so."""
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    found: list[str] = []
    seen = 0
    # (folder, depth below ``folder``, what it is: "" any folder, "plugins", "profile", "session")
    todo: list[tuple[str, int, str]] = [(str(folder), 0, _kind_of(folder))]
    while todo:
        here, depth, kind = todo.pop()
        seen += 1
        if seen > MAX_FOLDERS:
            raise TraceinsightError(
                f"{folder}: more than {MAX_FOLDERS:,} folders searched for traces without the end "
                "in sight: point at a run folder, a TensorBoard logdir or an .xplane.pb file")
        try:
            with os.scandir(here) as entries:
                listed = list(entries)
        except OSError:     # unreadable, or gone meanwhile: as os.walk, skipped
            continue
        for e in listed:
            name = e.name
            try:
                if name.endswith(".xplane.pb"):
                    if e.is_file():
                        found.append(e.path)
                    continue
                if (kind == "session" or depth + 1 > MAX_TRACE_DEPTH or name.startswith(".")
                        or ".xplane.pb_" in name    # XProf's per-tool caches hold copies
                        or (kind == "plugins" and name != "profile")
                        or e.is_symlink() or not e.is_dir()):
                    continue
            except OSError:
                continue
            sub = {"plugins": "profile", "profile": "session"}.get(kind) or \
                ("plugins" if name == "plugins" else "")
            todo.append((e.path, depth + 1, sub))
    return sorted(Path(f) for f in found)


def _kind_of(folder: Path) -> str:
    """What a folder given by the user is in a logdir's layout (see ``find_xplanes``)."""
    if folder.name == "plugins":
        return "plugins"
    if folder.name == "profile" and folder.parent.name == "plugins":
        return "profile"
    if folder.parent.name == "profile" and folder.parent.parent.name == "plugins":
        return "session"
    return ""


def pass_traces(run_path: Path, mode_folder: str, pass_name: str,
                skipped: list[str] | None = None) -> list[Path]:
    """The xplane files of one pass of one mode; the newest profile session if several exist.
    Only regular files inside the run folder: a FIFO, a device or a symlink out of the run is
    left out, with a note in ``skipped``."""
    from traceinsight.present import safe
    root = inside(run_path, f"{mode_folder}/{pass_name}/plugins/profile", "trace folder")
    try:
        if not root.is_dir():
            return []
        sessions = sorted(p for p in root.iterdir() if p.is_dir() and is_inside(run_path, p))
        for session in reversed(sessions):
            files = []
            for f in sorted(session.glob("*.xplane.pb")):
                if not is_inside(run_path, f):
                    why = "a symlink out of the run folder"
                elif not is_regular(f):
                    why = "not a regular file"
                else:
                    files.append(f)
                    continue
                if skipped is not None:
                    skipped.append(f"{safe(f.relative_to(run_path), 120)}: {why}, not read")
            if files:
                return files
    except OSError as e:
        raise TraceinsightError(f"{root}: cannot read ({e.strerror or e})") from None
    return []


def _made_at(run: Path) -> tuple[float, str]:
    """When the run was made: its run.json's ``created_utc``, else the time run.json was last
    written (a run folder from elsewhere, a hand-made one); the name breaks ties."""
    from datetime import datetime, timezone
    try:
        manifest = read_json(run / MANIFEST)
        created = manifest.get("created_utc") if isinstance(manifest, dict) else None
        if isinstance(created, str):
            stamp = datetime.fromisoformat(created.replace("Z", "+00:00"))
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=timezone.utc)
            return stamp.timestamp(), run.name
    except (TraceinsightError, ValueError, OverflowError, OSError):
        pass
    try:
        return (run / MANIFEST).stat().st_mtime, run.name
    except OSError:
        return float("-inf"), run.name


def newest_run(runs_dir: Path = Path("runs")) -> Path:
    """The run made last under ``runs_dir`` (by the time it was made, not its name: a run named
    with ``--name`` sorts anywhere)."""
    runs_dir = Path(runs_dir)
    candidates = sorted((p for p in runs_dir.iterdir() if is_run_folder(p)),
                        key=_made_at) if runs_dir.is_dir() else []
    if not candidates:
        raise TraceinsightError(f"no run found under {runs_dir}/ (capture one with: traceinsight capture MODEL.py)")
    return candidates[-1]
