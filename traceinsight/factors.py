"""The factor table: why one mode is slower than another, split into the factors that separate them.

"Why is TF2 slower than TF1?" has several interacting answers: TF1 vs TF2, eager vs graph, XLA,
Keras 2 vs 3, numpy vs tensor vs tf.data input, the call (``model(x)`` / ``predict`` /
``predict_on_batch``, ``train_on_batch`` / ``fit``), CPU vs GPU. A mode is a point on each of
these axes (``modekind.Axes``, from its typed kind, never its name). From the modes of one run:

* each factor's **effect** comes from a pair of modes that differ in it alone, as the run's one
  ratio estimator gives it (``Run.compare``: ``stats.mode_ratio``, its interval and verdict);
* a **gap** between two modes that differ in several factors (each TF1 mode and its TF2 twin; the
  slowest and fastest mode of a task) is walked from one mode to the other through modes of the
  run that each change one factor: the steps' ratios multiply to the gap's ratio exactly (and
  their differences add up to its difference), since each step's median is the next one's
  baseline. Where no such mode is in the run, the gap says which modes would split it;
* an **interaction**: four modes x, x+F, x+G, x+F+G give F's and G's effects alone and together:
  the measured two-factor ratio against the product of the single-factor ones. When they differ,
  a gap's split depends on the order its factors are changed in, and the table says so;
* a factor with **no pair** in the run is named, with a mode that would give it one.

Computed once, when the run is made (``derive``), into ``RunFigures.factors``; renderers read it.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight.modekind import AXES, TF2_TWIN, Axes, ModeKind, all_kinds, name_of
from traceinsight.resample import BOOTSTRAP_SAMPLES, SEED

if TYPE_CHECKING:
    from traceinsight.compare import Comparison
    from traceinsight.model import Run

# The factors, in the order a gap is split in (and the table is shown): each an axis of
# ``modekind.Axes`` but "task" (training and inference are different work, not a factor).
FACTORS = ("tf", "execution", "jit", "keras", "backend", "input", "call")
FACTOR_LABELS = {
    "tf": "TF1 vs TF2",
    "execution": "eager vs graph",
    "jit": "XLA",
    "keras": "Keras 2 vs 3",
    "backend": "TF vs JAX backend",
    "input": "input type",          # numpy, tensor or tf.data
    "call": "call style",           # model(x), predict, predict_on_batch; train_on_batch, fit
    "device": "CPU vs GPU",
}
# each factor's levels from the baseline on: an effect is the later level's step over the earlier
# one's (TF2 over TF1, eager over graph, numpy over tensor ...)
LEVELS = {
    "tf": ("tf1", "tf2"),
    "execution": ("graph", "eager"),
    "jit": ("off", "on"),
    "keras": ("2", "3"),
    "backend": ("tensorflow", "jax"),
    "input": ("tensor", "numpy", "dataset"),
    "call": ("call", "predict_on_batch", "predict", "train_on_batch", "fit"),
}
LEVEL_LABELS = {
    ("tf", "tf1"): "TF1", ("tf", "tf2"): "TF2",
    ("execution", "graph"): "graph", ("execution", "eager"): "eager",
    ("jit", "off"): "no XLA", ("jit", "on"): "XLA",
    ("keras", "2"): "Keras 2", ("keras", "3"): "Keras 3",
    ("backend", "tensorflow"): "TensorFlow", ("backend", "jax"): "JAX",
    ("input", "tensor"): "tensor", ("input", "numpy"): "numpy", ("input", "dataset"): "tf.data",
    ("call", "call"): "model(x)", ("call", "predict_on_batch"): "predict_on_batch",
    ("call", "predict"): "predict", ("call", "train_on_batch"): "train_on_batch",
    ("call", "fit"): "fit",
}
# a run is captured on one machine: its modes all run on the same devices
NO_DEVICE_PAIR = ("every mode of a run runs on the same machine's devices: capture the workload "
                  "on a CPU and on a GPU machine and compare the two runs (traceinsight diff)")
# an interaction is said to matter when its interval excludes 1 (it is a ratio of ratios)
_INTERACTION_SEED = SEED + 7


def level_label(factor: str, level: str) -> str:
    return LEVEL_LABELS.get((factor, level), level)


class _Between:
    """A pair of modes as the run compares them: ``comparison`` is the mode changed to
    (``to_mode``, its ``a``) against the mode changed from (``from_mode``, its ``b``)."""

    comparison: Comparison

    @property
    def from_mode(self) -> str:
        return self.comparison.b

    @property
    def to_mode(self) -> str:
        return self.comparison.a


@dataclass(frozen=True)
class Step(_Between):
    """One factor changed alone: ``comparison`` is the mode at ``to_level`` against the mode at
    ``from_level`` (``Comparison.a`` / ``.b``), as the run compares them: its ratio (to / from)
    with its interval and verdict, and its difference in ms/step with its interval."""

    factor: str
    from_level: str
    to_level: str
    comparison: Comparison


    def label(self) -> str:
        """``TF1 → TF2``."""
        return f"{level_label(self.factor, self.from_level)} → {level_label(self.factor, self.to_level)}"

    def to_dict(self) -> dict:
        c = self.comparison
        return {"factor": self.factor, "factor_label": FACTOR_LABELS[self.factor],
                "from_level": self.from_level, "to_level": self.to_level, "change": self.label(),
                "from_mode": c.b, "to_mode": c.a, "from_ms": c.b_ms, "to_ms": c.a_ms,
                "ratio": c.ratio, "ratio_lo": c.ratio_lo, "ratio_hi": c.ratio_hi,
                "significant": c.significant, "note": c.note, "delta_ms": c.delta_ms,
                "delta_lo": c.delta_lo, "delta_hi": c.delta_hi}


@dataclass(frozen=True)
class Interaction:
    """Two factors changed alone and together, from one corner mode: ``single`` the two
    single-factor steps from ``corner``, ``both`` the step to the mode that changes both. ``ratio``
    is the measured two-factor ratio over the product of the single ones (1: they add up as
    independent factors), with a bootstrap interval from the four modes' resampled medians."""

    factors: tuple[str, str]
    corner: str
    single: tuple[Step, Step]
    both: Comparison                 # the mode that changes both against ``corner``
    ratio: float
    lo: float
    hi: float

    @property
    def product(self) -> float:
        return self.single[0].comparison.ratio * self.single[1].comparison.ratio

    @property
    def significant(self) -> bool:
        return bool(np.isfinite(self.lo) and np.isfinite(self.hi) and (self.lo > 1 or self.hi < 1))

    def to_dict(self) -> dict:
        return {"factors": list(self.factors), "corner": self.corner,
                "single": [s.to_dict() for s in self.single],
                "both_mode": self.both.a, "measured": self.both.ratio,
                "measured_lo": self.both.ratio_lo, "measured_hi": self.both.ratio_hi,
                "product": self.product, "interaction": self.ratio, "interaction_lo": self.lo,
                "interaction_hi": self.hi, "significant": self.significant}


@dataclass(frozen=True)
class Gap(_Between):
    """One mode (``to_mode``) against another (``from_mode``) that differ in several factors.

    ``comparison``: to against from, as the run compares them. ``factors``: the factors that
    separate them. ``steps``: the walk from one to the other, one factor at a time, through modes
    of the run (empty when the run has no such walk): the steps' ratios multiply to the gap's, their
    differences add up to its. ``missing``: the modes that would complete the walk (names as
    ``capture --modes`` takes them). ``interacting``: pairs of the gap's factors measured to
    interact: their split depends on the order of the walk."""

    why: str                          # "tf1-vs-tf2" | "slowest-vs-fastest"
    comparison: Comparison
    factors: tuple[str, ...]
    steps: tuple[Step, ...] = ()
    missing: tuple[str, ...] = ()
    interacting: tuple[tuple[str, str], ...] = ()
    # the run's single-factor pairs at ``to_mode`` in a factor the gap does not cross, each read
    # from the other mode to ``to_mode``: what ``to_mode``'s own input or call costs beside the
    # gap (TF2's numpy conversion beside the TF1 vs TF2 gap of train_on_batch)
    beside: tuple[Step, ...] = ()


    @property
    def split(self) -> bool:
        return bool(self.steps)

    def to_dict(self) -> dict:
        c = self.comparison
        return {"why": self.why, "from_mode": c.b, "to_mode": c.a, "from_ms": c.b_ms,
                "to_ms": c.a_ms, "ratio": c.ratio, "ratio_lo": c.ratio_lo,
                "ratio_hi": c.ratio_hi, "significant": c.significant, "delta_ms": c.delta_ms,
                "factors": list(self.factors), "steps": [s.to_dict() for s in self.steps],
                "missing": list(self.missing),
                "interacting": [list(p) for p in self.interacting],
                "beside": [s.to_dict() for s in self.beside]}


@dataclass(frozen=True)
class FactorTable:
    """The run's factor table (see the module): ``effects`` every single-factor pair of modes, by
    factor; ``gaps`` the multi-factor gaps split; ``interactions``; ``absent`` the factors with
    no pair in the run, each with why and the modes that would give it one (none: no mode can)."""

    effects: tuple[Step, ...] = ()
    gaps: tuple[Gap, ...] = ()
    interactions: tuple[Interaction, ...] = ()
    absent: tuple[tuple[str, str, tuple[str, ...]], ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.effects or self.gaps)

    def effects_of(self, factor: str) -> tuple[Step, ...]:
        return tuple(s for s in self.effects if s.factor == factor)

    def to_dict(self) -> dict:
        return {"effects": [s.to_dict() for s in self.effects],
                "gaps": [g.to_dict() for g in self.gaps],
                "interactions": [i.to_dict() for i in self.interactions],
                "absent": [{"factor": f, "factor_label": FACTOR_LABELS[f], "why": why,
                            "add_modes": list(add)} for f, why, add in self.absent]}


# --------------------------------------------------------------------------------------------------


def _modes_by_axes(run: Run) -> dict[Axes, str]:
    """The run's comparable modes (ok, with untraced or traced steps, a capture base) by their
    axes; the first in run order where two share them."""
    out: dict[Axes, str] = {}
    for m in run.ok_modes():
        ax = m.kind.axes()
        if ax is not None and len(m.step_samples_ms) and ax not in out:
            out[ax] = m.name
    return out


def _ordered(factor: str, x: str, y: str) -> tuple[str, str]:
    levels = LEVELS[factor]
    ix = levels.index(x) if x in levels else len(levels)
    iy = levels.index(y) if y in levels else len(levels)
    return (x, y) if (ix, x) <= (iy, y) else (y, x)


def _step(run: Run, factor: str, from_mode: str, from_level: str, to_mode: str,
          to_level: str) -> Step:
    return Step(factor, from_level, to_level, run.compare(to_mode, from_mode))


def _moved(ax: Axes, **changes: str) -> Axes:
    d = {f: getattr(ax, f) for f in AXES}
    d.update(changes)
    return Axes(**d)


def _effects(run: Run, by_axes: dict[Axes, str]) -> list[Step]:
    out = []
    items = list(by_axes.items())
    for (ax1, n1), (ax2, n2) in itertools.combinations(items, 2):
        diff = ax1.differing(ax2)
        if len(diff) != 1 or diff[0] not in FACTORS or not run.same_program(n1, n2):
            continue
        f = diff[0]
        lo, hi = _ordered(f, getattr(ax1, f), getattr(ax2, f))
        a, b = (n1, n2) if getattr(ax1, f) == lo else (n2, n1)
        out.append(_step(run, f, a, lo, b, hi))
    order = {n: i for i, n in enumerate(run.modes)}
    out.sort(key=lambda s: (FACTORS.index(s.factor), LEVELS[s.factor].index(s.from_level)
                            if s.from_level in LEVELS[s.factor] else 99,
                            order[s.from_mode], order[s.to_mode]))
    return out


def _interactions(run: Run, by_axes: dict[Axes, str]) -> list[Interaction]:
    out = []
    for ax, corner in by_axes.items():
        for f, g in itertools.combinations(FACTORS, 2):
            for vf in LEVELS[f]:
                if LEVELS[f].index(vf) <= _index(f, getattr(ax, f)):
                    continue
                for vg in LEVELS[g]:
                    if LEVELS[g].index(vg) <= _index(g, getattr(ax, g)):
                        continue
                    names = [by_axes.get(_moved(ax, **ch)) for ch in
                             ({f: vf}, {g: vg}, {f: vf, g: vg})]
                    if any(n is None for n in names):
                        continue
                    nf, ng, nfg = names
                    assert nf is not None and ng is not None and nfg is not None
                    if not all(run.same_program(corner, n) for n in (nf, ng, nfg)):
                        continue
                    sf = _step(run, f, corner, getattr(ax, f), nf, vf)
                    sg = _step(run, g, corner, getattr(ax, g), ng, vg)
                    both = run.compare(nfg, corner)
                    r, lo, hi = _interaction_interval(run, corner, nf, ng, nfg)
                    out.append(Interaction((f, g), corner, (sf, sg), both, r, lo, hi))
    return out


def _index(factor: str, level: str) -> int:
    levels = LEVELS[factor]
    return levels.index(level) if level in levels else len(levels)


def _interaction_interval(run: Run, x: str, f: str, g: str, fg: str) -> tuple[float, float, float]:
    """m(fg)·m(x) / (m(f)·m(g)) of the four modes' medians and its 95 % percentile interval, each
    mode's bootstrap medians drawn independently of the others' (``ModeResult.boot_medians``:
    every mode resamples with the same seed, so each side is shuffled by its own permutation)."""
    modes = [run.modes[n] for n in (fg, x, f, g)]
    meds = [float(np.median(m.step_samples_ms)) for m in modes]
    r = meds[0] * meds[1] / (meds[2] * meds[3])
    if any(len(m.step_samples_ms) < 2 for m in modes):
        return r, float("nan"), float("nan")
    rng = np.random.default_rng(_INTERACTION_SEED)
    boots = [m.boot_medians[rng.permutation(BOOTSTRAP_SAMPLES)] for m in modes]
    dist = boots[0] * boots[1] / (boots[2] * boots[3])
    lo, hi = (float(v) for v in np.nanpercentile(dist, [2.5, 97.5]))
    if not (lo <= r <= hi):
        lo, hi = float("nan"), float("nan")
    return r, lo, hi


def _gap_pairs(run: Run, by_axes: dict[Axes, str]) -> list[tuple[str, str, str]]:
    """(why, from, to): each TF1 mode and its TF2 twin (Keras 3 on TensorFlow, the same call and
    input), then the fastest and the slowest mode of each task when they differ in two factors or
    more."""
    pairs: list[tuple[str, str, str]] = []
    for ax, name in by_axes.items():
        if ax.tf == "tf1":
            twin = by_axes.get(ax.moved(**TF2_TWIN))
            if twin is not None and run.same_program(name, twin):
                pairs.append(("tf1-vs-tf2", name, twin))
    for task in ("infer", "train"):
        ms = [(run.modes[n].median_ms, n) for ax, n in by_axes.items() if ax.task == task]
        ms = [(v, n) for v, n in ms if np.isfinite(v)]
        if len(ms) < 2:
            continue
        fast, slow = min(ms)[1], max(ms)[1]
        ax_fast = run.modes[fast].kind.axes()
        ax_slow = run.modes[slow].kind.axes()
        assert ax_fast is not None and ax_slow is not None
        if len(ax_fast.differing(ax_slow)) >= 2 and run.same_program(fast, slow) \
                and not any(p[1:] == (fast, slow) for p in pairs):
            pairs.append(("slowest-vs-fastest", fast, slow))
    return pairs


def _beside(run: Run, to_mode: str, factors: tuple[str, ...], effects: list[Step]) -> tuple[Step, ...]:
    out = []
    for s in effects:
        if s.factor in factors or to_mode not in (s.from_mode, s.to_mode):
            continue
        if s.to_mode == to_mode:
            out.append(s)
        else:
            out.append(Step(s.factor, s.to_level, s.from_level, run.compare(to_mode, s.to_mode)))
    return tuple(out)


def _gap(run: Run, why: str, a: str, b: str, by_axes: dict[Axes, str],
         interactions: list[Interaction], effects: list[Step]) -> Gap:
    ax_a, ax_b = run.modes[a].kind.axes(), run.modes[b].kind.axes()
    assert ax_a is not None and ax_b is not None
    factors = tuple(f for f in FACTORS if f in ax_a.differing(ax_b))
    whole = run.compare(b, a)
    interacting = tuple(i.factors for i in interactions
                        if i.significant and set(i.factors) <= set(factors))
    interacting = tuple(dict.fromkeys(interacting))
    for order in itertools.permutations(factors):
        walk, cur, ok = [], ax_a, True
        for f in order:
            nxt = _moved(cur, **{f: getattr(ax_b, f)})
            if nxt not in by_axes or not run.same_program(a, by_axes[nxt]):
                ok = False
                break
            walk.append((f, cur, nxt))
            cur = nxt
        if ok:
            steps = tuple(_step(run, f, by_axes[c], getattr(c, f), by_axes[n], getattr(n, f))
                          for f, c, n in walk)
            return Gap(why, whole, factors, steps, (), interacting,
                       _beside(run, b, factors, effects))
    # no walk: the modes the walk in factor order needs
    missing, cur = [], ax_a
    for f in factors[:-1]:
        cur = _moved(cur, **{f: getattr(ax_b, f)})
        if cur not in by_axes:
            k = _kind_of(run, cur)
            if k is not None:
                missing.append(name_of(k))
    return Gap(why, whole, factors, (), tuple(missing), interacting,
               _beside(run, b, factors, effects))


@functools.cache
def _kinds_by_axes(workload: str | None) -> dict[Axes, ModeKind]:
    out: dict[Axes, ModeKind] = {}
    for k in all_kinds(workload):
        ax = k.axes()
        if ax is not None:
            out.setdefault(ax, k)
    return out


def _workload(run: Run) -> str | None:
    """The run's workload kind ("keras" / "function", run.json's), which says which modes the
    capture can add to it; None for foreign traces."""
    wl = run.manifest.get("workload") if isinstance(run.manifest, dict) else None
    kind = wl.get("kind") if isinstance(wl, dict) else None
    return kind if kind in ("keras", "function") else None


def _kind_of(run: Run, ax: Axes) -> ModeKind | None:
    """A mode kind with these axes that the capture can make for the run's workload, if any."""
    return _kinds_by_axes(_workload(run)).get(ax)


def _absent(run: Run, effects: list[Step],
            by_axes: dict[Axes, str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The factors no pair of the run measures, each with the fewest modes to add that would give
    it one (a mode beside one of the run's, else two), as ``capture --modes`` names them."""
    have = {s.factor for s in effects}
    out: list[tuple[str, str, tuple[str, ...]]] = []
    for f in FACTORS:
        if f in have:
            continue
        best: list[str] | None = None
        for ax in by_axes:
            # the run's mode itself, or it moved along one other axis (same task), then along f
            starts = [ax] + [_moved(ax, **{h: v}) for h in FACTORS if h != f
                             for v in LEVELS[h] if v != getattr(ax, h)]
            for start in starts:
                k0 = _kind_of(run, start)
                if k0 is None:
                    continue
                for v in LEVELS[f]:
                    if v == getattr(start, f):
                        continue
                    k1 = _kind_of(run, _moved(start, **{f: v}))
                    if k1 is None:
                        continue
                    add = [n for n in (name_of(k0), name_of(k1)) if n not in run.modes]
                    if add and (best is None or len(add) < len(best)):
                        best = add
            if best is not None and len(best) == 1:
                break
        if best is None and _workload(run) is not None:
            continue     # no mode of this workload's kind differs in it (Keras 2 vs 3 in a function workload)
        out.append((f, "no two modes of this run differ in it alone", tuple(best or ())))
    out.append(("device", NO_DEVICE_PAIR, ()))
    return out


def factor_table(run: Run) -> FactorTable:
    """The run's factor table (see the module). Every comparison comes from ``run.compare``, so
    it is the run's own, computed once."""
    by_axes = _modes_by_axes(run)
    if len(by_axes) < 2:
        return FactorTable(absent=tuple(_absent(run, [], by_axes)) if by_axes else ())
    effects = _effects(run, by_axes)
    interactions = _interactions(run, by_axes)
    gaps = [_gap(run, why, a, b, by_axes, interactions, effects)
            for why, a, b in _gap_pairs(run, by_axes)]
    return FactorTable(tuple(effects), tuple(gaps), tuple(interactions),
                       tuple(_absent(run, effects, by_axes)))


def gap_of(table: FactorTable, a: str, b: str) -> Gap | None:
    """The table's gap between two modes, either way round."""
    return next((g for g in table.gaps if {g.from_mode, g.to_mode} == {a, b}), None)


def as_dict(table: FactorTable | None) -> dict[str, Any]:
    return (table or FactorTable()).to_dict()
