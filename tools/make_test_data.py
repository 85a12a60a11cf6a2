"""Capture the small real runs committed under tests/data/runs/ (the other test suites build on them).

    .venv/bin/python tools/make_test_data.py            # all runs
    .venv/bin/python tools/make_test_data.py conv1d      # one of them

Each run is a real ``traceinsight capture`` of a sample with few steps and short traces, so the
folder stays small (host pass up to 3 s but at most 25 steps, python pass 0.5 s and 3 steps): keep tests/data under ~20 MB. Figures in them
are whatever this machine measured; tests must not pin them.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from traceinsight.cli import main  # noqa: E402

OUT = ROOT / "tests" / "data" / "runs"

SMALL = ["--min-steps", "20", "--min-time", "0.5", "--max-time", "5", "--warmup", "3",
         "--host-trace-ms", "3000", "--host-max-steps", "25",
         "--python-trace-ms", "500", "--python-max-steps", "3"]

RUNS = {
    # name: (sample, modes)
    "conv1d": ("samples/tf2_vs_tf1_small.py", "eager,function,xla,predict"),
    "retracing": ("samples/retracing.py", "eager,function"),
    "costly-loop": ("samples/costly_loop.py", "eager,function,xla"),
}


def make(name: str, workload: str, modes: str, out: Path, flags: list[str]) -> int:
    """One real ``traceinsight capture`` into ``out/name`` (replaced if it exists)."""
    target = out / name
    if target.exists():
        shutil.rmtree(target)
    t0 = time.monotonic()
    status = main(["capture", str(ROOT / workload), "--modes", modes, "--out", str(out), "--name", name]
                  + flags)
    print(f"{name}: exit {status} in {time.monotonic() - t0:.0f} s")
    return status


def make_all(runs: dict[str, tuple], out: Path, small: list[str], argv: list[str]) -> int:
    """Capture the named runs (all when ``argv`` is empty); ``runs``: name -> (workload, modes[,
    extra flags]). Exit status: the worst capture's."""
    names = argv or list(runs)
    unknown = [n for n in names if n not in runs]
    if unknown:
        print(f"unknown run(s): {', '.join(unknown)}; known: {', '.join(runs)}", file=sys.stderr)
        return 2
    worst = 0
    for n in names:
        workload, modes, *extra = runs[n]
        worst = max(worst, make(n, workload, modes, out, small + (extra[0] if extra else [])))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{out.relative_to(ROOT)}: {size / 1e6:.1f} MB")
    return worst


if __name__ == "__main__":
    sys.exit(make_all(RUNS, OUT, SMALL, sys.argv[1:]))
