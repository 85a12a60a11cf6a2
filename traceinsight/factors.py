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
from typing import Any

import numpy as np

from traceinsight.factortable import (
    FACTOR_LABELS,
    FACTORS,
    LEVEL_LABELS,
    LEVELS,
    NO_DEVICE_PAIR,
    FactorTable,
    Gap,
    Interaction,
    Step,
    level_label,
)
from traceinsight.modekind import (
    AXES,
    TF2_SAME_KERAS,
    TF2_TWIN,
    Axes,
    ModeKind,
    all_kinds,
    keras_major,
    name_of,
    with_keras,
)
from traceinsight.resample import BOOTSTRAP_SAMPLES, SEED, median
from traceinsight.runview import RunView

# the table's types live below the model (``traceinsight.factortable``); read from here too
__all__ = ["FACTORS", "FACTOR_LABELS", "LEVELS", "LEVEL_LABELS", "NO_DEVICE_PAIR", "FactorTable",
           "Gap", "Interaction", "Step", "level_label"]
# an interaction is said to matter when its interval excludes 1 (it is a ratio of ratios)
_INTERACTION_SEED = SEED + 7

# --------------------------------------------------------------------------------------------------


def _modes_by_axes(run: RunView) -> dict[Axes, str]:
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


def _step(run: RunView, factor: str, from_mode: str, from_level: str, to_mode: str,
          to_level: str) -> Step:
    return Step(factor, from_level, to_level, run.compare(to_mode, from_mode))


def _moved(ax: Axes, **changes: str) -> Axes:
    d = {f: getattr(ax, f) for f in AXES}
    d.update(changes)
    return Axes(**d)


def _effects(run: RunView, by_axes: dict[Axes, str]) -> list[Step]:
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


def _interactions(run: RunView, by_axes: dict[Axes, str]) -> list[Interaction]:
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


def _interaction_interval(run: RunView, x: str, f: str, g: str, fg: str) -> tuple[float, float, float]:
    """m(fg)·m(x) / (m(f)·m(g)) of the four modes' medians and its 95 % percentile interval, each
    mode's bootstrap medians drawn independently of the others' (``ModeResult.boot_medians``:
    every mode resamples with the same seed, so each side is shuffled by its own permutation)."""
    modes = [run.modes[n] for n in (fg, x, f, g)]
    meds = [float(median(m.step_samples_ms)) for m in modes]
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


def _gap_pairs(run: RunView, by_axes: dict[Axes, str]) -> list[tuple[str, str, str]]:
    """(why, from, to): each TF1 mode and its TF2 twin (Keras 3 on TensorFlow, else the same Keras
    where the run's TensorFlow brings Keras 2 only; the same call and input), then the fastest and
    the slowest mode of each task when they differ in two factors or more."""
    pairs: list[tuple[str, str, str]] = []
    for ax, name in by_axes.items():
        if ax.tf == "tf1":
            twin = by_axes.get(ax.moved(**TF2_TWIN)) or by_axes.get(ax.moved(**TF2_SAME_KERAS))
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


def _beside(run: RunView, to_mode: str, factors: tuple[str, ...], effects: list[Step]) -> tuple[Step, ...]:
    out = []
    for s in effects:
        if s.factor in factors or to_mode not in (s.from_mode, s.to_mode):
            continue
        if s.to_mode == to_mode:
            out.append(s)
        else:
            out.append(Step(s.factor, s.to_level, s.from_level, run.compare(to_mode, s.to_mode)))
    return tuple(out)


def _gap(run: RunView, why: str, a: str, b: str, by_axes: dict[Axes, str],
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
def _kinds_by_axes(workload: str | None, keras: str | None) -> dict[Axes, ModeKind]:
    """The kinds the capture can make, by the axes they run with under the run's ``keras``
    (``with_keras``: under Keras 2 a mode named as Keras 3's runs Keras 2, and no mode runs Keras
    3 on JAX); each kept as named, the name ``capture --modes`` takes."""
    out: dict[Axes, ModeKind] = {}
    keras2 = keras_major(keras) == "2"
    for k in all_kinds(workload):
        if keras2 and k.backend == "jax":
            continue
        ax = with_keras(k, keras).axes()
        if ax is not None:
            out.setdefault(ax, k)
    return out


def _keras(run: RunView) -> str | None:
    """The ``keras`` version of the run's interpreter (run.json's environment), if recorded."""
    env = run.manifest.get("environment") if isinstance(run.manifest, dict) else None
    v = env.get("keras") if isinstance(env, dict) else None
    return v if isinstance(v, str) else None


def _workload(run: RunView) -> str | None:
    """The run's workload kind ("keras" / "function", run.json's), which says which modes the
    capture can add to it; None for foreign traces."""
    wl = run.manifest.get("workload") if isinstance(run.manifest, dict) else None
    kind = wl.get("kind") if isinstance(wl, dict) else None
    return kind if kind in ("keras", "function") else None


def _kind_of(run: RunView, ax: Axes) -> ModeKind | None:
    """A mode kind with these axes that the capture can make for the run's workload, if any."""
    return _kinds_by_axes(_workload(run), _keras(run)).get(ax)


def _absent(run: RunView, effects: list[Step],
            by_axes: dict[Axes, str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The factors no pair of the run measures, each with the fewest modes to add that would give
    it one (a mode beside one of the run's, else two), as ``capture --modes`` names them."""
    have = {s.factor for s in effects}
    out: list[tuple[str, str, tuple[str, ...]]] = []
    keras = _keras(run)
    for f in FACTORS:
        if f in have:
            continue
        if f in ("keras", "backend") and keras_major(keras) == "2" and _workload(run) == "keras":
            # TensorFlow 2.12 - 2.15 bring Keras 2: no mode of this interpreter runs Keras 3
            out.append((f, f"this run's Keras is {keras}: Keras 3 (and with it Keras on JAX) "
                           "needs TensorFlow 2.16 or later, a run of its own", ()))
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


def factor_table(run: RunView) -> FactorTable:
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
