"""traceinsight analyze: see Command."""

from __future__ import annotations

import argparse


class Command:
    """Print the breakdown, top ops, retraces and Python hotspots of a run or of any TF trace.

    PATH is a traceinsight run folder, a TensorBoard logdir, a profile session folder or one
    .xplane.pb file. Every step's main-thread wall time is split into op, dispatch, tracing,
    compile, input, python and other (ms per step, median over steady steps).

      traceinsight analyze runs/20261121T120000Z-model
      traceinsight analyze trace.xplane.pb --top 20
      traceinsight analyze RUN --mode eager --mode xla
    """

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", metavar="PATH", nargs="?", default=None,
                            help="run folder, logdir, session folder or .xplane.pb, or a logdir's "
                                 "URL (gs://, s3://: fsspec) (default: the newest run under "
                                 "./runs)")
        parser.add_argument("--top", type=int, default=10, help="rows of each table (default 10)")
        parser.add_argument("--mode", action="append", default=None,
                            help="only these modes (repeatable)")
        parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                            help="analyse a logdir's hosts on this Dask distributed cluster "
                                 "(tcp://HOST:8786; needs the cluster extra, and the traces at the "
                                 "same paths on the workers)")

    def run(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
        from pathlib import Path

        from traceinsight import runfolder
        from traceinsight.analysis.load import load
        from traceinsight.analysis.urls import is_url
        from traceinsight.errors import TraceinsightError
        from traceinsight.report import terminal
        from traceinsight.report.options import TerminalOptions
        path = (args.path if is_url(args.path) else Path(args.path)) if args.path \
            else runfolder.newest_run()
        if args.scheduler:
            from traceinsight.analysis.parallel import load_with_scheduler
            run = load_with_scheduler(path, args.scheduler)
        else:       # (not traceinsight.load: a printed run needs no notebook display)
            run = load(path)
        if args.mode:
            missing = [m for m in args.mode if m not in run.modes]
            if missing:
                raise TraceinsightError(f"no mode {', '.join(missing)} in {path} "
                                        f"(modes: {', '.join(run.modes)})")
        terminal.show(run, TerminalOptions(top=args.top,
                                           modes=tuple(args.mode) if args.mode else None))
        return 0
