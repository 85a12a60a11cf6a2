"""The capture's child processes: a workload process per mode (``python -m
traceinsight.capture.runner``) in its own process group, its timeout, Ctrl-C and signals, its
output (stderr.log, the tail shown on failure, the phase it reached) and the JSON result it
hands back (never pickle); a process kept alive serves interleaved timing rounds (``LiveChild``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from traceinsight import runfolder
from traceinsight.capture import environment, reserve

STDERR_TAIL_LINES = 25

@dataclass
class ChildResult:
    ok: bool
    result: dict                  # the child's result ({} when it failed)
    error: str                    # why it failed ("" when ok)
    stderr_tail: str | None
    returncode: int | None
    setup_problem: bool = False   # this Python cannot capture (no TensorFlow / xprof)
    live: "LiveChild | None" = None  # the process, still running, when it was kept alive for rounds


def _tail(text: str, n: int = STDERR_TAIL_LINES) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


@dataclass
class LiveChild:
    """A mode's workload process kept alive after its capture, to time interleaved rounds."""

    proc: subprocess.Popen
    log_tmp: str
    stderr_path: Path | None

    def ask_round(self, i: int, out: Path, timeout: float) -> dict | None:
        """Ask for round ``i``; its result, or None when the process died or timed out."""
        if self.proc.poll() is not None:
            return None
        if out.exists():
            out.unlink()
        try:
            stdin = self.proc.stdin
            if stdin is None:
                return None
            stdin.write((json.dumps({"round": i, "out": str(out)}) + "\n").encode())
            stdin.flush()
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if out.exists():
                data = json.loads(out.read_text())
                out.unlink()
                return data
            if self.proc.poll() is not None:
                return None
            time.sleep(0.02)
        return None

    def close(self) -> None:
        """End the process (asked, then killed) and write its whole output to stderr.log."""
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                self.proc.stdin.write(b'{"exit": true}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self.proc)
        try:
            text = Path(self.log_tmp).read_text(encoding="utf-8", errors="replace")
            if self.stderr_path is not None and self.stderr_path.parent.is_dir():
                runfolder.atomic_write_bytes(self.stderr_path, text.encode())
        except OSError:
            pass   # the mode is recorded already: its output is not worth failing it (a full disk)
        finally:
            try:
                os.unlink(self.log_tmp)
            except OSError:
                pass

    def kill(self) -> None:
        _kill_group(self.proc)
        try:
            os.unlink(self.log_tmp)
        except OSError:
            pass


def run_child(what: str, spec: dict, workdir: Path, timeout: float, env: dict[str, str],
              stderr_path: Path | None = None, poll: Callable[[], None] | None = None,
              keep_alive: bool = False) -> ChildResult:
    """Run the runner in its own process group; kill the group on timeout or Ctrl-C.

    ``keep_alive``: return as soon as the result is written, leaving the process running (it then
    serves interleaved rounds, see ``LiveChild``)."""
    out = workdir / f".{what}.result.json"
    err_file = out.with_name(out.name + ".error")
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        for p in (out, err_file):
            if p.exists():
                p.unlink()
        log_fd, log_tmp = tempfile.mkstemp(dir=workdir, prefix=f".{what}.stderr.", suffix=".tmp")
    except OSError as e:   # a full disk: the mode cannot be recorded (``reserve``)
        raise reserve.write_error(e.filename or workdir, e) from None
    cmd = [environment.workload_python or sys.executable, "-m", "traceinsight.capture.runner", what, "--spec", json.dumps(spec),
           "--out", str(out)]
    timed_out = False
    alive = False
    try:
        with os.fdopen(log_fd, "wb") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if keep_alive else subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            deadline = time.monotonic() + timeout
            try:
                while True:
                    try:
                        proc.wait(timeout=0.2)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if keep_alive and out.exists():
                        alive = True
                        break
                    if poll is not None:
                        poll()
                    if time.monotonic() > deadline:
                        timed_out = True
                        _kill_group(proc)
                        break
            except BaseException:  # Ctrl-C: do not leave the workload running
                _kill_group(proc)
                raise
        text = Path(log_tmp).read_text(encoding="utf-8", errors="replace")
        if stderr_path is not None:
            try:
                runfolder.atomic_write_bytes(stderr_path, text.encode())
            except OSError as e:   # a full disk: the mode cannot be recorded (``reserve``)
                if alive:
                    _kill_group(proc)
                    alive = False
                raise reserve.write_error(stderr_path, e) from None
    finally:
        if not alive:
            try:
                os.unlink(log_tmp)
            except OSError:
                pass
    tail = _tail(text)
    rc = proc.returncode
    if alive:
        result = json.loads(out.read_text())
        out.unlink()
        return ChildResult(True, result, "", tail, None, live=LiveChild(proc, log_tmp, stderr_path))
    if timed_out:
        return ChildResult(False, {}, f"timed out after {timeout:g} s (--timeout)", tail, rc)
    if reserve.refused_by_disk(rc) and not out.exists() and not err_file.exists():
        # the process could not write what it hands back (``reserve.hand_back``)
        raise reserve.DiskFull(f"{reserve.space_words(rc)}: the workload process could not write "
                               f"its result in {workdir}", rc, workdir)
    if rc == 0 and out.exists():
        result = json.loads(out.read_text())
        out.unlink()
        return ChildResult(True, result, "", tail, rc)
    if err_file.exists():
        info = json.loads(err_file.read_text())
        err_file.unlink()
        return ChildResult(False, {}, str(info.get("error") or f"failed (exit status {rc})"), tail, rc,
                           bool(info.get("setup")))
    elif rc is not None and rc < 0:
        try:
            error = f"died with signal {signal.Signals(-rc).name}"
        except ValueError:
            error = f"died with signal {-rc}"
        if -rc == signal.SIGKILL:
            error += " (a SIGKILL nobody asked for is usually the out-of-memory killer)"
    else:
        last = tail.splitlines()[-1] if tail else ""
        error = f"exited with status {rc}" + (f": {last}" if last else "")
    return ChildResult(False, {}, error, tail, rc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group of the child we started, nothing else
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


PROGRESS = ".progress.json"  # written by the runner at each phase (runner.PROGRESS)


def read_phase(mode_path: Path) -> str | None:
    try:
        return json.loads((Path(mode_path) / PROGRESS).read_text()).get("phase")
    except (OSError, ValueError, AttributeError):
        return None

