"""The whole run's analysis: what is computed from all of a run's modes, once, when the run is made.

``Run`` and ``ModeResult`` (``traceinsight.model``) are data at the bottom of the package. The
figures that need more than one mode — the summary with its ratios, the comparisons a page shows,
the findings, the factor table, the hosts' comparison, the program groups — are computed here, above stats,
compare, findings and analysis/hosts, into one frozen ``RunFigures`` that the run holds
(``Run.figures``) and every renderer reads. ``complete(run)`` gives a run (and each of its modes)
``ANALYZER``; a ``Run`` made with it computes its figures as it is made. Every place that makes a
``Run`` for others to read (the loaders, ``traceinsight.testing``) completes it.

The order of the work: the summary compares each mode with the fastest, the findings compare the
pairs they explain and read the summary's program groups; each comparison is computed once here
and kept in ``RunFigures.comparisons`` (both ways round), so every page quotes the same object.
A pair no page of the run shows (the compare screen, ``diff --modes``) is computed when asked
(``Analyzer.compare``), with the same function, so it gives the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from traceinsight.model import Display, ModeResult, Run, RunFigures

if TYPE_CHECKING:
    from traceinsight.analysis.step_marks import StepMarks, StepSeries
    from traceinsight.columns import Columns
    from traceinsight.compare import Comparison
    from traceinsight.factors import FactorTable
    from traceinsight.finding import Finding


def in_run_order(run: Run, a: str, b: str) -> Comparison:
    """Mode a against mode b, computed in the run's mode order and read from the other side by
    ``flipped()``: b against a is exactly the reciprocal of a against b, whichever is asked."""
    from traceinsight.compare import compare_modes
    order = list(run.modes)
    if a != b and order.index(a) > order.index(b):
        return compare_modes(run.modes[b], run.modes[a]).flipped()
    return compare_modes(run.modes[a], run.modes[b])


class _Work:
    """The figures while they are computed: what ``RunFigures`` holds, each part computed on its
    first read by the functions that need it (the findings read the summary's comparisons), then
    frozen. Only ``Analyzer.figures`` makes one, for the run being made; nothing else sees it."""

    def __init__(self, run: Run, hosts_compared: tuple | None) -> None:
        self.run = run
        self.hosts_compared = hosts_compared
        self.comparisons: dict[tuple[str, str], Comparison] = {}
        self._summary: Columns | None = None
        self._findings: tuple[Finding, ...] | None = None
        self._host_groups: tuple | None = None
        self._program_groups: tuple[tuple[str, ...], ...] | None = None
        self.findings_error: str | None = None
        self._concentrated: dict[str, Mapping[str, dict]] = {}
        self._disagreements: tuple[Comparison, ...] | None = None

    @property
    def summary(self) -> Columns:
        if self._summary is None:
            from traceinsight.stats import summarize
            self._summary = summarize(self.run)
        return self._summary

    @property
    def findings(self) -> tuple[Finding, ...]:
        if self._findings is None:
            from traceinsight.findings import find
            try:
                self._findings = tuple(find(self.run))
            except Exception as e:  # noqa: BLE001 - a rule failing on an unusual run: said, not fatal
                self._findings = ()
                self.findings_error = f"{type(e).__name__}: {e}"
        return self._findings

    @property
    def host_groups(self) -> tuple:
        if self._host_groups is None:
            if self.hosts_compared is not None:
                self._host_groups = tuple(self.hosts_compared)
            elif len(self.run.modes) < 2:
                self._host_groups = ()    # one trace: no hosts (and no import of the hosts module)
            else:
                from traceinsight.analysis.hosts import host_groups
                self._host_groups = host_groups(self.run)
        return self._host_groups

    @property
    def program_groups(self) -> tuple[tuple[str, ...], ...]:
        if self._program_groups is None:
            from traceinsight.compare import program_groups
            self._program_groups = tuple(tuple(g) for g in program_groups(self.run))
        return self._program_groups

    def concentrated_costs(self, mode: str) -> Mapping[str, dict]:
        got = self._concentrated.get(mode)
        if got is None:
            from traceinsight.stats import concentrated_costs
            got = self._concentrated[mode] = concentrated_costs(self.run.modes[mode])
        return got

    def traced_disagreements(self) -> tuple[Comparison, ...]:
        if self._disagreements is None:
            from traceinsight.findings import traced_disagreements
            try:
                self._disagreements = tuple(traced_disagreements(self.run))
            except Exception:
                if self.findings_error is None:
                    raise
                self._disagreements = ()    # the findings failed on this run: said once, there
        return self._disagreements

    def factors(self) -> tuple[FactorTable | None, str | None]:
        """The factor table, or why there is none (it failed on an unusual run: said, not
        fatal; the other figures stand)."""
        from traceinsight.factors import factor_table
        try:
            return factor_table(self.run), None
        except Exception as e:  # noqa: BLE001
            return None, f"{type(e).__name__}: {e}"

    def comparison(self, a: str, b: str) -> Comparison:
        got = self.comparisons.get((a, b))
        if got is None:
            order = list(self.run.modes)
            later = a != b and order.index(a) > order.index(b)
            # the pair in run order is kept too, as computed: both readings come from one object
            got = self.comparison(b, a).flipped() if later else in_run_order(self.run, a, b)
            self.comparisons[(a, b)] = got
        return got

    def freeze(self) -> RunFigures:
        # in this order, so that what each compares is kept on the way: the summary, the
        # findings, the pairs whose traced steps disagree
        summary, findings, disagreements = self.summary, self.findings, self.traced_disagreements()
        factors, factors_error = self.factors()
        concentrated = {name: self.concentrated_costs(name) for name in self.run.modes}
        both = dict(self.comparisons)
        for (a, b), c in self.comparisons.items():   # each pair both ways round, once
            if (b, a) not in both:
                both[(b, a)] = c.flipped()
        return RunFigures(summary=summary, findings=findings,
                          comparisons=MappingProxyType(both), host_groups=self.host_groups,
                          program_groups=self.program_groups,
                          concentrated=MappingProxyType(concentrated),
                          disagreements=disagreements, findings_error=self.findings_error,
                          factors=factors, factors_error=factors_error,
                          step_marks=MappingProxyType(self.step_marks()),
                          step_series=MappingProxyType(self.step_series()),
                          op_ms_per_call=MappingProxyType(self.op_ms_per_call()),
                          hotspots_listed=MappingProxyType(self.hotspots_listed()))

    def step_marks(self) -> dict[str, StepMarks]:
        """Each ok mode's steps marked for its pictures (``analysis.step_marks``)."""
        from traceinsight.analysis.step_marks import mode_step_marks
        return {name: mode_step_marks(m.table("steps").records())
                for name, m in self.run.modes.items() if m.status == "ok"}

    def step_series(self) -> dict[str, tuple[StepSeries, ...]]:
        """Each mode's step times for the viewer's chart (``analysis.step_marks``)."""
        from traceinsight.analysis.step_marks import mode_step_series
        return {name: mode_step_series(m.timing, m.table("steps")) for name, m in self.run.modes.items()}

    def hotspots_listed(self) -> dict[str, Columns]:
        """Each mode's hotspots in the order the reports list them."""
        from traceinsight.analysis.results import hotspots_listed_order
        return {name: hotspots_listed_order(m.table("hotspots")) for name, m in self.run.modes.items()
                if not m.table("hotspots").empty}

    def op_ms_per_call(self) -> dict[str, tuple[float, ...]]:
        """Each mode's ops: the self time of one call (``analysis.results.ms_per_call``)."""
        from traceinsight.analysis.results import ms_per_call
        out = {}
        for name, m in self.run.modes.items():
            ops = m.table("ops")
            if not ops.empty:
                out[name] = tuple(ms_per_call(ops["calls_per_step"], ops["self_ms_per_step"]).tolist())
        return out


class Analyzer:
    """``traceinsight.model.Analyzer``: computes a run's figures. It keeps nothing (the figures
    live on the run), so one instance, ``ANALYZER``, serves every run."""

    def figures(self, run: Run, hosts_compared: tuple | None) -> RunFigures:
        """``run``'s figures, computed while the run is made (``Run.__post_init__``): until they
        are frozen the run reads them from the work in progress, and only then holds them."""
        work = _Work(run, hosts_compared)
        object.__setattr__(run, "figures", work)     # the run being made, not yet handed out
        try:
            return work.freeze()
        finally:
            object.__setattr__(run, "figures", None)

    def corrected(self, mode: ModeResult) -> ModeResult:
        """The mode with its user step (``analysis.overhead.corrected``: the profiler's cost
        taken out of its traced split, its Python hotspots scaled to the same python time)."""
        from traceinsight.analysis.overhead import corrected
        return corrected(mode)

    def compare(self, run: Run, a: str, b: str) -> Comparison:
        """A pair of ``run``'s modes no page of the run compares (``RunFigures.comparisons`` has
        the others), computed as the run's own are."""
        return in_run_order(run, a, b)


ANALYZER = Analyzer()


def complete(run: Run, hosts_compared: tuple | None = None, display: Display | None = None) -> Run:
    """``run`` with its figures, computed now by ``ANALYZER``, which its modes keep too (a mode
    shown alone is analysed the same way). ``hosts_compared``: the hosts' comparison the loader
    already made (it notes the straggler on each host's mode), kept instead of computed again.
    ``display``: how the run and its modes show themselves in a notebook or REPL (a renderer,
    ``report.notebook.NOTEBOOK``, given by the caller: the analysis never imports renderers)."""
    modes = {n: m if m.analyzer is ANALYZER and m.display is display
             else m.replace(analyzer=ANALYZER, display=display) for n, m in run.modes.items()}
    return replace(run, modes=modes, hosts_compared=hosts_compared, analyzer=ANALYZER,
                   display=display)
