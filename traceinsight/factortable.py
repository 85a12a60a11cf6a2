"""The factor table as data: ``FactorTable`` with its ``Step``s (one factor changed alone),
``Gap``s (modes that differ in several factors, walked one factor at a time) and
``Interaction``s, and the factors' names and levels. They sit below the model
(``RunFigures.factors`` holds the table), so that the model imports them;
``traceinsight.factors`` computes the table (see its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    # (a type: a run of one mode has a factor table with no comparison in it; start-up time)
    from traceinsight.comparison import Comparison

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
