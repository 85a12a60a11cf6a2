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
        for _ in range(100):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise TraceinsightError(busy_message(self.path.parent, holder(self.path.parent))) \
                    from None
            # the file we locked must still be the one at the path: the capture that held it may
            # have removed it on finishing between our open and our flock (then lock the new one)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
            except OSError:
                same = False
            if same:
                break
            os.close(fd)
        else:
            raise TraceinsightError(f"cannot lock {self.path.parent}: its lock file keeps changing")
        try:
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "host": platform.node(),
                                     "since_utc": datetime.now(timezone.utc).isoformat(
                                         timespec="seconds")}).encode())
        except OSError as e:   # a full disk: no capture can write this run anyway
            self.fd = fd
            self.release()
            raise TraceinsightError(f"cannot lock {self.path.parent}: {e.strerror or e}") from None
        self.fd = fd
        return self

    def _open(self) -> int:
        try:
            # never through a symlink: the lock file is created inside the run folder
            return os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                           | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as e:
            raise TraceinsightError(f"cannot lock {self.path.parent}: {e.strerror or e}") from None

    def release(self) -> None:
        """Unlock and remove the lock file: a finished run keeps no ``.capture.lock`` (removed
        while still locked, so no other capture can lock the old file after we let go; one that
        opened it before sees it is gone and locks a new one, see ``acquire``)."""
        if self.fd is not None:
            try:
                if os.path.samestat(os.fstat(self.fd), os.stat(self.path, follow_symlinks=False)):
                    os.unlink(self.path)
            except OSError:
                pass
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
