"""Command line entry point: ``traceinsight <command> ...``.

One module per subcommand under ``traceinsight.commands``; each defines a ``Command`` class with
``prepare_parser(parser)`` and ``run(args, parser) -> int``, and its docstring is the ``--help`` text.
This is the only place that turns ``TraceinsightError`` into an exit status. Command modules import
nothing heavy at module level (``traceinsight --help`` must stay fast; TensorFlow only in capture's
workload process).
"""

from __future__ import annotations

import argparse
import importlib
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
    the capture package, which imports numpy)."""
    parser = argparse.ArgumentParser(
        prog="traceinsight",
        description="Why is my TensorFlow model slow in this mode, and what do I change?",
    )
    from traceinsight import __version__
    parser.add_argument("--version", action="version", version=f"traceinsight {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else _command_in(argv)
    for name in COMMANDS:
        cls = _load(name)
        doc = _cleandoc(cls.__doc__ or "")
        p = sub.add_parser(name, help=doc.splitlines()[0] if doc else name, description=doc,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if argv is None or name == wanted:
            cls().prepare_parser(p)
        p.set_defaults(_command=cls)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "_command", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args._command().run(args, parser) or 0)
    except TraceinsightError as e:
        print(f"traceinsight: error: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("traceinsight: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
