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
import inspect
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
}


def _load(name: str):
    return importlib.import_module(f"traceinsight.commands.{COMMANDS[name]}").Command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="traceinsight",
        description="Why is my TensorFlow model slow in this mode, and what do I change?",
    )
    from traceinsight import __version__
    parser.add_argument("--version", action="version", version=f"traceinsight {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        cls = _load(name)
        doc = inspect.cleandoc(cls.__doc__ or "")
        p = sub.add_parser(name, help=doc.splitlines()[0] if doc else name, description=doc,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        cls().prepare_parser(p)
        p.set_defaults(_command=cls)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
