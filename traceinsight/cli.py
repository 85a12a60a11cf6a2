"""Command line entry point: ``traceinsight <command> ...``.

One module per subcommand under ``traceinsight.commands``; each defines a ``Command`` class with
``prepare_parser(parser)`` and ``run(args, parser) -> int``, and its docstring is the ``--help`` text.
This is the only place that turns ``TraceinsightError`` into an exit status. Command modules import
nothing heavy at module level (``traceinsight --help`` must stay fast; TensorFlow only in capture's
workload process).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import Sequence

from traceinsight.errors import TraceinsightError

# name -> module under traceinsight.commands
COMMANDS: dict[str, str] = {
    "capture": "capture",
    "analyze": "analyze",
    "view": "view",
    "report": "report",
    "diff": "diff",
    "export": "export",
    "run": "run",
}


def _load(name: str):
    return importlib.import_module(f"traceinsight.commands.{COMMANDS[name]}").Command


def _cleandoc(doc: str) -> str:
    """``inspect.cleandoc`` without importing inspect (start-up time)."""
    lines = doc.expandtabs().splitlines()
    indents = [len(x) - len(x.lstrip()) for x in lines[1:] if x.strip()]
    margin = min(indents, default=0)
    out = [lines[0].strip()] + [x[margin:].rstrip() for x in lines[1:]] if lines else []
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return "\n".join(out)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, what argparse's help formatter sizes its text to,
    without importing shutil (and with it bz2, lzma): argparse makes a formatter for every
    option it adds, and so imported shutil on every start (start-up time)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        out = sys.__stdout__       # (None, closed, detached or no terminal: 80, as shutil says)
        try:
            columns = (os.get_terminal_size(out.fileno()).columns if out is not None else 0) or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class _Width:
    """A help formatter whose default width is ``_terminal_columns() - 2``, as argparse's is."""

    def __init__(self, *args, **kwargs) -> None:
        if len(args) < 4 and kwargs.get("width") is None:
            kwargs["width"] = _terminal_columns() - 2
        super().__init__(*args, **kwargs)


class _HelpFormatter(_Width, argparse.HelpFormatter):
    pass


class _RawDescriptionHelpFormatter(_Width, argparse.RawDescriptionHelpFormatter):
    pass


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand named on a command line (top-level options take no value)."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full parser; given the command line ``argv``, only the named subcommand's options are
    set up (``traceinsight --help`` then imports no command's dependencies: capture's options need
    the capture package, which imports numpy), and where it names a command, only that command is
    there (the others' modules are not imported; a name that is no command gets them all, for
    argparse's list of choices)."""
    parser = argparse.ArgumentParser(
        prog="traceinsight",
        description="Why is my TensorFlow model slow in this mode, and what do I change?",
        formatter_class=_HelpFormatter,
    )
    from traceinsight import __version__
    parser.add_argument("--version", action="version", version=f"traceinsight {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else _command_in(argv)
    for name in [wanted] if wanted in COMMANDS else COMMANDS:
        cls = _load(name)
        doc = _cleandoc(cls.__doc__ or "")
        p = sub.add_parser(name, help=doc.splitlines()[0] if doc else name, description=doc,
                           formatter_class=_RawDescriptionHelpFormatter)
        if argv is None or name == wanted:
            cls().prepare_parser(p)
        p.set_defaults(_command=cls)
    return parser


# commands that only read and analyse: nothing they run is the user's code
ANALYSING = frozenset({"analyze", "view", "report", "diff", "export"})
# the variables OpenBLAS reads its thread count from, in its order
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(command: str | None) -> None:
    """Before numpy is imported by a command that only analyses: OpenBLAS with one thread, unless
    the user chose a count. numpy's OpenBLAS starts a thread per core when it is imported, a
    noticeable share of a small ``analyze``'s CPU time, and traceinsight computes nothing with
    BLAS. Never for ``capture`` / ``run``, whose processes run the user's workload (the variable
    would reach it), nor once numpy is imported (a caller's process, where it does nothing)."""
    if command in ANALYSING and "numpy" not in sys.modules \
            and not any(v in os.environ for v in BLAS_THREADS):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


# the garbage collector's youngest generation in the command's own process: collected after this
# many new container objects instead of 700 (Python's default)
GC_YOUNG_THRESHOLD = 50_000


def main(argv: Sequence[str] | None = None) -> int:
    """The ``traceinsight`` command. Without ``argv`` (the console script, ``python -m
    traceinsight``) the process is the command's own, and it tunes its garbage collector as it
    tunes its allocator (``malloc.allow``):

    * a command that only analyses (``ANALYSING``) collects the youngest generation every
      ``GC_YOUNG_THRESHOLD`` new objects: importing numpy and the package makes tens of thousands
      of long-lived objects (functions, classes, module dicts), which at Python's default are each
      walked several times by collections that find nothing to free (a small command's start,
      several milliseconds); cyclic garbage still goes, a bounded number of objects later;
    * when the command ends, the objects it made are frozen out of the collector
      (``gc.freeze``), so the interpreter's collections at exit do not walk them all only to free
      memory the process hands back anyway (several milliseconds more). Exit handlers still run
      and files are still flushed and closed; only cyclic garbage is left to the operating system.
    """
    if argv is not None:
        return _main(list(argv))
    if _command_in(sys.argv[1:]) in ANALYSING:
        gc.set_threshold(GC_YOUNG_THRESHOLD)
    try:
        return _main(sys.argv[1:])
    finally:
        gc.freeze()


def _main(argv: list[str]) -> int:
    one_blas_thread(_command_in(argv))
    from traceinsight.analysis import malloc
    malloc.allow()       # the command's process is the tool's: it may tune its own allocator
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "_command", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args._command().run(args, parser) or 0)
    except TraceinsightError as e:
        print(f"traceinsight: error: {error_line(str(e))}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("traceinsight: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:   # a write no closer handler caught (a full disk, a read-only folder)
        where = f"{e.filename}: " if e.filename else ""
        print(f"traceinsight: error: {error_line(where + (e.strerror or str(e)))}",
              file=sys.stderr)
        return 1


# an error line longer than this is cut (a run folder can name a mode with a megabyte)
MAX_ERROR_LINE = 4000


def error_line(message: str) -> str:
    """An error message as one inert line: it quotes names from run folders and traces, which
    may hold newlines, escape codes or bidi controls; all are shown as visible escapes
    (``present.safe``)."""
    from traceinsight.present import safe
    line = safe(message, None)
    if len(line) > MAX_ERROR_LINE:
        line = line[:MAX_ERROR_LINE].rstrip() + f"… ({len(message):,} characters)"
    return line


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
