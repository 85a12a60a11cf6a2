"""The Textual viewer (``traceinsight view``): overview, mode detail, compare and findings screens
over one loaded ``Run``. Renders only what the model holds; never recomputes attribution."""

from __future__ import annotations

from pathlib import Path

from traceinsight.model import Run


def get_app(run: Run, *, report_path: Path | None = None, theme: str | None = None):
    """Build the app for a loaded run, without running it (the command runs it, tests pilot it)."""
    from traceinsight.tui.app import TraceinsightApp
    return TraceinsightApp(run, report_path=report_path, theme=theme)


__all__ = ["get_app"]
