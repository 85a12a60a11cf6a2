"""How long ``traceinsight view RUN`` takes to open: wall time from process start to the first
screen rendered, and whether TensorFlow got imported on the way (it must not).

    .venv/bin/python tools/bench_view.py [RUN] [--repeat 5]

RUN defaults to the newest committed run under tests/data/runs. ``--cold`` opens a copy without
the analysis cache the loader keeps in the run folder (the first open after a capture). ``--sample`` times the hand-made
sample run instead (no trace loading: the app's own cost). Each repeat is a fresh process
parsing ``view RUN`` with the CLI's own parser and building the app as the command does; the
app is run headless.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(run: str | None, sample: bool) -> None:
    """Runs in the measured process: open the app like the view command, report when it is drawn."""
    t_import = time.perf_counter()   # after Python's own start-up and this script's imports
    # The moments a screen is first written to the terminal: Textual calls App._display with
    # each frame's update (headless too; None while the screen has nothing laid out yet). A
    # pilot's pause() returns only once the app has handled its pending messages (the figures'
    # worker among them), so it would time those as well.
    from textual.app import App
    shown: dict[str, tuple[float, float]] = {}
    display = App._display

    def timed_display(self, screen, update):
        if update is not None and type(screen).__name__ not in shown:
            ru = resource.getrusage(resource.RUSAGE_SELF)
            shown[type(screen).__name__] = (time.perf_counter(), ru.ru_utime + ru.ru_stime)
        return display(self, screen, update)

    App._display = timed_display  # type: ignore[method-assign]
    if sample:
        from traceinsight.testing import sample_run
        from traceinsight.tui import get_app
        app = get_app(sample_run())
    else:
        from traceinsight.cli import build_parser
        argv = ["view", run]
        args = build_parser(argv).parse_args(argv)    # as the CLI does: only view's options
        app = args._command().build_app(args)
    t_built = time.perf_counter()

    async def first_frame(pilot) -> None:
        # The screens hold no timestamps: each moment is taken here when the pilot first sees it
        # (polled every 10 ms, so each figure is late by up to 10 ms).
        while "OverviewScreen" not in shown:                  # the run is loading
            await pilot.pause(0.01)
        t_first = min(t for t, _ in shown.values())
        t_drawn, cpu_drawn = shown["OverviewScreen"]
        while app.screen.figures is None:                    # intervals, comparisons, findings
            await pilot.pause(0.01)
        await pilot.pause()
        t_figures = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        tf = sorted(m for m in sys.modules if m == "tensorflow" or m.startswith("tensorflow."))
        print(json.dumps({"ready": True, "build_s": t_built - t_import,
                          "tensorflow_modules": tf[:5], "first_at": t_first,
                          "drawn_at": t_drawn, "figures_at": t_figures,
                          "cpu_s_total": usage.ru_utime + usage.ru_stime,
                          "cpu_s_drawn": cpu_drawn,
                          "modes": len(app.run_data.modes)}), flush=True)
        app.exit()

    app.run(headless=True, size=(80, 24), auto_pilot=first_frame)


def measure(run: str | None, sample: bool, cold: bool = False) -> dict:
    if cold and run is not None:
        # A copy without the analysis cache (<run>/.traceinsight/): what opening a fresh capture costs.
        tmp = Path(tempfile.mkdtemp(prefix="bench_view_"))
        copy = tmp / Path(run).name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns(".traceinsight"))
        try:
            return measure(str(copy), sample)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    cmd = [sys.executable, __file__, "--child"] + (["--sample"] if sample else [run])
    t0 = time.perf_counter()       # perf_counter is system-wide (CLOCK_MONOTONIC) on Linux
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = ""
    for line in proc.stdout:
        if line.startswith("{"):
            break
    proc.communicate(timeout=30)
    if not line.startswith("{"):
        raise SystemExit(f"the viewer did not open (exit {proc.returncode})")
    out = json.loads(line)
    out["first_s"] = out["first_at"] - t0
    out["wall_s"] = out["drawn_at"] - t0
    out["figures_s"] = out["figures_at"] - t0
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", nargs="?")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--sample", action="store_true")
    p.add_argument("--cold", action="store_true",
                   help="open a copy of RUN without its analysis cache (a first open after capture)")
    p.add_argument("--json", action="store_true",
                   help="end with one JSON line of the medians (tools/bench_vs_xprof_rs.py reads it)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.run, a.sample)
        return 0
    run = a.run
    if run is None and not a.sample:
        runs = sorted(q for q in (ROOT / "tests" / "data" / "runs").glob("*") if (q / "run.json").is_file())
        if not runs:
            raise SystemExit("no committed run under tests/data/runs: pass RUN or --sample")
        run = str(runs[-1])
    results = [measure(run, a.sample, a.cold) for _ in range(a.repeat)]
    tf = sorted({m for r in results for m in r["tensorflow_modules"]})
    print(f"run: {'hand-made sample' if a.sample else run} ({results[0]['modes']} modes"
          f"{', no analysis cache' if a.cold else ''})")
    def line(label: str, key: str) -> None:
        xs = [r[key] for r in results]
        print(f"  {label:<58} median {statistics.median(xs):.2f} s (min {min(xs):.2f}, "
              f"max {max(xs):.2f}, n={len(xs)})")
    print("wall time from process start to:")
    line("first screen drawn (loading screen; overview for --sample)", "first_s")
    line("overview drawn (modes, medians, bars)", "wall_s")
    line("every figure filled in (intervals, why-slower, findings)", "figures_s")
    print(f"  CPU time of the viewer process by the overview drawn: "
          f"median {statistics.median(r['cpu_s_drawn'] for r in results):.2f} s "
          "(less sensitive to other processes' load than wall time)")
    print(f"  CPU time of the viewer process by then: "
          f"median {statistics.median(r['cpu_s_total'] for r in results):.2f} s; load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"tensorflow imported: {'YES: ' + ', '.join(tf) if tf else 'no'}")
    if a.json:
        print(json.dumps({k: statistics.median(r[k] for r in results)
                          for k in ("first_s", "wall_s", "figures_s", "cpu_s_drawn")}))
    return 1 if tf else 0


if __name__ == "__main__":
    sys.exit(main())
