"""Traced passes: a profiler session in this process (``compat.LocalTrace``: explicit tracer
levels, no profiler server listening anywhere), bounded by a duration."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from traceinsight.capture import compat, machine
from traceinsight.capture import options as options_mod
from traceinsight.capture.steps import Recorder

HOST_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
PYTHON_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}


class TracedPass:
    """A trace of this process of at most ``duration_ms``: a timer thread stops it then, as a
    profiler client's duration-based trace would end (a step still running is cut); ``finish``
    stops it at once when the steps asked for are done first."""

    def __init__(self, tf, logdir: Path, duration_ms: int, levels: dict[str, int]):
        self._enabled = compat.traceme_enabled()
        self.logdir, self.duration_ms, self.levels = Path(logdir), duration_ms, levels
        self.session = compat.LocalTrace(tf, str(self.logdir), levels)

    @property
    def error(self) -> str | None:
        return self.session.error

    def start(self) -> bool:
        """Start tracing; True once the profiler session records (TraceMe enabled)."""
        try:
            self.session.start()
        except Exception as e:
            msg = str(e).strip().splitlines()
            self.session.error = f"{type(e).__name__}: {msg[0] if msg else ''}"
            return False
        self.session.stop_after(self.duration_ms / 1e3)
        return bool(self._enabled())

    @property
    def live(self) -> bool:
        return not self.session.stopped and self._enabled()

    def finish(self) -> Path | None:
        self.session.stop()
        path = self.session.path()
        return Path(path) if path else None


def traced_phase(tf, driver, logdir, duration_ms, levels, max_steps, next_step, name,
                 before: Callable[[], Any] | None = None):
    """Trace ``driver``'s steps. ``before``: called once the profiler records, before the first
    step (the calibration); what it returns is the result's ``"before"`` entry."""
    tp = TracedPass(tf, logdir, duration_ms, levels)
    live = tp.start()
    before_out = before() if live and before is not None else None

    def done(rec: Recorder) -> bool:
        return len(rec.steps_s) >= max_steps or not tp.live

    rec = Recorder(tf, name, next_step, done)
    usage = machine.Usage()
    if live:
        driver.run(rec)
    load = usage.finish()
    path = tp.finish()
    result = {
        "duration_ms": duration_ms,
        "live": bool(live),
        "profile_options": options_mod.check(levels, path, tf.__version__),
        "trace": str(path.relative_to(logdir.parent.parent)) if path else None,
    }
    if before_out is not None:
        result["before"] = before_out
    if live:   # the machine's load while the traced steps ran (the untraced phase has its own)
        result["load"] = load
    if not live:
        result["problem"] = "the profiler never started recording" + (f" ({tp.error})" if tp.error else "")
    elif tp.error:     # the session recorded: its trace could not be saved (a full disk ...)
        result["problem"] = tp.error
        result["save_failed"] = True
        if tp.session.disk_full:
            result["disk_full"] = True
    return rec, result

