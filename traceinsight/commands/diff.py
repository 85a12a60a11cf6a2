"""traceinsight diff: see Command."""

from __future__ import annotations


class Command:
    """Compare two runs, or two modes of one run: what got faster or slower, and is it significant.

    Per mode and category: the delta and whether it is significant; ops added, removed, faster,
    slower; retraces.

      traceinsight diff BEFORE AFTER                 two runs, modes matched by name
      traceinsight diff RUN --modes eager,function   two modes of one run
      traceinsight diff A B --modes function,xla     mode `function` of A against `xla` of B
      traceinsight diff A B -o diff.md               also .html, .json (or --format)

    Deltas are B − A in ms/step (positive: B is slower). A difference is significant when the 95 %
    bootstrap interval excludes no change; otherwise the diff says "no measurable difference".
    """

    def prepare_parser(self, parser) -> None:
        from traceinsight.report import DIFF_FORMATS
        parser.add_argument("a", metavar="A", help="run folder, logdir or .xplane.pb (before)")
        parser.add_argument("b", metavar="B", nargs="?",
                            help="second run (after); omit it to compare two modes of A")
        parser.add_argument("--modes", metavar="MODE_A,MODE_B",
                            help="compare mode MODE_A of A with MODE_B of B (of A when B is omitted)")
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write here instead of stdout; the extension picks the format")
        parser.add_argument("--format", choices=DIFF_FORMATS,
                            help="output format (default: from -o's extension, else text)")

    def run(self, args, parser) -> int:
        from traceinsight.errors import TraceinsightError
        from traceinsight.report import DIFF_FORMATS, format_for, load_run, render_diff, write_output
        from traceinsight.report.diff import diff_data

        fmt = format_for(args.output, args.format, default="text", allowed=DIFF_FORMATS)
        pair = None
        if args.modes is not None:
            pair = [p.strip() for p in args.modes.split(",")]
            if len(pair) != 2 or not all(pair):
                raise TraceinsightError(f"--modes wants two mode names, MODE_A,MODE_B (got {args.modes!r})")
        elif args.b is None:
            raise TraceinsightError("one run given: name the two modes to compare with --modes A,B")
        run_a = load_run(args.a)
        run_b = load_run(args.b) if args.b is not None else run_a
        pairs = None
        if pair is not None:
            ma = _mode(run_a, pair[0], "A")
            mb = _mode(run_b, pair[1], "B")
            pairs = [(ma, mb)]
        write_output(render_diff(diff_data(run_a, run_b, pairs), fmt), args.output)
        return 0


def _mode(run, name: str, side: str):
    from traceinsight.errors import TraceinsightError
    m = run.modes.get(name)
    if m is None:
        raise TraceinsightError(f"{side} ({run.name}) has no mode {name!r}; modes: "
                                f"{', '.join(run.modes) or 'none'}")
    if not m.ok:
        raise TraceinsightError(f"mode {name!r} of {side} ({run.name}) {m.status}"
                                + (f": {m.error}" if m.error else ""))
    return m
