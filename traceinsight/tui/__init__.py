"""The Textual viewer (``traceinsight view``): overview, mode detail, compare and findings screens
over one loaded ``Run``. Renders only what the model holds; never recomputes attribution."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from traceinsight.model import Run


def get_app(run: Run, *, report_path: Path | None = None, theme: str | None = None):
    """Build the app for a loaded run, without running it (the command runs it, tests pilot it)."""
    from traceinsight.tui.app import TraceinsightApp
    return TraceinsightApp(run, report_path=report_path, theme=theme)


def get_loading_app(load: Callable[[], Run], what: str, *, report_path: Path | None = None,
                    theme: str | None = None):
    """Build the app around a loader: it shows a loading screen at once and calls ``load()`` in a
    worker thread. A failed load ends the app with ``app.load_error`` set."""
    from traceinsight.tui.app import TraceinsightApp
    return TraceinsightApp(None, load=load, what=what, report_path=report_path, theme=theme)


__all__ = ["get_app", "get_loading_app"]
