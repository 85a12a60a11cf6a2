"""``traceinsight run``: profile an unmodified training script; see Command. The work (the
script under the startup hook, the run folder it writes) is ``traceinsight.capture.script``'s."""

from __future__ import annotations

import argparse
from pathlib import Path

from traceinsight.errors import TraceinsightError


class Command:
    """Profile an unmodified script: traceinsight run [options] -- python train.py [args]

    Runs the command with a startup hook (a sitecustomize first on PYTHONPATH) that marks steps
    from outside: each Keras fit batch, or else each iteration of the script's loop, from one
    step call to the next (a train_on_batch / predict / predict_on_batch / test_on_batch call, or
    else an outermost tf.function call: a custom training loop's step, or a TF1 script's
    Session.run call), so that its input fetch
    and the rest of its body between calls are in the step; the last call's iteration has no end
    and is not a step. It times every step with perf_counter, skips --skip-steps warm-up steps,
    traces the next
    --steps steps with a TF profiler session in the script's process (host tracer level 3; no
    profiler server, nothing listens on any address), and writes a run folder that view,
    report, analyze, diff and export read like a capture. The script's output and exit status pass
    through, also when the recording fails (a full disk ...: one line says "recording failed" and
    that the exit status is the script's own); a script that crashes keeps what was traced.

    examples:
      traceinsight run -- python train.py --epochs 1
      traceinsight run --mode baseline --name mytrain -- python train.py
      traceinsight run --mode mixed --into runs/mytrain -- python train.py --mixed-precision
      traceinsight diff runs/mytrain --modes baseline,mixed
    """

    def prepare_parser(self, parser) -> None:
        parser.add_argument("--mode", help="mode name (default: the script's name)")
        parser.add_argument("--into", metavar="RUN",
                            help="add the mode to this existing run folder (to diff two variants)")
        parser.add_argument("--out", default="runs", help="runs directory (default: ./runs)")
        parser.add_argument("--name", help="run folder name (default: <UTC time>-<script name>)")
        parser.add_argument("--skip-steps", type=int, default=5,
                            help="untraced warm-up steps before the traced window (default: 5)")
        parser.add_argument("--steps", type=int, default=10,
                            help="steps in the traced window (default: 10)")
        parser.add_argument("--step-function", metavar="NAME",
                            help="count only calls of the tf.function of this name as steps "
                                 "(each from its call to the next), or "
                                 "of the plain Python function NAME of the script (after its first "
                                 "call) or module.NAME (default: every outermost tf.function call "
                                 "outside Keras methods)")
        parser.add_argument("--trace-ms", type=int,
                            help="longest traced window in ms: the trace ends after --steps steps "
                                 "or then, whichever comes first (default: --max-trace-ms)")
        parser.add_argument("--max-trace-ms", type=int, default=30000,
                            help="longest traced window when --trace-ms is not given "
                                 "(default: 30000)")
        parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                            help="the script's command line, after --")

    def run(self, args, parser) -> int:
        cmd = list(args.command)
        if cmd and cmd[0] == "--":
            cmd = cmd[1:]
        if not cmd:
            raise TraceinsightError("no command to run: traceinsight run [options] -- python train.py")
        if args.skip_steps < 0 or args.steps < 1:
            raise TraceinsightError("--skip-steps must not be negative and --steps must be at least 1")
        for flag in ("trace_ms", "max_trace_ms"):
            if getattr(args, flag) is not None and getattr(args, flag) < 1:
                raise TraceinsightError(f"--{flag.replace('_', '-')} must be positive")
        from traceinsight.capture.script import run_script  # (the CLI imports every command)
        return run_script(cmd, mode=args.mode, into=Path(args.into) if args.into else None,
                          out=Path(args.out), name=args.name,
                          settings={"skip_steps": args.skip_steps, "steps": args.steps,
                                    "step_function": args.step_function, "trace_ms": args.trace_ms,
                                    "max_trace_ms": args.max_trace_ms})
