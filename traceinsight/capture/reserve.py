"""Writing a run folder on a disk that fills: the space set aside for a mode's end (``RESERVE``),
given back to write it, and the words a write the disk refused is said in. Shared by every route
that records modes: ``capture`` (its parent writes run.json, its children the traces and results)
and ``run`` / ``profile()`` / the Keras callback (``capture.script``).

The status update is the write a full disk refuses, and a mode left ``running`` says nothing true.
The status is written as the rest of run.json is (whole, atomically: a torn run.json would lose
every mode), so the space must hold a whole new run.json."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from traceinsight.errors import WriteError

RESERVE = ".capture.reserve"
RESERVE_MIN_BYTES = 64 << 10

SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)})


class DiskFull(WriteError):
    """A write the disk refused (ENOSPC, EDQUOT, EFBIG): one line, exit status 1. ``errno`` and
    ``path`` say which write, for the capture to end the mode it was writing and say so."""

    def __init__(self, message: str, errno_: int | None, path: Path | str | None):
        super().__init__(message)
        self.errno = errno_
        self.path = str(path) if path is not None else None


def set_aside(run_path: Path, manifest: dict[str, Any]) -> None:
    """Set ``RESERVE`` aside in the run folder: twice run.json's size and ``RESERVE_MIN_BYTES``,
    allocated (not a sparse file). Raises DiskFull (one line) when the disk cannot hold it: the
    disk is full, and the mode would end failed anyway; WriteError for another failed write."""
    size = RESERVE_MIN_BYTES + 2 * len(json.dumps(manifest, default=str))
    path = Path(run_path) / RESERVE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            try:
                os.posix_fallocate(fd, 0, size)
            except (AttributeError, OSError) as e:
                if isinstance(e, OSError) and e.errno in SPACE_ERRNOS:
                    raise
                os.write(fd, b"\0" * size)    # a file system without fallocate
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        give_back(run_path)
        message = (f"{space_words(e) or 'cannot write'}: cannot set aside {size >> 10} KiB in "
                   f"{run_path} for the run's record ({e.strerror or e}); free some space")
        if e.errno in SPACE_ERRNOS:
            raise DiskFull(message, e.errno, path) from None
        raise WriteError(message) from None


def give_back(run_path: Path) -> bool:
    """Give ``RESERVE``'s space back; whether there was one."""
    try:
        os.unlink(Path(run_path) / RESERVE)
        return True
    except OSError:
        return False


def save_manifest(writer) -> None:
    """``writer.save()``; when it fails (a full disk), again once with the reserve's space given
    back (``RESERVE``). Raises WriteError when that fails too."""
    try:
        writer.save()
    except WriteError:
        if not give_back(writer.path):
            raise
        writer.save()


def space_words(e: BaseException | int | None) -> str:
    """What a write's failure says of the disk: "the disk is full" (ENOSPC, EDQUOT: a quota), "the
    file-size limit was reached" (EFBIG: ``ulimit -f``), else ""."""
    code = e if isinstance(e, int) or e is None else getattr(e, "errno", None)
    if code == errno.EFBIG:
        return "the file-size limit was reached (EFBIG)"
    if code == errno.ENOSPC:
        return "the disk is full (ENOSPC)"
    if code == getattr(errno, "EDQUOT", None):
        return "the disk quota is used up (EDQUOT)"
    return ""


def cannot_write(path: Path | str, e: OSError) -> str:
    """One line for a write that failed: what it says of the disk, the file, the system's words."""
    words = space_words(e)
    return f"{words + ': ' if words else ''}cannot write {path} ({e.strerror or e})"


def write_error(path: Path | str, e: OSError) -> WriteError:
    """The error a failed write of ``path`` raises: ``DiskFull`` when the disk refused it."""
    if e.errno in SPACE_ERRNOS:
        return DiskFull(cannot_write(path, e), e.errno, path)
    return WriteError(f"cannot write {path}: {e.strerror or e}")


def hand_back(path: Path, obj: dict) -> None:
    """A workload process's write of what its parent reads (its result, its error, a round). A
    disk that refuses it (full, a quota, ``ulimit -f``) ends the process at once with that errno
    as its exit status, the parent's one way to learn it (nothing more can be written to the run
    folder's disk): the parent then ends the mode failed, naming the disk (``children``)."""
    from traceinsight import runfolder
    try:
        runfolder.atomic_write_json(path, obj)
    except OSError as e:
        code = e.errno
        if code is None or code not in SPACE_ERRNOS:
            raise
        try:
            print(f"traceinsight: {cannot_write(path, e)}", file=sys.stderr, flush=True)
        except OSError:
            pass
        os._exit(code)


def refused_by_disk(returncode: int | None) -> bool:
    """Whether a workload process ended because the disk refused its write (``hand_back``)."""
    return returncode in SPACE_ERRNOS
