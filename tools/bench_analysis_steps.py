"""CPU time and peak memory of each step of one trace's analysis, after its event table is built,
in fresh processes; with ``--before TREE`` an older source tree (a ``git archive`` of a commit,
its C extension built in place) in the same interleaved rounds.

    .venv/bin/python tools/bench_analysis_steps.py LOGDIR [--before TREE] [--repeat 5]

Each round runs ``analysis.mode.analyze_mode`` on the trace files under LOGDIR in a new process
of this tree (then of TREE), inside ``malloc.kept_memory()`` as the command line runs it. Each
step (loading the table, the attribution, the hotspots, the ops, the tracer events, ...) is
timed with ``time.process_time`` (CPU, all threads) and ``perf_counter`` (wall); its peak is the
process's resident high-water mark (``VmHWM``) at its end, reset at its start (Linux). Medians
over the rounds; the last column is before / now of the CPU time. The machine's load is printed:
compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the steps, as (module under traceinsight.analysis, function): the outermost call is timed
STEPS = [("mode", "load_files"), ("mode", "attribute"), ("mode", "host_events_recorded"),
         ("results", "steps_table"), ("device", "analyze_devices"), ("results", "other_table"),
         ("hotspots", "hotspots_table"), ("results", "op_step_totals"), ("results", "ops_table"),
         ("overhead", "tracer_events"), ("retraces", "retraces_table"),
         ("memory", "memory_table"), ("tfdata", "stage_table_of")]

CHILD = r"""
import importlib, json, sys, time
from pathlib import Path

def status():
    with open("/proc/self/status") as f:
        return {k: int(v.split()[0]) / 1024 for k, v in (line.split(":", 1) for line in f)
                if k in ("VmRSS", "VmHWM")}

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

out, depth = {}, [0]
mode = importlib.import_module("traceinsight.analysis.mode")

def timed(owner, name):
    f = getattr(owner, name)
    def step(*args, **kwargs):
        if depth[0]:
            return f(*args, **kwargs)
        depth[0] += 1
        reset_peak()
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            c, w = time.process_time() - c0, time.perf_counter() - w0
            got = out.setdefault(name, [0.0, 0.0, 0.0])
            got[0] += c
            got[1] += w
            got[2] = max(got[2], status()["VmHWM"])
            depth[0] -= 1
    setattr(owner, name, step)

for module, name in json.loads(sys.argv[2]):
    timed(mode if module == "mode" else getattr(mode, module), name)
from traceinsight.analysis import malloc
malloc.allow()
files = sorted(Path(sys.argv[1]).rglob("*.xplane.pb"))
c0, w0 = time.process_time(), time.perf_counter()
with malloc.kept_memory():
    result = mode.analyze_mode("bench", files)
out["all"] = [time.process_time() - c0, time.perf_counter() - w0,
              max([v[2] for v in out.values()] + [status()["VmHWM"]])]
out["_status"] = result.status
out["_mb"] = sum(f.stat().st_size for f in files) / 1e6
print(json.dumps(out))
"""


def run(tree: Path, logdir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    # bytecode caches written and read, as in a normal install: compiling at import leaves its
    # garbage in the heap, which moves the analysis's arrays and so its peak
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", CHILD, str(logdir), json.dumps(STEPS)],
                          capture_output=True, text=True, env=env, cwd=tree, timeout=600)
    if done.returncode:
        sys.exit(f"{tree}: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
    out = json.loads(done.stdout)
    if out["_status"] != "ok":
        sys.exit(f"{tree}: the analysis of {logdir} did not succeed ({out['_status']})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logdir", type=Path)
    ap.add_argument("--before", type=Path, default=None, help="an older source tree, built")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    args.logdir = args.logdir.resolve()
    trees = [ROOT] + ([args.before.resolve()] if args.before else [])
    rounds: dict[Path, list[dict]] = {t: [] for t in trees}
    loads = [os.getloadavg()[0]]
    for tree in trees:       # one untimed round: bytecode, the file cache
        run(tree, args.logdir)
    for _ in range(args.repeat):
        for tree in trees:
            rounds[tree].append(run(tree, args.logdir))
            loads.append(os.getloadavg()[0])
    first = rounds[ROOT][0]
    print(f"{args.logdir}: {first['_mb']:.1f} MB, {first['_status']}; {args.repeat} rounds, "
          f"medians; load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    names = [n for _, n in STEPS if n in first] + ["all"]
    head = f"{'step':<22}{'CPU s':>8}{'wall s':>8}{'peak MB':>9}"
    if args.before:
        head += f"{'before CPU':>12}{'peak MB':>9}{'before/now':>12}"
    print(head)

    def med(tree: Path, name: str, i: int) -> float:
        return statistics.median(r[name][i] for r in rounds[tree] if name in r)

    for name in names:
        line = f"{name:<22}{med(ROOT, name, 0):8.3f}{med(ROOT, name, 1):8.3f}{med(ROOT, name, 2):9.0f}"
        if args.before and name in rounds[trees[1]][0]:
            now, before = med(ROOT, name, 0), med(trees[1], name, 0)
            ratio = f"{before / now:.2f}×" if now > 0.0005 else "—"
            line += f"{before:12.3f}{med(trees[1], name, 2):9.0f}{ratio:>12}"
        print(line)


if __name__ == "__main__":
    main()
