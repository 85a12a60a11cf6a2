"""The finding that names a layer (``layer-explains``): where one group of a model's layers explains
most of the difference between two modes of the same program, or most of an eager mode's Python.

Read from the modes' layers tables (``ModeResult.layers``, ``analysis/layers.py``), which hold the
traced steady steps' time per layer: graph and XLA per layer instance (op self time on every
thread), eager per layer class (the main thread's time under its ``call`` frames, by category).
Layers are matched across modes by their class's ``call`` (``layer_class``, recorded by the
capture); a graph mode's instances of one class are summed, so the eager row and the graph rows
speak of the same layers. Without that record only modes whose rows carry the same layer paths
(graph beside XLA) are matched, instance by instance. The layer named must differ in its
per-step times too: the ratio of its per-step medians in the two modes (``layer_matrix.pair_ratio``,
the cross-mode view's figure) must exceed 1 beyond run-to-run noise wherever both modes have
enough steps for an interval; the evidence quotes it, or says why there is no interval. The
finding explains where a difference lies; it is not a fix of its own, so it carries no saving (the
mode rules say what to change).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight.finding import Change, Finding, advice
from traceinsight.layer_matrix import pair_ratio
from traceinsight.model import ModeResult
from traceinsight.runview import RunView

if TYPE_CHECKING:
    from traceinsight.ratio import RatioEstimate  # (a type: start-up time)

# the group must hold this share of the difference between the two layers tables' totals, and
# the difference must be this large a share of the faster mode's table (smaller gaps are noise
# between two traces)
EXPLAINS = 0.5
MIN_GAP = 0.2
MIN_MS = 0.2
# an eager mode's Python: one layer class holding this share of it is named
PYTHON_SHARE = 0.5


class _Group:
    """The rows of one mode's layers table that share a key: ms per step, the layers' names."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.names: list[str] = []
        self.python_ms = 0.0


def _groups(m: ModeResult, by_class: bool) -> tuple[dict[str, _Group], float]:
    """The mode's placed rows by key (the layer class, or the layer path), and the table's total
    (placed or not)."""
    t = m.table("layers")
    out: dict[str, _Group] = {}
    if t.empty:
        return out, 0.0
    total = float(np.nansum(np.asarray(t["ms_per_step"], dtype=float)))
    cls = t["layer_class"] if "layer_class" in t else [""] * len(t)
    py = t["python_ms"] if "python_ms" in t else [np.nan] * len(t)
    for layer, placed, ms, c, p in zip(t["layer"], t["placed"], t["ms_per_step"], cls, py):
        if not placed:
            continue
        key = str(c) if by_class else str(layer)
        if not key:
            continue
        g = out.setdefault(key, _Group())
        g.ms += float(ms)
        g.python_ms += float(p) if np.isfinite(p) else 0.0
        g.names.append(str(layer))
    return out, total


def _eager(m: ModeResult) -> bool:
    t = m.table("layers")
    return not t.empty and "python_ms" in t


def _leaf(path: str) -> str:
    return re.sub(r"_\d+$", "", path.split(" [")[0].split("/")[-1])


def _describe(key: str, fast: _Group, slow: _Group, by_class: bool) -> str:
    """The group in words: ``the 8 layers block*_dwconv (BaseDepthwiseConv.call)``, ``layer
    Sliced.call``."""
    graph = fast if len(fast.names) >= len(slow.names) else slow
    # a scope inside a layer (``model/conv_1/convolution``) is that layer's, not another
    layers = [n for n in graph.names if not any(n.startswith(o + "/") for o in graph.names)]
    leaves = sorted({_leaf(n) for n in layers})
    if not by_class:
        return f"layer {key}"
    if len(leaves) > 1:
        pattern = sorted({re.sub(r"\d+", "*", x) for x in leaves})
        named = ", ".join(pattern) if len(pattern) <= 2 else ", ".join(leaves[:3]) + ", …"
        return f"the {len(leaves)} layers {named} ({key})"
    return f"layer {leaves[0]} ({key})" if leaves and leaves[0] not in key else f"layer {key}"


def _ratio_words(est: RatioEstimate | None, slow: ModeResult, fast: ModeResult) -> str:
    """The layer's ratio between the two modes, in words (the cross-mode view's figure)."""
    if est is None or not np.isfinite(est.ratio):
        return ""
    if np.isfinite(est.lo) and np.isfinite(est.hi):
        return (f"Its median per traced step is {est.ratio:.2f}x in {slow.name} what it is in "
                f"{fast.name} (95 % interval {est.lo:.2f}-{est.hi:.2f}). ")
    return (f"Its median per traced step is {est.ratio:.2f}x in {slow.name} what it is in "
            f"{fast.name}, with no interval: {est.note}. ")


def _fix(slow: ModeResult, fast: ModeResult, what: str) -> tuple[str, tuple[tuple[Change, str], ...]]:
    """The fix's lines, and which of them recommend a change (``Finding.advice``)."""
    a, b = slow.kind.axes(), fast.kind.axes()
    if a is not None and b is not None and a.jit == "on" and b.jit == "off":
        off = "model.compile(..., jit_compile=False)   # or tf.function(model, jit_compile=False)"
        return (f"# XLA runs {what} slower than the graph here: compile without XLA\n" + off,
                advice(Change.XLA_OFF, off))
    if a is not None and b is not None and a.execution == "eager" and b.execution == "graph":
        return (f"# in eager, {what} pays Python and dispatch per op: run the model as a graph\n"
                "model = tf.function(model)   # or model.compile(..., run_eagerly=False)"), ()
    return (f"# time {what} alone in both modes to confirm (tools/time_layers_alone.py),\n"
            f"# then run it as {fast.name} does"), ()


def _pair(run: RunView, slow: ModeResult, fast: ModeResult) -> dict[str, Any] | None:
    """The layer-explains finding's fields for ``slow`` against ``fast``, or None."""
    by_class = all("layer_class" in m.table("layers")
                   and (np.asarray(m.table("layers")["layer_class"]) != "").any()
                   for m in (slow, fast))
    if _eager(slow) != _eager(fast) and not by_class:
        return None      # an eager class row and graph instance rows match only by class
    gs, total_s = _groups(slow, by_class)
    gf, total_f = _groups(fast, by_class)
    gap = total_s - total_f
    if not gs or not gf or gap <= max(MIN_MS, MIN_GAP * total_f):
        return None
    deltas = {k: gs.get(k, _Group()).ms - gf.get(k, _Group()).ms for k in set(gs) | set(gf)}
    key = max(sorted(deltas), key=lambda k: deltas[k])
    if deltas[key] < EXPLAINS * gap:
        return None
    s, f = gs.get(key, _Group()), gf.get(key, _Group())
    # the layer's per-step times in the two modes (the cross-mode view's ratio): where they give
    # an interval, the layer is named only if it says the slow mode is slower in it beyond noise
    est = pair_ratio(slow, fast, key, by_class)
    has_interval = est is not None and np.isfinite(est.lo) and np.isfinite(est.hi)
    if est is not None and has_interval and not (est.significant and est.ratio > 1):
        return None
    what = _describe(key, f, s, by_class)
    others = sorted((k for k in deltas if k != key), key=lambda k: -deltas[k])[:2]
    rest = "; ".join(f"{k}: {gs.get(k, _Group()).ms:.1f} vs {gf.get(k, _Group()).ms:.1f}"
                     for k in others)
    evidence = (f"Traced steady steps, ms/step by layer: {what} {s.ms:.1f} in {slow.name} vs "
                f"{f.ms:.1f} in {fast.name}, {deltas[key]:.1f} of the {gap:.1f} ms/step between "
                f"the two layers tables ({deltas[key] / gap:.0%})"
                + (f"; next: {rest}" if rest else "") + ". "
                + _ratio_words(est, slow, fast) +
                f"Untraced medians: {slow.name} {slow.median_ms:.1f}, {fast.name} "
                f"{fast.median_ms:.1f} ms/step. How each table placed its time is in its source "
                "column; what no layer holds is its last row.")
    fix, fix_advice = _fix(slow, fast, what)
    return dict(title=f"{slow.name} is slower than {fast.name} mostly in {what}: "
                f"{s.ms:.1f} vs {f.ms:.1f} ms/step",
                evidence=evidence, fix=fix, advice=fix_advice, saving_ms=None,
                saving_basis="not a saving: where the difference between the two modes lies",
                modes=(slow.name, fast.name))


def _python_in_one_layer(m: ModeResult) -> dict[str, Any] | None:
    """An eager mode whose Python is mostly one layer class's: the finding's fields, or None."""
    t = m.table("layers")
    if not _eager(m):
        return None
    py = np.asarray(t["python_ms"], dtype=float)
    total = float(np.nansum(py))
    placed = np.asarray(t["placed"], dtype=bool)
    if total <= MIN_MS or not placed.any():
        return None
    i = int(np.argmax(np.where(placed, py, -1.0)))
    share = py[i] / total
    if share < PYTHON_SHARE:
        return None
    name = str(t["layer"][i])
    return dict(title=f"{m.name} spends {share:.0%} of its Python in {name}",
                evidence=(f"Python under {name}'s call frames: {py[i]:.1f} of {total:.1f} "
                          f"ms/step of the mode's Python (python-tracer pass, scaled to the "
                          f"host pass), {float(t['ms_per_step'][i]):.1f} ms/step in all."),
                fix=(f"# {name}: move its per-element Python (loops, slicing) into whole-"
                     "tensor ops,\n# or run the model as a graph: model = tf.function(model)"),
                saving_ms=None, saving_basis="not a saving: where the mode's Python lies",
                modes=(m.name,))


def _task(m: ModeResult) -> str:
    """The work a mode's step does ("infer" / "train"); "" where its kind does not say."""
    axes = m.kind.axes()
    return axes.task if axes is not None else ""


def rule_layer_explains(run: RunView) -> Iterable[Finding]:
    """14. One layer (or one class of layers) explains most of the difference between a mode and
    the fastest mode of its program doing the same work (a training step is never set beside an
    inference step: its layers also run their backward pass); or most of an eager mode's Python.
    Info, no saving."""
    for group in run.program_groups:
        modes = [run.modes[n] for n in group if not run.modes[n].table("layers").empty
                 and np.isfinite(run.modes[n].median_ms)]
        for task in sorted({_task(m) for m in modes}):
            same = [m for m in modes if _task(m) == task]
            if len(same) < 2:
                continue
            fast = min(same, key=lambda m: (m.median_ms, m.name))
            for slow in sorted(same, key=lambda m: m.name):
                if slow is fast:
                    continue
                fields = _pair(run, slow, fast)
                if fields is not None:
                    yield Finding(rule="layer-explains", **fields)
    for m in sorted(run.modes.values(), key=lambda m: m.name):
        if m.ok:
            fields = _python_in_one_layer(m)
            if fields is not None:
                yield Finding(rule="layer-explains", **fields)
