"""The hosts of a multi-host profile session as rich renderables: ``traceinsight analyze`` prints
them, the viewer's hosts screen shows them. Figures come from ``Run.host_groups()``
(``traceinsight.analysis.hosts``), columns from ``present.host_columns`` /
``present.HOST_STEP_COLUMNS``; host and mode names are trace strings (``present.safe``, rich
``Text``, never markup)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from traceinsight import present
from traceinsight.analysis.hosts import HostGroup
from traceinsight.report import hosts_prose


def _table(title: str, cols: Sequence[present.ColumnSpec], records: list[dict],
           labels: dict[str, str] | None = None) -> Any:
    """``labels``: column key -> header, where it differs from the column's own label."""
    rows = [[c.format(c.value(r)) if c.format is not None else _cell(c.value(r), c.text)
             for c in cols] for r in records]
    return present.rich_table(title, [((labels or {}).get(c.key, c.label), c.numeric)
                                      for c in cols], rows, name_min=10)


def _cell(v: Any, text: bool) -> Text:
    """A trace string as rich Text (shown literally); Text made here passes as it is."""
    return v if isinstance(v, Text) else Text(present.safe(v, 2000 if text else present.MAX_NAME))


def _host_and_mode(r: Mapping[str, Any]) -> Text:
    """The host over its mode, in one cell (a terminal is too narrow for two name columns)."""
    return Text(present.safe(r["host"]) + "\n" + present.safe(r["mode"]))


def renderables(group: HostGroup, top: int = 10) -> list[Any]:
    """The hosts table, each host's category split, what they say (straggler, spread, the
    category behind it, per-step alignment), and the first ``top`` aligned steps."""
    by_host = group.modes_named_by_host
    session = present.safe(group.session)
    cols = present.host_columns(group.aligned, mode=False)
    if not by_host:
        cols = (present.ColumnSpec("host", "host", get=_host_and_mode),) + cols[1:]
    out: list[Any] = [_table(f"hosts of profile session {session}: ms per steady step", cols,
                             [h.to_dict() for h in group.hosts],
                             None if by_host else {"host": "host / mode"})]
    legend = ([f"modes: {session}/<host>"] if by_host else []) + (
        ["slowest: in how many steps the host was the slowest", "waited: its median wait for "
         "each step's slowest host"] if group.aligned else [])
    if legend:
        out += [Text("; ".join(legend), style="dim"), Text("")]
    if group.category_names:
        where = ("device time of each host's slowest device" if group.category_kind == "device"
                 else "median ms per category")
        out.append(_table(f"category split per host ({where})",
                          present.host_category_columns(group.category_names),
                          group.category_records()))
    out += [Text("• " + present.safe(s, None)) for s in hosts_prose.sentences(group)] + [Text("")]
    if group.aligned and group.steps:
        names = group.host_names
        shown = group.steps[:top]
        more = f", first {len(shown)} of {len(group.steps)}" if len(shown) < len(group.steps) else ""
        out.append(_table(f"per step (matched by step_num{more})", present.HOST_STEP_COLUMNS,
                          [s.to_dict(names) for s in shown]))
    return out
