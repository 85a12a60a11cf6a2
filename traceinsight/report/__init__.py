"""Renderers of a Run (report) and of a diff: markdown, HTML, JSON, and plain text for the screen.

Each format module has ``render(run) -> str`` and ``render_diff(diff) -> str``; ``render(run, fmt)``
dispatches, and ``format_for(path, fmt)`` guesses the format from ``-o``'s extension.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from traceinsight.errors import TraceinsightError

REPORT_FORMATS = ("md", "html", "json")
DIFF_FORMATS = ("text", "md", "html", "json")
EXTENSIONS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json",
              ".txt": "text"}
_MODULES = {"md": "markdown", "html": "html", "json": "json", "text": "text"}


def format_for(path: str | Path | None, fmt: str | None = None, default: str = "md",
               allowed: tuple[str, ...] = REPORT_FORMATS) -> str:
    """``--format`` when given, else the format ``-o``'s extension names, else ``default``."""
    if fmt:
        chosen = fmt
    elif path is not None and str(path) != "-":
        ext = Path(path).suffix.lower()
        if EXTENSIONS.get(ext) not in allowed:
            # an unknown extension, or one naming a format this command does not write (.txt)
            what = f"the extension {ext!r} is not one of" if ext else "it has no extension; use"
            raise TraceinsightError(
                f"cannot tell the format from {str(path)!r}: {what} "
                f"{', '.join(e for e, f in EXTENSIONS.items() if f in allowed)} "
                f"(or give --format: {', '.join(allowed)})")
        chosen = EXTENSIONS[ext]
    else:
        chosen = default
    if chosen not in allowed:
        raise TraceinsightError(f"format {chosen!r} is not one of {', '.join(allowed)}")
    return chosen


def _module(fmt: str):
    return importlib.import_module(f"traceinsight.report.{_MODULES[fmt]}")


def render(run, fmt: str = "md", findings=None) -> str:
    if fmt not in REPORT_FORMATS:
        raise TraceinsightError(f"format {fmt!r} is not one of {', '.join(REPORT_FORMATS)}")
    return _module(fmt).render(run, findings)


def render_diff(diff: dict, fmt: str = "text") -> str:
    if fmt not in DIFF_FORMATS:
        raise TraceinsightError(f"format {fmt!r} is not one of {', '.join(DIFF_FORMATS)}")
    return _module(fmt).render_diff(diff)


def write_output(text: str, path: str | Path | None) -> None:
    """Write to a file (atomically), or to stdout when path is None or '-'."""
    if path is None or str(path) == "-":
        import sys
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_file(Path(path), text.encode("utf-8"))


def write_file(path: Path, data: bytes) -> None:
    """Atomic write, with the mode any file the user creates gets (0666 minus the umask)."""
    from traceinsight.errors import WriteError
    from traceinsight.runfolder import atomic_write_bytes
    try:
        atomic_write_bytes(path, data)
    except OSError as e:   # the atomic write leaves no temp file
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None


def load_run(path: str | Path | None):
    """``traceinsight.load`` with the newest run under ``runs/`` as the default, and one-line errors."""
    from traceinsight.runfolder import newest_run
    p = Path(path) if path is not None else newest_run()
    if not p.exists():
        raise TraceinsightError(f"{p}: no such file or directory")
    try:
        import traceinsight
        return traceinsight.load(p)
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("traceinsight"):
            raise TraceinsightError(
                f"cannot load {p}: the trace loader ({e.name}) is not installed") from None
        raise
