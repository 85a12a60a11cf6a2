"""``r``: write the run's markdown report (the same renderer as ``traceinsight report``)."""

from __future__ import annotations

from pathlib import Path

from traceinsight.model import Run
from traceinsight.runfolder import atomic_write_bytes


def render_markdown(run: Run) -> str:
    """The same markdown ``traceinsight report`` writes."""
    from traceinsight.report import render
    return render(run, "md")


def default_report_path(run: Run) -> Path:
    if run.path is not None and Path(run.path).is_dir():
        return Path(run.path) / "report.md"
    if run.path is not None:
        return Path(run.path).parent / f"{run.name}.report.md"
    return Path.cwd() / f"{run.name}.report.md"


def write_report(run: Run, path: Path | None = None) -> Path:
    """Write the report; when the run's folder is not writable, write it to the current folder."""
    data = render_markdown(run).encode("utf-8")
    target = Path(path) if path is not None else default_report_path(run)
    try:
        atomic_write_bytes(target, data)
    except OSError:
        if path is not None:
            raise
        target = Path.cwd() / f"{run.name}.report.md"
        atomic_write_bytes(target, data)
    return target.resolve()
