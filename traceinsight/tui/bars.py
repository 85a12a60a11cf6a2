"""Stacked horizontal bars of the categories, one per mode, all on one scale."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from traceinsight import present as fmt
from traceinsight.model import CATEGORIES

BLOCK = "█"
WIDE = 110          # from this width on, each bar is followed by its largest categories
DETAIL_WIDTH = 54


@dataclass(frozen=True)
class BarRow:
    mode: str
    categories: dict[str, float] | None   # category -> ms/step; None when the mode has no breakdown
    reason: str = ""                      # why there is no bar (failed, no steps, ...)


def legend() -> Text:
    text = Text()
    for i, cat in enumerate(CATEGORIES):
        if i:
            text.append("  ")
        text.append("■ ", style=fmt.CATEGORY_COLORS[cat])
        text.append(cat)
    return text


def render_bars(rows: list[BarRow], width: int) -> Text:
    """One line per mode: name, a bar whose length is the sum of its categories on the scale shared
    by every mode, and that sum in ms/step. Segments are cut at rounded cumulative boundaries, so
    the bar's total length is exact to one cell."""
    name_w = max([len(r.mode) for r in rows] + [4])
    label_w = 9
    # Wide terminals: the largest categories in numbers after each bar.
    detail_w = DETAIL_WIDTH if width >= WIDE else 0
    bar_w = max(10, width - name_w - label_w - detail_w - 2)
    totals = [sum(v for v in r.categories.values() if fmt.is_num(v)) for r in rows if r.categories]
    scale = max(totals, default=0.0)
    out = Text(no_wrap=True, overflow="ellipsis")
    for i, row in enumerate(rows):
        if i:
            out.append("\n")
        out.append(row.mode.ljust(name_w) + " ", style="bold")
        if not row.categories:
            # a failed or missing mode's reason, whole: wrapped here under its row (the widget's
            # height counts these lines)
            lines = textwrap.wrap(row.reason or "no breakdown", max(20, width - name_w - 1)) or [""]
            out.append(("\n" + " " * (name_w + 1)).join(lines), style="italic")
            continue
        cum = 0.0
        edge = 0
        for cat in CATEGORIES:
            v = row.categories.get(cat)
            if v is None or not fmt.is_num(v) or v <= 0:
                continue
            cum += v
            nxt = round(cum / scale * bar_w) if scale > 0 else 0
            if nxt > edge:
                out.append(BLOCK * (nxt - edge), style=fmt.CATEGORY_COLORS[cat])
                edge = nxt
        out.append(" " * (bar_w - edge + 1))
        out.append(f"{fmt.ms(cum):>6} ms")
        if detail_w:
            out.append("  ")
            out.append_text(top_categories(row.categories, detail_w - 2))
    return out


def top_categories(categories: dict[str, float], width: int, top: int = 4) -> Text:
    """``python 3.99 · op 4.28 · ...``: the largest categories of one bar, largest first."""
    items = sorted(((v, k) for k, v in categories.items() if fmt.is_num(v) and v >= 0.005),
                   reverse=True)[:top]
    out = Text(no_wrap=True, overflow="ellipsis")
    for i, (v, k) in enumerate(items):
        if i:
            out.append(" · ", style="dim")
        out.append(k, style=fmt.CATEGORY_COLORS[k]).append(f" {fmt.ms(v)}")
    out.truncate(width)
    return out


class CategoryBars(Widget):
    """The overview's wall of bars; re-renders to the widget's width."""

    def __init__(self, rows: list[BarRow], **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows = rows

    def render(self) -> Text:
        return render_bars(self.rows, self.size.width)

    def get_content_height(self, container, viewport, width: int) -> int:
        # the lines as drawn: a failed mode's reason takes more than its one row where it is long
        return max(1, render_bars(self.rows, width).plain.count("\n") + 1)
