"""How loaded the machine was while a mode was timed: load averages, CPU count, the share of the
CPUs that other processes kept busy (``/proc/stat`` minus this process's own ``/proc/self/stat``;
steal included) and the share the hypervisor stole (``/proc/stat``'s steal column).

Timings on a shared machine move with other people's work; recording the load next to every timing
phase lets a reader (and the analysis) tell a slow mode from a busy machine. Linux-only figures are
None elsewhere.
"""

from __future__ import annotations

import os
import time
from typing import Any


def cpu_count() -> dict[str, int | None]:
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    return {"cpu_count": os.cpu_count(), "cpu_usable": usable}


def loadavg() -> list[float] | None:
    try:
        return [round(v, 3) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _ticks() -> tuple[int, int, int, int | None] | None:
    """(all CPUs' total ticks, their busy ticks, this process's ticks, stolen ticks), or None off
    Linux. Stolen: None on kernels whose ``/proc/stat`` has no steal column (before 2.6.11)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
        with open("/proc/self/stat", encoding="ascii") as f:
            own = f.read().rsplit(")", 1)[1].split()   # after "pid (comm)": field 3 is index 0
    except (OSError, ValueError, IndexError):
        return None
    if len(fields) < 5:
        return None
    total = sum(fields)                      # user nice system idle iowait irq softirq steal
    busy = total - fields[3] - fields[4]     # minus idle and iowait: steal counts as busy (others')
    steal = fields[7] if len(fields) >= 8 else None
    return total, busy, int(own[11]) + int(own[12]), steal   # utime + stime (same clock ticks)


# The fewest clock ticks (all CPUs' together) an interval needs for a load figure: at 10 ms a tick,
# a share over fewer is coarser than 5 % (one tick of two is "50 %"), so a shorter interval (a
# traced window of a few fast steps) gets none rather than a figure read as a fact.
MIN_TICKS = 20


class Usage:
    """Load over an interval: ``Usage()`` at its start, ``.finish()`` at its end -> dict."""

    def __init__(self) -> None:
        self.t0 = time.time()
        self.load0 = loadavg()
        self.ticks0 = _ticks()

    def finish(self) -> dict[str, Any]:
        ticks1 = _ticks()
        out: dict[str, Any] = {"t_start_unix": round(self.t0, 3), "t_end_unix": round(time.time(), 3),
                               "loadavg": self.load0, "loadavg_end": loadavg()}
        if self.ticks0 and ticks1 and ticks1[0] - self.ticks0[0] >= MIN_TICKS:
            total = ticks1[0] - self.ticks0[0]
            other = (ticks1[1] - self.ticks0[1]) - (ticks1[2] - self.ticks0[2])
            # share of all CPUs' time that other processes used (1.0: every CPU busy with others)
            out["other_cpu_busy"] = round(min(1.0, max(0.0, other / total)), 4)
            out["own_cpu_busy"] = round((ticks1[2] - self.ticks0[2]) / total, 4)
            # the hypervisor's share (other virtual machines), already inside other_cpu_busy
            s0, s1 = self.ticks0[3], ticks1[3]
            out["steal"] = round(min(1.0, max(0.0, (s1 - s0) / total)), 4) \
                if s0 is not None and s1 is not None else None
        else:
            out["other_cpu_busy"] = out["own_cpu_busy"] = out["steal"] = None
        return out


def sample(seconds: float = 0.5) -> dict[str, Any]:
    """The machine's load over the next ``seconds`` (this process idle meanwhile): what a capture
    says in its first lines, before any workload runs."""
    usage = Usage()
    time.sleep(seconds)
    return {**usage.finish(), **cpu_count()}
