"""A mode's category table: median ms/step with quartiles, mean, share of the traced time (the
mean's share of the mean step, as the reports show it) and the first step."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.widgets import DataTable

from traceinsight import present as fmt
from traceinsight.model import CATEGORIES, CATEGORY_HELP, ModeResult

BAR_WIDTH = 16


def share_bar(share: float, color: str) -> Text:
    n = int(round(share * BAR_WIDTH)) if fmt.is_num(share) else 0
    return Text("█" * n, style=color) + Text("·" * (BAR_WIDTH - n), style="dim")


class CategoryTable(DataTable):
    def __init__(self, mode: ModeResult, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.mode = mode

    def on_mount(self) -> None:
        b = self.mode.table("breakdown")
        self.add_columns("category", Text("median", justify="right"), Text("p25–p75", justify="right"),
                         Text("mean", justify="right"), Text("share", justify="right"),
                         Text("1st step", justify="right"), "share of the time")
        if b.empty:
            return
        # means add up to the mean step (medians do not): the share is of what the run costs
        shares = self.mode.category_shares()
        first = self.mode.first_step
        for cat in CATEGORIES:
            row = b.row(cat)
            share = shares[cat]
            self.add_row(Text.assemble(("■ ", fmt.CATEGORY_COLORS[cat]), cat),
                         Text(fmt.ms(row["median"]), justify="right", style="bold"),
                         Text(f"{fmt.ms(row['p25'])}–{fmt.ms(row['p75'])}", justify="right"),
                         Text(fmt.ms(row["mean"]), justify="right"),
                         Text(fmt.percent(share), justify="right"),
                         Text(fmt.ms(first[cat]) if first is not None and cat in first else fmt.MISSING,
                              justify="right"),
                         share_bar(share, fmt.CATEGORY_COLORS[cat]),
                         key=cat)
        if b.index is not None and "total" in b.index:
            total = b.row("total")
            self.add_row(Text("step wall time", style="bold"),
                         Text(fmt.ms(total["median"]), justify="right", style="bold"),
                         Text(f"{fmt.ms(total['p25'])}–{fmt.ms(total['p75'])}", justify="right"),
                         Text(fmt.ms(total["mean"]), justify="right"), "",
                         Text(fmt.ms(float(np.nansum(list(first.values())))) if first is not None
                              else fmt.MISSING,
                              justify="right"),
                         key="total")

    @property
    def highlighted_help(self) -> str:
        if not self.row_count:
            return ""
        key = list(CATEGORIES)[self.cursor_row] if self.cursor_row < len(CATEGORIES) else "total"
        if key == "total":
            return "step wall time: the median of whole traced steps (not the sum of the medians)"
        return f"{key}: {CATEGORY_HELP[key]}"
