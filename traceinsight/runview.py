"""The run as its figures are computed from it: ``RunView``.

``traceinsight.derive`` computes a run's figures in one explicit pass, in order: the program
groups and each mode's concentrated costs, the summary (each mode against the fastest), the pairs
the findings compare (``findings.pairing.pairs_compared``), the findings, the pairs whose traced
steps disagree, the factor table. Each computation is handed a ``RunView``: the run's modes and the
figures computed before it, the comparisons among them. The ``Run`` being made holds no figures
until the pass is done (``Run.figures`` is set once, frozen): nothing reaches back into a run
still being made.

A ``RunView`` reads like the ``Run`` it views for everything a computation asks (``modes``,
``ok_modes()``, ``fastest``, ``compare(a, b)``, ``same_program``, ``concentrated_costs`` ...), so a
rule run on a finished ``Run`` (as the tests do) reads the same figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceinsight.columns import Columns
from traceinsight.model import ModeResult, Run

if TYPE_CHECKING:
    from traceinsight.comparison import Comparison  # (a type: start-up time)


class RunView:
    """``run``'s modes with the figures computed so far: ``program_groups``, ``concentrated``
    (mode -> category -> cost), ``compare`` (the pass's comparisons: a rule's view serves only
    the pairs prepared for it and raises KeyError on another) and, once computed,
    ``disagreements``."""

    def __init__(self, run: Run, *, program_groups: tuple[tuple[str, ...], ...],
                 concentrated: Mapping[str, Mapping[str, dict]],
                 compare: Callable[[str, str], Comparison],
                 disagreements: tuple[Comparison, ...] | None = None,
                 layer_matrix: Columns | None = None) -> None:
        self._run = run
        self._layer_matrix = layer_matrix
        self.program_groups = program_groups
        self.concentrated = concentrated
        self._compare = compare
        self._disagreements = disagreements

    def with_disagreements(self, disagreements: tuple[Comparison, ...],
                           compare: Callable[[str, str], Comparison] | None = None) -> RunView:
        """The same view with the pairs whose traced steps disagree (and another comparisons'
        reader, when given)."""
        return RunView(self._run, program_groups=self.program_groups,
                       concentrated=self.concentrated, compare=compare or self._compare,
                       disagreements=disagreements, layer_matrix=self._layer_matrix)

    def with_compare(self, compare: Callable[[str, str], Comparison]) -> RunView:
        return RunView(self._run, program_groups=self.program_groups,
                       concentrated=self.concentrated, compare=compare,
                       disagreements=self._disagreements, layer_matrix=self._layer_matrix)

    # --- the run's own data
    @property
    def name(self) -> str:
        return self._run.name

    @property
    def path(self) -> Path | None:
        return self._run.path

    @property
    def manifest(self) -> dict[str, Any]:
        return self._run.manifest

    @property
    def source(self) -> str:
        return self._run.source

    @property
    def modes(self) -> dict[str, ModeResult]:
        return self._run.modes

    def ok_modes(self) -> list[ModeResult]:
        return self._run.ok_modes()

    @property
    def fastest(self) -> str | None:
        return self._run.fastest

    def by_speed(self) -> list[ModeResult]:
        return self._run.by_speed()

    # --- the figures computed so far
    def same_program(self, a: str, b: str) -> bool:
        return any(a in g and b in g for g in self.program_groups)

    def compare(self, a: str, b: str) -> Comparison:
        return self._compare(a, b)

    def concentrated_costs(self, mode: str) -> Mapping[str, dict]:
        return self.concentrated[mode]

    @property
    def layer_matrix(self) -> Columns:
        """The cross-mode layer view (``traceinsight.layer_matrix``), computed before the
        findings."""
        if self._layer_matrix is None:
            raise KeyError("the cross-mode layer view was not computed for this view")
        return self._layer_matrix

    def traced_disagreements(self) -> tuple[Comparison, ...]:
        if self._disagreements is None:
            raise KeyError("the pairs whose traced steps disagree are computed after the findings "
                           "that do not read them")
        return self._disagreements
