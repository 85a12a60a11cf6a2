"""A cache of analysed modes inside a run folder, so reopening a run (view, report) skips the
trace analysis. JSON only (never pickle, never eval): ``<run>/.traceinsight/analysis-v<N>/<mode
dir>.json``, valid while the analysis version, the analysis source and every input file's size and
mtime are unchanged (``key``), and while the result's fields are those it was written for
(``FORMAT``).

A mode is written and read by one codec that walks the result's dataclass fields by their type
hints (``analysis.codec``); tables are stored column by column with their dtype, and read back as
the same ``Columns`` the analysis made (no pandas: ``traceinsight analyze`` of a run folder never
imports it). The analysis processes of ``analysis.parallel`` send their results in this form too.
A file that is not what the codec writes is ignored, and the mode analysed again."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from traceinsight.analysis import codec
from traceinsight.analysis.codec import CodecError
from traceinsight.model import CATEGORIES, TABLES, ModeResult, Timing
from traceinsight.resample import BOOTSTRAP_SAMPLES
from traceinsight.runfolder import atomic_write_json

# Bump when the analysis changes what it computes: old caches are then ignored. The key also holds
# a digest of the analysis source (``source_digest``), so a change nobody bumped for still counts.
# 5: tables as typed columns. 7: the tf.data stage table. 8: the profiler's events per step.
# 9: older TF's kernel runs, one-call steps, compile not separable.
# 10: the layers table step by step (``ModeResult.layer_steps``).
ANALYSIS_VERSION = 10


def source_digest() -> str:
    """sha256 of the analysis package's source files, Python and C (the code the cached results
    came from)."""
    import hashlib
    global _DIGEST
    if _DIGEST is None:
        h = hashlib.sha256()
        here = Path(__file__).parent
        for f in sorted([*here.glob("*.py"), *here.glob("*.c")]):
            h.update(f.name.encode())
            h.update(f.read_bytes())
        _DIGEST = h.hexdigest()[:16]
    return _DIGEST


_DIGEST: str | None = None
FRAMES = TABLES      # a mode's tables, stored column by column (``codec.table_to_json``)

# ModeResult fields the cache does not store (besides those not compared: what a result is given
# at run time): its timing is read from timings.json on every load, its kind from run.json, its
# correction is computed when a run is made
NOT_STORED = ("timing", "kind", "correction")
# the cache's version of the result's fields: a file written for other fields is stale
FORMAT = codec.schema(ModeResult, NOT_STORED)


def cache_path(run: Path, mode_folder: str) -> Path:
    return Path(run) / ".traceinsight" / f"analysis-v{ANALYSIS_VERSION}" / f"{mode_folder}.json"


def fingerprint(files: list[Path]) -> list[list]:
    out = []
    for f in files:
        try:
            st = Path(f).stat()
            out.append([str(f), st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([str(f), None, None])
    return out


def to_dict(mode: ModeResult, key: list) -> dict:
    """A ModeResult as plain JSON data (its timing is not included: it is read from timings.json),
    with the cache's ``key`` and ``FORMAT``."""
    data = {"key": key, "format": FORMAT} | codec.encode(mode, ModeResult, NOT_STORED)
    boot = mode.known_boot_medians      # kept when computed (``ModeResult.boot_medians``)
    if boot is not None:
        data["boot"] = {"digest": mode.boot_digest, "medians": codec.to_json(boot, np.ndarray)}
    return data


def _adopt_boot(mode: ModeResult, boot: Any) -> ModeResult:
    """Give ``mode`` the bootstrap medians ``to_dict`` kept, where they were resampled from the
    very samples the mode has now (its timing is read from timings.json on every load, so the
    digest is compared each time); anything else in their place is ignored (resampled again)."""
    if not isinstance(boot, dict) or boot.get("digest") != mode.boot_digest:
        return mode
    try:
        values = codec.from_json(boot.get("medians"), np.ndarray)
    except CodecError:
        return mode
    if len(values) != BOOTSTRAP_SAMPLES:
        return mode
    return mode.replace(boot=values)


def timing_to_dict(t: Timing) -> dict:
    """A ``Timing`` as plain JSON data that ``timing_from_dict`` reads back exactly (every float's
    bits; None stays None). The cache does not store timings (``load`` is given the ones read
    from timings.json); the analysis processes of ``analysis.parallel`` are sent them this way."""
    return codec.encode(t, Timing)


def timing_from_dict(d: dict) -> Timing:
    return codec.decode(d, Timing)


def save(path: Path, mode: ModeResult, key: list) -> None:
    data = to_dict(mode, key)
    try:
        atomic_write_json(path, data)
    except OSError:
        pass  # a read-only run: analyse again next time


def load(path: Path, key: list, timing: Timing | None) -> ModeResult | None:
    return _read(path, key, timing)[0]


# A cache file is our own JSON of one mode's tables: a file larger than this was not written by
# us for any trace we analyse (the largest runs' caches are a few MB); refused before reading.
MAX_CACHE_BYTES = 256 << 20


def _unsafe_dirs(run: Path, path: Path) -> str | None:
    """Why the cache file's folders may not be used: ``.traceinsight`` or ``analysis-v<N>`` is a
    symlink or not a folder, or the file resolves outside the run folder. None when fine."""
    from traceinsight.runfolder import is_inside
    run = Path(run)
    for d in (run / ".traceinsight", path.parent):
        if d.is_symlink():
            return f"{d.relative_to(run)} is a symlink"
        if os.path.lexists(d) and not d.is_dir():
            return f"{d.relative_to(run)} is not a folder"
    if not is_inside(run, path.parent):
        return "the cache folder is outside the run folder"
    return None


def load_checked(run: Path, path: Path, key: list, timing: Timing | None
                 ) -> tuple[ModeResult | None, str | None]:
    """The cached mode of a run folder, or None and, when a cache file was there but not used
    for a reason the user may want to know (damaged, not a regular file, a symlinked folder), a
    note saying so. The cache is disposable: whatever is wrong with it, the mode is analysed
    again, never a traceback."""
    path = Path(path)
    if not os.path.lexists(path):
        return None, None
    why = _unsafe_dirs(run, path)
    if why is None and path.is_symlink():
        why = "the cache file is a symlink"
    if why is not None:
        return None, f"analysis cache not used ({why}): analysed again"
    mode, why = _read(path, key, timing)
    return mode, None if why is None else f"analysis cache not used ({why}): analysed again"


def _read(path: Path, key: list, timing: Timing | None) -> tuple[ModeResult | None, str | None]:
    from traceinsight.errors import TraceinsightError
    from traceinsight.runfolder import open_regular
    try:
        with open_regular(path, MAX_CACHE_BYTES) as f:
            data = json.loads(f.read(MAX_CACHE_BYTES + 1))
    except FileNotFoundError:
        return None, None
    except TraceinsightError as e:
        return None, str(e).split(": ", 1)[-1]
    except OSError as e:
        return None, f"cannot read it: {e.strerror or e}"
    except RecursionError:
        return None, "nested too deeply"
    except (ValueError, MemoryError):
        return None, "not readable JSON"
    if not isinstance(data, dict) or data.get("key") != key or data.get("format") != FORMAT:
        return None, None       # another analysis version, other inputs or fields: simply stale
    mode = from_dict(data, key, timing)
    return mode, None if mode is not None else "damaged"


def save_checked(run: Path, path: Path, mode: ModeResult, key: list) -> str | None:
    """Write a mode's cache inside the run folder, never through a symlink out of it (the run's
    ``.traceinsight`` could point anywhere); a note when it was not written for that reason. A
    full disk or a read-only run is not worth a note: the mode is analysed again next time."""
    run = Path(run)
    why = _unsafe_dirs(run, Path(path))
    if why is not None:
        return f"analysis cache not written ({why})"
    try:
        (run / ".traceinsight").mkdir(exist_ok=True)
        Path(path).parent.mkdir(exist_ok=True)
    except OSError:
        return None
    why = _unsafe_dirs(run, Path(path))     # made by someone else between the check and mkdir
    if why is not None:
        return f"analysis cache not written ({why})"
    save(path, mode, key)
    return None


def from_dict(data: Any, key: list, timing: Timing | None) -> ModeResult | None:
    """The ModeResult ``to_dict`` wrote, or None when ``data`` is not that (or of another key or
    format)."""
    if not isinstance(data, dict) or data.get("key") != key or data.get("format") != FORMAT:
        return None
    try:
        mode = codec.decode(data, ModeResult, NOT_STORED, timing=timing)
    except CodecError:
        return None   # not what to_dict wrote (a damaged or hand-made file): analysed again
    if not _sound(mode):
        return None
    return _adopt_boot(mode, data.get("boot"))


def _sound(mode: ModeResult) -> bool:
    """What the fields' types do not say and the readers of a mode rely on."""
    ev = mode.tracer_events
    ce = mode.compile_estimate
    return mode.status in ("ok", "failed", "missing") and (
        ev is None or (set(ev.per_step) == set(CATEGORIES)
                       and all(math.isfinite(v) and v >= 0 for v in ev.per_step.values())
                       and (ev.calibration_events is None
                            or (math.isfinite(ev.calibration_events)
                                and ev.calibration_events >= 0)))) and (
        # a compile estimate's times are durations: finite, never negative
        ce is None or all(v is None or (math.isfinite(v) and v >= 0)
                          for c in ce.calls for v in (c.first_op_ms, c.steady_op_ms, c.compile_ms)))
