"""The whole run's analysis: what is computed from all of a run's modes, once, when the run is made.

``Run`` and ``ModeResult`` (``traceinsight.model``) are data at the bottom of the package. The
figures that need more than one mode — the summary with its ratios, the comparisons a page shows,
the findings, the factor table, the hosts' comparison, the program groups — are computed here, above stats,
compare, findings and analysis/hosts, into one frozen ``RunFigures`` that the run holds
(``Run.figures``) and every renderer reads. ``complete(run)`` gives a run (and each of its modes)
``ANALYZER``; a ``Run`` made with it computes its figures as it is made. Every place that makes a
``Run`` for others to read (the loaders, ``traceinsight.testing``) completes it.

The work is one explicit pass (``figures_of``), each computation handed a ``RunView``: the run's
modes and the figures computed before it; the run being made holds no figures until the pass is
done. In order: the program groups and concentrated costs; the summary (each mode against the
fastest); the pairs whose traced steps disagree; the comparisons of the pairs the rules compare
(``findings.pairing.pairs_compared``), computed before the rules, which are handed those only; the
findings; the factor table; the hosts' comparison. Each comparison is computed once and kept in
``RunFigures.comparisons`` (both ways round), so every page quotes the same object.
A pair no page of the run shows (the compare screen, ``diff --modes``) is computed when asked
(``Analyzer.compare``), with the same function, so it gives the same figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from traceinsight.model import Display, ModeResult, Run, RunFigures
from traceinsight.runview import RunView

if TYPE_CHECKING:
    # (types only: a run of one mode compares no pair and makes no comparison; start-up time)
    from traceinsight.analysis.step_marks import StepMarks, StepSeries
    from traceinsight.columns import Columns
    from traceinsight.comparison import Comparison
    from traceinsight.factortable import FactorTable


def in_run_order(run: Run, a: str, b: str) -> Comparison:
    """Mode a against mode b, computed in the run's mode order and read from the other side by
    ``flipped()``: b against a is exactly the reciprocal of a against b, whichever is asked."""
    from traceinsight.compare import compare_modes
    order = list(run.modes)
    if a != b and order.index(a) > order.index(b):
        return compare_modes(run.modes[b], run.modes[a]).flipped()
    return compare_modes(run.modes[a], run.modes[b])


class _Comparisons:
    """The pass's comparisons: each pair computed once, in run order (``in_run_order``), kept and
    read both ways round. ``sealed(pairs)``: a reader that serves only those pairs, what the rules
    are handed (a pair a rule compares is named by ``findings.pairing.pairs_compared``)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.kept: dict[tuple[str, str], Comparison] = {}

    def get(self, a: str, b: str) -> Comparison:
        got = self.kept.get((a, b))
        if got is None:
            order = list(self.run.modes)
            later = a != b and order.index(a) > order.index(b)
            # the pair in run order is kept too, as computed: both readings come from one object
            got = self.get(b, a).flipped() if later else in_run_order(self.run, a, b)
            self.kept[(a, b)] = got
        return got

    def sealed(self, pairs: list[tuple[str, str]]) -> Callable[[str, str], Comparison]:
        allowed = {frozenset(p) for p in pairs}
        for a, b in pairs:
            self.get(a, b)

        def read(a: str, b: str) -> Comparison:
            if frozenset((a, b)) not in allowed:
                raise KeyError(f"{a} against {b}: a pair no rule declares "
                               "(findings.pairing.pairs_compared names the pairs the rules compare)")
            return self.get(a, b)
        return read

    def both_ways(self) -> Mapping[tuple[str, str], Comparison]:
        both = dict(self.kept)
        for (a, b), c in self.kept.items():   # each pair both ways round, once
            if (b, a) not in both:
                both[(b, a)] = c.flipped()
        return MappingProxyType(both)




def _failed(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"


def figures_of(run: Run, hosts_compared: tuple | None) -> RunFigures:
    """The run's figures, in one pass and in this order, each computation handed what the earlier
    ones computed (a ``RunView``), never the run being made: the program groups and each mode's
    concentrated costs; the summary (each mode against the fastest); the pairs whose traced steps
    disagree; the findings, with the comparisons their pairs need computed before them; the
    factor table; the hosts' comparison. A rule failing on an unusual run leaves no findings and
    says why (``findings_error``); the factor table likewise; the other figures stand."""
    from traceinsight import findings, stats
    from traceinsight.findings.pairing import pairs_compared

    comparisons = _Comparisons(run)
    view = RunView(run, program_groups=_program_groups(run),
                   concentrated=MappingProxyType({name: stats.concentrated_costs(m)
                                                  for name, m in run.modes.items()}),
                   compare=comparisons.get)
    layers = _layer_matrix(view)
    view = RunView(run, program_groups=view.program_groups, concentrated=view.concentrated,
                   compare=comparisons.get, layer_matrix=layers)
    summary = stats.summarize(view)
    findings_error: str | None = None
    try:
        disagreements = tuple(findings.traced_disagreements(view))
        rules_view = view.with_disagreements(
            disagreements, comparisons.sealed(pairs_compared(view)))
        found = tuple(findings.find(rules_view))
    except Exception as e:  # noqa: BLE001 - a rule failing on an unusual run: said, not fatal
        disagreements, found, findings_error = (), (), _failed(e)
    try:
        from traceinsight.factors import factor_table
        factors: FactorTable | None = factor_table(view)
        factors_error = None
    except Exception as e:  # noqa: BLE001
        factors, factors_error = None, _failed(e)
    if hosts_compared is not None:
        host_groups = tuple(hosts_compared)
    elif len(run.modes) < 2:
        host_groups = ()    # one trace: no hosts (and no import of the hosts module)
    else:
        from traceinsight.analysis.hosts import host_groups as compare_hosts
        host_groups = compare_hosts(run)
    return RunFigures(summary=summary, findings=found, comparisons=comparisons.both_ways(),
                      host_groups=host_groups, program_groups=view.program_groups,
                      concentrated=view.concentrated, disagreements=disagreements,
                      findings_error=findings_error, factors=factors, factors_error=factors_error,
                      step_marks=MappingProxyType(_step_marks(run)),
                      step_series=MappingProxyType(_step_series(run)),
                      op_ms_per_call=MappingProxyType(_op_ms_per_call(run)),
                      hotspots_listed=MappingProxyType(_hotspots_listed(run)),
                      layer_matrix=layers)


def _program_groups(run: Run) -> tuple[tuple[str, ...], ...]:
    """The ok modes grouped by program (``compare.program_groups``). Fewer than two ok modes
    are each a group of their own, as that function finds them, without importing the
    comparisons' modules: a trace analysed alone compares nothing (start-up time)."""
    ok = run.ok_modes()
    if len(ok) < 2:
        return tuple((m.name,) for m in ok)
    from traceinsight.compare import program_groups
    return tuple(tuple(g) for g in program_groups(run))


def _layer_matrix(view: RunView) -> Columns:
    """The cross-mode layer view (``layer_matrix``); no import of it where no mode has layers."""
    from traceinsight.columns import Columns as _Columns
    if not any(m.ok and not m.table("layers").empty for m in view.modes.values()):
        return _Columns()
    from traceinsight.layer_matrix import layer_matrix
    return layer_matrix(view)


def _step_marks(run: Run) -> dict[str, StepMarks]:
    """Each ok mode's steps marked for its pictures (``analysis.step_marks``)."""
    from traceinsight.analysis.step_marks import mode_step_marks
    return {name: mode_step_marks(m.table("steps").records())
            for name, m in run.modes.items() if m.status == "ok"}


def _step_series(run: Run) -> dict[str, tuple[StepSeries, ...]]:
    """Each mode's step times for the viewer's chart (``analysis.step_marks``)."""
    from traceinsight.analysis.step_marks import mode_step_series
    return {name: mode_step_series(m.timing, m.table("steps")) for name, m in run.modes.items()}


def _hotspots_listed(run: Run) -> dict[str, Columns]:
    """Each mode's hotspots in the order the reports list them."""
    from traceinsight.analysis.results import hotspots_listed_order
    return {name: hotspots_listed_order(m.table("hotspots")) for name, m in run.modes.items()
            if not m.table("hotspots").empty}


def _op_ms_per_call(run: Run) -> dict[str, tuple[float, ...]]:
    """Each mode's ops: the self time of one call (``analysis.results.ms_per_call``)."""
    from traceinsight.analysis.results import ms_per_call
    out = {}
    for name, m in run.modes.items():
        ops = m.table("ops")
        if not ops.empty:
            out[name] = tuple(ms_per_call(ops["calls_per_step"], ops["self_ms_per_step"]).tolist())
    return out


class Analyzer:
    """``traceinsight.model.Analyzer``: computes a run's figures. It keeps nothing (the figures
    live on the run), so one instance, ``ANALYZER``, serves every run."""

    def figures(self, run: Run, hosts_compared: tuple | None) -> RunFigures:
        """``run``'s figures, computed while the run is made (``Run.__post_init__``), in one pass
        (``figures_of``) that reads its modes only: the run holds them once they are done."""
        return figures_of(run, hosts_compared)

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
