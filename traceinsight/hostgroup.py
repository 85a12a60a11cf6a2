"""The hosts of one profile session compared, as data: ``HostGroup`` (per-host figures, the
straggler, the spread, per-step waits) with its ``HostFigures`` and ``StepRow``. They sit below the
model (``RunFigures.host_groups`` holds them), so that the model imports them;
``traceinsight.analysis.hosts`` computes them (see its docstring for the figures).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from traceinsight import present
from traceinsight.categories import CATEGORIES

DEVICE_CATEGORIES: tuple[str, ...] = ("device compute", "device copies", "device idle")
TIE_REL = 1e-9          # medians this close (relative) are equal: identical traces, float noise
NAN = float("nan")


@dataclass(frozen=True)
class HostFigures:
    """One host of a session (ms per steady step)."""

    host: str                       # the trace's name (its file name without .xplane.pb)
    mode: str                       # the mode it loads as
    steps: int                      # steady steps: the samples of the median
    median_ms: float
    p25_ms: float
    p75_ms: float
    ratio: float                    # median / the fastest host's median
    ratio_lo: float                 # its 95 % bootstrap interval (NaN: a side has < 2 steps, or
    ratio_hi: float                 # this is the host the others are measured against)
    categories: dict[str, float]    # median ms/step per category (HostGroup.category_names)
    straggler_steps: int = 0        # aligned steps in which this host alone was the slowest
    wait_median_ms: float = NAN     # over aligned steps: the step's slowest wall − this host's
    wait_total_ms: float = NAN

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "mode": self.mode, "steps": self.steps,
                "median_ms": self.median_ms, "p25_ms": self.p25_ms, "p75_ms": self.p75_ms,
                "ratio": self.ratio, "ratio_lo": self.ratio_lo, "ratio_hi": self.ratio_hi,
                "categories": dict(self.categories), "straggler_steps": self.straggler_steps,
                "wait_median_ms": self.wait_median_ms, "wait_total_ms": self.wait_total_ms}


@dataclass(frozen=True)
class StepRow:
    """One step number present on every host of the session."""

    step_num: int
    wall_ms: tuple[float, ...]      # per host, in HostGroup.hosts order
    wait_ms: tuple[float, ...]      # the step's slowest wall − each host's wall
    slowest: str | None             # None: two or more hosts tie for the slowest

    def to_dict(self, hosts: tuple[str, ...]) -> dict[str, Any]:
        return {"step_num": self.step_num, "slowest": self.slowest,
                "wall_ms": dict(zip(hosts, self.wall_ms)),
                "wait_ms": dict(zip(hosts, self.wait_ms))}


@dataclass(frozen=True)
class HostGroup:
    """The hosts of one profile session, compared (see the module docstring)."""

    session: str                    # the session: the logdir's run name, else the folder's name
    hosts: tuple[HostFigures, ...]  # hosts with steady steps, in name order
    category_kind: str              # "host" (CATEGORIES), "device" (DEVICE_CATEGORIES) or "none"
    fastest: tuple[str, ...]        # the host(s) with the fastest median (several: a tie)
    slowest: tuple[str, ...]        # the host(s) with the slowest median
    straggler: str | None           # the one slowest host; None when hosts tie for the slowest
    spread_ratio: float             # slowest / fastest median
    spread_lo: float                # its 95 % interval (NaN where a side has < 2 steady steps)
    spread_hi: float
    spread_ms: float                # slowest − fastest median
    significant: bool | None        # the interval excludes 1; None: no interval (n < 2)
    category_delta: dict[str, float]  # slowest − fastest host, median ms per category
    explained_by: str | None        # the category whose median grew most on the straggler
    aligned: bool                   # steps matched by step_num (``steps``)
    alignment: str                  # how steps were matched, or why they could not be
    steps: tuple[StepRow, ...] = ()
    step_ties: int = 0              # aligned steps in which hosts tied for the slowest
    missing: tuple[tuple[str, str], ...] = ()   # (host, why) hosts of the session not compared
    unmatched: dict[str, int] = field(default_factory=dict)  # host -> steady steps not on all

    @property
    def category_names(self) -> tuple[str, ...]:
        return {"host": CATEGORIES, "device": DEVICE_CATEGORIES}.get(self.category_kind, ())

    @property
    def host_names(self) -> tuple[str, ...]:
        return tuple(h.host for h in self.hosts)

    @property
    def one_step(self) -> bool:
        """Some host has a single steady step: figures shown, no spread's significance claimed."""
        return min(h.steps for h in self.hosts) < 2

    @property
    def modes_named_by_host(self) -> bool:
        """Every host's mode is named ``<session>/<host>`` (a logdir's hosts)."""
        return all(h.mode == f"{self.session}/{h.host}" for h in self.hosts)

    def figures(self, host: str) -> HostFigures:
        return next(h for h in self.hosts if h.host == host)

    def note_for(self, host: str) -> str:
        """A short note for one host's mode."""
        n = len(self.hosts)
        if len(self.fastest) == n:
            return (f"one of {n} hosts in profile session {self.session}, all with the same median "
                    "step: no straggler (see the hosts table)")
        if self.straggler is None:
            return (f"one of {n} hosts in profile session {self.session}; {present.names(self.slowest)} tie "
                    "for the slowest median (see the hosts table)")
        spread = f"{present.ratio(self.spread_ratio)}× the fastest host's median"
        caveat = "; n=1" if self.one_step else "; within noise" if self.significant is False else ""
        if host == self.straggler:
            why = f", mostly {self.explained_by}" if self.explained_by else ""
            return (f"the straggler of the {n} hosts in profile session {self.session}: {spread}, "
                    f"{present.signed_ms(self.spread_ms)} ms/step{why} (see the hosts "
                    f"table{caveat})")
        return (f"one of {n} hosts in profile session {self.session}; the straggler is "
                f"{self.straggler} ({spread}{caveat}; see the hosts table)")

    def category_records(self) -> list[dict[str, Any]]:
        """``category_records`` of this group (without building the whole ``to_dict``)."""
        return category_records({"hosts": [{"host": h.host, "categories": h.categories}
                                           for h in self.hosts],
                                 "straggler": self.straggler, "fastest": self.fastest,
                                 "category_delta": self.category_delta})

    def to_dict(self) -> dict[str, Any]:
        names = self.host_names
        return {"session": self.session, "category_kind": self.category_kind,
                "category_names": list(self.category_names),
                "hosts": [h.to_dict() for h in self.hosts],
                "fastest": list(self.fastest), "slowest": list(self.slowest),
                "straggler": self.straggler, "spread_ratio": self.spread_ratio,
                "spread_lo": self.spread_lo, "spread_hi": self.spread_hi,
                "spread_ms": self.spread_ms, "significant": self.significant,
                "category_delta": dict(self.category_delta), "explained_by": self.explained_by,
                "aligned": self.aligned, "alignment": self.alignment,
                "steps": [s.to_dict(names) for s in self.steps], "step_ties": self.step_ties,
                "unmatched": dict(self.unmatched),
                "missing": [{"host": h, "why": w} for h, w in self.missing]}


def category_records(group: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of the category split table of a ``HostGroup.to_dict()`` (as the report document
    holds it): one per host (host, categories), then the straggler − the fastest host
    (``delta``: True) when there is a straggler."""
    out: list[dict[str, Any]] = [{"host": h["host"], "categories": h["categories"]}
                                 for h in group["hosts"]]
    if group.get("straggler") is not None and group.get("category_delta"):
        out.append({"host": f"{group['straggler']} − {group['fastest'][0]}",
                    "categories": group["category_delta"], "delta": True})
    return out
