"""The cross-mode layer view (``RunFigures.layer_matrix``): the same layer in every mode that has a
layers table, with its time per step and its ratio to the mode it is compared with, and the
ratio's 95 % interval.

Each mode's layers table (``ModeResult.layers``, ``analysis/layers.py``) and its rows step by step
(``ModeResult.layer_steps``) are read as they are. Rows are matched across modes by their key: the
layer class's ``call`` (``layer_class``) where an eager mode is shown (its rows are layer classes)
and every placed row of every shown mode names its class, a graph mode's instances of one class
summed step by step; else the layer path (graph beside XLA). A mode is compared with the fastest
mode of its program doing the same work (its kind's task: a training step's layers also run
their backward pass, so a training step is never set beside an inference step), as the layer
finding compares them.

The ratio is the tool's ratio of two modes' steps (``stats.mode_ratio``, the same estimator and
bootstrap as the modes' step ratios): the median of the layer's per-step times in the mode over
its median in the mode compared with, with a 95 % bootstrap interval of the traced steps (none
with fewer than ``stats.MIN_STEPS_FOR_INTERVAL`` steps a side: an eager mode's layers come from
its python-tracer pass, a few steps unless ``--python-max-steps`` asks more). The two traces were
taken in different processes, not in interleaved rounds, so a ratio counts as a difference only
beyond the run-to-run tolerance, as for two modes timed apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from traceinsight.columns import Columns, text
from traceinsight.resample import bootstrap_medians_rows, median
from traceinsight.stats import MIN_STEPS_FOR_INTERVAL, mode_ratio

if TYPE_CHECKING:
    from traceinsight.model import ModeResult, Run
    from traceinsight.ratio import RatioEstimate  # (where a ratio is made: start-up time)
    from traceinsight.runview import RunView

COLUMNS = ("layer", "placed", "mode", "ms_per_step", "steps", "median_ms", "versus", "ratio",
           "ratio_lo", "ratio_hi", "significant", "note")
# a layer with no time in most of the compared mode's steps: no ratio
NO_TIME = "no time in most steps of {versus}"


def by_class(modes: Sequence[ModeResult]) -> bool:
    """Whether the modes' rows are matched by layer class: an eager mode (whose rows are layer
    classes) among them, and every placed row of every mode names its class."""
    tables = [m.table("layers") for m in modes]
    if not any("python_ms" in t for t in tables):
        return False
    return all("layer_class" in t and all(str(c) for c, p in zip(t["layer_class"], t["placed"]) if p)
               for t in tables)


def _rows(m: ModeResult, classes: bool) -> dict[str, tuple[bool, float, np.ndarray]]:
    """The mode's rows by key: (placed, ms per step, the key's time in each steady step, summed
    over its rows; empty where the mode has no per-step rows)."""
    t, s = m.table("layers"), m.table("layer_steps")
    labels = [str(x) for x in t["layer"]]
    n_steps = len(s) // len(t) if len(t) and len(s) % len(t) == 0 else 0
    per_step = (np.asarray(s["ms"], dtype=float).reshape(len(t), n_steps) if n_steps
                and [str(x) for x in s["layer"][::n_steps]] == labels else np.zeros((len(t), 0)))
    cls = [str(c) for c in t["layer_class"]] if "layer_class" in t else [""] * len(t)
    out: dict[str, tuple[bool, float, np.ndarray]] = {}
    for i, (label, placed, ms) in enumerate(zip(labels, t["placed"].tolist(), t["ms_per_step"])):
        key = cls[i] if classes and placed else label
        old = out.get(key)
        if old is None:
            out[key] = (bool(placed), float(ms), per_step[i].copy())
        else:
            out[key] = (old[0], old[1] + float(ms), old[2] + per_step[i])
    return out


def _task(m: ModeResult) -> str:
    axes = m.kind.axes()
    return axes.task if axes is not None else ""


def versus_of(run: Run | RunView, shown: Sequence[ModeResult]) -> dict[str, str]:
    """Each shown mode's mode to compare with: the fastest shown mode of its program doing the
    same work ("" for that fastest mode itself, and for a mode with none beside it)."""
    out: dict[str, str] = {}
    for m in shown:
        peers = [p for p in shown if run.same_program(m.name, p.name) and _task(p) == _task(m)
                 and np.isfinite(p.median_ms)]
        fast = min(peers, key=lambda p: (p.median_ms, p.name)) if peers else None
        out[m.name] = fast.name if fast is not None and fast is not m else ""
    return out


def _ratio(a: np.ndarray, b: np.ndarray, versus: str, boot_a: np.ndarray | None = None,
           boot_b: np.ndarray | None = None) -> RatioEstimate:
    """The ratio of a layer's per-step times in two modes (``stats.mode_ratio``), or why none."""
    from traceinsight.ratio import RatioEstimate
    nan = float("nan")
    if not len(a) or not len(b):
        return RatioEstimate(nan, nan, nan, False, "steps", "no per-step times")
    if not median(b) > 0:
        return RatioEstimate(nan, nan, nan, False, "steps", NO_TIME.format(versus=versus))
    return mode_ratio(a, b, boot_a=boot_a, boot_b=boot_b)


def pair_ratio(a: ModeResult, b: ModeResult, key: str, classes: bool) -> RatioEstimate | None:
    """The ratio of one layer's per-step times in mode ``a`` to mode ``b`` (``key``: its layer
    class where ``classes``, else its layer path), as the matrix computes it; None where a mode
    has no such layer."""
    got_a, got_b = _rows(a, classes).get(key), _rows(b, classes).get(key)
    if got_a is None or got_b is None:
        return None
    return _ratio(got_a[2], got_b[2], b.name)


def layer_matrix(run: Run | RunView) -> Columns:
    """One row per (layer key, mode) of the ok modes that have a layers table, in the run's mode
    order within each key; keys by their largest time in any mode, what no layer holds last.
    See the module docstring for the key, the mode compared with and the ratio."""
    shown = [m for m in run.modes.values() if m.ok and not m.table("layers").empty]
    if not shown:
        return Columns.no_rows(COLUMNS)
    classes = by_class(shown)
    rows = {m.name: _rows(m, classes) for m in shown}
    versus = versus_of(run, shown)
    keys: dict[str, tuple[bool, float]] = {}
    for per_mode in rows.values():
        for key, (placed, ms, _) in per_mode.items():
            was = keys.get(key, (placed, 0.0))
            keys[key] = (was[0] and placed, max(was[1], ms))
    order = sorted(keys, key=lambda k: (not keys[k][0], -keys[k][1], k))
    # each (mode, layer)'s resampled medians once (a mode compared with is read by many), and a
    # mode's layers at once: the same resamples of the same steps as bootstrap_medians draws
    boots: dict[tuple[str, str], np.ndarray] = {}
    compared = {n for n, v in versus.items() if v} | {v for v in versus.values() if v}
    for name in compared:
        by_n: dict[int, list[str]] = {}
        for key, (_, _, samples) in rows[name].items():
            if len(samples) >= MIN_STEPS_FOR_INTERVAL:
                by_n.setdefault(len(samples), []).append(key)
        for keys_n in by_n.values():
            meds = bootstrap_medians_rows(np.stack([rows[name][k][2] for k in keys_n]))
            boots.update({(name, k): meds[i] for i, k in enumerate(keys_n)})

    def boot(mode: str, key: str, samples: np.ndarray) -> np.ndarray | None:
        return boots.get((mode, key))

    out: dict[str, list] = {c: [] for c in COLUMNS}
    for key in order:
        for m in shown:
            got = rows[m.name].get(key)
            if got is None:
                continue
            placed, ms, samples = got
            # what no layer holds is not the same work in two modes: no ratio
            vs = versus[m.name] if placed and keys[key][0] else ""
            ratio = lo = hi = float("nan")
            significant, note = False, ""
            other = rows[vs].get(key) if vs else None
            if other is not None:
                est = _ratio(samples, other[2], vs, boot(m.name, key, samples),
                             boot(vs, key, other[2]))
                ratio, lo, hi, significant, note = (est.ratio, est.lo, est.hi, est.significant,
                                                    est.note)
            out["layer"].append(key)
            out["placed"].append(placed)
            out["mode"].append(m.name)
            out["ms_per_step"].append(ms)
            out["steps"].append(len(samples))
            out["median_ms"].append(float(median(samples)) if len(samples) else float("nan"))
            out["versus"].append(vs if other is not None else "")
            out["ratio"].append(ratio)
            out["ratio_lo"].append(lo)
            out["ratio_hi"].append(hi)
            out["significant"].append(significant)
            out["note"].append(note)
    return Columns({"layer": text(out["layer"]), "placed": np.array(out["placed"], dtype=bool),
                    "mode": text(out["mode"]),
                    "ms_per_step": np.array(out["ms_per_step"], dtype=float),
                    "steps": np.array(out["steps"], dtype=np.int64),
                    "median_ms": np.array(out["median_ms"], dtype=float),
                    "versus": text(out["versus"]),
                    "ratio": np.array(out["ratio"], dtype=float),
                    "ratio_lo": np.array(out["ratio_lo"], dtype=float),
                    "ratio_hi": np.array(out["ratio_hi"], dtype=float),
                    "significant": np.array(out["significant"], dtype=bool),
                    "note": text(out["note"])})
