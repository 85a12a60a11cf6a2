"""A mode's category table: the user's step per category (mean ms/step with the profiler's cost
taken out, ``ModeResult.category_means``) and its share, as the reports show it; beside it the
traced figures it was made from (mean, median, quartiles) and the first step."""

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
        self.add_columns("category", Text("ms/step", justify="right"), Text("share", justify="right"),
                         Text("traced mean", justify="right"), Text("traced median", justify="right"),
                         Text("p25–p75", justify="right"),
                         Text("1st step", justify="right"), "share of the step")
        if b.empty:
            return
        # the user's step (means add up to it; medians do not): the share is of that step
        user, shares = self.mode.category_means(), self.mode.category_shares()
        first = self.mode.first_step
        for cat in CATEGORIES:
            row = b.row(cat)
            share = shares[cat]
            self.add_row(Text.assemble(("■ ", fmt.CATEGORY_COLORS[cat]), cat),
                         Text(fmt.ms(user[cat]), justify="right", style="bold"),
                         Text(fmt.percent(share), justify="right"),
                         Text(fmt.ms(row["mean"]), justify="right"),
                         Text(fmt.ms(row["median"]), justify="right"),
                         Text(f"{fmt.ms(row['p25'])}–{fmt.ms(row['p75'])}", justify="right"),
                         Text(fmt.ms(first[cat]) if first is not None and cat in first else fmt.MISSING,
                              justify="right"),
                         share_bar(share, fmt.CATEGORY_COLORS[cat]),
                         key=cat)
        if b.index is not None and "total" in b.index:
            total = b.row("total")
            self.add_row(Text("step", style="bold"),
                         Text(fmt.ms(self.mode.breakdown_ms), justify="right", style="bold"), "",
                         Text(fmt.ms(total["mean"]), justify="right"),
                         Text(fmt.ms(total["median"]), justify="right"),
                         Text(f"{fmt.ms(total['p25'])}–{fmt.ms(total['p75'])}", justify="right"),
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
            c = self.mode.correction
            return ("step: the untraced median the categories add up to; traced: whole traced "
                    "steps" + (f". {c.method}" if c is not None else ""))
        return f"{key}: {CATEGORY_HELP[key]}"
