"""The renderers' one protocol (``Renderer``, ``DiffRenderer``) and what a renderer is asked for
beside the run: one small frozen dataclass per kind of renderer.

Every renderer is a module of ``traceinsight.report`` with ``render(run, options)`` (a diff
renderer: ``render_diff(diff, options)``); ``report/__init__.py`` has mypy check each module
against the protocol. What it returns is its output, made without writing anything:

* ``markdown``, ``html``, ``json`` (``ReportOptions``) and ``text`` (the diff): ``str``;
* ``terminal`` (``TerminalOptions``): rich renderables, printed by ``terminal.show``;
* ``chrome_trace`` (``TraceOptions``): the trace file's bytes as an iterator of chunks, so a large
  trace is streamed (``report.write_chunks`` writes them atomically), never held whole;
* ``tables`` (``TableOptions``): ``(file name, bytes)`` pairs, one table at a time
  (``report.write_files``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from traceinsight.findings import Finding
    from traceinsight.model import Run
    from traceinsight.runfolder import Pass

Opt = TypeVar("Opt", bound="RenderOptions", contravariant=True)
Out = TypeVar("Out", covariant=True)


class Renderer(Protocol[Opt, Out]):
    """A renderer module: ``render(run, options) -> output`` (``report/__init__.py`` checks
    every module against it, for mypy)."""

    def render(self, run: Run, options: Opt) -> Out: ...


class DiffRenderer(Protocol[Out]):
    """A diff renderer module: ``render_diff(diff, options) -> output``."""

    def render_diff(self, diff: dict, options: RenderOptions) -> Out: ...

TABLE_FORMATS = ("csv", "parquet")


@dataclass(frozen=True)
class RenderOptions:
    """The base of every renderer's options (a diff renderer needs none beyond it)."""


@dataclass(frozen=True)
class ReportOptions(RenderOptions):
    """The report document's formats (markdown, HTML, JSON)."""
    findings: tuple[Finding, ...] | None = None   # the findings shown (None: the run's)


@dataclass(frozen=True)
class TerminalOptions(RenderOptions):
    """``traceinsight analyze``'s tables."""
    top: int = 10                            # rows of each table
    modes: tuple[str, ...] | None = None     # only these modes (None: every mode)


@dataclass(frozen=True)
class TraceOptions(RenderOptions):
    """One mode's Chrome trace (trace-event JSON), drawn from that pass's analysis made again
    from its files (``analysis.timeline.pass_analysis``)."""
    mode: str
    pass_name: Pass = "host"                 # see analysis.mode.TracePass
    steps: tuple[int, ...] | None = None     # only these step numbers (None: the whole trace)
    gzip_level: int | None = 1               # None: uncompressed JSON


@dataclass(frozen=True)
class TableOptions(RenderOptions):
    """A mode's tables, or (``mode`` None) every mode's and host's tables stacked with the run's
    metadata as columns (tables of many runs query together)."""
    mode: str | None = None
    format: str = "csv"                      # one of TABLE_FORMATS


# the defaults, shared (the options are frozen)
DEFAULTS = RenderOptions()
REPORT_DEFAULTS = ReportOptions()
TERMINAL_DEFAULTS = TerminalOptions()
