"""Open the interactive viewer: why is one mode slower than another?

RUN is a run folder written by ``traceinsight capture`` (default: the newest under ./runs), or
foreign traces: an .xplane.pb file, a profile session folder or a TensorBoard logdir (one mode per
trace).

Screens: overview (one row per mode, categories on one scale), mode detail (enter), compare (c),
findings (f). Keys: arrows/tab move, enter drills down, escape goes back, / filters, s sorts,
r writes a markdown report, t toggles dark/light, ? help, q quits. The mouse works too.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from traceinsight.errors import TraceinsightError

THEMES = {"dark": "textual-dark", "light": "textual-light"}


def load_run(path: Path | str, scheduler: str | None = None):
    """Load a run with the analysis engine (imported here: ``--help`` stays fast); with a
    scheduler's address, its hosts on that Dask cluster. ``path`` a str: a logdir's URL."""
    if isinstance(path, Path) and not path.exists():
        raise TraceinsightError(f"{path}: no such file or folder")
    if scheduler:
        from traceinsight.analysis.parallel import load_with_scheduler
        return load_with_scheduler(path, scheduler)
    import traceinsight
    return traceinsight.load(path)


def _path_or_url(arg: str) -> Path | str:
    """A path, or a logdir's URL (gs://, s3://: fsspec) kept as it is."""
    from traceinsight.analysis.urls import is_url
    return arg if is_url(arg) else Path(arg)


class Command:
    __doc__ = __doc__  # the module docstring is the --help text

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run", nargs="?", type=_path_or_url, metavar="RUN",
                            help="run folder, .xplane.pb, profile session folder or TensorBoard logdir "
                                 "(default: the newest run under --runs-dir)")
        parser.add_argument("--runs-dir", type=Path, default=Path("runs"),
                            help="where to look for the newest run (default: ./runs)")
        parser.add_argument("--theme", choices=sorted(THEMES), default=None,
                            help="colour theme (default: dark; t switches while viewing)")
        parser.add_argument("--report", type=Path, default=None, metavar="PATH",
                            help="where r writes the markdown report (default: RUN/report.md)")
        parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                            help="analyse a logdir's hosts on this Dask distributed cluster "
                                 "(tcp://HOST:8786; needs the cluster extra, and the traces at the "
                                 "same paths on the workers)")

    def build_app(self, args: argparse.Namespace):
        """The app, not yet run; it loads the run in a worker thread behind a loading screen
        (tools/bench_view.py times this path)."""
        from traceinsight.runfolder import newest_run
        path = args.run if args.run is not None else newest_run(args.runs_dir)
        if isinstance(path, Path) and not path.exists():
            raise TraceinsightError(f"{path}: no such file or folder")
        from traceinsight.tui import get_loading_app
        return get_loading_app(lambda: load_run(path, getattr(args, "scheduler", None)), str(path), report_path=args.report,
                               theme=THEMES.get(args.theme))

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        app = self.build_app(args)
        app.run()
        if app.load_error is not None:
            if isinstance(app.load_error, TraceinsightError):
                raise app.load_error
            raise TraceinsightError(f"{args.run or 'the newest run'}: could not be loaded: "
                                    f"{type(app.load_error).__name__}: {app.load_error}") from app.load_error
        return int(app.return_code or 0)
