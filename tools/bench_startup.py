"""How fast the command starts: whole-process wall time of ``traceinsight --help``, of
``traceinsight analyze`` on a small trace and of ``traceinsight report`` (markdown) on a committed
run folder, best of N fresh processes (targets: 0.15 s, 0.4 s and 0.25 s).

    .venv/bin/python tools/bench_startup.py [--repeat 7] [--trace FILE.xplane.pb] [--run FOLDER]
                                            [--imports]

Each figure is a fresh ``python`` process started the way the ``traceinsight`` console script
starts (``from traceinsight.cli import main; sys.exit(main())``), timed from before the spawn to
its exit, output discarded. ``python -c pass`` is printed beside them: the interpreter's own
start-up on this machine, which no change to traceinsight can remove. ``--imports`` adds the
slowest imports of each command (``python -X importtime``, cumulative µs) to find the culprits.
The trace defaults to the smallest committed host trace (tests/data/runs, ~100 KB), copied to a
temporary folder so that no analysis cache is involved. The run folder defaults to
tests/data/runs/conv1d, copied to a temporary folder; its untimed warm-up run writes the analysis
cache a second ``report`` of a run reads, so the figure is a report of an analysed run.

The child processes may write bytecode (``PYTHONDONTWRITEBYTECODE`` is removed from their
environment, and one untimed run of each command comes first): an installed traceinsight compiles
its modules once, so a start-up that recompiles them from source in every process (as under
``PYTHONDONTWRITEBYTECODE=1``) is not what a user sees. The header says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = "import sys; from traceinsight.cli import main; sys.exit(main())"


def default_trace() -> Path:
    runs = ROOT / "tests" / "data" / "runs"
    host = [p for p in runs.rglob("*.xplane.pb") if "/host/" in p.as_posix()]
    if not host:
        sys.exit(f"no committed host trace under {runs}; pass --trace")
    # the committed host trace closest to 100 KB
    return min(host, key=lambda p: abs(p.stat().st_size - 100_000))


def wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.decode()[-500:]}")
    return dt


def slowest_imports(argv: list[str], env: dict[str, str], n: int = 8) -> list[tuple[int, str]]:
    r = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, text=True)
    rows = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cum, name = line.split("|")
            try:
                rows.append((int(cum), name.strip()))
            except ValueError:
                continue
    # top-level packages only (a nested module's time is inside its package's)
    top = {}
    for cum, name in rows:
        root = name.split(".")[0]
        top[root] = max(top.get(root, 0), cum)
    return sorted(((v, k) for k, v in top.items()), reverse=True)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="fresh processes per figure (best of)")
    ap.add_argument("--trace", type=Path, default=None, help="the trace analyze reads")
    ap.add_argument("--run", type=Path, default=ROOT / "tests" / "data" / "runs" / "conv1d",
                    help="the run folder report reads")
    ap.add_argument("--imports", action="store_true", help="also list the slowest imports")
    args = ap.parse_args()

    env = dict(os.environ)
    # as an installed traceinsight runs: its modules compiled once (the warm-up run writes the .pyc)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    src = args.trace or default_trace()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / src.name
        shutil.copyfile(src, trace)
        run = Path(tmp) / "run"
        shutil.copytree(args.run, run)
        cases = [
            ("python -c pass", [sys.executable, "-c", "pass"], None),
            ("traceinsight --help", [sys.executable, "-c", ENTRY, "--help"], 0.15),
            (f"traceinsight analyze ({src.stat().st_size / 1e3:.0f} KB trace)",
             [sys.executable, "-c", ENTRY, "analyze", str(trace)], 0.4),
            (f"traceinsight report ({args.run.name}, md)",
             [sys.executable, "-c", ENTRY, "report", str(run), "-o", str(Path(tmp) / "r.md")], 0.25),
        ]
        print(f"python {sys.version.split()[0]} · {os.cpu_count()} CPUs · best of {args.repeat} "
              f"fresh processes · trace {src.relative_to(ROOT) if src.is_relative_to(ROOT) else src}")
        print("bytecode writing allowed in the child processes (PYTHONDONTWRITEBYTECODE unset), "
              "one untimed warm-up run per command (writes the .pyc, warms the file cache)")
        print(f"{'command':<40} {'best s':>8} {'median s':>9} {'target s':>9}")
        for label, argv, target in cases:
            wall(argv, env)                  # untimed: writes the .pyc files, warms the file cache
            times = sorted(wall(argv, env) for _ in range(args.repeat))
            best, median = times[0], times[len(times) // 2]
            tgt = f"{target:.2f}" if target else ""
            verdict = "" if target is None else ("  ok" if best <= target else "  OVER")
            print(f"{label:<40} {best:>8.3f} {median:>9.3f} {tgt:>9}{verdict}")
            if args.imports and target is not None:
                for cum, name in slowest_imports(argv, env):
                    print(f"    {name:<36} {cum / 1e6:>8.3f} s (import, cumulative)")


if __name__ == "__main__":
    main()
