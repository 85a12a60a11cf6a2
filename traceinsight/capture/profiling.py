"""Traced passes: TF's profiler server in this process, traced by a profiler client in its own process
(``compat.trace_client_cmd``: xprof's client, from the tool's interpreter when it has one)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any, Callable

from traceinsight import runfolder
from traceinsight.capture import compat
from traceinsight.capture import options as options_mod
from traceinsight.capture.steps import Recorder

HOST_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
PYTHON_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TracedPass:
    """A client-side trace of this process's profiler server (duration-based), from another process."""

    def __init__(self, port: int, logdir: Path, duration_ms: int, levels: dict[str, int],
                 client_python: str | None = None):
        self._enabled = compat.traceme_enabled()
        self.port, self.logdir, self.duration_ms, self.levels = port, Path(logdir), duration_ms, levels
        cmd = compat.trace_client_cmd(client_python, f"localhost:{port}", str(self.logdir), int(duration_ms),
                                      3, dict(levels))
        # its stdout / INFO lines go to a log beside the trace, not into the workload's output
        self.client = compat.TraceProcess(cmd, str(self.logdir.parent / f".{self.logdir.name}.client.log"),
                                          env=_client_env())

    @property
    def error(self) -> str | None:
        return self.client.error

    def start(self, live_timeout_s: float = 60.0) -> bool:
        """Start tracing; True once the profiler session records (TraceMe enabled)."""
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.client.start()
        deadline = time.perf_counter() + live_timeout_s
        while time.perf_counter() < deadline:
            if self._enabled():
                return True
            if not self.client.is_alive():
                self.client.join()
                return False
            time.sleep(0.0005)
        return False

    @property
    def live(self) -> bool:
        return self.client.is_alive() and self._enabled()

    def finish(self) -> Path | None:
        self.client.join(timeout=self.duration_ms / 1e3 + 120.0)
        files = runfolder.find_xplanes(self.logdir)
        return max(files, key=lambda p: p.stat().st_mtime) if files else None


def _client_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)   # the client needs nothing of the workload's path
    return env


def traced_phase(tf, driver, port, logdir, duration_ms, levels, max_steps, next_step, name,
                 client_python: str | None = None, before: Callable[[], Any] | None = None):
    """Trace ``driver``'s steps. ``before``: called once the profiler records, before the first
    step (the calibration); what it returns is the result's ``"before"`` entry."""
    tp = TracedPass(port, logdir, duration_ms, levels, client_python)
    live = tp.start()
    before_out = before() if live and before is not None else None

    def done(rec: Recorder) -> bool:
        return len(rec.steps_s) >= max_steps or not tp.live

    rec = Recorder(tf, name, next_step, done)
    if live:
        driver.run(rec)
    path = tp.finish()
    result = {
        "duration_ms": duration_ms,
        "live": bool(live),
        "profile_options": options_mod.check(levels, path, tf.__version__),
        "trace": str(path.relative_to(logdir.parent.parent)) if path else None,
    }
    if before_out is not None:
        result["before"] = before_out
    if not live:
        result["problem"] = "the profiler never started recording" + (f" ({tp.error})" if tp.error else "")
    elif tp.error:
        result["problem"] = tp.error
    return rec, result

