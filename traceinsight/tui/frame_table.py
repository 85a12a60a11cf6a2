"""A table over a DataFrame: filter as you type, sort by any column, rows loaded a page at a time.

Runs can hold hundreds of thousands of ops; the DataTable only ever holds the pages the user has
scrolled to, while filtering and sorting happen on the DataFrame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static

from traceinsight import present


@dataclass(frozen=True)
class Column:
    key: str                                   # DataFrame column
    label: str
    format: Callable[[Any], Any] = str
    numeric: bool = False


class FilterInput(Input):
    """The filter box: enter or escape go back to the table (escape elsewhere goes back a screen)."""

    BINDINGS = [Binding("escape", "leave", "To table", show=False)]

    def action_leave(self) -> None:
        if self.parent is not None:
            self.parent.query_one(DataTable).focus()


class FrameTable(Vertical):
    """An Input (the filter), a DataTable and a status line."""

    PAGE = 200
    # Not in the footer: the status line under the table says "s: sort · click a header".
    BINDINGS = [Binding("s", "cycle_sort", "Sort", show=False),
                Binding("S", "reverse_sort", "Reverse", show=False)]

    def __init__(self, frame: pd.DataFrame, columns: list[Column], *, filter_columns: list[str],
                 noun: str = "rows", placeholder: str = "/ filter",
                 detail: Callable[[pd.Series], Any] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frame = frame.reset_index(drop=True)
        self.columns = [c for c in columns if c.key in self.frame.columns]
        self.filter_columns = [c for c in filter_columns if c in self.frame.columns]
        self.noun = noun
        self.placeholder = placeholder
        self.detail = detail          # renders the highlighted row in full under the table
        self.query_text = ""
        self.sort_key: str | None = None
        self.sort_desc = True
        self.view = self.frame
        self.loaded = 0
        self._debounce: Timer | None = None

    def compose(self) -> ComposeResult:
        yield FilterInput(placeholder=self.placeholder, classes="filter")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        if self.detail is not None:
            yield Static(classes="row-detail")
        yield Static(classes="table-status")

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        for c in self.columns:
            self.table.add_column(Text(c.label, justify="right" if c.numeric else "left"), key=c.key)
        self.watch(self.table, "scroll_y", self._on_scroll, init=False)
        self.refresh_view()

    # --- what is shown -------------------------------------------------------------------------
    def refresh_view(self) -> None:
        view = self.frame
        q = self.query_text.strip()
        if q and self.filter_columns and len(view):
            mask = np.zeros(len(view), dtype=bool)
            for col in self.filter_columns:
                mask |= view[col].astype(str).str.contains(q, case=False, regex=False).to_numpy()
            view = view[mask]
        if self.sort_key is not None and len(view):
            view = view.sort_values(self.sort_key, ascending=not self.sort_desc, kind="stable",
                                    na_position="last")
        self.view = view
        self.table.clear()
        self.loaded = 0
        self.load_more()

    def load_more(self) -> None:
        if self.loaded >= len(self.view):
            self._update_status()
            return
        page = self.view.iloc[self.loaded:self.loaded + self.PAGE]
        cols = [(c, page[c.key].tolist()) for c in self.columns]
        rows = []
        for i in range(len(page)):
            rows.append([self._cell(c, values[i]) for c, values in cols])
        self.table.add_rows(rows)
        self.loaded += len(page)
        self._update_status()

    @staticmethod
    def _cell(col: Column, value: Any) -> Any:
        """A cell: a figure right-aligned; a string (from a trace) made safe and shown as plain
        text, never parsed as markup (``[b]`` in an op name stays as it is)."""
        out = col.format(value)
        if isinstance(out, str):
            return Text(out, justify="right") if col.numeric else Text(present.safe(out))
        return out

    def _update_status(self) -> None:
        total = len(self.frame)
        shown = len(self.view)
        bits = []
        if shown == total:
            bits.append(f"{total:,} {self.noun}")
        else:
            bits.append(f"{shown:,} of {total:,} {self.noun} match {self.query_text.strip()!r}")
        if self.loaded < shown:
            bits.append(f"{self.loaded:,} loaded, more as you scroll")
        if self.sort_key is not None:
            label = next(c.label for c in self.columns if c.key == self.sort_key)
            bits.append(f"sorted by {label} {'↓' if self.sort_desc else '↑'}")
        bits.append("s: sort · click a header")
        self.query_one(".table-status", Static).update(Text(" · ".join(bits), style="dim"))

    # --- events --------------------------------------------------------------------------------
    def _on_scroll(self, _old: float, new: float) -> None:
        if self.loaded < len(self.view) and new >= self.table.max_scroll_y - 5:
            self.load_more()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.loaded < len(self.view) and event.cursor_row >= self.loaded - 20:
            self.load_more()
        if self.detail is not None and 0 <= event.cursor_row < len(self.view):
            self.query_one(".row-detail", Static).update(self.detail(self.view.iloc[event.cursor_row]))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_text = event.value
        # Debounced: filtering a large op table on every keystroke would make typing lag.
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.15, self.refresh_view)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self.refresh_view()
        self.table.focus()

    def sort_by(self, key: str) -> None:
        col = next((c for c in self.columns if c.key == key), None)
        if col is None:
            return
        if self.sort_key == key:
            self.sort_desc = not self.sort_desc
        else:
            self.sort_key = key
            self.sort_desc = col.numeric
        self.refresh_view()

    def action_cycle_sort(self) -> None:
        keys = [c.key for c in self.columns]
        nxt = keys[0] if self.sort_key not in keys else keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_key = None
        self.sort_by(nxt)

    def action_reverse_sort(self) -> None:
        if self.sort_key is not None:
            self.sort_desc = not self.sort_desc
            self.refresh_view()

    def focus_filter(self) -> None:
        self.query_one(Input).focus()
