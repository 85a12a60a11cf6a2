"""``r``: write the run's markdown report, with the report module's renderer when it is installed."""

from __future__ import annotations

from pathlib import Path

from traceinsight import present as fmt
from traceinsight.compare import compare_modes
from traceinsight.model import Run
from traceinsight.runfolder import atomic_write_bytes


def render_markdown(run: Run) -> str:
    """The same markdown ``traceinsight report`` writes; a minimal fallback without that module."""
    try:
        from traceinsight.report import markdown
        render = markdown.render
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("traceinsight.report"):
            raise
        return fallback_markdown(run)
    except (ImportError, AttributeError):
        return fallback_markdown(run)
    from traceinsight.tui.findings import FIND_LOCK
    with FIND_LOCK:          # the report runs the findings too
        return render(run)


def fallback_markdown(run: Run) -> str:
    """A minimal report (summary and comparisons) for installs without ``traceinsight.report``."""
    lines = [f"# traceinsight: {run.name}", "", "| mode | ms/step | vs fastest | first step ms |",
             "|---|---:|---:|---:|"]
    summary = run.summary()
    for r in summary.itertuples():
        if r.status != "ok":
            lines.append(f"| {r.mode} | {r.status}: {r.error or ''} | | |")
        else:
            lines.append(f"| {r.mode} | {fmt.ms(r.median_ms)} | {fmt.ratio_ci(r.ratio, r.ratio_lo, r.ratio_hi)}"
                         f" | {fmt.ms(r.first_step_ms)} |")
    ok = sorted(run.ok_modes(), key=lambda m: m.median_ms)
    if len(ok) > 1:
        lines += ["", "## Differences", ""]
        lines += [f"- {compare_modes(m, ok[0]).sentence()}" for m in ok[1:]]
    return "\n".join(lines) + "\n"


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
