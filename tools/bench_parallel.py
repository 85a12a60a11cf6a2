"""Many hosts: a logdir of N hosts analysed one after another vs in parallel processes.

    .venv/bin/python tools/bench_parallel.py                        capture a ~5 M-event trace, 8 hosts
    .venv/bin/python tools/bench_parallel.py --trace A.xplane.pb --hosts 8 [--repeat 3]

The logdir is N hard links (copies where links fail) of one python-traced trace, one per host
(``<logdir>/plugins/profile/<session>/host<i>.xplane.pb``): the per-host analysis does not care
that the hosts' traces are alike. Without --trace, one is captured from the Conv1D sample's eager
mode with the python tracer on for --python-ms (17 s gives ~5 M events here). Each measurement is
``traceinsight.load(logdir)`` in a fresh process: serial (``TRACEINSIGHT_JOBS=1``) and parallel
(default: every usable core), alternating so machine load hits both alike (--grouped: all serial
runs first), after --warmup untimed rounds; best of --repeat, and the median of the rounds' ratios. System CPU (sys) is printed too:
on a VM it is mostly page faults, which cost more for memory the VM has not touched lately.
CPU time (all processes) is printed too: on a shared machine the wall-time ratio shows only
when cores are idle, while the overhead CPU (parallel - serial) does not depend on the load.
Peak memory: the serial process's peak RSS (it holds one host at a time, so it is one host's
peak) against the parallel run's largest worker (``RUSAGE_CHILDREN``) and its parent, which
analyses hosts too. ``TRACEINSIGHT_START=spawn`` measures the workers started as fresh
interpreters instead of forks.
Target: 8 x 5 M-event hosts >= 1.7x faster on 2 cores; peak per worker as for one host.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_analyze import capture  # a python-traced capture of the small sample (tools/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent


def child(logdir: str) -> None:
    import resource
    t0 = time.perf_counter()
    import traceinsight
    run = traceinsight.load(logdir)
    wall = time.perf_counter() - t0
    events = None
    ru_s, ru_c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "cpu_s": ru_s.ru_utime + ru_s.ru_stime + ru_c.ru_utime + ru_c.ru_stime,
        "sys_s": ru_s.ru_stime + ru_c.ru_stime,
        "wall_s": wall, "modes": len(run.modes), "ok": sum(m.ok for m in run.modes.values()),
        "steps": sum(len(m.steps) for m in run.modes.values()), "events": events,
        "self_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))


def prewarm(mb: int) -> None:
    """Has a throwaway process write ``mb`` MB and exit, so that the next process's fresh pages
    are ones the VM has backed already (see --prewarm-mb)."""
    if mb > 0:
        subprocess.run([sys.executable, "-c", f"import numpy as np; np.ones({mb} << 17)"],
                       check=True)


def measure(logdir: Path, jobs: str | None, prewarm_mb: int = 0) -> dict:
    prewarm(prewarm_mb)
    env = dict(os.environ)
    env.pop("TRACEINSIGHT_JOBS", None)
    if jobs:
        env["TRACEINSIGHT_JOBS"] = jobs
    out = subprocess.run([sys.executable, __file__, "--child", str(logdir)], capture_output=True,
                         text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", help="an .xplane.pb (default: capture one)")
    p.add_argument("--python-ms", type=int, default=17000)
    p.add_argument("--hosts", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed rounds (serial and parallel) first (default 1)")
    p.add_argument("--grouped", action="store_true",
                   help="all serial runs, then all parallel runs (default: alternating, so that "
                        "machine load hits both alike); each run then follows one of its own "
                        "kind, whose freed memory it reuses (see --prewarm-mb)")
    p.add_argument("--prewarm-mb", type=int, default=0,
                   help="before every measured process, have another write this many MB and exit "
                        "(default 0: off). On a VM whose RAM the hypervisor backs lazily and "
                        "reclaims (Firecracker with DAMON here), a process's first touch of memory "
                        "no process had lately costs several times a normal page fault; the "
                        "parallel run needs twice the serial run's memory, so alternating runs "
                        "charge it that cost. With e.g. 1500 both runs start with backed memory, "
                        "as on bare metal")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        tmp = Path(tmp)
        trace = Path(args.trace) if args.trace else capture(tmp, args.python_ms)
        session = tmp / "logdir" / "plugins" / "profile" / "2026_01_01_00_00_00"
        session.mkdir(parents=True)
        for i in range(args.hosts):
            dest = session / f"host{i}.xplane.pb"
            try:
                os.link(trace, dest)
            except OSError:
                import shutil
                shutil.copy(trace, dest)
        from traceinsight.analysis.events import load_files
        events = len(load_files([trace]))
        logdir = tmp / "logdir"
        best: dict[str, dict] = {}
        modes = (("serial", "1"), ("parallel", None))
        rounds = range(-args.warmup, args.repeat)
        schedule = ([(r, m) for m in modes for r in rounds] if args.grouped else
                    [(r, m) for r in rounds for m in modes])
        walls: dict[tuple[int, str], float] = {}
        for r, (label, jobs) in schedule:
            res = measure(logdir, jobs, args.prewarm_mb)
            assert res["ok"] == args.hosts, res
            walls[r, label] = res["wall_s"]
            print(f"  {'warm-up' if r < 0 else f'run {r + 1}':7s} {label:8s} {res['wall_s']:7.2f} s  "
                  f"cpu {res['cpu_s']:6.1f} s (sys {res['sys_s']:4.2f})  peak self "
                  f"{res['self_peak_mb']:6.0f} MB  children {res['children_peak_mb']:6.0f} MB",
                  flush=True)
            if r >= 0 and (label not in best or res["wall_s"] < best[label]["wall_s"]):
                best[label] = res
        pairs = [walls[r, "serial"] / walls[r, "parallel"] for r in range(args.repeat)]
        from traceinsight.analysis.parallel import usable_cores
        s, q = best["serial"], best["parallel"]
        print(f"\n{args.hosts} hosts x {events:,} events ({trace.stat().st_size / 1e6:.0f} MB each), "
              f"{usable_cores()} usable cores, best of {args.repeat}"
              + (f", {args.prewarm_mb} MB pre-warmed before each run" if args.prewarm_mb else ""))
        print(f"serial   {s['wall_s']:7.2f} s  peak RSS {s['self_peak_mb']:.0f} MB (one host at a time)")
        print(f"parallel {q['wall_s']:7.2f} s  peak RSS per worker {q['children_peak_mb']:.0f} MB, "
              f"parent {q['self_peak_mb']:.0f} MB")
        print(f"cpu time serial {s['cpu_s']:.1f} s (sys {s['sys_s']:.2f}), parallel (all processes) "
              f"{q['cpu_s']:.1f} s (sys {q['sys_s']:.2f}) "
              f"(the machine's load shows in wall / cpu: serial {s['wall_s'] / s['cpu_s']:.2f})")
        cores = min(usable_cores(), args.hosts)
        print(f"overhead cpu (parallel - serial) {q['cpu_s'] - s['cpu_s']:.1f} s; on {cores} idle cores "
              f"the parallel wall is at least cpu / {cores} = {q['cpu_s'] / cores:.2f} s")
        print(f"speed-up {s['wall_s'] / q['wall_s']:.2f}x (best against best; round by round: "
              f"median {statistics.median(pairs):.2f}x, {min(pairs):.2f}-{max(pairs):.2f}x); "
              f"worker peak / serial peak "
              f"{q['children_peak_mb'] / s['self_peak_mb']:.2f}, parent peak / serial peak "
              f"{q['self_peak_mb'] / s['self_peak_mb']:.2f}")


if __name__ == "__main__":
    main()
