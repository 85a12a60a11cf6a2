"""How fast the command starts: whole-process wall time of ``traceinsight --help``, of
``traceinsight analyze`` on a small trace and on a committed run folder whose analysis is cached,
and of ``traceinsight report`` (markdown) on that run folder, best of N fresh processes, with each
process's CPU time (goals: 0.15 s, 0.12 s, 0.15 s and 0.25 s, and ``analyze`` within 0.1 s of
``python -c "import numpy"``, the floor of any command that analyses).

    .venv/bin/python tools/bench_startup.py [--repeat 7] [--trace FILE.xplane.pb] [--run FOLDER]
                                            [--imports]

Each figure is a fresh ``python`` process started the way the ``traceinsight`` console script
starts (``from traceinsight.cli import main; sys.exit(main())``), timed from before the spawn to
its exit, output discarded. ``python -c pass`` is printed beside them: the interpreter's own
start-up on this machine, which no change to traceinsight can remove. ``--imports`` adds the
slowest imports of each command (``python -X importtime``, cumulative µs) to find the culprits.
The trace defaults to the smallest committed host trace (tests/data/runs, ~100 KB), copied to a
temporary folder so that no analysis cache is involved. The run folder defaults to
tests/data/runs/conv1d, copied to a temporary folder; the untimed warm-up run of ``analyze``
writes the analysis cache the timed ``analyze`` and ``report`` read, so their figures are of an
analysed run.

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


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU: user + system) seconds of one fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert p.stderr is not None
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{' '.join(argv)} exited {code}: {err.decode()[-500:]}")
    return dt, usage.ru_utime + usage.ru_stime


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
            ('python -c "import numpy" (the floor)', [sys.executable, "-c", "import numpy"], None),
            # what analyze pays: the analysing commands start OpenBLAS with one thread
            ('  the same, OPENBLAS_NUM_THREADS=1', [sys.executable, "-c", "import numpy"], None),
            ("traceinsight --help", [sys.executable, "-c", ENTRY, "--help"], 0.15),
            (f"traceinsight analyze ({src.stat().st_size / 1e3:.0f} KB trace)",
             [sys.executable, "-c", ENTRY, "analyze", str(trace)], 0.12),
            # the untimed run analyses the run's modes and writes its analysis cache: the timed
            # ones read it (a run analysed before, as a user's second look at it)
            (f"traceinsight analyze ({args.run.name}, cached)",
             [sys.executable, "-c", ENTRY, "analyze", str(run)], 0.15),
            (f"traceinsight report ({args.run.name}, md)",
             [sys.executable, "-c", ENTRY, "report", str(run), "-o", str(Path(tmp) / "r.md")], 0.25),
        ]
        print(f"python {sys.version.split()[0]} · {os.cpu_count()} CPUs · best of {args.repeat} "
              f"fresh processes · trace {src.relative_to(ROOT) if src.is_relative_to(ROOT) else src}")
        print("bytecode writing allowed in the child processes (PYTHONDONTWRITEBYTECODE unset), "
              "one untimed warm-up run per command (writes the .pyc, warms the file cache)")
        print("(PYTHONDONTWRITEBYTECODE=1 in a checkout that never wrote them compiles every "
              "module in every process: tools/bench_vs_xprof_rs.py measures what that adds)")
        print(f"{'command':<40} {'best s':>8} {'median s':>9} {'CPU s':>7} {'target s':>9}")
        cpu = {}
        for label, argv, target in cases:
            cenv = dict(env, OPENBLAS_NUM_THREADS="1") if "OPENBLAS" in label else env
            wall(argv, cenv)                 # untimed: writes the .pyc files, warms the file cache
            runs = [wall(argv, cenv) for _ in range(args.repeat)]
            times = sorted(r[0] for r in runs)
            best, median = times[0], times[len(times) // 2]
            cpu[label] = sorted(r[1] for r in runs)[len(runs) // 2]
            tgt = f"{target:.2f}" if target else ""
            verdict = "" if target is None else ("  ok" if best <= target else "  OVER")
            print(f"{label:<40} {best:>8.3f} {median:>9.3f} {cpu[label]:>7.3f} {tgt:>9}{verdict}")
            if args.imports and target is not None:
                for cum, name in slowest_imports(argv, env):
                    print(f"    {name:<36} {cum / 1e6:>8.3f} s (import, cumulative)")
        labels = list(cpu)
        # against the numpy import analyze pays (one OpenBLAS thread): the plain import's CPU
        # time also holds OpenBLAS's other threads starting, which analyze never starts, so a
        # difference taken from it would flatter analyze by that much. (The command's own process
        # also skips the collector's walk of every object at exit, which numpy's import alone
        # pays: cli.main's gc tuning.)
        above = cpu[labels[4]] - cpu[labels[2]]
        print(f"analyze above the numpy floor (one OpenBLAS thread, as analyze imports it): "
              f"{above:.3f} s of CPU (goal 0.1 s: "
              f"{'ok' if above <= 0.1 else 'OVER'}); load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()
