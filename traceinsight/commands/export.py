"""traceinsight export: see Command."""

from __future__ import annotations

from pathlib import Path


class Command:
    """Export one mode: a Chrome trace for Perfetto / chrome://tracing, and its tables as CSV.

    Writes trace.json.gz (trace-event format: every slice carries its category, a track per
    category shows the main thread's exclusive timeline, the steps are spans with their category
    split) and the breakdown, steps, op, retrace, hotspot and tf.data stage tables as CSV (or
    Parquet, with pyarrow).

      traceinsight export RUN --mode eager                   into ./<run>-eager/
      traceinsight export RUN --mode xla -o out/ --trace python --steps 5-9
      traceinsight export RUN --mode eager --tables parquet --trace none
      traceinsight export RUN --mode eager --via-xprof       XProf's own converter (all stats)
      traceinsight export RUN --tables parquet               every mode's tables, for many runs

    Without --mode: the modes, steps, categories, ops and hotspots tables of every mode and host,
    stacked, with the run's metadata (run, workload, TensorFlow version, host, ...) as columns,
    so the tables of many runs can be queried together (e.g. with DuckDB).
    """

    def prepare_parser(self, parser) -> None:
        parser.add_argument("run", nargs="?", metavar="RUN",
                            help="run folder, logdir or .xplane.pb (default: newest under runs/)")
        parser.add_argument("--mode", metavar="MODE",
                            help="the mode to export (default: no trace, and the tables of every "
                                 "mode and host with the run's metadata as columns)")
        parser.add_argument("-o", "--output", metavar="DIR",
                            help="folder to write into (default: ./<run>-<mode>/, or ./<run>-tables/)")
        parser.add_argument("--tables", choices=("csv", "parquet", "none"), default="csv",
                            help="table format (default: csv)")
        parser.add_argument("--trace", choices=("host", "python", "none"),
                            help="which capture pass to write as the trace (default: host with "
                                 "--mode, none without)")
        parser.add_argument("--steps", metavar="N[-M],...",
                            help="only these steps (step numbers as in the steps table, e.g. 5-9,12; "
                                 "default: the whole trace)")
        parser.add_argument("--no-gzip", action="store_true",
                            help="write trace.json uncompressed (default: trace.json.gz)")
        parser.add_argument("--via-xprof", action="store_true",
                            help="make trace.json with XProf's trace_viewer converter instead (all "
                                 "stats in args, no categories; slow; needs xprof)")

    def run(self, args, parser) -> int:
        from traceinsight.errors import TraceinsightError
        from traceinsight.report import chrome_trace, load_run, tables, write_chunks, write_file, write_files
        from traceinsight.report.options import TableOptions, TraceOptions
        from traceinsight.runfolder import mode_dir

        if args.mode is not None:
            args.trace = args.trace or "host"
        # the trace's per-event data is analysed again from the pass's files by the renderer,
        # as the mode's analysis made it (every decision and correction of the mode's tables)
        run = load_run(args.run)
        if args.mode is None:
            if args.trace not in (None, "none"):
                raise TraceinsightError("a trace is exported per mode: add --mode MODE")
            if args.tables == "none":
                raise TraceinsightError("nothing to export: --tables none and no --mode")
            outdir = _out_folder(Path(args.output) if args.output else Path(f"{run.name}-tables"))
            for p in write_files(outdir, tables.render(run, TableOptions(format=args.tables))):
                print(p)
            return 0
        mode = run.modes.get(args.mode)
        if mode is None:
            raise TraceinsightError(f"{run.name} has no mode {args.mode!r}; modes: "
                                    f"{', '.join(run.modes) or 'none'}")
        if not mode.ok and args.trace == "none":
            raise TraceinsightError(f"mode {args.mode!r} {mode.status}: nothing to export")
        outdir = _out_folder(Path(args.output) if args.output
                             else Path(f"{run.name}-{mode_dir(mode.name)}"))
        written: list[Path] = []
        if args.trace != "none":
            if args.via_xprof:
                if args.steps:
                    raise TraceinsightError("--steps works with our export only, not --via-xprof")
                path = outdir / "trace.json"
                write_file(path, chrome_trace.via_xprof(chrome_trace.pass_paths(mode, args.trace))
                           .encode("utf-8"))
            else:
                select = chrome_trace.parse_steps(args.steps)
                path = outdir / ("trace.json" if args.no_gzip else "trace.json.gz")
                write_chunks(path, chrome_trace.render(run, TraceOptions(
                    mode=mode.name, pass_name=args.trace,
                    steps=None if select is None else tuple(select),
                    gzip_level=None if args.no_gzip else 1)))
            written.append(path)
        if args.tables != "none" and mode.ok:
            written += write_files(outdir, tables.render(run, TableOptions(mode=mode.name,
                                                                           format=args.tables)))
        for p in written:
            print(p)
        if args.trace != "none":
            print(f"open {written[0].name} in https://ui.perfetto.dev or chrome://tracing")
        return 0


def _out_folder(path: Path) -> Path:
    """The output folder, created before anything is computed; one line when it cannot be."""
    from traceinsight.errors import TraceinsightError
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TraceinsightError(f"cannot create the output folder {path}: {e.strerror or e}") from None
    return path
