"""Traced passes: TF's profiler server in this process, traced from a thread through xprof's client."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from traceinsight import runfolder
from traceinsight.capture import options as options_mod
from traceinsight.capture.loading import _one_line
from traceinsight.capture.steps import Recorder

HOST_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
PYTHON_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TracedPass:
    """A client-side trace of this process's profiler server, from a thread (duration-based)."""

    def __init__(self, port: int, logdir: Path, duration_ms: int, levels: dict[str, int]):
        from tensorflow.python.profiler.internal import _pywrap_traceme
        from xprof.convert import _pywrap_profiler_plugin

        self._enabled = _pywrap_traceme.traceme_enabled
        self._trace = _pywrap_profiler_plugin.trace
        self.port, self.logdir, self.duration_ms, self.levels = port, Path(logdir), duration_ms, levels
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, name="traceinsight-trace", daemon=True)

    def _run(self) -> None:
        try:
            # (service_addr, logdir, worker_list, include_dataset_ops, duration_ms, attempts, options)
            self._trace(f"localhost:{self.port}", str(self.logdir), "", True, int(self.duration_ms), 3,
                        dict(self.levels))
        except Exception as e:  # reported in timings.json, the capture goes on
            self.error = _one_line(e)

    def start(self, live_timeout_s: float = 20.0) -> bool:
        """Start tracing; True once the profiler session records (TraceMe enabled)."""
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.thread.start()
        deadline = time.perf_counter() + live_timeout_s
        while time.perf_counter() < deadline:
            if self._enabled():
                return True
            if not self.thread.is_alive():
                return False
            time.sleep(0.0005)
        return False

    @property
    def live(self) -> bool:
        return self.thread.is_alive() and self._enabled()

    def finish(self) -> Path | None:
        self.thread.join()
        files = runfolder.find_xplanes(self.logdir)
        return max(files, key=lambda p: p.stat().st_mtime) if files else None


def traced_phase(tf, driver, port, logdir, duration_ms, levels, max_steps, next_step, name):
    tp = TracedPass(port, logdir, duration_ms, levels)
    live = tp.start()

    def done(rec: Recorder) -> bool:
        return len(rec.steps_s) >= max_steps or not tp.live

    rec = Recorder(tf, name, next_step, done)
    if live:
        driver.run(rec)
    path = tp.finish()
    result = {
        "duration_ms": duration_ms,
        "live": bool(live),
        "profile_options": options_mod.check(levels, path),
        "trace": str(path.relative_to(logdir.parent.parent)) if path else None,
    }
    if not live:
        result["problem"] = "the profiler never started recording" + (f" ({tp.error})" if tp.error else "")
    elif tp.error:
        result["problem"] = tp.error
    return rec, result

