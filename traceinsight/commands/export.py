"""traceinsight export: see Command."""

from __future__ import annotations

from pathlib import Path


class Command:
    """Export one mode: a Chrome trace for Perfetto / chrome://tracing, and its tables as CSV.

    Writes trace.json (trace-event format) and the breakdown, steps, op, retrace and hotspot tables
    as CSV (or Parquet, with pyarrow).

      traceinsight export RUN --mode eager                   into ./<run>-eager/
      traceinsight export RUN --mode xla -o out/ --trace python
      traceinsight export RUN --mode eager --tables parquet --trace none

    The Chrome trace is made by XProf's own converter (needs the optional xprof package).
    """

    def prepare_parser(self, parser) -> None:
        parser.add_argument("run", nargs="?", metavar="RUN",
                            help="run folder, logdir or .xplane.pb (default: newest under runs/)")
        parser.add_argument("--mode", required=True, metavar="MODE", help="the mode to export")
        parser.add_argument("-o", "--output", metavar="DIR",
                            help="folder to write into (default: ./<run>-<mode>/)")
        parser.add_argument("--tables", choices=("csv", "parquet", "none"), default="csv",
                            help="table format (default: csv)")
        parser.add_argument("--trace", choices=("host", "python", "none"), default="host",
                            help="which capture pass to write as trace.json (default: host)")

    def run(self, args, parser) -> int:
        from traceinsight import export
        from traceinsight.errors import TraceinsightError
        from traceinsight.report import load_run, write_file
        from traceinsight.runfolder import mode_dir

        run = load_run(args.run)
        mode = run.modes.get(args.mode)
        if mode is None:
            raise TraceinsightError(f"{run.name} has no mode {args.mode!r}; modes: "
                                    f"{', '.join(run.modes) or 'none'}")
        if not mode.ok and args.trace == "none":
            raise TraceinsightError(f"mode {args.mode!r} {mode.status}: nothing to export")
        outdir = Path(args.output) if args.output else Path(f"{run.name}-{mode_dir(mode.name)}")
        written: list[Path] = []
        if args.trace != "none":
            trace = export.chrome_trace(export.pass_paths(mode, args.trace))
            path = outdir / "trace.json"
            write_file(path, trace.encode("utf-8"))
            written.append(path)
        if args.tables != "none" and mode.ok:
            written += export.write_tables(mode, outdir, args.tables)
        for p in written:
            print(p)
        if args.trace != "none":
            print("open trace.json in https://ui.perfetto.dev or chrome://tracing")
        return 0
