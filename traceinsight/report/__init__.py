"""Every renderer of a Run and of a diff, one module each, one protocol: ``render(run, options)``
(a diff renderer: ``render_diff(diff, options)``), ``options`` a small frozen dataclass of
``report.options``; each returns its output and writes nothing (see ``report.options`` for what
each returns). The modules: ``terminal`` (``traceinsight analyze``'s tables), ``chrome_trace``
(a mode's trace, streamed) and ``tables`` (CSV / Parquet), and the writers of the report document.

The report's formats are ``WRITERS``, one row each: its ``--format`` name, the file extensions
``-o`` picks it by, its media type and its module. The report document is built once
(``report.data.build``: a ``report.document.ReportDocument``) and a writer module's
``write(document, options)`` only formats it; a writer of diffs also has
``render_diff(diff, options)``. ``render(run, fmt)`` / ``render_diff(diff, fmt)`` dispatch by name,
and ``format_for(path, fmt)`` guesses the format from ``-o``'s extension. ``write_output``,
``write_file``, ``write_chunks`` and ``write_files`` put the outputs on disk (atomically).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from traceinsight.errors import TraceinsightError, WriteError
from traceinsight.report.options import DEFAULTS, REPORT_DEFAULTS, RenderOptions, ReportOptions

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from traceinsight.report import chrome_trace, tables, terminal
    from traceinsight.report.options import Renderer, TableOptions, TerminalOptions, TraceOptions

    # every renderer follows the one protocol (checked by mypy, imported by nothing at run time)
    _TERMINAL: Renderer[TerminalOptions, list[Any]] = terminal
    _TRACE: Renderer[TraceOptions, Iterator[bytes]] = chrome_trace
    _TABLES: Renderer[TableOptions, Iterator[tuple[str, bytes]]] = tables


@dataclass(frozen=True)
class Writer:
    """One output format of ``report`` (and of ``diff`` when ``diffs``): its ``--format`` name,
    the extensions ``-o`` picks it by, its media type, and the module of ``traceinsight.report``
    that writes it (``write(document, options) -> str``; ``render_diff(diff, options) -> str``
    for a diff), imported only when the format is written."""

    name: str
    module: str
    extensions: tuple[str, ...]
    media_type: str
    reports: bool = True
    diffs: bool = False

    def load(self) -> Any:
        return importlib.import_module(f"traceinsight.report.{self.module}")


# the formats, one row each (a new format: its writer module and a row here)
WRITERS = (
    Writer("md", "markdown", (".md", ".markdown"), "text/markdown", diffs=True),
    Writer("html", "html", (".html", ".htm"), "text/html", diffs=True),
    Writer("json", "json", (".json",), "application/json", diffs=True),
    Writer("csv", "csv_summary", (".csv",), "text/csv"),
    Writer("text", "text", (".txt",), "text/plain", reports=False, diffs=True),
)
WRITER = {w.name: w for w in WRITERS}
REPORT_FORMATS = tuple(w.name for w in WRITERS if w.reports)
DIFF_FORMATS = ("text",) + tuple(w.name for w in WRITERS if w.diffs and w.name != "text")
EXTENSIONS = {e: w.name for w in WRITERS for e in w.extensions}


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


def render(run, fmt: str = "md", options: ReportOptions = REPORT_DEFAULTS) -> str:
    """The report of ``run`` in format ``fmt``: the document built once, then written."""
    if fmt not in REPORT_FORMATS:
        raise TraceinsightError(f"format {fmt!r} is not one of {', '.join(REPORT_FORMATS)}")
    from traceinsight.report.data import build
    return WRITER[fmt].load().write(build(run, options.findings), options)


def render_diff(diff: dict, fmt: str = "text", options: RenderOptions = DEFAULTS) -> str:
    if fmt not in DIFF_FORMATS:
        raise TraceinsightError(f"format {fmt!r} is not one of {', '.join(DIFF_FORMATS)}")
    return WRITER[fmt].load().render_diff(diff, options)


def write_output(text: str, path: str | Path | None) -> None:
    """Write to a file (atomically), or to stdout when path is None or '-'."""
    if path is None or str(path) == "-":
        import sys
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_file(Path(path), text.encode("utf-8"))


def write_file(path: Path, data: bytes) -> None:
    """Atomic write, with the mode any file the user creates gets (0666 minus the umask)."""
    from traceinsight.runfolder import atomic_write_bytes
    try:
        atomic_write_bytes(path, data)
    except OSError as e:   # the atomic write leaves no temp file
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None


def write_chunks(path: str | Path, chunks: Iterable[bytes]) -> int:
    """Write a streamed output (``chrome_trace.render``) to ``path`` chunk by chunk, atomically
    (temp file + rename; the file gets 0666 minus the umask); returns the bytes written. On any
    failure (a full disk, an error while the chunks are made) no file and no temp file is left."""
    path = Path(path)
    _make_dir(path.parent)
    try:
        import tempfile  # here: analyze imports this package and writes nothing
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        _unlink(tmp)
        raise
    return path.stat().st_size


def write_files(folder: str | Path, files: Iterable[tuple[str, bytes]]) -> list[Path]:
    """Write ``(name, bytes)`` pairs (``tables.render``) into ``folder``, each atomically, as
    they come; returns the paths written."""
    folder = Path(folder)
    _make_dir(folder)
    written = []
    for name, data in files:
        write_file(folder / name, data)
        written.append(folder / name)
    return written


def _make_dir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteError(f"cannot create {folder}: {e.strerror or e}") from None


def _unlink(p: str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


def load_run(path: str | Path | None):
    """``traceinsight.load`` with the newest run under ``runs/`` as the default, and one-line
    errors."""
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
