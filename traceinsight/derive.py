"""What the analysis computes from a whole run, joined to the ``Run`` that holds the modes.

``Run`` and ``ModeResult`` (``traceinsight.model``) are data at the bottom of the package; the
figures that need more than one mode (the summary with its ratios, the comparisons of two modes,
the findings, the hosts' comparison) are computed here, above stats, compare, findings and
analysis/hosts, and the notebook display comes from the report package. ``complete(run)`` gives a
run (and each of its modes) ``RunAnalysis`` as its ``analyzer``; the run's methods (``summary()``,
``compare()``, ``findings``, ``host_groups()``, ``_repr_html_``, ``show()``) read it. Every place
that makes a ``Run`` for others to read (the loaders, ``traceinsight.testing``) completes it.

Each figure is computed on first use, once per run, and kept: ``traceinsight analyze`` reads the
summary (which compares each mode with the fastest, tables included: numpy, no pandas) and never
computes the findings.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from traceinsight.model import Run

if TYPE_CHECKING:
    from traceinsight.columns import Columns
    from traceinsight.compare import Comparison
    from traceinsight.finding import Finding

# The modules that compute are imported where a figure is first asked for, so loading a run
# imports none of them (``traceinsight analyze`` prints the summary without findings or pandas).


class RunAnalysis:
    """One run's analysis (``traceinsight.model.RunAnalysis``): made with the run, computes each
    figure on first use and keeps it."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self._comparisons: dict[tuple[str, str], Comparison] = {}

    @cached_property
    def _summary(self) -> Columns:
        from traceinsight.stats import summarize
        return summarize(self.run)

    def summary(self) -> Columns:
        """The summary (``stats.summarize``) as the package reads it (``Run.table("summary")``)."""
        return self._summary

    def compare(self, a: str, b: str) -> Comparison:
        """A pair is computed in the run's mode order and read from the other side by
        ``flipped()``, so b against a is exactly the reciprocal of a against b, whoever asks
        first."""
        cache = self._comparisons
        key = (a, b)
        c = cache.get(key)
        if c is None:
            order = list(self.run.modes)
            if a != b and order.index(a) > order.index(b):
                return cache.setdefault(key, self.compare(b, a).flipped())
            from traceinsight.compare import compare_modes
            # two threads may compute the same pair at once; setdefault keeps one (atomic under
            # the GIL), so every reader gets the same object
            c = cache.setdefault(key, compare_modes(self.run.modes[a], self.run.modes[b]))
        return c

    @cached_property
    def _findings(self) -> tuple[Finding, ...]:
        from traceinsight.findings import find
        return tuple(find(self.run))

    def findings(self) -> tuple[Finding, ...]:
        return self._findings

    @cached_property
    def _host_groups(self) -> tuple:
        from traceinsight.analysis.hosts import host_groups
        return host_groups(self.run)

    def host_groups(self) -> tuple:
        return self._host_groups

    @cached_property
    def _program_groups(self) -> list[list[str]]:
        from traceinsight.compare import program_groups
        return program_groups(self.run)

    def program_groups(self) -> list[list[str]]:
        return self._program_groups

    def html(self) -> str:
        from traceinsight.report.notebook import run_html
        return run_html(self.run)

    def show(self, file: Any) -> None:
        from traceinsight.report.notebook import show_run
        show_run(self.run, file)


def complete(run: Run, hosts_compared: tuple | None = None) -> Run:
    """``run`` with ``RunAnalysis`` as its analyzer and its modes' (a mode shown alone is analysed
    the same way). ``hosts_compared``: the hosts' comparison the loader already made (it notes
    the straggler on each host's mode), kept instead of computed again."""
    modes = {n: m if m.analyzer is RunAnalysis else m.replace(analyzer=RunAnalysis)
             for n, m in run.modes.items()}
    return Run(path=run.path, name=run.name, modes=modes, manifest=run.manifest,
               source=run.source, hosts_compared=hosts_compared, analyzer=RunAnalysis)
