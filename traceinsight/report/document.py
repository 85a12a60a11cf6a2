"""The report document, typed: what ``report/data.py`` builds once from a Run and every writer of
the report (``report.WRITERS``) reads.

``ReportJSON`` and the ``TypedDict``s under it are the JSON document of
``traceinsight/schemas/report.schema.json``, key for key (``tests/test_report_document.py``
checks them against the schema), so mypy checks every key a writer reads. ``ReportDocument``
holds it with what the pictures and tables show beside it, computed by the analysis when the run
was made (``RunFigures``), so that a writer only formats: the JSON writer writes ``data`` as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from traceinsight.analysis.step_marks import StepMarks

Row = dict[str, Any]          # one row of a mode's table (steps, ops, retraces, ...), as stored


class RunInfo(TypedDict):
    name: str
    path: str | None
    source: str
    command: str | None
    workload: dict[str, Any]
    created: str | None


class Category(TypedDict):
    name: str
    help: str


class _ModeRequired(TypedDict):
    name: str
    status: str
    error: str | None
    timing_source: Literal["untraced", "traced"] | None
    categories: dict[str, float | None]
    traced_step_ms: float | None
    breakdown: list[Row]
    first_step: Row | None
    step_rule: str | None
    notes: list[str]
    profile_options: Row | None
    trace_paths: list[str]
    steps: list[Row]
    ops: list[Row]
    retraces: list[Row]
    hotspots: list[Row]
    other: list[Row]


class ModeEntry(_ModeRequired, total=False):
    """One mode: the summary's figures (absent for a mode the summary has no row of), its
    category split and its tables."""
    median_ms: float | None
    p25_ms: float | None
    p75_ms: float | None
    ci_lo_ms: float | None
    ci_hi_ms: float | None
    n: int | float | None
    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    ratio_note: str | None
    first_step_ms: float | None
    distortion: float | None
    vs_fastest: str | None
    traced_categories: dict[str, float | None]
    category_means: dict[str, float | None]
    category_shares: dict[str, float | None]
    category_total_ms: float | None
    traced_category_means: dict[str, float | None]
    traced_step_mean_ms: float | None
    correction: Row | None
    concentrated: dict[str, Row]
    categories_distorted: bool
    host_events_recorded: bool
    devices: list[Row]
    device_steps: list[Row]
    kernels: list[Row]
    layers: list[Row]
    memory: Row
    tfdata_stages: list[Row]


class _FindingRequired(TypedDict):
    rule: str
    title: str
    evidence: str
    fix: str
    saving_ms: float | None
    saving_basis: str
    modes: list[str]
    severity: str
    rank: int


class FindingEntry(_FindingRequired, total=False):
    overlaps: list[str]


class HostSession(TypedDict):
    """A multi-host profile session (``analysis.hosts.HostGroup.to_dict``) and its sentences."""
    session: str
    category_kind: str
    category_names: list[str]
    hosts: list[Row]
    fastest: list[str]
    slowest: list[str]
    straggler: str | None
    spread_ratio: float | None
    spread_lo: float | None
    spread_hi: float | None
    spread_ms: float | None
    significant: bool | None
    category_delta: dict[str, float | None]
    explained_by: str | None
    aligned: bool
    alignment: str
    steps: list[Row]
    step_ties: int
    unmatched: dict[str, int]
    missing: list[Row]
    sentences: list[str]


class _ReportRequired(TypedDict):
    schema_version: int
    kind: Literal["report"]
    generator: str
    run: RunInfo
    summary: str
    environment: dict[str, Any]
    categories: list[Category]
    modes: list[ModeEntry]
    findings: list[FindingEntry]


class ReportJSON(_ReportRequired, total=False):
    """The report document (``report.schema.json``'s ``report``), as the JSON writer writes it."""
    host_sessions: list[HostSession]
    layer_matrix: list[Row]
    factors: Row | None
    verify: Row


@dataclass(frozen=True)
class ReportDocument:
    """The report of one run, built once (``report.data.build``) and read by every writer.

    data:            the JSON document (``ReportJSON``).
    step_marks:      mode -> its steps marked for the step chart (``RunFigures.step_marks``).
    host_categories: per host session (in ``data["host_sessions"]``'s order), the rows of its
                     category split table (``HostGroup.category_records``).
    """

    data: ReportJSON
    step_marks: Mapping[str, StepMarks] = field(default_factory=lambda: MappingProxyType({}))
    host_categories: tuple[list[Row], ...] = ()
