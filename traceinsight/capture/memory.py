"""Peak resident memory of the workload process over one phase (the untraced timing).

The process's lifetime peak (``getrusage``'s ``ru_maxrss``) would hold the host-traced pass that
ran before the timing (the profiler's buffers) and the import of TensorFlow; Linux can reset the
peak instead: writing ``5`` to ``/proc/self/clear_refs`` sets ``VmHWM`` (the peak resident set) to
the current resident set, so ``VmHWM`` read at the end is the peak of the phase alone. Where that
cannot be done (not Linux, an older kernel, a refused write), the lifetime peak is recorded and
said to be one (``basis``). On Linux ``getrusage`` reads the same high-water mark (so after the
reset it too is the phase's peak, not the lifetime's). Standard library only: this runs in the workload's interpreter.
"""

from __future__ import annotations

import resource
import sys
from typing import Any

PHASE = "phase"          # VmHWM after a reset at the phase's start: the phase's own peak
PROCESS = "process"      # ru_maxrss: the process's peak since it started (includes earlier phases)


def _status_kib(field: str) -> int | None:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM), or None."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _lifetime_peak_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) * (1 if sys.platform == "darwin" else 1024)   # bytes on macOS, KiB on Linux


class PeakRss:
    """``PeakRss()`` at a phase's start, ``.finish()`` at its end -> the dict timings.json keeps
    as ``memory``: peak_rss_bytes, basis (PHASE or PROCESS), rss_start_bytes / rss_end_bytes."""

    def __init__(self) -> None:
        self.start_kib = _status_kib("VmRSS")
        self.reset = _reset_peak() and _status_kib("VmHWM") is not None

    def finish(self) -> dict[str, Any]:
        end_kib = _status_kib("VmRSS")
        hwm = _status_kib("VmHWM") if self.reset else None
        out: dict[str, Any] = {
            "peak_rss_bytes": hwm * 1024 if hwm is not None else _lifetime_peak_bytes(),
            "basis": PHASE if hwm is not None else PROCESS,
            "rss_start_bytes": self.start_kib * 1024 if self.start_kib is not None else None,
            "rss_end_bytes": end_kib * 1024 if end_kib is not None else None,
        }
        return out
