"""How far the tool's pauses reach into the user's own steps, on the routes that run inside the
user's process: the script's own ``perf_counter`` time of every step call against the tool's time
of the same step, under ``traceinsight run`` and ``with traceinsight.profile``.

    .venv/bin/python tools/bench_inprocess.py [--python PY] [--steps 40] [--sleep 0.1 --sleep 0]

The script is ``tests/scripts/faulty_loop.py`` (a custom loop, skip 5, trace 5), run with a sleep
between its steps (Python work between steps: the tool's work should land there) and without one
(steps back to back: any work lands in some step). The difference of one step is the user's time
minus the tool's, the user's step being a ``fit`` batch's, or for the loop the iteration from one
step call to the next (as the tool takes it); a pause the tool makes inside the user's step
(starting or stopping the profiler, saving) shows there. Printed: the largest difference, at which step, whether that step was traced,
the median, and the machine's load (figures from a loaded machine are noisy: compare within a run).
Also the traced steps of the window (the ``--steps`` asked for must be met).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOP = ROOT / "tests" / "scripts" / "faulty_loop.py"


def one(route: str, python: str, steps: int, sleep: float) -> str:
    out = Path(tempfile.mkdtemp(prefix=f"bench-inproc-{route}-"))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    args = [str(LOOP), "plain" if route == "run" else route, str(out), "none", str(steps), str(sleep)]
    if route == "run":
        cmd = [sys.executable, "-m", "traceinsight", "run", "--out", str(out), "--name", "run",
               "--skip-steps", "5", "--steps", "5", "--", python, *args]
    else:
        cmd = [python, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        return f"{route}: exit {done.returncode}: {done.stderr[-500:]}"
    own = json.loads((out / "user.json").read_text())
    user = own["user_s"] if route == "callback" else own["iter_s"]
    (timings,) = (out / "run").glob("*/timings.json")
    t = json.loads(timings.read_text())["all_steps"]
    gaps = sorted(((user[n] - s) * 1e3, n, tr) for s, n, tr in
                  zip(t["steps_s"], t["step_nums"], t["traced"]) if n < len(user))
    worst, n, traced = gaps[-1]
    median = gaps[len(gaps) // 2][0]
    return (f"{route:8s} sleep {sleep:4.2f} s: largest user - tool {worst:7.2f} ms at step {n:3d} "
            f"(traced: {traced}), median {median:6.3f} ms, traced steps {sum(t['traced'])} of 5")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", default=sys.executable, help="the script's interpreter (its TensorFlow)")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--sleep", type=float, action="append", help="seconds between steps (repeatable)")
    args = p.parse_args()
    version = subprocess.run([args.python, "-c", "import tensorflow as tf; print(tf.__version__)"],
                             capture_output=True, text=True).stdout.strip().splitlines()
    print(f"TensorFlow {version[-1] if version else '?'}; load average before: {os.getloadavg()}")
    for sleep in args.sleep or [0.1, 0.0]:
        for route in ("run", "profile", "callback"):
            print(one(route, args.python, args.steps, sleep), flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
