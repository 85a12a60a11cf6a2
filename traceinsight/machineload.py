"""The machine's load while a mode was timed, as data, and the one rule that calls a round disturbed.

The capture records, per untraced timing round, the share of all CPUs' time that other processes
took (``other_cpu_busy``: ``/proc/stat``'s busy ticks, steal included, minus the workload
process's own) and the share the hypervisor stole (``steal``, part of the former). The capture's
round loop (``capture.orchestrate.run_rounds``) reads ``disturbed`` to re-run or set aside a
round; the analysis reads the same records (``model.Timing.round_loads`` / ``.set_aside``) to say
on every page which rounds were set aside and why, and ``rundiff.between_runs`` to tell a busier
machine from a code change. Standard library only: the capture's workload side imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

# A round is disturbed when other processes (steal included) took at least this share of all the
# CPUs' time while it ran. At half the machine, others hold n/2 of n CPUs' worth: TensorFlow sizes
# its thread pools to every CPU, so its parallel ops get at most half the CPUs they were split for,
# and the step's main thread waits for a CPU whenever the others' runnable threads and its own
# outnumber the CPUs. From there on a round's steps are no longer the workload's alone on any CPU
# count, and how much slower they get is set by the other processes, not by the code (docs/capture.md,
# "The machine's load", has what such rounds measured). The figure is coarse (10 ms ticks over
# rounds of about a second), which a threshold this far from an idle machine's share tolerates.
DISTURBED_OTHER_CPU = 0.5
# A disturbed round is timed again at once, at most this many times, before it is set aside: a
# burst of load passes, a machine busy throughout does not, and re-running longer only costs time.
MAX_RERUNS = 1
# Two captures' loads differ enough to explain a change between them when the slower side's other
# processes took this share of the CPUs more than the faster side's (or the slower side's rounds
# were disturbed at all): a tenth of the machine is already a fifth of a CPU on 2 CPUs, and the
# slowdown it causes is not proportional (thread pools sized to every CPU stall on one busy CPU).
LOAD_EXPLAINS = 0.10


class RoundAction(str, Enum):
    """What the capture did with a disturbed round (``timings.json`` ``rounds_set_aside[].action``)."""
    RERUN = "re-run"          # timed again at once; this attempt's steps are not used
    SET_ASIDE = "set aside"   # still disturbed after its re-runs: its steps are not used


@dataclass(frozen=True)
class RoundLoad:
    """One untraced timing round's load: its index (round 0 is the mode's own timing phase), its
    wall-clock window, the share of all CPUs other processes took (steal included) and the share
    the hypervisor stole (None where the kernel gives none), and its steps. ``action``: None for a
    round whose steps are used; what the capture did otherwise."""

    round: int
    other_cpu_busy: float | None = None
    steal: float | None = None
    t_start: float | None = None
    t_end: float | None = None
    n_steps: int = 0
    action: RoundAction | None = None

    @property
    def disturbed(self) -> bool:
        return disturbed(self.other_cpu_busy)

    @classmethod
    def of(cls, record: dict[str, Any], action: RoundAction | None = None,
           n_steps: int | None = None) -> RoundLoad:
        """From one round object of ``timings.json`` (fields absent in older run folders: None);
        ``n_steps``: its steps' count when the record no longer holds them."""
        def num(key: str) -> float | None:
            v = record.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        r = record.get("round")
        return cls(round=int(r) if isinstance(r, int) and not isinstance(r, bool) else 0,
                   other_cpu_busy=num("other_cpu_busy"), steal=num("steal"),
                   t_start=num("t_start_unix"), t_end=num("t_end_unix"),
                   n_steps=len(record.get("steps_s") or ()) if n_steps is None else n_steps,
                   action=action)


def disturbed(other_cpu_busy: float | None) -> bool:
    """The one rule: other processes took ``DISTURBED_OTHER_CPU`` of the CPUs or more."""
    return other_cpu_busy is not None and other_cpu_busy >= DISTURBED_OTHER_CPU


def load_explains(slower: float | None, faster: float | None) -> bool:
    """Whether the machine's load can explain a change between two captures: the slower side ran
    disturbed, or its other processes took ``LOAD_EXPLAINS`` of the CPUs more than the faster
    side's. False when either side has no load figure (older run folders, foreign traces)."""
    if slower is None or faster is None:
        return False
    return disturbed(slower) or slower - faster >= LOAD_EXPLAINS


def changed(a: float | None, b: float | None) -> bool:
    """Whether the machine's load changed between two phases of one mode (its traced and untraced
    steps): other processes' shares differ by ``LOAD_EXPLAINS`` or more. Unlike ``load_explains``,
    a machine busy in both alike has not changed. False when either is not recorded."""
    return a is not None and b is not None and abs(a - b) >= LOAD_EXPLAINS


def percent(share: float | None) -> str:
    """A share of the CPUs as words' figure: ``62 %`` (``?`` when not recorded)."""
    return "?" if share is None else f"{share * 100:.0f} %"
