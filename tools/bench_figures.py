"""What a run's whole-run figures cost beside its load: the load of a run (its modes from the
analysis cache, then the figures: the summary, the comparisons pages show, the findings, the
hosts), the figures' part of it and each of their parts, and a comparison of every other pair
(what the viewer's compare screen and ``diff --modes`` compute on request).

    .venv/bin/python tools/bench_figures.py [RUN ...] [--repeat 3]

RUN (a run folder, a logdir or a trace) defaults to the committed runs under tests/data/runs.
Each repeat is a fresh process (so an
import is counted where it is first needed) on a copy of the run whose cache was written by a
first load; prints the median of each part in ms, and whether the load imported pandas (it must
not: ``traceinsight analyze`` computes the whole result and never imports pandas).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("load", "figures", "summary", "findings", "other_pairs")


def child(path: str) -> None:
    import time
    t0 = time.perf_counter()
    import traceinsight
    from traceinsight import derive, findings, stats

    spent = {"figures": 0.0, "summary": 0.0, "findings": 0.0}

    def timed(key, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t
        return wrapper

    # the summary's and the findings' own time (the comparisons they make count in theirs)
    derive.Analyzer.figures = timed("figures", derive.Analyzer.figures)
    stats.summarize = timed("summary", stats.summarize)
    findings.find = timed("findings", findings.find)
    run = traceinsight.load(path)
    t1 = time.perf_counter()
    pandas_after_load = "pandas" in sys.modules
    names = [m.name for m in run.ok_modes()]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
             if run.figures.comparison(a, b) is None]
    t2 = time.perf_counter()
    for a, b in pairs:
        run.compare(a, b)
    t3 = time.perf_counter()
    print(json.dumps({"load": t1 - t0, **spent, "other_pairs": t3 - t2,
                      "n_pairs": len(pairs), "n_kept": len(run.figures.comparisons) // 2,
                      "n_modes": len(run.modes),
                      "n_findings": len(run.findings), "pandas_after_load": pandas_after_load}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    runs = [Path(r) for r in args.runs] or sorted(p for p in (ROOT / "tests/data/runs").iterdir()
                                                   if (p / "run.json").is_file())
    print(f"{'run':<16} {'modes':>5} {'load':>7} {'figures':>8} {'summary':>8} {'findings':>9} "
          f"{'other pairs':>12}  (median ms of {args.repeat} fresh processes; cache warm)")
    for run in runs:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / run.name
            if run.is_dir():
                shutil.copytree(run, copy, ignore=shutil.ignore_patterns(".traceinsight"))
            else:
                shutil.copy2(run, copy)
            out = []
            for i in range(args.repeat + 1):      # the first writes the cache: not counted
                r = subprocess.run([sys.executable, __file__, "--child", str(copy)],
                                   capture_output=True, text=True, check=True, cwd=ROOT)
                if i:
                    out.append(json.loads(r.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(o[k] for o in out) * 1e3 for k in PARTS}
        n_modes = out[0]["n_modes"]
        print(f"{run.name:<16} {n_modes:>5} {med['load']:>7.0f} {med['figures']:>8.1f} "
              f"{med['summary']:>8.1f} {med['findings']:>9.1f} {med['other_pairs']:>12.1f}  "
              f"({out[0]['n_findings']} findings, {out[0]['n_kept']} pairs kept, "
              f"{out[0]['n_pairs']} others; pandas imported by the load: "
              f"{out[0]['pandas_after_load']})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
