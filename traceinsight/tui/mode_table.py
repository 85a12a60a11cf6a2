"""The overview's table: one row per mode with the figures of ``Run.summary()``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.render import measure
from textual.widgets import DataTable

from traceinsight import present as fmt
from traceinsight.model import ModeResult, Run

if TYPE_CHECKING:     # pandas comes with the summary, after the first frame
    import pandas as pd

COLUMNS = ("mode", "ms/step", "IQR", "× fastest (95% CI)", "1st step", "profiler", "status")


def summary_cells(row: pd.Series, fastest: str | None) -> list:
    """The table cells of one summary row (a failed mode's reason is listed under the bars)."""
    name = Text(fmt.safe(row["mode"]), style="bold")
    if row["status"] != "ok":   # the reason is listed in full under the bars
        return [name, Text(fmt.MISSING, justify="right"), "", "", "", "",
                Text(fmt.safe(row["status"]), style="bold red")]
    if not fmt.is_num(row["median_ms"]):
        return [name, fmt.MISSING, "", "", fmt.ms(row["first_step_ms"]), "",
                Text("no steps", style="italic")]
    iqr = f"{fmt.ms(row['p25_ms'])}–{fmt.ms(row['p75_ms'])}"
    ratio = fmt.ratio_ci(row["ratio"], row["ratio_lo"], row["ratio_hi"])
    first = fmt.ms(row["first_step_ms"])
    distortion = fmt.percent(row["distortion"], signed=True)
    status = Text("fastest", style="green") if row["mode"] == fastest else Text(f"n={int(row['n'])}")
    return [name, Text(fmt.ms(row["median_ms"]), style="bold", justify="right"),
            Text(iqr, justify="right"), Text(ratio, justify="right"),
            Text(first, justify="right"), Text(distortion, justify="right"), status]


def fastest_mode(summary: pd.DataFrame) -> str | None:
    """The mode ``Run.summary()`` marks fastest (``Run.fastest``)."""
    hit = summary.loc[summary["fastest"].fillna(False).astype(bool), "mode"]
    return str(hit.iloc[0]) if len(hit) else None


def _as_text(cell: RenderableType) -> RenderableType:
    """A cell as DataTable renders it on one line: a string as markup, a renderable as it is."""
    return Text.from_markup(cell, end="") if isinstance(cell, str) else cell


def pending_cells(mode: ModeResult) -> list:
    """A row before the summary's figures are shown: name, the model's median and status."""
    name = Text(fmt.safe(mode.name), style="bold")
    if not mode.ok:
        return [name, Text(fmt.MISSING, justify="right"), "", "", "", "",
                Text(fmt.safe(mode.status), style="bold red")]
    return [name, Text(fmt.ms(mode.median_ms), style="bold", justify="right"), Text("…", justify="right"),
            Text("…", justify="right"), "", "", ""]


class ModeTable(DataTable):
    """One row per mode of the run, in the run's order. Rows appear at once with what the model
    holds; ``fill(summary)`` adds the figures of ``Run.summary()`` (computed with the run; the
    screen builds their DataFrame after its first frame, pandas' import being the slow part).
    Enter (or a click) on a row posts ``ModeTable.Chosen``."""

    BINDINGS = [Binding("enter", "select_cursor", "Detail")]

    @dataclass
    class Chosen(Message):
        mode: str

    def __init__(self, run: Run, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.run = run
        self.summary: pd.DataFrame | None = None
        self.column_keys: list = []

    def on_mount(self) -> None:
        self.column_keys = self.add_columns(*COLUMNS)
        for m in self.run.modes.values():
            self.add_row(*pending_cells(m), key=m.name)

    def fill(self, summary: pd.DataFrame) -> None:
        self.summary = summary
        fastest = fastest_mode(summary)
        for _, row in summary.iterrows():
            for key, cell in zip(self.column_keys, summary_cells(row, fastest)):
                self.update_cell(str(row["mode"]), key, cell, update_width=True)
        # DataTable measures the updated cells when it is next idle (update_width), but a frame
        # drawn before that (this runs in the screen's handler, not the table's) caches the rows
        # at the old column widths under the table's update count, which the measurement does
        # not change: the new figures stayed cut to the pending "…" column's width until the
        # next change (Textual's DataTable, textual#3533; seen under CPU load). So the widths are
        # measured here, before any frame, as that idle measures them (it then finds them so).
        self._measure_columns()
        # the idle still updates the table's virtual size; called from another widget's handler
        # it would wait for the table's own next message, so prompt it.
        self.check_idle()

    def _measure_columns(self) -> None:
        """Each column's content width: its widest cell or its label (DataTable's measure)."""
        console = self.app.console
        for key in self.column_keys:
            column = self.columns[key]
            column.content_width = max([measure(console, column.label, 1),
                                        *(measure(console, _as_text(v), 1)
                                          for v in self.get_column(key))])

    @property
    def highlighted_mode(self) -> str | None:
        if not self.row_count:
            return None
        return list(self.run.modes)[self.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.Chosen(str(event.row_key.value)))
