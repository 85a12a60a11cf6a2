"""Speed and memory of loading + fully analysing TensorFlow traces, against XProf on the same file.

    .venv/bin/python tools/bench_analyze.py                  capture two python-traced traces, measure
    .venv/bin/python tools/bench_analyze.py --trace A.xplane.pb [--trace B.xplane.pb]
    .venv/bin/python tools/bench_analyze.py --no-xprof --repeat 5

Without --trace, two real python-traced traces of the small Conv1D sample's eager mode are captured
with ``traceinsight capture`` (the realistic kind of large trace): a short one (about 10 MB) and a
long one (>= 5 M events). Every measurement runs in a fresh process: wall time of
parse + full analysis (steps, categories, ops, retraces, hotspots), events per second and peak RSS;
then XProf's ``overview_page`` conversion of the same file, twice: on a fresh copy (XProf's first
conversion of a trace) and again once XProf has left its ``ALL_HOSTS.op_stats_v2.pb`` cache beside
it (every later conversion), with both ratios. Also the time of ``traceinsight --help``. How many
events a given --small-ms / --large-ms yields depends on the machine's speed: the table prints it.
The machine is shared and noisy: the best of --repeat runs is reported,
and ratios are taken within one run of this script.

Targets: >= 2 M events/s; a ~10 MB python-traced trace in <= 0.25 s;
>= 6x faster than XProf's overview_page; peak RSS <= 1.5 GB at 5 M events; --help <= 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "tf2_vs_tf1_small.py"


def child_analyze(path: str) -> None:
    import resource
    t0 = time.perf_counter()
    from traceinsight.analysis.mode import analyze_mode
    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    mode = analyze_mode("bench", [Path(path)])
    cold = time.perf_counter() - t1
    rss_first = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t1 = time.perf_counter()
    analyze_mode("bench", [Path(path)])  # again, warm: lazy imports and first-use costs paid
    wall = time.perf_counter() - t1
    from traceinsight.analysis.events import load_files
    n = sum(ln.n_events for ln in load_files([Path(path)]).lines)
    print(json.dumps({"wall_s": wall, "cold_s": cold, "import_s": t_import, "events": n,
                      "peak_rss_first_mb": rss_first,
                      "status": mode.status, "steps": len(mode.steps),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def child_xprof(path: str) -> None:
    import resource

    from xprof.convert import raw_to_tool_data
    t0 = time.perf_counter()
    raw_to_tool_data.xspace_to_tool_data([path], "overview_page", {})
    print(json.dumps({"wall_s": time.perf_counter() - t0,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def in_child(kind: str, path: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, path], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def capture(out: Path, python_ms: int) -> Path:
    cmd = [sys.executable, "-m", "traceinsight", "capture", str(SAMPLE), "--modes", "eager",
           "--out", str(out), "--name", f"py{python_ms}", "--min-steps", "3", "--min-time", "0",
           "--warmup", "1", "--host-trace-ms", "500", "--host-max-steps", "3",
           "--python-trace-ms", str(python_ms), "--python-max-steps", "1000000"]
    print("capturing:", " ".join(cmd[2:]), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return sorted((out / f"py{python_ms}" / "eager" / "python").rglob("*.xplane.pb"))[0]


def xprof_times(path: Path, repeat: int) -> tuple[float, float]:
    """Best wall time of XProf's overview_page on a fresh copy of the trace (its first conversion:
    XProf then leaves ``ALL_HOSTS.op_stats_v2.pb`` beside the trace) and on a copy that already
    has that cache (every later conversion)."""
    import shutil
    first, cached = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="ti-xprof-") as d:
            copy = Path(d) / path.name
            shutil.copyfile(path, copy)
            first.append(in_child("xprof", str(copy))["wall_s"])
            cached.append(in_child("xprof", str(copy))["wall_s"])
    return min(first), min(cached)


def best(kind: str, path: str, repeat: int) -> dict:
    runs = [in_child(kind, path) for _ in range(repeat)]
    return min(runs, key=lambda r: r["wall_s"]) | {
        "cold_s": min(r.get("cold_s", r["wall_s"]) for r in runs),
        "peak_rss_first_mb": max(r.get("peak_rss_first_mb", r["peak_rss_mb"]) for r in runs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", action="append", help="measure these files instead of capturing")
    ap.add_argument("--small-ms", type=int, default=800, help="python-traced ms of the small capture")
    ap.add_argument("--large-ms", type=int, default=14000, help="python-traced ms of the large capture")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-xprof", action="store_true")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        {"analyze": child_analyze, "xprof": child_xprof}[args.child[0]](args.child[1])
        return 0

    if args.trace:
        traces = [Path(t) for t in args.trace]
    else:
        tmp = Path(tempfile.mkdtemp(prefix="ti-bench-"))
        traces = [capture(tmp, args.small_ms), capture(tmp, args.large_ms)]

    print("\nanalyze s: load + full analysis, warm (second call in the process); cold: the first "
          "call,\nas a CLI user pays it (lazy imports); RSS: peak of the process after the first call")
    print("xprof s: XProf's overview_page on a fresh copy of the file (its first conversion);"
          " cached: again,\nwith the op_stats cache XProf left beside it. Ratios: xprof / analyze s.")
    print(f"\n{'trace':28s} {'MB':>7s} {'events':>10s} {'analyze s':>10s} {'cold s':>7s} {'Mev/s':>7s} "
          f"{'RSS MB':>8s} {'xprof s':>8s} {'ratio':>6s} {'cached s':>8s} {'ratio':>6s}")
    for t in traces:
        r = best("analyze", str(t), args.repeat)
        mb = t.stat().st_size / 1e6
        line = (f"{t.name[:28]:28s} {mb:7.1f} {r['events']:10d} {r['wall_s']:10.3f} "
                f"{r['cold_s']:7.3f} {r['events'] / r['wall_s'] / 1e6:7.2f} "
                f"{r['peak_rss_first_mb']:8.0f}")
        if not args.no_xprof:
            first, cached = xprof_times(t, args.repeat)
            line += (f" {first:8.2f} {first / r['wall_s']:5.1f}x {cached:8.2f} "
                     f"{cached / r['wall_s']:5.1f}x")
        print(line, flush=True)

    helps = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "traceinsight", "--help"], check=True,
                       stdout=subprocess.DEVNULL)
        helps.append(time.perf_counter() - t0)
    print(f"\ntraceinsight --help: best of 5 {min(helps):.3f} s (python startup included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
