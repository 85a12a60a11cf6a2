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

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from traceinsight.errors import TraceinsightError

SCHEMA_VERSION = 1
MANIFEST = "run.json"
TIMINGS = "timings.json"
PASSES = ("host", "python")


def mode_dir(mode: str) -> str:
    """File-system-safe folder name of a mode (``tf_keras:predict`` -> ``tf_keras-predict``)."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", mode)


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
    atomic_write_bytes(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default)
                       .encode() + b"\n")


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise TraceinsightError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TraceinsightError(f"{path}: not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise TraceinsightError(f"{path}: expected a JSON object")
    return data


def is_run_folder(path: Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def read_manifest(run_path: Path) -> dict[str, Any]:
    manifest = read_json(Path(run_path) / MANIFEST)
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise TraceinsightError(
            f"{run_path}: run.json schema version {version!r} is not supported (expected {SCHEMA_VERSION})")
    return manifest


def find_xplanes(folder: Path) -> list[Path]:
    """Every ``*.xplane.pb`` under a folder (XProf leaves cache files beside them: ignored)."""
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    return sorted(p for p in folder.rglob("*.xplane.pb") if p.is_file())


def pass_traces(run_path: Path, mode_folder: str, pass_name: str) -> list[Path]:
    """The xplane files of one pass of one mode; the newest profile session if several exist."""
    root = Path(run_path) / mode_folder / pass_name / "plugins" / "profile"
    if not root.is_dir():
        return []
    sessions = sorted(p for p in root.iterdir() if p.is_dir())
    for session in reversed(sessions):
        files = sorted(session.glob("*.xplane.pb"))
        if files:
            return files
    return []


def newest_run(runs_dir: Path = Path("runs")) -> Path:
    runs_dir = Path(runs_dir)
    candidates = sorted((p for p in runs_dir.iterdir() if is_run_folder(p)),
                        key=lambda p: p.name) if runs_dir.is_dir() else []
    if not candidates:
        raise TraceinsightError(f"no run found under {runs_dir}/ (capture one with: traceinsight capture MODEL.py)")
    return candidates[-1]
