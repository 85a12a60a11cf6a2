"""traceinsight report: see Command."""

from __future__ import annotations


class Command:
    """Write a report of a run: markdown for a bug issue, self-contained HTML, or JSON.

      traceinsight report RUN                  markdown on stdout
      traceinsight report RUN -o report.html   format from the extension: .md, .html, .json
      traceinsight report RUN --format json    (--format wins over the extension)

    A markdown report written to a file gets its pictures as SVG files in a folder beside it
    (REPORT_figures/), linked from the markdown; the HTML report has them inline.

    RUN is a run folder written by `traceinsight capture` (default: the newest under runs/), a
    TensorBoard logdir or an .xplane.pb. The report holds a one-line summary, the environment, the mode
    table (median, 95 % CI, ratio to the fastest), the category split, ranked findings with the fix,
    top ops / retraces / Python hotspots, and the command that reproduces the run.
    """

    def prepare_parser(self, parser) -> None:
        from traceinsight.report import REPORT_FORMATS
        parser.add_argument("run", nargs="?", metavar="RUN",
                            help="run folder, logdir or .xplane.pb (default: newest under runs/)")
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write here instead of stdout; the extension picks the format")
        parser.add_argument("--format", choices=REPORT_FORMATS,
                            help="output format (default: from -o's extension, else md)")
        parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                            help="analyse a logdir's hosts on this Dask distributed cluster "
                                 "(tcp://HOST:8786; needs the cluster extra, and the traces at the "
                                 "same paths on the workers)")

    def run(self, args, parser) -> int:
        from traceinsight.report import format_for, load_run, render, write_output
        fmt = format_for(args.output, args.format)
        from traceinsight.analysis.urls import is_url
        if args.scheduler:
            from pathlib import Path

            from traceinsight.analysis.parallel import load_with_scheduler
            from traceinsight.runfolder import newest_run
            run = load_with_scheduler(args.run if is_url(args.run) else
                                      Path(args.run) if args.run else newest_run(), args.scheduler)
        elif is_url(args.run):       # a logdir on object storage
            import traceinsight
            run = traceinsight.load(args.run)
        else:
            run = load_run(args.run)
        if fmt == "md" and args.output not in (None, "-"):
            write_output(markdown_with_figures(run, args.output), args.output)
        else:
            write_output(render(run, fmt), args.output)
        return 0


def markdown_with_figures(run, output: str) -> str:
    """The markdown report, its pictures written as SVG files into ``<stem>_figures/`` beside it."""
    from pathlib import Path

    from traceinsight.report import write_file
    from traceinsight.report.data import build
    from traceinsight.report.markdown import render_document
    from traceinsight.report.svg import figures

    out = Path(output)
    folder = out.with_name(out.stem + "_figures")
    doc = build(run)
    links = []
    for stem, alt, svg in figures(doc):
        write_file(folder / f"{stem}.svg", svg.encode("utf-8"))
        links.append((alt, f"{folder.name}/{stem}.svg"))
    return render_document(doc, figures=links)
