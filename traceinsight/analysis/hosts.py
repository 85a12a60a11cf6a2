"""The hosts of one profile session side by side: per-host step time, the straggler and the spread.

A multi-worker job's logdir holds one trace per host in one profile session
(``<logdir>/plugins/profile/<session>/<host>.xplane.pb``; ``traceinsight capture --remote`` writes
one mode per worker, all under one session folder name). Each host is analysed on its own, as a
mode; this module compares the hosts of each session with two or more of them
(one of the run's figures, ``Run.host_groups()``; the renderers only format ``HostGroup``):

* per host: steady steps, median ms/step and its quartiles, the ratio to the fastest host (95 %
  bootstrap interval), and the median ms per category: the host categories, or for traces that
  cannot split host time (host tracer level 0) the slowest device's compute, copies and idle time;
* the straggler: the one host with the slowest median. Medians equal to within ``TIE_REL`` are a
  tie: hosts that tie for the slowest (or all hosts equal) name no straggler, and say so; the
  hosts are kept in name order, so every figure is the same on every machine;
* the spread: slowest / fastest median and their difference in ms, with the ratio's interval
  (``significant``: it excludes 1; None when a side has fewer than two steady steps, where no
  interval exists); and which category explains the straggler's extra time (the largest
  increase of a category's median over the fastest host's);
* per step, where the hosts' step numbers line up: which host was the slowest and how long each
  other host waited for it (the step's slowest wall − its own), and how often each host was the
  slowest.

The hosts' clocks are not synchronised: steps are matched by their step_num, never by timestamps.
Step numbers are the job's own only when every host's steps come from step markers with their
step_num stat (``StepSource.numbered_by_step_num``); other rules number steps per trace, so there is
no per-step comparison then, and ``alignment`` says why rather than guessing.

In a synchronous job every host's step includes waiting for the others (the collective that ends
it), so the walls converge; the straggler's extra time shows in its categories, the others' wait
mostly in the op holding the collective.

numpy and plain Python only; steps are read through ``ModeResult``'s accessors in their light
column form (``table("steps")`` and ``steady_mask()``, ``step_samples_ms``, ``category_medians()``,
``table("devices")``), so ``traceinsight analyze`` of a multi-host logdir imports no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight import present
from traceinsight.analysis.names import STEP_NUM
from traceinsight.model import CATEGORIES
from traceinsight.stats import excludes_one, ratio_ci

if TYPE_CHECKING:
    from traceinsight.model import ModeResult, Run

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
        return {STEP_NUM: self.step_num, "slowest": self.slowest,
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


# -------------------------------------------------------------------------------------- grouping

def host_name(m: ModeResult) -> str:
    """The host a mode's trace came from: its file name without ``.xplane.pb``."""
    if m.trace_paths:
        name = Path(m.trace_paths[0]).name
        return name[: -len(".xplane.pb")] if name.endswith(".xplane.pb") else name
    return m.name.rsplit("/", 1)[-1]


def session_of(run: Run) -> dict[str, str]:
    """mode name -> its profile session, for the runs whose modes are hosts of one job: foreign
    traces (the session folder) and ``capture --remote`` runs (the session folder's name, which
    every worker's trace shares). A captured workload's modes are not hosts: {}."""
    if run.source == "traces":
        key = (lambda p: str(p.parent))
    elif (run.manifest.get("workload") or {}).get("kind") == "remote":
        key = (lambda p: p.parent.name)
    else:
        return {}
    return {n: key(Path(m.trace_paths[0])) for n, m in run.modes.items() if m.trace_paths}


def host_groups(run: Run) -> tuple[HostGroup, ...]:
    """Use ``Run.host_groups()``: the run's figures hold it (``traceinsight.derive``)."""
    return compare_sessions(run.modes, session_of(run))


def compare_sessions(modes: Mapping[str, ModeResult], session: Mapping[str, Any]
                     ) -> tuple[HostGroup, ...]:
    """One HostGroup per session (``session``: mode name -> session key) with two or more hosts
    that have steady steps; sessions in the order of their first mode."""
    members: dict[Any, list[str]] = {}
    for name in modes:
        if name in session:
            members.setdefault(session[name], []).append(name)
    out = []
    for key, names in members.items():
        if len(names) < 2:
            continue
        group = compare_hosts(_label(key, [modes[n] for n in names]), [modes[n] for n in names])
        if group is not None:
            out.append(group)
    return tuple(out)


def _label(key: Any, ms: list[ModeResult]) -> str:
    """The name the modes share before ``/<host>`` (the logdir's run), else the session folder's."""
    bases = {m.name[: -len(host_name(m)) - 1] for m in ms if m.name.endswith("/" + host_name(m))}
    if len(bases) == 1 and all(m.name.endswith("/" + host_name(m)) for m in ms):
        return bases.pop()
    return Path(str(key)).name or str(key)


def with_notes(modes: Mapping[str, ModeResult], groups: tuple[HostGroup, ...]
               ) -> dict[str, ModeResult]:
    """The modes, each host of a compared session with its ``HostGroup.note_for`` note."""
    out = dict(modes)
    for g in groups:
        for h in g.hosts:
            m = out[h.mode]
            # tables as they are, and the bootstrap medians the comparison computed
            out[h.mode] = m.replace(notes=m.notes + (g.note_for(h.host),))
    return out


# ----------------------------------------------------------------------------------- comparison

def _col(frame: Any, column: str, dtype: Any = float) -> np.ndarray:
    return np.asarray(frame[column], dtype=dtype) if len(frame) else np.zeros(0, dtype=dtype)


def _categories(m: ModeResult, kind: str) -> dict[str, float]:
    if kind == "host":
        cats = m.category_medians()
        return {c: float(cats[c]) for c in CATEGORIES}
    if kind == "device":
        dev = m.table("devices")
        slow = _col(dev, "slowest", bool)
        i = int(np.argmax(slow)) if slow.any() else 0
        row = {c: float(_col(dev, c)[i]) for c in ("compute_ms", "h2d_ms", "d2h_ms", "d2d_ms",
                                                   "idle_ms")}
        return {"device compute": row["compute_ms"],
                "device copies": row["h2d_ms"] + row["d2h_ms"] + row["d2d_ms"],
                "device idle": row["idle_ms"]}
    return {}


def _ps(ms: float) -> float:
    """A difference of ms figures to the traces' picosecond resolution (no float noise:
    1.2 − 1.1 is 0.1, not 0.09999999999999987)."""
    return round(ms, 9)


def _ps_array(ms: np.ndarray) -> np.ndarray:
    """``_ps`` of every value: the same floats as ``round(v, 9)``. For differences of figures
    measured in ps below 1000 s, v * 1e9 lies within float noise of an integer N, and both give
    the double nearest to N / 1e9 (checked against round() in the tests); above that an ms float
    no longer holds every ps, and each value goes through round()."""
    if not len(ms) or float(np.abs(ms).max()) < 1e6:
        return np.rint(ms * 1e9) / 1e9
    return np.array([_ps(v) for v in ms.ravel().tolist()], dtype=float).reshape(ms.shape)


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_REL * max(abs(a), abs(b))


def compare_hosts(session: str, modes: list[ModeResult]) -> HostGroup | None:
    """Compare the hosts (modes) of one session; None when fewer than two have steady steps."""
    missing: list[tuple[str, str]] = []
    ok: list[tuple[str, ModeResult, np.ndarray]] = []
    for m in sorted(modes, key=lambda m: (host_name(m), m.name)):
        samples = np.asarray(m.step_samples_ms, dtype=float) if m.ok else np.zeros(0)
        samples = samples[np.isfinite(samples)]
        if not m.ok:
            missing.append((host_name(m), f"{m.status}: {m.error or 'no reason recorded'}"))
        elif not len(samples):
            missing.append((host_name(m), "no steady steps in its trace"))
        else:
            ok.append((host_name(m), m, samples))
    if len(ok) < 2:
        return None
    names = tuple(h for h, _, _ in ok)
    if len(set(names)) < len(names):    # two files of one host name: tell them by mode
        ok = [(m.name, m, s) for _, m, s in ok]
        names = tuple(h for h, _, _ in ok)
    medians = np.array([float(np.median(s)) for _, _, s in ok])
    lo_ms, hi_ms = float(medians.min()), float(medians.max())
    fastest = tuple(n for n, v in zip(names, medians) if _tied(v, lo_ms))
    slowest = tuple(n for n, v in zip(names, medians) if _tied(v, hi_ms))
    all_equal = len(fastest) == len(names)
    straggler = slowest[0] if len(slowest) == 1 and not all_equal else None
    ref = names.index(fastest[0])                  # the host the others are measured against
    slow_i = names.index(slowest[0])

    kind = ("host" if all(m.host_events_recorded for _, m, _ in ok) else
            "device" if all(len(m.table("devices")) for _, m, _ in ok) else "none")
    cats = [_categories(m, kind) for _, m, _ in ok]

    ratios = []
    for i, (_, m, s) in enumerate(ok):
        r_ref = ok[ref]
        if i == ref:
            ratios.append((1.0, NAN, NAN))
            continue
        r, lo, hi = ratio_ci(s, r_ref[2], boot_a=m.boot_medians, boot_b=r_ref[1].boot_medians)
        if len(s) < 2 or len(r_ref[2]) < 2:
            lo = hi = NAN
        ratios.append((r, lo, hi))
    spread_ratio, spread_lo, spread_hi = ratios[slow_i] if not all_equal else (1.0, NAN, NAN)
    one_step = min(len(s) for _, _, s in ok) < 2
    significant: bool | None = None
    if not one_step and not all_equal:
        significant = excludes_one(spread_lo, spread_hi)

    # only against a straggler: hosts tied for the slowest have no one to set against the fastest
    delta = {c: _ps(cats[slow_i][c] - cats[ref][c]) for c in cats[ref]} if straggler else {}
    grown = [(v, c) for c, v in delta.items() if math.isfinite(v) and v > 0]
    explained = min(grown, key=lambda t: (-t[0], t[1]))[1] if grown else None

    aligned, alignment, rows, unmatched = _align(ok)
    waits = np.array([r.wait_ms for r in rows]).reshape(len(rows), len(ok))
    figures = []
    for i, ((host, m, s), med) in enumerate(zip(ok, medians)):
        p25, p75 = np.percentile(s, [25, 75])
        figures.append(HostFigures(
            host=host, mode=m.name, steps=int(len(s)), median_ms=float(med), p25_ms=float(p25),
            p75_ms=float(p75), ratio=ratios[i][0], ratio_lo=ratios[i][1], ratio_hi=ratios[i][2],
            categories=cats[i],
            straggler_steps=sum(1 for r in rows if r.slowest == host),
            wait_median_ms=float(np.median(waits[:, i])) if len(rows) else NAN,
            wait_total_ms=_ps(float(waits[:, i].sum())) if len(rows) else NAN))
    return HostGroup(
        session=session, hosts=tuple(figures), category_kind=kind, fastest=fastest,
        slowest=slowest, straggler=straggler, spread_ratio=float(spread_ratio),
        spread_lo=float(spread_lo), spread_hi=float(spread_hi), spread_ms=_ps(hi_ms - lo_ms),
        significant=significant, category_delta=delta, explained_by=explained, aligned=aligned,
        alignment=alignment, steps=tuple(rows), step_ties=sum(1 for r in rows if r.slowest is None),
        missing=tuple(missing), unmatched=unmatched)


def _align(ok: list[tuple[str, ModeResult, np.ndarray]]
           ) -> tuple[bool, str, list[StepRow], dict[str, int]]:
    """Steps matched by step_num across hosts (never by time: the hosts' clocks differ)."""
    per_host: list[dict[int, float]] = []
    for host, m, _ in ok:
        if not m.step_source.numbered_by_step_num:
            return False, (f"the steps of {host} do not come from step markers carrying the "
                           "job's step_num (see its step rule), so their numbers count that "
                           "trace's steps only; the hosts' clocks are not synchronised, so steps "
                           "are never matched by time"), [], {}
        steady = m.table("steps").take(m.steady_mask())
        nums = _col(steady, STEP_NUM, np.int64)
        walls = _col(steady, "wall_ms")
        if len(np.unique(nums)) < len(nums):
            return False, f"{host} repeats step numbers", [], {}
        per_host.append(dict(zip(nums.tolist(), walls.tolist())))
    common = sorted(set.intersection(*(set(d) for d in per_host)))
    if not common:
        spans = "; ".join(f"{h}: {_span(d)}" for (h, _, _), d in zip(ok, per_host))
        return False, (f"no steady step number is on every host ({spans}); the hosts' clocks "
                       "are not synchronised, so steps are never matched by time"), [], {}
    names = [h for h, _, _ in ok]
    # (steps, hosts), all at once: _tied and _ps for every value in one array operation, not one
    # call per value (hosts x steps calls on the loading process's critical path;
    # ``tools/bench_parallel.py`` times a load of many hosts)
    walls = np.array([[d[k] for d in per_host] for k in common], dtype=float)
    top = walls.max(axis=1, keepdims=True)
    at_top = np.abs(top - walls) <= TIE_REL * np.maximum(np.abs(top), np.abs(walls))
    waits = _ps_array(top - walls)
    rows = [StepRow(step_num=int(k), wall_ms=tuple(w), wait_ms=tuple(x),
                    slowest=names[int(np.argmax(t))] if t.sum() == 1 else None)
            for k, w, x, t in zip(common, walls.tolist(), waits.tolist(), at_top)]
    unmatched = {h: len(d) - len(common) for h, d in zip(names, per_host) if len(d) > len(common)}
    how = (f"Steps matched by step_num (the hosts' clocks are not synchronised, so never by time): "
           f"{len(common)} on every host")
    if unmatched:
        how += " (" + ", ".join(f"{h}: {n} more not on every host" for h, n in unmatched.items()) \
            + ")"
    return True, how, rows, unmatched


def _span(d: dict[int, float]) -> str:
    k = sorted(d)
    if not k:
        return "no steady steps"
    return f"step {k[0]}" if len(k) == 1 else f"steps {k[0]}–{k[-1]}"
