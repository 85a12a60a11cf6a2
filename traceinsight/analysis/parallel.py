"""Many hosts, analysed in parallel: one process per core, this one included, one host at a time
per process. A run folder's modes that its analysis cache does not hold go through the same pool
(``load._load_modes``), one mode per job.

A logdir of a multi-worker job holds one trace per host (``<logdir>/plugins/profile/<session>/
<host>.xplane.pb``); each host is analysed on its own (``mode.analyze_mode``), so the hosts are
independent jobs. ``analyze_modes`` starts ``jobs - 1`` worker processes first of all, then this
process and the workers pull hosts from one list, largest first (each worker's first host is
handed out before this process takes its own), at most one host per process at a time, so every
process's peak memory is that of the largest host it analyses, not of the logdir. Small logdirs
stay serial.

Workers are forked from this process where that is safe (``can_fork``: Linux, called from the
main thread with no other Python thread running, and no TensorFlow, PyTorch, JAX or gRPC loaded,
whose threads a fork does not copy). A fork starts at once with every module already imported; a
fresh interpreter (``_Spawned``, ``python -m traceinsight.analysis.parallel``) first imports numpy,
protobuf and the analysis, and starts analysing that much later. Forks are made before
this process analyses anything (its heap is small, and the children do not copy pages of it that
this process then writes), with ``gc.freeze()`` around them so that collections do not touch the
inherited objects. Python >= 3.12 warns on fork whenever the OS lists more than one thread of the
process; once numpy and pandas are imported there are always more: OpenBLAS's pool and pyarrow's
jemalloc thread, which both prepare for fork themselves (pthread_atfork), so that warning is
silenced for our fork only. Not multiprocessing: its spawn
and forkserver re-run the caller's ``__main__`` script in every worker (a script calling
``traceinsight.load`` at top level would recurse), and its fork adds nothing to two pipes.
``TRACEINSIGHT_START=fork|spawn`` overrides the choice.

The protocol is the same for both: a job is a JSON ``[name, [file, ...]]``, plus for a run
folder's mode the other arguments of ``mode.analyze_mode`` (``_args_to_json``: its python-tracer
pass, the Timing read from timings.json, exactly, by ``cache.timing_to_dict``, the capture's
notes and options as read from timings.json; NaN and Infinity written as Python's json does), the
result the analysis cache's own JSON (``analysis.cache.to_dict``; nothing is unpickled or
evaluated), which gets this process's own Timing back. A
result is small beside its trace and cheap to encode and rebuild next to the analysis itself, so
no other format is worth it (``tools/bench_parallel.py`` measures the whole). The result also
carries the mode's bootstrap medians (the interval of its median and of every ratio it is in),
resampled in the worker rather than one host after another here afterwards, where it would all
be on the critical path. A worker that dies (killed, out of
memory) ends the analysis with one line naming the host and the signal or exit status; an
exception in a worker is one line too; an exception here (Ctrl-C) kills the workers at once.

The analysis runs inside ``malloc.kept_memory()`` (serially too), which keeps glibc from
unmapping and re-faulting every large array, an overhead each worker would otherwise pay again.
Workers are the tool's own processes, so they opt in to that tuning (``malloc.allow()``).

The results are the same ``ModeResult`` objects, in the same order, as one host after another
(``tests/test_parallel.py`` checks they are equal, forked and spawned).

``analyze_with_dask`` runs the same per-host analysis on a Dask distributed cluster (the hosts'
files must be readable by the workers at the same paths: a shared file system), see docs/attribution.md, "Many hosts".
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from traceinsight.analysis import malloc
from traceinsight.errors import TraceinsightError

if TYPE_CHECKING:
    from traceinsight.model import Display, Run

JOBS_ENV = "TRACEINSIGHT_JOBS"          # processes at once, this one included (1: serial)
START_ENV = "TRACEINSIGHT_START"        # fork | spawn; default: fork where can_fork() says so
_FORK_HOSTILE = ("tensorflow", "torch", "jax", "grpc")
_SPAWN_COMMAND = [sys.executable]       # tests replace it with a process that dies at once
PARALLEL_MIN_BYTES = 32 << 20           # below this much trace data in total, stay serial


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _jobs(groups: dict[str, list[Path]], jobs: int | None,
          sizes: dict[str, int] | None = None) -> int:
    """How many processes: ``jobs``, else ``$TRACEINSIGHT_JOBS``, else every usable core when the
    jobs' files (``sizes``: bytes per job, default the sizes of ``groups``' files) hold at least
    ``PARALLEL_MIN_BYTES``; never more than there are jobs."""
    if jobs is None:
        env = os.environ.get(JOBS_ENV, "").strip()
        if env:
            try:
                jobs = int(env)
            except ValueError:
                raise TraceinsightError(f"{JOBS_ENV}={env!r} is not a number of processes") from None
        else:
            total = sum(sizes.values()) if sizes is not None else \
                sum(_size(f) for files in groups.values() for f in files)
            jobs = usable_cores() if total >= PARALLEL_MIN_BYTES else 1
    return max(1, min(int(jobs), len(groups)))


def _analyze(name: str, files: list[Path], **args: Any):
    """``mode.analyze_mode(name, files, **args)``, with the mode's bootstrap medians."""
    from traceinsight.analysis.mode import analyze_mode
    mode = analyze_mode(name, files, **args)
    # every view of a run needs each mode's bootstrap medians (its median's interval, the ratios,
    # the hosts' comparison; the export's summary too): resampled here, in the process that
    # analysed the mode, instead of one mode after another in the loading process afterwards
    _ = mode.boot_medians
    return mode


def analyze_modes(groups: dict[str, list[Path]], jobs: int | None = None,
                  args: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """``{mode name: its trace files}`` -> ``{mode name: ModeResult}`` (same order), analysed
    by ``jobs`` processes at once, this one included (default: ``$TRACEINSIGHT_JOBS``, else every
    usable core when the traces hold at least 32 MB, else serially).

    ``args``: per mode, the other arguments of ``mode.analyze_mode`` (a run folder's modes:
    ``python_files``, ``timing``, ``user_files``, ``requested``, ``extra_notes``, ``file_groups``,
    ``signatures``), sent to the worker with the job as JSON (``_args_to_json``). A worker's
    result gets this process's own ``timing`` object back (the result message does not hold it,
    as the analysis cache does not), so it is the serial analysis's ModeResult."""
    args = args or {}
    sizes = {name: sum(_size(f) for f in [*files, *(args.get(name) or {}).get("python_files", ())])
             for name, files in groups.items()}
    n = _jobs(groups, jobs, sizes)
    from traceinsight.analysis.events import decode_threads
    # processes at once take the cores: each decodes its lines on one thread (forks inherit it)
    with malloc.kept_memory(), decode_threads(1 if n > 1 else None):
        modes = _analyze_modes(groups, n, args, sizes)
    # analysed one after another here: resampled once the analysis's memory is given back (the
    # first resampling imports numpy.random, whose libraries would otherwise add to the peak)
    for mode in modes.values():
        _ = mode.boot_medians
    return modes


def _analyze_modes(groups: dict[str, list[Path]], n: int, args: Mapping[str, Mapping[str, Any]],
                   sizes: dict[str, int]) -> dict[str, Any]:
    if n <= 1:
        # (resampled by analyze_modes, once the analysis's memory is given back)
        from traceinsight.analysis.mode import analyze_mode
        return {name: analyze_mode(name, files, **(args.get(name) or {}))
                for name, files in groups.items()}
    # largest first, so the last job to start is a small one (less idle time at the end)
    order = sorted(groups, key=lambda k: -sizes[k])
    pending = list(reversed(order))
    lock = threading.Lock()
    failures: list[str] = []
    done: dict[str, Any] = {}

    def next_job() -> str | None:
        with lock:
            return pending.pop() if pending and not failures else None

    workers = _start_workers(n - 1)      # first of all: they start while this process works
    # each worker's first job handed out now, before this process takes its own
    threads = [threading.Thread(target=w.drive,
                                args=(next_job(), next_job, groups, args, done, failures),
                                daemon=True, name=f"traceinsight-analysis-{i}")
               for i, w in enumerate(workers)]
    ok = False
    try:
        for t in threads:
            t.start()
        while (name := next_job()) is not None:     # this process analyses hosts too
            done[name] = _analyze(name, groups[name], **(args.get(name) or {}))
        for t in threads:
            t.join()
        ok = True
    finally:
        for w in workers:
            w.close(kill=not ok)    # on an exception here (Ctrl-C), the workers end at once
    if failures:
        raise TraceinsightError(failures[0])
    return {name: done[name] for name in groups}


def can_fork() -> bool:
    """Whether the workers may be forked from this process: on Linux, from the main thread of a
    process with no other Python thread and none of the libraries that keep threads fork cannot
    copy (TensorFlow, PyTorch, JAX, gRPC)."""
    env = os.environ.get(START_ENV, "").strip().lower()
    if env in ("spawn", "fork"):
        return env == "fork" and hasattr(os, "fork")
    if env:
        raise TraceinsightError(f"{START_ENV}={env!r}: expected fork or spawn")
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and threading.current_thread() is threading.main_thread()
            and threading.active_count() == 1
            and not any(m in sys.modules for m in _FORK_HOSTILE))


def _start_workers(n: int) -> list[_Worker]:
    """Up to ``n`` workers, forked where ``can_fork()``, else spawned; fewer (none: this process
    does it all) where the system refuses more processes."""
    import gc
    workers: list[_Worker] = []
    fork = can_fork()
    freeze = fork and gc.get_freeze_count() == 0      # (a caller's own freeze is left alone)
    if fork:
        sys.stdout.flush()
        sys.stderr.flush()
    if freeze:
        gc.freeze()      # the children do not touch (copy) this process's objects to collect them
    try:
        for _ in range(n):
            workers.append(_Forked([fd for w in workers for fd in w.fds()]) if fork else _Spawned())
    except OSError:      # out of processes or memory: fewer workers
        pass
    except BaseException:
        for w in workers:
            w.close(kill=True)
        raise
    finally:
        if freeze:
            gc.unfreeze()
    return workers


class _Worker:
    """One analysis process at the other end of two pipes: (name, files) in, ModeResult out, as
    JSON (``analysis.cache.to_dict``: the analysis cache's own format; nothing is unpickled or
    evaluated)."""

    jobs: BinaryIO
    results: BinaryIO

    def drive(self, name: str | None, next_job, groups, args, done: dict, failures: list) -> None:
        """Has the worker analyse ``name``, then the next job until none is left."""
        while name is not None:
            mode_args = args.get(name) or {}
            job: tuple = (name, [str(f) for f in groups[name]])
            try:
                if mode_args:
                    job += (_args_to_json(mode_args),)
            except (TypeError, ValueError) as e:
                failures.append(f"analysing {name} failed: its arguments cannot be sent ({e})")
                return
            try:
                # NaN and infinities as Python's json writes them: values read from a timings.json
                # (1e999 reads as inf) go across as they are
                _send(self.jobs, job, allow_nan=True)
                status, value = _receive(self.results)
            except (OSError, EOFError):
                failures.append(f"the analysis process of {name} died{self.exit_status()}")
                return
            except (ValueError, TypeError) as e:     # not our JSON: the channel is broken
                failures.append(f"the analysis process of {name} sent no readable result "
                                f"({type(e).__name__})")
                return
            if status == "ok":
                # this process's own timing (the message holds none, as the cache does not)
                from traceinsight.analysis import cache
                mode = cache.from_dict(value.get("mode"), [], mode_args.get("timing")) \
                    if isinstance(value, dict) else None
                if mode is None:
                    status, value = "error", "the analysis process sent an unreadable result"
                else:
                    value = mode      # with the bootstrap medians resampled there
            if status != "ok":
                failures.append(f"analysing {name} failed: {value}")
                return
            done[name] = value
            name = next_job()

    def fds(self) -> list[int]:
        return [self.jobs.fileno(), self.results.fileno()]

    def exit_status(self) -> str:
        code = self.wait(2.0)
        if code is None:
            return ""
        if code < 0:
            import signal
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            return f" (killed by signal {sig}" + ("; out of memory?)" if sig == "SIGKILL" else ")")
        return f" (exit status {code})"

    def wait(self, timeout: float) -> int | None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def close(self, kill: bool = False) -> None:
        """Ends the process: its jobs pipe closed, it exits when done (at once with ``kill``)."""
        if kill:
            self.kill()
        for f in (self.jobs, self.results):
            try:
                f.close()
            except OSError:
                pass
        if self.wait(10.0) is None:
            self.kill()
            self.wait(10.0)


class _Spawned(_Worker):
    """A fresh interpreter, ``python -m traceinsight.analysis.parallel`` (where this process may
    not fork): a plain subprocess rather than multiprocessing, whose spawn would re-run the
    caller's ``__main__`` script in every worker."""

    def __init__(self):
        import subprocess
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])   # this very traceinsight
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[JOBS_ENV] = "1"
        self.proc = subprocess.Popen([*_SPAWN_COMMAND, "-m", "traceinsight.analysis.parallel"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.jobs, self.results = self.proc.stdin, self.proc.stdout

    def wait(self, timeout: float) -> int | None:
        import subprocess
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()      # our own worker process


class _Forked(_Worker):
    """A fork of this process, modules already imported (no interpreter start, no imports).
    ``inherited``: the pipe ends of the workers forked before, which the
    child closes (else those workers would not see their jobs pipe end)."""

    def __init__(self, inherited: list[int]):
        job_r, job_w = os.pipe()
        try:
            res_r, res_w = os.pipe()
        except OSError:
            os.close(job_r)
            os.close(job_w)
            raise
        try:
            with warnings.catch_warnings():
                # Python >= 3.12 warns on fork whenever the OS shows more than one thread: numpy's
                # OpenBLAS pool and pyarrow's jemalloc thread, which prepare for fork themselves
                # (pthread_atfork); Python threads and thread-keeping libraries are ruled out by
                # can_fork().
                warnings.filterwarnings("ignore", category=DeprecationWarning,
                                        message=r".*multi-threaded, use of fork\(\)")
                pid = os.fork()
        except OSError:
            for fd in (job_r, job_w, res_r, res_w):
                os.close(fd)
            raise
        if pid == 0:       # the child: analyses until its jobs pipe ends, never returns
            code = 1
            try:
                for fd in (job_w, res_r, *inherited):
                    os.close(fd)
                malloc.allow()      # this process is the tool's own from here on
                _serve(os.fdopen(job_r, "rb"), os.fdopen(res_w, "wb"))
                code = 0
            except BaseException:   # noqa: BLE001 - the parent reports the exit status
                pass
            finally:
                os._exit(code)
        os.close(job_r)
        os.close(res_w)
        self.pid = pid
        self.code: int | None = None
        self.reaping = threading.Lock()
        self.jobs, self.results = os.fdopen(job_w, "wb"), os.fdopen(res_r, "rb")

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while True:
            with self.reaping:         # the driver thread and close() may both wait
                if self.code is not None:
                    return self.code
                try:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:       # reaped by someone else: status unknown
                    pid, status = self.pid, 255 << 8
                if pid:
                    self.code = os.waitstatus_to_exitcode(status)
                    return self.code
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def kill(self) -> None:
        if self.wait(0) is None:
            import signal
            try:
                os.kill(self.pid, signal.SIGKILL)      # our own forked worker
            except ProcessLookupError:
                pass


def _send(f, obj, allow_nan: bool = False) -> None:
    # (json for the workers' messages only: one process analysing alone never imports it)
    import json
    data = json.dumps(obj, allow_nan=allow_nan).encode()
    f.write(len(data).to_bytes(8, "little") + data)
    f.flush()


def _receive(f):
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    n = int.from_bytes(head, "little")
    data = f.read(n)
    if len(data) < n:
        raise EOFError
    import json
    return json.loads(data)


def _serve(inp, out) -> None:
    """A worker's loop: a job from ``inp``, its result to ``out``, until ``inp`` ends."""
    while True:
        try:
            job = _receive(inp)
        except EOFError:
            return
        try:
            name, files = job[0], job[1]
            args = _args_from_json(job[2]) if len(job) > 2 else {}
            mode = _analyze(name, [Path(f) for f in files], **args)
            from traceinsight.analysis import cache
            # the cache's JSON carries the bootstrap medians, with the digest of their samples
            result: tuple[str, Any] = ("ok", {"mode": cache.to_dict(mode, [])})
        except BaseException as e:  # reported by the parent as one line
            msg = str(e).strip().splitlines()
            result = ("error", f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__)
        _send(out, result)


def _cache():
    """``analysis.cache``, imported where a job needs its codec (the analysis of one small trace
    here needs none: start-up time)."""
    from traceinsight.analysis import cache
    return cache


# analyze_mode's keyword arguments that a job carries: (to JSON data, back); requested,
# file_groups and signatures are JSON already (read from timings.json)
_ARGS: dict[str, tuple[Any, Any]] = {
    "python_files": (lambda v: [str(f) for f in v], lambda v: [Path(f) for f in v]),
    "timing": (lambda v: None if v is None else _cache().timing_to_dict(v),      # exact
               lambda v: None if v is None else _cache().timing_from_dict(v)),
    "user_files": (sorted, frozenset),
    "extra_notes": (list, tuple),
    **{k: (lambda v: v, lambda v: v) for k in ("requested", "file_groups", "signatures",
                                                 "layer_calls")},
}


def _args_to_json(args: Mapping[str, Any]) -> dict[str, Any]:
    """``analyze_mode``'s keyword arguments as JSON data (``_ARGS``)."""
    if unknown := sorted(set(args) - set(_ARGS)):
        raise TypeError(f"analyze_mode has no argument {unknown[0]!r} to send")
    return {k: _ARGS[k][0](v) for k, v in args.items()}


def _args_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """``_args_to_json``'s data back as ``analyze_mode``'s keyword arguments."""
    if unknown := sorted(set(data) - set(_ARGS)):
        raise ValueError(f"a job with an unknown argument {unknown[0]!r}")
    return {k: _ARGS[k][1](v) for k, v in data.items()}


def _worker_main() -> None:
    out = os.fdopen(os.dup(1), "wb")   # the protocol's channel; stray prints go to stderr
    os.dup2(2, 1)
    malloc.allow()
    from traceinsight.analysis.events import decode_threads
    with malloc.kept_memory(), decode_threads(1):   # one of several processes: one thread
        _serve(sys.stdin.buffer, out)


def _size(f: Path) -> int:
    try:
        return Path(f).stat().st_size
    except OSError:
        return 0


def analyze_with_dask(path: str | Path, client, display: Display | None = None) -> Run:
    """Analyse a logdir's hosts on a Dask distributed cluster (``client``: a
    ``dask.distributed.Client``); the same ``Run`` as ``traceinsight.load(path)``. ``display``:
    how it shows itself in a notebook (``traceinsight.report.notebook.NOTEBOOK``; None: its
    plain repr).

    Each host's ``analyze_mode`` runs as one task on a worker; the results (small frames) come
    back to this process. The workers need traceinsight installed and the trace files at the same
    paths (a shared or network file system), or ``path`` a URL their fsspec reads (``gs://``,
    ``s3://``: ``analysis.urls``; each worker copies the trace it analyses).
    """
    from traceinsight import runfolder
    from traceinsight.analysis import urls
    from traceinsight.analysis.sessions import foreign_modes

    path = urls.local_path(path)
    if urls.is_url(path):
        return _analyze_urls_with_dask(str(path), client, display)
    path = Path(path).resolve()
    if path.is_dir() and runfolder.is_run_folder(path):
        raise TraceinsightError(
            f"{path}: a traceinsight run folder; a cluster analyses a logdir's hosts (a run "
            "folder's modes are analysed and cached here: leave out --scheduler)")
    files = runfolder.find_xplanes(path)
    if not files:
        raise TraceinsightError(f"{path}: no *.xplane.pb traces found")
    root = path.parent if path.is_file() else path
    groups = foreign_modes(root, files)
    names = list(groups)
    futures = client.map(_analyze, names, [[str(f) for f in groups[k]] for k in names],
                         key=[f"traceinsight-host-{i}" for i in range(len(names))], pure=False)
    from traceinsight.analysis.trace_env import trace_environment
    return _run_of(path, path.name.replace(".xplane.pb", ""), groups, client.gather(futures),
                   {"source": str(path), "environment": trace_environment(files)}, display)


def _run_of(path: Path, name: str, groups: Mapping[str, list], results: list, manifest: dict,
            display: Display | None) -> Run:
    """The Run of a cluster's per-host results: the hosts compared, the figures computed."""
    from traceinsight.analysis.sessions import straggler_notes
    from traceinsight.model import Run
    names = list(groups)
    modes, compared = straggler_notes(dict(zip(names, results)),
                                       {k: Path(groups[k][0]).parent for k in names})
    if all(m.status == "failed" for m in modes.values()):
        raise TraceinsightError(f"{manifest['source']}: no readable TensorFlow trace: "
                                + "; ".join(f"{k}: {m.error}" for k, m in modes.items()))
    from traceinsight.derive import complete
    return complete(Run(path=path, name=name, modes=modes, manifest=manifest, source="traces"),
                    hosts_compared=compared, display=display)


def _analyze_urls_with_dask(url: str, client, display: Display | None) -> Run:
    """``analyze_with_dask`` of a logdir at a URL (``analysis.urls``): each task copies its
    host's trace on the worker that analyses it."""
    from pathlib import PurePosixPath

    from traceinsight.analysis import urls
    from traceinsight.analysis.sessions import foreign_modes
    root, paths, one = urls.find_traces(url)
    if not paths:
        raise TraceinsightError(f"{url}: no *.xplane.pb traces found")
    groups = foreign_modes(Path(root), [Path(p) for p in paths])
    names = list(groups)
    if one:
        groups = {PurePosixPath(paths[0]).name[: -len(".xplane.pb")]: groups[names[0]]}
        names = list(groups)
    futures = client.map(_analyze_url, names, [url] * len(names),
                         [[str(f) for f in groups[k]] for k in names], [root] * len(names),
                         key=[f"traceinsight-host-{i}" for i in range(len(names))], pure=False)
    return _run_of(Path(root), PurePosixPath(root).name or root, groups, client.gather(futures),
                   {"source": url}, display)


def _analyze_url(name: str, url: str, paths: list[str], root: str):
    """One host's traces analysed from their URLs (a Dask task: the worker copies them into a
    temporary folder); ``trace_paths`` the URLs."""
    import tempfile

    from traceinsight.analysis import urls
    with tempfile.TemporaryDirectory(prefix="traceinsight-") as tmp:
        local = [urls.fetch(url, p, root, Path(tmp)) for p in paths]
        mode = _analyze(name, local)
    return urls.with_urls(mode, {str(f): urls.unstrip(url, p) for f, p in zip(local, paths)})


# How long the command line waits for a --scheduler to answer
CONNECT_TIMEOUT_S = 10


def load_with_scheduler(path: str | Path, address: str, display: Display | None = None) -> Run:
    """``--scheduler ADDRESS`` of ``analyze`` / ``report`` / ``view``: ``analyze_with_dask`` on
    the Dask distributed cluster whose scheduler is at ``address`` (``tcp://host:8786``), with a
    client of its own, closed after. One line (TraceinsightError) when Dask distributed is not
    installed or the scheduler does not answer."""
    try:
        from distributed import Client
    except ImportError:
        raise TraceinsightError("--scheduler needs Dask distributed: pip install "
                                "'traceinsight-tf[cluster]'") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        from traceinsight.present import safe
        raise TraceinsightError(f"--scheduler {safe(address, 200)}: no Dask scheduler answered "
                                f"({safe(str(e).splitlines()[0] if str(e) else type(e).__name__, 200)})"
                                ) from None
    with client:
        return analyze_with_dask(path, client, display)


if __name__ == "__main__":
    _worker_main()
