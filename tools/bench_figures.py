"""What each part of a run's whole-run result costs when it is first read: load (from the analysis
cache), the summary, the findings, every pair's comparison, the hosts' comparison. Why the
result is computed on first read rather than all at load (ARCHITECTURE.md): ``traceinsight
analyze`` reads only the summary.

    .venv/bin/python tools/bench_figures.py [RUN ...] [--repeat 3]

RUN defaults to the committed runs under tests/data/runs. Each repeat is a fresh process (so
pandas' import is counted where it is first needed) on a copy of the run whose cache was written
by a first load; prints the median of each part in ms, and whether pandas was imported by the
time the summary was read.
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


def child(path: str) -> None:
    import time
    t0 = time.perf_counter()
    import traceinsight
    run = traceinsight.load(path)
    t1 = time.perf_counter()
    run.table("summary")
    t2 = time.perf_counter()
    pandas_after_summary = "pandas" in sys.modules
    findings = run.findings
    t3 = time.perf_counter()
    names = [m.name for m in run.ok_modes()]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    for a, b in pairs:
        run.compare(a, b)
    t4 = time.perf_counter()
    run.host_groups()
    t5 = time.perf_counter()
    print(json.dumps({"load": t1 - t0, "summary": t2 - t1, "findings": t3 - t2,
                      "pairs": t4 - t3, "hosts": t5 - t4, "n_pairs": len(pairs),
                      "n_findings": len(findings), "pandas_after_summary": pandas_after_summary}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    runs = [Path(r) for r in args.runs] or sorted(p for p in (ROOT / "tests/data/runs").iterdir()
                                                   if (p / "run.json").is_file())
    print(f"{'run':<16} {'modes':>5} {'load':>7} {'summary':>8} {'findings':>9} {'pairs':>7} "
          f"{'hosts':>6}  (median ms of {args.repeat} fresh processes; cache warm)")
    for run in runs:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / run.name
            shutil.copytree(run, copy, ignore=shutil.ignore_patterns(".traceinsight"))
            out = []
            for i in range(args.repeat + 1):      # the first writes the cache: not counted
                r = subprocess.run([sys.executable, __file__, "--child", str(copy)],
                                   capture_output=True, text=True, check=True, cwd=ROOT)
                if i:
                    out.append(json.loads(r.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(o[k] for o in out) * 1e3
               for k in ("load", "summary", "findings", "pairs", "hosts")}
        n_modes = len(json.loads((run / "run.json").read_text()).get("modes") or {})
        print(f"{run.name:<16} {n_modes:>5} {med['load']:>7.0f} {med['summary']:>8.0f} "
              f"{med['findings']:>9.0f} {med['pairs']:>7.0f} {med['hosts']:>6.0f}  "
              f"({out[0]['n_findings']} findings, {out[0]['n_pairs']} pairs; pandas imported by "
              f"the summary: {out[0]['pandas_after_summary']})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
