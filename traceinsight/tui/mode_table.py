"""The overview's table: one row per mode with the figures of ``Run.summary()``."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from traceinsight.tui import fmt

COLUMNS = ("mode", "ms/step", "IQR", "vs fastest (95% CI)", "1st step", "profiler", "status")


def summary_cells(row: pd.Series, fastest: str | None) -> list:
    """The table cells of one summary row; failed modes keep their reason in the status cell."""
    name = Text(str(row["mode"]), style="bold")
    if row["status"] != "ok":   # the reason is listed in full under the bars
        return [name, Text(fmt.MISSING, justify="right"), "", "", "", "",
                Text(str(row["status"]), style="bold red")]
    if not fmt.is_num(row["median_ms"]):
        return [name, fmt.MISSING, "", "", fmt.ms(row["first_step_ms"]), "",
                Text("no steps", style="italic")]
    iqr = f"{fmt.ms(row['p25_ms'])}–{fmt.ms(row['p75_ms'])}"
    ratio = fmt.ratio(row["ratio"], row["ratio_lo"], row["ratio_hi"])
    first = fmt.ms(row["first_step_ms"])
    distortion = fmt.percent(row["distortion"], signed=True)
    status = Text("fastest", style="green") if row["mode"] == fastest else Text(f"n={int(row['n'])}")
    return [name, Text(fmt.ms(row["median_ms"]), style="bold", justify="right"),
            Text(iqr, justify="right"), Text(ratio, justify="right"),
            Text(first, justify="right"), Text(distortion, justify="right"), status]


def fastest_mode(summary: pd.DataFrame) -> str | None:
    ok = summary[summary["status"].eq("ok") & summary["median_ms"].notna()]
    if ok.empty:
        return None
    return str(ok.loc[ok["median_ms"].astype(float).idxmin(), "mode"])


class ModeTable(DataTable):
    """Enter (or a click) on a row posts ``ModeTable.Chosen``."""

    BINDINGS = [Binding("enter", "select_cursor", "Detail")]

    @dataclass
    class Chosen(Message):
        mode: str

    def __init__(self, summary: pd.DataFrame, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.summary = summary

    def on_mount(self) -> None:
        self.add_columns(*COLUMNS)
        fastest = fastest_mode(self.summary)
        for _, row in self.summary.iterrows():
            self.add_row(*summary_cells(row, fastest), key=str(row["mode"]))

    @property
    def highlighted_mode(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.summary.iloc[self.cursor_row]["mode"])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.Chosen(str(event.row_key.value)))
