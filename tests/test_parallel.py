"""Many hosts in parallel: a logdir of several hosts analysed in worker processes, and on a Dask
LocalCluster, gives exactly the results of one host after another."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

import traceinsight
from traceinsight.analysis import parallel
from traceinsight.errors import TraceinsightError

RUN = Path(__file__).parent / "data" / "runs" / "conv1d"
FRAMES = ("steps", "breakdown", "ops", "retraces", "hotspots", "other")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """A job's logdir: one session, one host per committed trace (4 modes x host pass), and one
    damaged host file."""
    root = tmp_path_factory.mktemp("job")
    session = root / "plugins" / "profile" / "2026_01_01_00_00_00"
    session.mkdir(parents=True)
    traces = sorted(RUN.glob("*/host/plugins/profile/*/*.xplane.pb"))
    assert len(traces) >= 4
    for i, t in enumerate(traces):
        shutil.copy(t, session / f"worker{i}.xplane.pb")
    (session / "worker9.xplane.pb").write_bytes(b"\x0a\xff\xff damaged")
    return root


def assert_same_mode(a, b) -> None:
    assert (a.name, a.status, a.error, a.step_rule, a.notes, a.trace_paths) == \
        (b.name, b.status, b.error, b.step_rule, b.notes, b.trace_paths)
    for f in FRAMES:
        fa, fb = getattr(a, f), getattr(b, f)
        if fa.empty and fb.empty:   # the JSON the workers send keeps an empty frame's columns only
            assert list(fa.columns) == list(fb.columns), f
            continue
        # equal to the last bits but for numpy's summation order, which memory alignment moves
        pd.testing.assert_frame_equal(getattr(a, f), getattr(b, f), check_exact=False,
                                      rtol=1e-12, atol=0)


def host_groups(logdir) -> dict:
    from traceinsight.analysis.sessions import foreign_modes
    from traceinsight.runfolder import find_xplanes
    return foreign_modes(logdir, find_xplanes(logdir))


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_parallel_equals_serial(logdir, monkeypatch, start):
    monkeypatch.setenv(parallel.START_ENV, start)
    groups = host_groups(logdir)
    assert len(groups) == 5
    serial = parallel.analyze_modes(groups, jobs=1)
    par = parallel.analyze_modes(groups, jobs=2)
    assert list(par) == list(serial) == list(groups)       # same order
    for name in groups:
        assert_same_mode(par[name], serial[name])
    assert sum(m.ok for m in par.values()) == 4
    assert par[next(k for k in groups if k.endswith("worker9"))].status == "failed"
    # each host's bootstrap medians came back from the process that analysed it (not resampled
    # here), equal to resampling its step samples afresh
    from traceinsight.stats import bootstrap_medians
    for name, m in par.items():
        if m.ok:
            assert m.known_boot_medians is not None, name
            assert m.boot_medians.tolist() == bootstrap_medians(m.step_samples_ms).tolist()


def test_replace_keeps_bootstrap_medians_of_the_same_samples(logdir):
    m = next(m for m in parallel.analyze_modes(host_groups(logdir), jobs=1).values() if m.ok)
    boot = m.boot_medians
    assert m.replace(notes=("a note",)).boot is boot
    assert m.replace(timing=None).boot is None   # other samples: resampled when read


def test_a_warm_cache_gives_back_the_bootstrap_medians_of_the_same_samples_only(tmp_path):
    """The analysis cache keeps each mode's bootstrap medians with a digest of the samples they
    were drawn from; a later load takes them back (no resampling) only where the samples read
    now (the timings, read from timings.json each load) are the same; anything else in their
    place is resampled, never shown."""
    import json

    from traceinsight.resample import bootstrap_medians as resample
    path = run_copy(tmp_path, "conv1d")
    first = traceinsight.load(path)                    # analysed, the cache written
    again = traceinsight.load(path)
    for name, m in again.modes.items():
        if not m.ok:
            continue
        assert m.boot is not None, name      # given by the cache, not resampled
        samples, strata = m._boot_inputs()
        assert m.boot_medians.tolist() == resample(samples, strata=strata).tolist()
        assert m.boot_medians.tolist() == first.modes[name].boot_medians.tolist()
    # other samples (a timings.json changed since): the kept medians are not theirs
    t = path / "eager" / "timings.json"
    data = json.loads(t.read_text())
    data["steps_s"] = [v * 2 for v in data["steps_s"]]
    for r in data.get("rounds") or []:
        r["steps_s"] = [v * 2 for v in r["steps_s"]]
    t.write_text(json.dumps(data))
    changed = traceinsight.load(path).modes["eager"]
    assert changed.boot is None
    samples, strata = changed._boot_inputs()
    assert changed.boot_medians.tolist() == resample(samples, strata=strata).tolist()
    # a damaged entry (the right digest, wrong values) is resampled
    damaged = 0
    for f in (path / ".traceinsight").rglob("*.json"):
        entry = json.loads(f.read_text())
        if isinstance(entry, dict) and isinstance(entry.get("boot"), dict):
            entry["boot"]["medians"] = ["x"] * len(entry["boot"]["medians"])
            f.write_text(json.dumps(entry))
            damaged += 1
    assert damaged >= 3
    for m in traceinsight.load(path).modes.values():
        assert not m.ok or m.boot is None


def test_load_uses_the_pool(logdir, monkeypatch):
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    serial = traceinsight.load(logdir)
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    par = traceinsight.load(logdir)
    assert list(par.modes) == list(serial.modes)
    for name in serial.modes:
        assert_same_mode(par.modes[name], serial.modes[name])
    monkeypatch.setenv(parallel.JOBS_ENV, "many")
    with pytest.raises(TraceinsightError, match="not a number"):
        traceinsight.load(logdir)


def test_small_logdirs_stay_serial(logdir, monkeypatch):
    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    groups = {"a": [logdir], "b": [logdir]}
    assert parallel._jobs(groups, None) == 1            # a few MB: a pool would cost more
    assert parallel._jobs(groups, 8) == 2               # never more processes than hosts
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    assert parallel._jobs(groups, None) == min(2, parallel.usable_cores())


def test_dask_local_cluster_equals_serial(logdir, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    serial = traceinsight.load(logdir.resolve())
    from traceinsight.analysis import hosts
    compared = []
    compare = hosts.compare_sessions
    monkeypatch.setattr(hosts, "compare_sessions",
                        lambda modes, session: compared.append(1) or compare(modes, session))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run = parallel.analyze_with_dask(logdir, client)
    # the hosts compared once, for the notes, and the Run built with that comparison
    assert len(run.host_groups()) == 1 and compared == [1]
    assert list(run.modes) == list(serial.modes)
    for name in serial.modes:
        assert_same_mode(run.modes[name], serial.modes[name])


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_unguarded_script_can_load_in_parallel(logdir, tmp_path, start):
    """A user's script calling traceinsight.load at top level (no ``if __name__ == "__main__"``)
    must not be re-run by the workers (what multiprocessing's spawn would do)."""
    import subprocess
    import sys
    script = tmp_path / "user.py"
    script.write_text("import traceinsight\n"
                      f"run = traceinsight.load({str(logdir)!r})\n"
                      "print(sum(m.ok for m in run.modes.values()))\n")
    env = dict(os.environ, **{parallel.JOBS_ENV: "2", parallel.START_ENV: start})
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "4"


def test_fork_where_safe(monkeypatch):
    """Workers are forked only from the main thread of a process without other Python threads
    and without TensorFlow & co. loaded; else spawned."""
    import sys
    import threading
    monkeypatch.delenv(parallel.START_ENV, raising=False)
    if threading.active_count() == 1:      # (Dask's test leaves a thread of its own behind)
        assert parallel.can_fork() == sys.platform.startswith("linux")
    seen = []
    t = threading.Thread(target=lambda: seen.append(parallel.can_fork()))
    t.start()
    t.join()
    assert seen == [False]
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not parallel.can_fork()       # another thread is running
    finally:
        stop.set()
        t.join()
    monkeypatch.setitem(sys.modules, "tensorflow", sys)
    assert not parallel.can_fork()
    monkeypatch.setenv(parallel.START_ENV, "spawn")
    monkeypatch.delitem(sys.modules, "tensorflow")
    assert not parallel.can_fork()
    monkeypatch.setenv(parallel.START_ENV, "vfork")
    with pytest.raises(TraceinsightError, match="expected fork or spawn"):
        parallel.can_fork()


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_this_process_takes_jobs_too(logdir, monkeypatch, start):
    """jobs=2 is this process and one worker, both pulling hosts from the same list: each
    analyses some, none twice."""
    monkeypatch.setenv(parallel.START_ENV, start)
    groups = host_groups(logdir)
    here, sent = [], []
    analyze, send = parallel._analyze, parallel._send
    me = os.getpid()

    def analyze_here(name, files):
        if os.getpid() == me:
            here.append(name)
        return analyze(name, files)

    def send_job(f, obj, **kw):
        if os.getpid() == me:
            sent.append(obj[0])
        send(f, obj, **kw)

    monkeypatch.setattr(parallel, "_analyze", analyze_here)
    monkeypatch.setattr(parallel, "_send", send_job)
    started = []
    start_workers = parallel._start_workers
    monkeypatch.setattr(parallel, "_start_workers", lambda n: started.extend(start_workers(n)) or started)
    par = parallel.analyze_modes(groups, jobs=2)
    assert [type(w).__name__ for w in started] == ["_Forked" if start == "fork" else "_Spawned"]
    assert here and sent and sorted(here + sent) == sorted(groups)
    # the largest host goes to the worker, the next to this process
    by_size = sorted(groups, key=lambda k: -sum(f.stat().st_size for f in groups[k]))
    assert sent[0] == by_size[0] and here[0] == by_size[1]
    serial = parallel.analyze_modes(groups, jobs=1)
    for name in groups:
        assert_same_mode(par[name], serial[name])


def test_a_forked_worker_that_dies_is_one_error_line(logdir, monkeypatch):
    monkeypatch.setenv(parallel.START_ENV, "fork")
    groups = host_groups(logdir)
    me = os.getpid()
    analyze = parallel._analyze

    def die_in_worker(name, files):
        if os.getpid() != me:
            os.kill(os.getpid(), signal.SIGKILL)      # as the out-of-memory killer does
        return analyze(name, files)

    monkeypatch.setattr(parallel, "_analyze", die_in_worker)
    with pytest.raises(TraceinsightError) as e:
        parallel.analyze_modes(groups, jobs=2)
    msg = str(e.value)
    assert "\n" not in msg
    assert re.fullmatch(r"the analysis process of \S+ died \(killed by signal SIGKILL; out of "
                        r"memory\?\)", msg), msg


def test_a_spawned_worker_that_dies_is_one_error_line(logdir, monkeypatch):
    import sys
    monkeypatch.setenv(parallel.START_ENV, "spawn")
    monkeypatch.setattr(parallel, "_SPAWN_COMMAND", [sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(TraceinsightError,
                       match=r"^the analysis process of \S+ died \(exit status 3\)$"):
        parallel.analyze_modes(host_groups(logdir), jobs=2)


def test_no_process_to_spare_this_one_does_it_all(logdir, monkeypatch):
    monkeypatch.setenv(parallel.START_ENV, "fork")

    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    groups = host_groups(logdir)
    par = parallel.analyze_modes(groups, jobs=2)
    serial = parallel.analyze_modes(groups, jobs=1)
    assert list(par) == list(serial)
    for name in groups:
        assert_same_mode(par[name], serial[name])


def test_an_unreadable_result_is_one_line(logdir, monkeypatch):
    monkeypatch.setenv(parallel.START_ENV, "fork")
    # (parallel imports the cache where a job needs it)
    from traceinsight.analysis import cache
    monkeypatch.setattr(cache, "to_dict", lambda mode, key: {"not": "a mode"})
    with pytest.raises(TraceinsightError, match=r"^analysing \S+ failed: the analysis process sent "
                                                r"an unreadable result$"):
        parallel.analyze_modes(host_groups(logdir), jobs=2)


def test_an_error_in_a_worker_is_one_line(logdir, monkeypatch):
    monkeypatch.setenv(parallel.START_ENV, "fork")
    me = os.getpid()
    analyze = parallel._analyze

    def fail_in_worker(name, files):
        if os.getpid() != me:
            raise MemoryError("no more\nmemory")
        return analyze(name, files)

    monkeypatch.setattr(parallel, "_analyze", fail_in_worker)
    with pytest.raises(TraceinsightError, match=r"^analysing \S+ failed: MemoryError: no more$"):
        parallel.analyze_modes(host_groups(logdir), jobs=2)


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_interrupted_here_ends_the_workers(logdir, monkeypatch, start):
    """Ctrl-C while this process analyses: the exception goes on, the workers are killed and
    reaped at once (no wait for their jobs)."""
    monkeypatch.setenv(parallel.START_ENV, start)
    me = os.getpid()
    analyze = parallel._analyze

    def slow_worker_interrupted_here(name, files):
        if os.getpid() != me:
            time.sleep(60)
        raise KeyboardInterrupt

    monkeypatch.setattr(parallel, "_analyze", slow_worker_interrupted_here)
    started = []
    start_workers = parallel._start_workers
    monkeypatch.setattr(parallel, "_start_workers", lambda n: started.extend(start_workers(n)) or started)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        parallel.analyze_modes(host_groups(logdir), jobs=2)
    assert time.monotonic() - t0 < 30
    assert len(started) == 1 and started[0].wait(0) is not None       # ended and reaped
    del analyze


def test_fork_warning_of_python_3_12_is_not_shown(monkeypatch):
    """Python >= 3.12 warns on every fork of a process with more than one OS thread (numpy's
    BLAS pool is one); can_fork() has ruled out Python threads, so that warning is not shown."""
    import warnings
    real_fork = os.fork

    def fork_warning():
        warnings.warn(f"This process (pid={os.getpid()}) is multi-threaded, use of fork() may "
                      "lead to deadlocks in the child.", DeprecationWarning, stacklevel=2)
        return real_fork()

    monkeypatch.setattr(os, "fork", fork_warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = parallel._Forked([])
        w.close()
    assert w.wait(0) == 0


def test_kept_memory_keeps_large_arrays_in_the_heap():
    """Inside kept_memory() a 64 MB array comes from malloc's heap (no mmap of its own, so no
    page faults when the next one reuses it); afterwards glibc maps such arrays again."""
    import ctypes

    import numpy as np

    from traceinsight.analysis import malloc
    libc = malloc._glibc()
    if libc is None or not hasattr(libc, "mallinfo2"):
        pytest.skip("glibc >= 2.33 only")

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                    "usmblks", "fsmblks", "uordblks", "fordblks",
                                                    "keepcost")]

    libc.mallinfo2.restype = Mallinfo2

    def mapped_for(nbytes: int) -> int:
        before = libc.mallinfo2().hblkhd
        a = np.empty(nbytes, dtype=np.uint8)
        grown = libc.mallinfo2().hblkhd - before
        del a
        return grown

    size = 64 << 20
    allowed = malloc._allowed
    malloc.allow()
    try:
        with malloc.kept_memory():
            with malloc.kept_memory():          # nested: still kept inside
                assert mapped_for(size) < size
            assert mapped_for(size) < size
        assert mapped_for(size) >= size
    finally:
        malloc.allow(allowed)


def test_kept_memory_turns_numpys_huge_pages_off_and_back():
    """Inside kept_memory() numpy asks for no huge pages (the trace's buffer asks for its own);
    the previous setting comes back after; a process the tool does not own keeps its own."""
    from traceinsight.analysis import malloc
    if malloc._glibc() is None or malloc.numpy_hugepages(True) is None:
        pytest.skip("glibc and numpy's huge-page switch only")
    allowed = malloc._allowed
    try:
        malloc.allow(False)
        with malloc.kept_memory():
            assert malloc.numpy_hugepages(True) is True     # left alone
        malloc.allow()
        with malloc.kept_memory():
            with malloc.kept_memory():
                assert malloc.numpy_hugepages(False) is False
            assert malloc.numpy_hugepages(False) is False
        assert malloc.numpy_hugepages(True) is True         # given back
    finally:
        malloc.allow(allowed)
        malloc.numpy_hugepages(True)


def test_the_library_leaves_the_callers_malloc_alone(monkeypatch, tmp_path):
    """``traceinsight.load`` in a process the tool does not own (a notebook, a script) never
    calls mallopt / malloc_trim: glibc cannot read the previous settings back to restore them.
    The command line opts its own process in (where it analyses: a copy of the run whose cache
    no other test has filled)."""
    import shutil

    from traceinsight.analysis import malloc
    calls: list = []
    monkeypatch.setattr(malloc, "_set", lambda libc, params: calls.append(params))
    monkeypatch.setattr(malloc, "_allowed", False)
    import traceinsight
    traceinsight.load(RUN, use_cache=False)
    assert calls == []
    from traceinsight.cli import main
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run, ignore=shutil.ignore_patterns(".traceinsight"))
    assert main(["analyze", str(run), "--top", "1"]) == 0
    if malloc._glibc() is not None:
        assert calls, "the CLI's own process tunes malloc"


# ---- a run folder's modes through the same pool ------------------------------------------------

RUNS = RUN.parent
SIGNATURES = {"steps": 30, "truncated": False, "distinct": [
    {"args": ["ndarray float32 shape (100,)", "Python float 0.0"], "first_step": 0, "steps": 1},
    {"args": ["ndarray float32 shape (200,)", "Python float 0.01"], "first_step": 1, "steps": 1}]}


def jobs_sent(monkeypatch) -> list:
    """The jobs this process sends to its worker processes, recorded as they go (a list that
    fills during the load)."""
    me, sent = os.getpid(), []
    send = parallel._send

    def send_job(f, obj, **kw):
        if os.getpid() == me:
            sent.append(obj)
        send(f, obj, **kw)

    monkeypatch.setattr(parallel, "_send", send_job)
    return sent


def run_copy(tmp_path: Path, name: str) -> Path:
    """A committed run folder without its analysis cache; the retracing run with the input
    signatures a capture records (so that they must travel with the job too), and a mode whose
    capture never ran (missing: not analysed, in its place)."""
    import json
    path = tmp_path / name
    shutil.copytree(RUNS / name, path, ignore=shutil.ignore_patterns(".traceinsight"))
    if name == "retracing":
        t = path / "function" / "timings.json"
        t.write_text(json.dumps(json.loads(t.read_text()) | {"input_signatures": SIGNATURES}))
    manifest = json.loads((path / "run.json").read_text())
    manifest["modes"] = {"never": {"dir": "never", "status": "pending"}, **manifest["modes"]}
    (path / "run.json").write_text(json.dumps(manifest))
    return path


def assert_same_timing(a, b) -> None:
    if a is None or b is None:
        assert a is b is None
        return
    for f in ("steps_s", "traced_steps_s"):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None and y is None) or x.tobytes() == y.tobytes(), f
    assert (a.first_step_s, a.load) == (b.first_step_s, b.load)
    assert (a.rounds is None) == (b.rounds is None)
    assert [r.tobytes() for r in a.rounds or ()] == [r.tobytes() for r in b.rounds or ()]


def test_timing_goes_across_exactly():
    """The Timing a job carries reads back to the same bits: every float, NaN and infinities,
    None where there is none."""
    import json

    import numpy as np

    from traceinsight.analysis import cache
    from traceinsight.model import Timing
    third = 1 / 3
    t = Timing(steps_s=np.array([0.1, third, 5e-324, 1e300, 0.0]), first_step_s=2.5,
               traced_steps_s=np.array([float("nan"), float("inf"), -0.0, third]),
               rounds=(np.array([0.1, 0.2]), np.array([], dtype=float)),
               load={"cpu_count": 2, "loadavg_start": 0.37, "rounds": [{"round": 0}]})
    def across(t):
        return cache.timing_from_dict(json.loads(json.dumps(cache.timing_to_dict(t),
                                                            allow_nan=False)))

    back = across(t)
    assert_same_timing(back, t)
    assert back.rounds is not None and back.rounds[1].dtype == float
    assert_same_timing(across(Timing(steps_s=np.zeros(0))), Timing(steps_s=np.zeros(0)))
    nan_first = across(Timing(steps_s=np.array([1.0]), first_step_s=float("nan"))).first_step_s
    assert isinstance(nan_first, float) and nan_first != nan_first


@pytest.mark.parametrize("name", ["conv1d", "retracing"])
@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_run_folder_modes_in_parallel_equal_serial(tmp_path, monkeypatch, name, start):
    """A run folder's modes go through the pool with every argument of analyze_mode (python
    pass, timing, user files, requested options, capture notes, python file groups, input
    signatures): the same ModeResults as one after another, in the manifest's order; the cache
    is written and read here."""
    from traceinsight.stats import bootstrap_medians
    path = run_copy(tmp_path, name)
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    serial = traceinsight.load(path, use_cache=False)
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    monkeypatch.setenv(parallel.START_ENV, start)
    sent = jobs_sent(monkeypatch)
    par = traceinsight.load(path)           # analysed, the cache written
    assert sent and all(len(job) == 3 and job[2]["python_files"] and job[2]["timing"]
                        for job in sent)
    assert list(par.modes) == list(serial.modes) == ["never", *list(serial.modes)[1:]]
    assert par.modes["never"].status == "missing"
    for m in serial.modes:
        assert_same_mode(par.modes[m], serial.modes[m])
        assert_same_timing(par.modes[m].timing, serial.modes[m].timing)
        a, b = par.modes[m], serial.modes[m]
        assert (a.profile_options, a.first_step, a.host_events_recorded) == \
            (b.profile_options, b.first_step, b.host_events_recorded)
        if a.ok:    # resampled where it was analysed, from the timing sent with the job
            assert a.boot_medians.tolist() == bootstrap_medians(b.step_samples_ms).tolist()
    if name == "retracing":
        assert "shape changed" in " ".join(par.modes["function"].retraces["changes"])
    sent.clear()
    cached = traceinsight.load(path)        # every mode from the cache: nothing analysed
    assert sent == [] and list(cached.modes) == list(serial.modes)
    for m in serial.modes:
        assert_same_mode(cached.modes[m], serial.modes[m])
    # the modes the cache lacks, and only those, are analysed
    for f in ("eager", "function"):
        from traceinsight.analysis import cache
        cache.cache_path(path, f).unlink()
    again = traceinsight.load(path)
    assert list(again.modes) == list(serial.modes)
    assert sorted(job[0] for job in sent) in (["eager"], ["function"])   # the other: here
    for m in serial.modes:
        assert_same_mode(again.modes[m], serial.modes[m])


def test_small_run_folders_stay_serial(tmp_path, monkeypatch):
    """Below PARALLEL_MIN_BYTES of traces (python passes counted) a run folder is analysed here,
    one mode after another, without a worker."""
    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    started = []
    monkeypatch.setattr(parallel, "_start_workers", lambda n: started.append(n) or [])
    traceinsight.load(run_copy(tmp_path, "conv1d"), use_cache=False)
    assert started == []
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    traceinsight.load(run_copy(tmp_path / "again", "conv1d"), use_cache=False)
    assert started == [min(4, parallel.usable_cores()) - 1] or parallel.usable_cores() == 1


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster on the loopback interface: two worker processes, one thread each."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_the_commands_take_a_scheduler(logdir, scheduler, monkeypatch, capsys, tmp_path):
    """``analyze`` / ``report`` / ``view --scheduler ADDRESS`` print what they print without it."""
    from traceinsight import cli
    from traceinsight.commands import view
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    monkeypatch.setenv("COLUMNS", "120")
    for command in (["analyze", str(logdir)], ["report", str(logdir), "--format", "md"]):
        assert cli.main(command) == 0
        here = capsys.readouterr().out
        assert cli.main([*command, "--scheduler", scheduler]) == 0
        assert capsys.readouterr().out == here and "worker0" in here
    local, remote = traceinsight.load(logdir), view.load_run(logdir, scheduler)
    for name in local.modes:
        assert_same_mode(remote.modes[name], local.modes[name])


def test_a_scheduler_that_does_not_answer_is_one_line(logdir, monkeypatch, capsys):
    pytest.importorskip("distributed")
    from traceinsight import cli
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT_S", 1)
    # a loopback port nothing listens on
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli.main(["analyze", str(logdir), "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"traceinsight: error: --scheduler tcp://127.0.0.1:{port}: no Dask "
                          "scheduler answered") and "\n" not in err


def test_a_run_folder_is_not_sent_to_a_scheduler(scheduler, capsys):
    from traceinsight import cli
    assert cli.main(["analyze", str(RUN), "--scheduler", scheduler]) == 2
    assert "a traceinsight run folder" in capsys.readouterr().err


@pytest.fixture
def memory_logdir(logdir):
    """The logdir's files in fsspec's memory file system (``memory://<its name>``), plus files
    that are not traces of its layout: another plugin's, and below a session."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = f"/{logdir.name}"
    for f in sorted(logdir.rglob("*.xplane.pb")):
        fs.pipe_file(f"{root}/{f.relative_to(logdir).as_posix()}", f.read_bytes())
    some = next(iter(sorted(logdir.rglob("*.xplane.pb")))).read_bytes()
    fs.pipe_file(f"{root}/plugins/scalars/x/y.xplane.pb", some)
    fs.pipe_file(f"{root}/plugins/profile/2026_01_01_00_00_00/sub/z.xplane.pb", some)
    yield f"memory://{root}"
    fs.rm(root, recursive=True)


def assert_same_but_paths(a, b) -> None:
    """The same mode, analysed from URLs (``a``) and local files (``b``): the URLs where the
    paths were, in its trace paths, error and notes."""
    def local(text):
        for url, path in zip(a.trace_paths, b.trace_paths):
            text = text.replace(url, path) if isinstance(text, str) else text
        return text
    assert len(a.trace_paths) == len(b.trace_paths)
    assert_same_mode(a.replace(trace_paths=b.trace_paths, error=local(a.error),
                               notes=tuple(local(n) for n in a.notes)), b)


def test_a_logdir_at_a_url_is_the_local_logdir(logdir, memory_logdir, monkeypatch, capsys):
    from traceinsight import cli
    from traceinsight.analysis import urls
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    monkeypatch.setenv("COLUMNS", "120")
    root, paths, one = urls.find_traces(memory_logdir)
    assert not one and len(paths) == 5 and not any("/sub/" in p or "scalars" in p for p in paths)
    local, remote = traceinsight.load(logdir), traceinsight.load(memory_logdir)
    assert list(remote.modes) == list(local.modes)
    for name, m in remote.modes.items():
        assert all(p.startswith("memory://") for p in m.trace_paths)
        assert_same_but_paths(m, local.modes[name])
    assert remote.manifest["source"] == memory_logdir
    assert cli.main(["analyze", str(logdir)]) == 0
    here = capsys.readouterr().out
    assert cli.main(["analyze", memory_logdir]) == 0
    there = capsys.readouterr().out.replace(memory_logdir, str(logdir))

    def words(out):    # the damaged host's error names its URL: columns' widths differ
        return [w for w in out.split() if w.strip("─━═-")]
    assert words(there) == words(here)
    # one trace named by its URL: the mode named after the file, as for a local file
    one_trace = sorted(p for p in paths if p.endswith("worker0.xplane.pb"))[0]
    run = traceinsight.load(f"memory://{one_trace}")
    assert list(run.modes) == ["worker0"]
    assert_same_but_paths(run.modes["worker0"],
                          traceinsight.load(next(logdir.rglob("worker0.xplane.pb"))).modes["worker0"])


def test_a_url_without_traces_or_protocol_is_one_line(capsys):
    pytest.importorskip("fsspec")
    from traceinsight import cli
    assert cli.main(["analyze", "memory://nothing-here"]) == 2
    assert "no traces found" in capsys.readouterr().err
    assert cli.main(["analyze", "nosuchprotocol://bucket/logdir"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("traceinsight: error: nosuchprotocol://bucket/logdir: cannot be read")


def test_a_logdir_at_a_url_on_a_dask_cluster(logdir, memory_logdir, monkeypatch):
    """Each worker copies the trace it analyses (threads of this process: memory:// is this
    process's own)."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    local = traceinsight.load(logdir)
    # (threads: the in-process transport, no socket at all)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run = parallel.analyze_with_dask(memory_logdir, client)
    assert list(run.modes) == list(local.modes)
    for name, m in run.modes.items():
        assert_same_but_paths(m, local.modes[name])
        assert all(p.startswith("memory://") for p in m.trace_paths)
