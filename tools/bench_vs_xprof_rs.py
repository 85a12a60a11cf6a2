"""Whole-process speed and memory of ``traceinsight analyze LOGDIR`` against ``xprof-rs
get_overview LOGDIR`` (the Rust rewrite of XProf's backend), and traceinsight's start-up figures.

    .venv/bin/python tools/bench_vs_xprof_rs.py [--repeat 7] [--sizes 0.064,10,30,150]
    .venv/bin/python tools/bench_vs_xprof_rs.py --startup-only
    .venv/bin/python tools/bench_vs_xprof_rs.py --before OLD_TREE    (an older checkout, built)

xprof-rs is never a dependency of traceinsight: it is installed (``pip install xprof-rs``) into a
throw-away virtual environment of its own under ``.traceinsight/bench/`` (git-ignored; --env
picks another folder: one that already holds ``bin/xprof-rs``, the binary unpacked from its
wheel, is used as it is).

The traces: the smallest size is the committed host trace of a retracing tf.function (CPU,
tests/data/runs/retracing); the larger ones are made from the largest committed python-traced
trace (tests/data/runs, ~1.5 MB, ~70 k events per MB) by repeating each of its lines' events in
time (copy k shifted by k times the line's span, its step numbers by k times the trace's), as
many copies as come nearest the size asked for; made once, kept beside the environment. Each
is the only trace of its own logdir (``<logdir>/plugins/profile/<session>/<host>.xplane.pb``).

Each figure is a fresh process, cold (no result cache: traceinsight keeps none for a logdir,
xprof-rs has none in its command line), the two tools alternating (A B A B ...) after one
untimed pair, so that the machine's load hits both alike; medians of --repeat pairs, and the
median of the pairs' ratios. Peak memory is each process's own peak RSS (``os.wait4``'s
rusage of that child). The load average and the CPU time other processes took during the run
(``/proc/stat``) are printed beside the table, and each process's CPU time (user + system, from
the same rusage): on a shared machine, compare the ratios and the CPU times.

Decoding on both cores: one trace's events loaded (``analysis.events.load_files``, after a load of
the small trace that imports what a first load imports) in a fresh process with the decoder
limited to 1 thread, then 2, ... up to this machine's cores (--threads picks the counts, as
1,2,4,8,16 on a large machine), alternated, medians. Scaling beyond the cores
of the machine it runs on is not measured: run it on a larger machine for that.

Every goal of the speed work is printed at the end beside its figure ("Goals"). The start-up
goals are judged by each process's CPU time (user + system): on a shared machine its wall time
also holds the time other processes took the cores, which the CPU time does not; the wall times
are printed beside them.

Start-up figures (fresh processes, medians): ``python -c "import numpy"`` (the floor; again with
``OPENBLAS_NUM_THREADS=1``, the numpy import of the commands that only analyse, which start
OpenBLAS with one thread), ``analyze``
of the small trace, ``analyze`` and ``report --format md`` of a committed run folder (copied, its
analysis cache written by one untimed run first), and ``view``'s first screen
(``tools/bench_view.py``). Bytecode writing is allowed in the child processes, as in a normal
install (one untimed run of each command writes the .pyc files); under
``PYTHONDONTWRITEBYTECODE=1`` in a checkout that never wrote them, every process compiles the
modules again: the "no bytecode cache" row measures that (a copy of the package without its
bytecode).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".traceinsight" / "bench"        # git-ignored
ENTRY = "import sys; from traceinsight.cli import main; sys.exit(main())"
SMALL = ROOT / "tests" / "data" / "runs" / "retracing" / "function" / "host"
RUN = ROOT / "tests" / "data" / "runs" / "conv1d"
SESSION = "2026_01_01_00_00_00"
NEUTRAL = tempfile.gettempdir()


# ---- the xprof-rs environment ---------------------------------------------------------------

def xprof_rs_binary(env_dir: Path) -> Path:
    """xprof-rs's binary, installed into its own virtual environment at ``env_dir`` (made once)."""
    exe = env_dir / "bin" / "xprof-rs"
    if not exe.exists():
        print(f"installing xprof-rs into {env_dir} (a throw-away environment)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q",
                        "xprof-rs"], check=True)
    return exe


def xprof_rs_version(env_dir: Path) -> str:
    if not (env_dir / "bin" / "python").exists():     # a binary unpacked from its wheel
        return "(binary given)"
    out = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "show", "xprof-rs"],
                         capture_output=True, text=True)
    return next((ln.split(":", 1)[1].strip() for ln in out.stdout.splitlines()
                 if ln.startswith("Version:")), "?")


# ---- the traces -----------------------------------------------------------------------------

def python_traced_source() -> Path:
    runs = ROOT / "tests" / "data" / "runs"
    found = [p for p in runs.rglob("*.xplane.pb") if "/python/" in p.as_posix()]
    return max(found, key=lambda p: p.stat().st_size)


def replicate(src: Path, copies: int, out: Path) -> None:
    """``src`` with each line's events repeated ``copies`` times in time: copy k shifted by k
    times the line's span (plus a microsecond), its ``step_num`` stats by k times the trace's
    largest step number + 1, so the copies are new steps of the same thread."""
    sys.path.insert(0, str(ROOT))
    from traceinsight.xplane import XSpace
    space = XSpace.FromString(src.read_bytes())
    top_step = 0
    for plane in space.planes:
        sid = {k for k, m in plane.stat_metadata.items() if m.name == "step_num"}
        for line in plane.lines:
            for ev in line.events:
                for st in ev.stats:
                    if st.metadata_id in sid:
                        top_step = max(top_step, st.int64_value or st.uint64_value)
    for plane in space.planes:
        sid = {k for k, m in plane.stat_metadata.items() if m.name == "step_num"}
        for line in plane.lines:
            if not len(line.events):
                continue
            span = max(e.offset_ps + e.duration_ps for e in line.events) + 1_000_000
            base = list(line.events)
            raw = [e.SerializeToString() for e in base]
            for k in range(1, copies):
                for r in raw:
                    e = line.events.add()
                    e.ParseFromString(r)
                    e.offset_ps += k * span
                    for st in e.stats:
                        if st.metadata_id in sid:
                            if st.HasField("int64_value"):
                                st.int64_value += k * (top_step + 1)
                            elif st.HasField("uint64_value"):
                                st.uint64_value += k * (top_step + 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(space.SerializeToString())
    tmp.replace(out)


def logdir_of(size_mb: float, work: Path) -> Path:
    """A logdir holding one trace of about ``size_mb`` MB (made once under ``work``)."""
    if size_mb < 1:
        src = min(SMALL.rglob("*.xplane.pb"), key=lambda p: p.stat().st_size)
        logdir = work / "traces" / "small"
        trace = logdir / "plugins" / "profile" / SESSION / "localhost.xplane.pb"
        if not trace.exists():
            trace.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, trace)
        return logdir
    src = python_traced_source()
    copies = max(1, round(size_mb * 1e6 / src.stat().st_size))
    logdir = work / "traces" / f"python-traced-x{copies}"
    trace = logdir / "plugins" / "profile" / SESSION / "localhost.xplane.pb"
    if not trace.exists():
        print(f"making {trace.relative_to(work)} ({copies} copies of "
              f"{src.relative_to(ROOT)})", flush=True)
        # in a process of its own: a child's peak RSS (``os.wait4``) starts from its parent's
        # at the fork, so a benchmark that had grown to the large trace's gigabyte here would
        # report that peak for every process it measures after
        subprocess.run([sys.executable, __file__, "--replicate", str(src), str(copies), str(trace)],
                       check=True)
    return logdir


def trace_size(logdir: Path) -> int:
    return sum(p.stat().st_size for p in logdir.rglob("*.xplane.pb"))


# ---- measuring ------------------------------------------------------------------------------

def child_env(tree: Path = ROOT) -> dict[str, str]:
    """The environment of a measured process: traceinsight imported from ``tree`` (its C
    extension built in place)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # as installed: modules compiled once
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    return env


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MiB, CPU seconds: user + system) of one fresh process, output
    discarded."""
    t0 = time.perf_counter()
    # in a folder of its own: ``python -c`` puts the working folder first on sys.path, where a
    # checkout's traceinsight would win over the one PYTHONPATH names
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                         cwd=NEUTRAL)
    assert p.stderr is not None
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}: {err.decode()[-800:]}")
    return dt, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


class Load:
    """The machine's load while measuring: load average, and the CPU time of the whole machine
    (``/proc/stat``) minus this benchmark's own children's."""

    def __init__(self) -> None:
        self.t0, self.cpu0, self.own0 = time.monotonic(), self._busy(), self._own()

    @staticmethod
    def _busy() -> float:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                vals = [int(v) for v in f.readline().split()[1:]]
            return (sum(vals) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError):
            return math.nan

    @staticmethod
    def _own() -> float:
        ru = os.times()
        return ru.children_user + ru.children_system + ru.user + ru.system

    def line(self) -> str:
        wall = time.monotonic() - self.t0
        other = (self._busy() - self.cpu0) - (self._own() - self.own0)
        cores = os.cpu_count() or 1
        return (f"load average {os.getloadavg()[0]:.1f} · other processes busy "
                f"{other / wall:.2f} of {cores} cores over {wall:.0f} s")


def interleaved(commands: list[tuple[list[str], dict[str, str]]], repeat: int
                ) -> list[list[tuple[float, float, float]]]:
    """Each command ``repeat`` times, in turn (A B A B ...), after one untimed round (.pyc
    files, file cache)."""
    for argv, env in commands:
        run_once(argv, env)
    rows: list[list[tuple[float, float, float]]] = [[] for _ in commands]
    for _ in range(repeat):
        for row, (argv, env) in zip(rows, commands):
            row.append(run_once(argv, env))
    return rows


def median(rows: list[tuple[float, float, float]], i: int) -> float:
    return statistics.median(r[i] for r in rows)


# (goal, figure measured, goal's bound, met: True / False / None when not measured)
GOALS: list[tuple[str, str, str, bool | None]] = []


def goal(label: str, figure: str, bound: str, met: bool | None) -> None:
    GOALS.append((label, figure, bound, met))


def print_goals() -> None:
    print()
    print("Goals")
    print()
    print("| goal | measured | goal | met |")
    print("|---|---|---|---|")
    for label, figure, bound, met in GOALS:
        print(f"| {label} | {figure} | {bound} | "
              f"{'—' if met is None else 'yes' if met else '**no**'} |")


def versus(args, env: dict[str, str]) -> None:
    exe = xprof_rs_binary(args.env)
    print(f"xprof-rs {xprof_rs_version(args.env)} · python {sys.version.split()[0]} · "
          f"{os.cpu_count()} CPUs · {args.repeat} pairs per trace, interleaved, medians")
    logdirs = [logdir_of(float(s), args.env.parent) for s in args.sizes.split(",")]
    print()
    before = f" before ({args.before.name}) | before / ours |" if args.before else ""
    print("| trace | ours | xprof-rs | ours / xprof-rs | peak memory, ours / xprof-rs | "
          f"ours, peak / trace size | CPU time, ours / xprof-rs |{before}")
    print("|---|---|---|---|---|---|---|" + ("---|---|" if args.before else ""))
    load = Load()
    marginal: list[tuple[float, float, float]] = []
    peaks: list[tuple[float, float, float]] = []      # (MB, peak MiB ours, xprof-rs)
    cpu_marginal: list[tuple[float, float, float]] = []    # (MB, CPU s ours, xprof-rs)
    for logdir in logdirs:
        size = trace_size(logdir)
        analyze = [sys.executable, "-c", ENTRY, "analyze", str(logdir)]
        commands = [(analyze, env), ([str(exe), "get_overview", str(logdir)], env)]
        if args.before:
            commands.append((analyze, child_env(args.before)))
        ours, theirs, *old = interleaved(commands, args.repeat)
        ratio = statistics.median(o[0] / t[0] for o, t in zip(ours, theirs))
        extra = ""
        if old:
            extra = (f" {median(old[0], 0):.3f} s, CPU {median(old[0], 2):.2f} s, peak "
                     f"{median(old[0], 1):.0f} MB | "
                     f"{statistics.median(b[0] / o[0] for o, b in zip(ours, old[0])):.2f}× |")
        label = f"{size / 1e3:.0f} KB" if size < 1e6 else f"{size / 1e6:.0f} MB"
        kind = "retracing tf.function, CPU" if size < 1e6 else "python-traced"
        print(f"| {label} ({kind}) | {median(ours, 0):.3f} s | {median(theirs, 0):.3f} s | "
              f"{ratio:.2f}× | {median(ours, 1):.0f} / {median(theirs, 1):.0f} MB | "
              f"{f'{median(ours, 1) * 2**20 / size:.1f}×' if size >= 1e6 else '—'} | "
              f"{median(ours, 2):.2f} / {median(theirs, 2):.2f} s |{extra}", flush=True)
        marginal.append((size / 1e6, median(ours, 0), median(theirs, 0)))
        cpu_marginal.append((size / 1e6, median(ours, 2), median(theirs, 2)))
        peaks.append((size / 1e6, median(ours, 1), median(theirs, 1)))
        if size >= 5e6:
            goal(f"whole process, ours / xprof-rs, {label}", f"{ratio:.2f}×", "≤ 1.0×", ratio <= 1)
            mem = median(ours, 1) * 2**20 / size
            goal(f"peak memory / trace size, {label}", f"{mem:.1f}× ({median(ours, 1):.0f} MB)",
                 "≤ 3×", mem <= 3)
    print()
    print(load.line())
    big = [m for m in marginal if m[0] >= 5]
    if len(big) >= 2:
        (s0, o0, t0), (s1, o1, t1) = big[0], big[-1]
        ours_ms, theirs_ms = (o1 - o0) / (s1 - s0) * 1e3, (t1 - t0) / (s1 - s0) * 1e3
        print(f"marginal cost {s0:.0f} -> {s1:.0f} MB: ours {ours_ms:.1f} "
              f"ms/MB, xprof-rs {theirs_ms:.1f} ms/MB")
        (_, c0, d0), (_, c1, d1) = [c for c in cpu_marginal if c[0] >= 5][0], cpu_marginal[-1]
        print(f"marginal CPU time {s0:.0f} -> {s1:.0f} MB: ours {(c1 - c0) / (s1 - s0) * 1e3:.1f} "
              f"ms/MB, xprof-rs {(d1 - d0) / (s1 - s0) * 1e3:.1f} ms/MB (all cores together)")
        (_, m0, x0), (_, m1, x1) = [p for p in peaks if p[0] >= 5][0], peaks[-1]
        per = (m1 - m0) * 2**20 / ((s1 - s0) * 1e6)
        print(f"marginal peak memory {s0:.0f} -> {s1:.0f} MB: ours {per:.1f} bytes per byte of "
              f"trace, xprof-rs {(x1 - x0) * 2**20 / ((s1 - s0) * 1e6):.1f}")
        goal(f"marginal peak memory {s0:.0f} -> {s1:.0f} MB (bytes per byte of trace)",
             f"{per:.1f}×", "≤ 3×", per <= 3)
        goal(f"marginal cost {s0:.0f} -> {s1:.0f} MB, {os.cpu_count()} cores",
             f"{ours_ms:.1f} ms/MB (xprof-rs {theirs_ms:.1f})", "≤ 5 ms/MB and ≤ xprof-rs's",
             ours_ms <= 5 and ours_ms <= theirs_ms)


SCALING = """
import sys, time
from traceinsight.analysis import events
trace, threads, warm = sys.argv[1], int(sys.argv[2]), sys.argv[3]
events.load_files([warm])      # the modules a first load imports, before the clock starts
with events.decode_threads(threads):
    t0 = time.perf_counter()
    table = events.load_files([trace])
    print(time.perf_counter() - t0, len(table))
"""


# the control: the same work per thread (hashing, which releases the GIL) by 1 or n threads; on a
# machine that gives this process n free cores, n threads take as long as one
CONTROL = """
import hashlib, os, sys, threading, time
n = int(sys.argv[1])
data = os.urandom(32 << 20)
threads = [threading.Thread(target=lambda: hashlib.sha256(data).digest()) for _ in range(n)]
t0 = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(time.perf_counter() - t0)
"""


def scaling(args, env: dict[str, str]) -> None:
    """One trace's events decoded by 1, 2, ... threads (this machine's cores), fresh processes
    alternated, medians: the decoder releases the GIL and a large line is cut into runs of whole
    events that threads decode at once (analysis.events)."""
    logdir = logdir_of(max(float(s) for s in args.sizes.split(",")), args.env.parent)
    trace = next(logdir.rglob("*.xplane.pb"))
    warm = next(SMALL.rglob("*.xplane.pb"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    counts = (sorted({1, *(int(n) for n in args.threads.split(","))}) if args.threads
              else list(range(1, cores + 1)))
    times: dict[int, list[float]] = {n: [] for n in counts}
    before: dict[int, list[float]] = {n: [] for n in counts}
    control: dict[int, list[float]] = {n: [] for n in counts}
    load = Load()
    events = "0"
    for rnd in range(args.repeat + 1):            # the first round untimed (file cache)
        for n in counts:
            out = subprocess.run([sys.executable, "-c", SCALING, str(trace), str(n), str(warm)], env=env,
                                 cwd=NEUTRAL, capture_output=True, text=True, check=True)
            dt, events = out.stdout.split()
            if args.before:
                old = subprocess.run([sys.executable, "-c", SCALING, str(trace), str(n), str(warm)],
                                     env=child_env(args.before), cwd=NEUTRAL,
                                     capture_output=True, text=True, check=True)
                if rnd:
                    before[n].append(float(old.stdout.split()[0]))
            ctl = subprocess.run([sys.executable, "-c", CONTROL, str(n)], env=env, cwd=NEUTRAL,
                                 capture_output=True, text=True, check=True)
            if rnd:
                times[n].append(float(dt))
                control[n].append(float(ctl.stdout))
    print()
    print(f"one trace's events loaded ({trace_size(logdir) / 1e6:.0f} MB, {int(events) / 1e6:.1f} M "
          f"events; analysis.events.load_files), by the decoder's thread count, fresh processes "
          f"alternated, median of {args.repeat}:")
    one, ctl1 = statistics.median(times[1]), statistics.median(control[1])
    for n in counts:
        t = statistics.median(times[n])
        # the control does n times the work with n threads: its speed-up is n * t1 / tn
        ctl = n * ctl1 / statistics.median(control[n])
        was = ""
        if args.before:
            b = statistics.median(before[n])
            was = (f"   before: {b:.3f} s, speed-up {statistics.median(before[1]) / b:.2f}×, "
                   f"before / now {b / t:.2f}×")
        print(f"    {n} thread{'s' if n > 1 else ' '}: {t:.3f} s   speed-up {one / t:.2f}×   "
              f"(control, hashing on {n} thread{'s' if n > 1 else ''}: {ctl:.2f}×){was}")
    print(f"    the control shows how many cores the machine gave this process meanwhile ({cores} "
          f"usable here); scaling beyond them (the goal: near-linear to 8) is not measured here")
    print(load.line())
    if cores >= 2:
        up = one / statistics.median(times[2])
        ctl = 2 * ctl1 / statistics.median(control[2])
        goal("one trace decoded on both cores: speed-up 1 -> 2 threads",
             f"{up:.2f}× (control {ctl:.2f}×)", "near-linear (2×)", up >= 1.6)
    if 8 in counts and cores >= 8:
        up = one / statistics.median(times[8])
        ctl = 8 * ctl1 / statistics.median(control[8])
        goal("one trace decoded on 8 cores: speed-up 1 -> 8 threads",
             f"{up:.2f}× (control {ctl:.2f}×)", "near-linear (8×)", up >= 6.4)
    else:
        goal("speed-up to 8 cores", "not measured (no machine with 8 cores here)", "near-linear",
             None)


def startup(args, env: dict[str, str]) -> None:
    small = logdir_of(0.064, args.env.parent)
    print()
    print(f"start-up, fresh processes, median of {args.repeat} (one untimed run first; bytecode "
          "written as a normal install does; the 'no bytecode cache' row compiles every module, "
          "as PYTHONDONTWRITEBYTECODE=1 in a fresh checkout does)")
    load = Load()
    with tempfile.TemporaryDirectory() as tmp:
        # one copy of the run per tree: each keeps its own analysis cache (a cache written by
        # other code is refused, so one shared copy would be analysed again at every run)
        run = Path(tmp) / "now" / RUN.name
        shutil.copytree(RUN, run, ignore=shutil.ignore_patterns(".traceinsight"))
        run_before = Path(tmp) / "before" / RUN.name
        shutil.copytree(RUN, run_before, ignore=shutil.ignore_patterns(".traceinsight"))
        numpy_floor = 'python -c "import numpy" (the floor)'
        numpy_one = 'python -c "import numpy", one OpenBLAS thread'
        cases = [
            (numpy_floor, [sys.executable, "-c", "import numpy"], None),
            # the analysing commands start OpenBLAS with one thread (cli.one_blas_thread): the
            # numpy import they pay
            (numpy_one, [sys.executable, "-c", "import numpy"], None),
            (f"analyze, {trace_size(small) / 1e3:.0f} KB trace",
             [sys.executable, "-c", ENTRY, "analyze", str(small)], 0.12),
            (f"analyze, {trace_size(small) / 1e3:.0f} KB trace, no bytecode cache",
             [sys.executable, "-c", ENTRY, "analyze", str(small)], None),
            (f"analyze, run folder {RUN.name} (cache warm)",
             [sys.executable, "-c", ENTRY, "analyze", str(run)], 0.15),
            (f"report --format md, run folder {RUN.name} (cache warm)",
             [sys.executable, "-c", ENTRY, "report", str(run), "--format", "md", "-o",
              str(Path(tmp) / "r.md")], 0.25),
        ]
        head = f"{'command':<52} {'median s':>9} {'best s':>8} {'CPU s':>6} {'goal s':>7}"
        print(head + (f" {'before s':>9} {'CPU s':>6} {'before / now':>13}" if args.before
                      else ""))
        # traceinsight's modules compiled again in every process: a copy of the package without
        # its bytecode, under PYTHONDONTWRITEBYTECODE=1 (a checkout that never wrote it; the
        # installed packages keep theirs)
        def uncached(tree: Path, name: str) -> dict[str, str]:
            copy = Path(tmp) / "src" / name
            shutil.copytree(tree / "traceinsight", copy / "traceinsight",
                            ignore=shutil.ignore_patterns("__pycache__"))
            return dict(child_env(copy), PYTHONDONTWRITEBYTECODE="1")
        cpu: dict[str, float] = {}
        for label, argv, bound in cases:
            cenv, benv = env, child_env(args.before) if args.before else {}
            if "no bytecode" in label:
                cenv = uncached(ROOT, "now")
                benv = uncached(args.before, "before") if args.before else {}
            if label == numpy_one:
                cenv = dict(cenv, OPENBLAS_NUM_THREADS="1")
                benv = dict(benv, OPENBLAS_NUM_THREADS="1") if args.before else {}
            argv_before = [str(run_before) if a == str(run) else a for a in argv]
            commands = [(argv, cenv)] + ([(argv_before, benv)] if args.before else [])
            now, *old = interleaved(commands, args.repeat)   # the untimed round writes the cache
            times = sorted(r[0] for r in now)
            extra = ""
            if old:
                extra = (f" {median(old[0], 0):>9.3f} {median(old[0], 2):>6.3f} "
                         f"{statistics.median(b[0] / a[0] for a, b in zip(now, old[0])):>12.2f}×")
            print(f"{label:<52} {statistics.median(times):>9.3f} {times[0]:>8.3f} "
                  f"{median(now, 2):>6.3f} {'' if bound is None else f'{bound:.2f}':>7}{extra}",
                  flush=True)
            cpu[label] = median(now, 2)
            if bound is not None:
                goal(label, f"{median(now, 2):.3f} s CPU (wall {statistics.median(times):.3f} s)",
                     f"≤ {bound:.2f} s", median(now, 2) <= bound)
    labels = list(cpu)
    floor, one, cached, uncached = (cpu[labels[i]] for i in range(4))
    print(f"PYTHONDONTWRITEBYTECODE=1 (no bytecode cache: every traceinsight module compiled "
          f"again) adds {uncached - cached:.3f} s of CPU to analyze")
    # judged against the numpy import analyze pays (one OpenBLAS thread): the plain import's CPU
    # time also holds OpenBLAS's other threads starting, which analyze never starts
    goal("analyze of a small trace, above the numpy floor", f"{cached - one:.3f} s CPU above "
         f"numpy with one OpenBLAS thread, as analyze imports it ({cached - floor:.3f} s above "
         "the plain import's CPU, OpenBLAS's threads included)", "≤ 0.1 s", cached - one <= 0.1)
    goal("PYTHONDONTWRITEBYTECODE=1 adds (compiling)", f"{uncached - cached:.3f} s CPU",
         "~0.09 s (said in the benchmark)", None)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "bench_view.py"), str(RUN),
                          "--repeat", str(max(3, args.repeat // 2)), "--json"],
                         capture_output=True, text=True, env=env)
    print("view's first screen (tools/bench_view.py, goal 0.5 s):")
    lines = (out.stdout + out.stderr).strip().splitlines()
    print("    " + "\n    ".join(lines[:-1]))
    try:
        view = json.loads(lines[-1])
        goal("view's first screen", f"{view['first_s']:.2f} s wall (overview "
             f"{view['wall_s']:.2f} s, CPU {view['cpu_s_drawn']:.2f} s by then)", "≤ 0.5 s",
             view["first_s"] <= 0.5)
    except (IndexError, ValueError, KeyError):
        goal("view's first screen", "not measured (tools/bench_view.py failed)", "≤ 0.5 s", None)
    print(load.line())


def main() -> None:
    if sys.argv[1:2] == ["--replicate"]:        # logdir_of's child
        replicate(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="pairs per trace (medians)")
    ap.add_argument("--sizes", default="0.064,10,30,150", help="trace sizes, MB")
    ap.add_argument("--env", type=Path, default=WORK / "xprof-rs-env",
                    help="xprof-rs's throw-away environment (made if missing); the generated "
                         "traces go beside it")
    ap.add_argument("--before", type=Path, default=None,
                    help="another source tree of traceinsight (an older commit, its C extension "
                         "built in place): its analyze joins the interleaved rounds, in two more "
                         "columns, and its decoder joins the scaling rounds")
    ap.add_argument("--startup-only", action="store_true")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--no-scaling", action="store_true",
                    help="skip the decoder's 1 -> N threads scaling")
    ap.add_argument("--threads", default=None, metavar="N,N,...",
                    help="the decoder's thread counts to time (default 1, 2, ... every usable "
                         "core); 1 is always timed: the speed-ups are against it")
    args = ap.parse_args()
    args.before = args.before.resolve() if args.before else None   # children run elsewhere
    env = child_env()
    if not args.startup_only:
        versus(args, env)
        if not args.no_scaling:
            scaling(args, env)
    if not args.no_startup:
        startup(args, env)
    print_goals()


if __name__ == "__main__":
    main()
