"""Shown while a run is read and analysed (the view command loads in a worker thread, so the
terminal answers at once even when a large trace takes seconds)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, Static

from traceinsight import present as fmt


class LoadingScreen(Screen):
    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble("Loading ", (fmt.safe(self.what), "bold"), " …"), id="title")
        yield LoadingIndicator()
        yield Footer()
