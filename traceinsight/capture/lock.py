"""A run folder being written is locked: ``<run>/.capture.lock`` (``fcntl.flock``, holder's pid inside).

Two captures writing one run would delete each other's mode folders (``--resume`` starts a failed or
unfinished mode clean). The kernel drops a flock when its holder dies, so a lock left by a killed
capture is simply taken over; the pid written in the file only names the holder in the message.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

from traceinsight.errors import TraceinsightError

LOCK_FILE = ".capture.lock"


class RunLock:
    def __init__(self, run_path: Path):
        self.path = Path(run_path) / LOCK_FILE
        self.fd: int | None = None

    def acquire(self) -> "RunLock":
        """Take the lock, or raise TraceinsightError naming the live capture that holds it."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise TraceinsightError(f"cannot lock {self.path.parent}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise TraceinsightError(busy_message(self.path.parent, holder(self.path.parent))) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": platform.node(),
                                 "since_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
                                ).encode())
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def holder(run_path: Path) -> dict | None:
    """Who writes this run now: the lock file's content while its flock is held, else None."""
    path = Path(run_path) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: read who holds it
            try:
                info = json.loads(os.read(fd, 4096) or b"{}")
            except ValueError:
                info = {}
            return info if isinstance(info, dict) else {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None  # free: a stale file from a capture that ended or died
    finally:
        os.close(fd)


def busy_message(run_path: Path, info: dict | None) -> str:
    who = f"pid {info.get('pid')}" if info and info.get("pid") else "another process"
    since = f" since {info['since_utc']}" if info and info.get("since_utc") else ""
    return (f"{run_path} is being written by another capture ({who}{since}); "
            "wait until it finishes, or capture into another --name")
