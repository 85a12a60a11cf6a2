"""Many hosts, analysed in parallel: one process per core, one host at a time per process.

A logdir of a multi-worker job holds one trace per host (``<logdir>/plugins/profile/<session>/
<host>.xplane.pb``); each host is analysed on its own (``load.analyze_mode``), so the hosts are
independent jobs. ``analyze_modes`` runs them in worker processes (plain subprocesses fed over pipes, see
``_Worker``) with at most one host per process at a time, so a worker's peak memory is that of
the largest host it analyses, not of the logdir.
Small logdirs stay serial (starting the pool costs ~0.5 s, more than analysing a few small traces).
The results are the same ``ModeResult`` objects, in the same order, as one host after another
(``tests/test_parallel.py`` checks they are equal).

``analyze_with_dask`` runs the same per-host analysis on a Dask distributed cluster (the hosts'
files must be readable by the workers at the same paths: a shared file system), see README.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceinsight.analysis import cache
from traceinsight.errors import TraceinsightError

if TYPE_CHECKING:
    from traceinsight.model import Run

JOBS_ENV = "TRACEINSIGHT_JOBS"          # worker processes (1: serial); default: usable cores
PARALLEL_MIN_BYTES = 32 << 20           # below this much trace data in total, stay serial


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _jobs(groups: dict[str, list[Path]], jobs: int | None) -> int:
    if jobs is None:
        env = os.environ.get(JOBS_ENV, "").strip()
        if env:
            try:
                jobs = int(env)
            except ValueError:
                raise TraceinsightError(f"{JOBS_ENV}={env!r} is not a number of processes") from None
        else:
            total = 0
            for files in groups.values():
                for f in files:
                    try:
                        total += Path(f).stat().st_size
                    except OSError:
                        pass
            jobs = usable_cores() if total >= PARALLEL_MIN_BYTES else 1
    return max(1, min(int(jobs), len(groups)))


def _analyze(name: str, files: list[Path]):
    from traceinsight.analysis.load import analyze_mode
    return analyze_mode(name, files)


def analyze_modes(groups: dict[str, list[Path]], jobs: int | None = None) -> dict[str, Any]:
    """``{mode name: its trace files}`` -> ``{mode name: ModeResult}`` (same order), analysed
    in ``jobs`` processes (default: ``$TRACEINSIGHT_JOBS``, else every usable core when the traces
    hold at least 32 MB, else serially)."""
    n = _jobs(groups, jobs)
    if n <= 1:
        return {name: _analyze(name, files) for name, files in groups.items()}
    # largest first, so the last job to start is a small one (less idle time at the end)
    todo: queue.Queue = queue.Queue()
    for name in sorted(groups, key=lambda k: -sum(_size(f) for f in groups[k])):
        todo.put(name)
    done: dict[str, Any] = {}
    failures: list[str] = []
    workers = [_Worker() for _ in range(n)]
    threads = [threading.Thread(target=w.drive, args=(todo, groups, done, failures), daemon=True,
                                name=f"traceinsight-analysis-{i}") for i, w in enumerate(workers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for w in workers:
            w.close()
    if failures:
        raise TraceinsightError(failures[0])
    return {name: done[name] for name in groups}


class _Worker:
    """One analysis process, ``python -m traceinsight.analysis.parallel``: (name, files) in,
    ModeResult out, as JSON over its pipes (``analysis.cache.to_dict``: the analysis cache's own
    format, nothing is unpickled or evaluated; trace
    strings are never evaluated). A plain subprocess rather than multiprocessing: spawn would
    re-run the caller's ``__main__`` script in every worker, fork is unsafe in the viewer's
    threads."""

    def __init__(self):
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])   # this very traceinsight
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[JOBS_ENV] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "traceinsight.analysis.parallel"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def drive(self, todo: queue.Queue, groups, done: dict, failures: list) -> None:
        while not failures:
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            try:
                _send(self.proc.stdin, (name, [str(f) for f in groups[name]]))
                status, value = _receive(self.proc.stdout)
                if status == "ok":
                    value = cache.from_dict(value, [], None)
                    if value is None:
                        status, value = "error", "the analysis process sent an unreadable result"
            except (OSError, EOFError):
                rc = self.proc.poll()
                failures.append(f"the analysis process of {name} died"
                                + (f" (exit status {rc})" if rc is not None else ""))
                return
            if status != "ok":
                failures.append(f"analysing {name} failed: {value}")
                return
            done[name] = value

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()      # our own worker process
            self.proc.wait()


def _send(f, obj) -> None:
    data = json.dumps(obj, allow_nan=False).encode()
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
    return json.loads(data)


def _worker_main() -> None:
    out = os.fdopen(os.dup(1), "wb")   # the protocol's channel; stray prints go to stderr
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    while True:
        try:
            name, files = _receive(inp)
        except EOFError:
            return
        try:
            result: tuple[str, Any] = ("ok", cache.to_dict(_analyze(name, [Path(f) for f in files]), []))
        except BaseException as e:  # reported by the parent as one line
            msg = str(e).strip().splitlines()
            result = ("error", f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__)
        _send(out, result)


def _size(f: Path) -> int:
    try:
        return Path(f).stat().st_size
    except OSError:
        return 0


def analyze_with_dask(path: str | Path, client) -> Run:
    """Analyse a logdir's hosts on a Dask distributed cluster (``client``: a
    ``dask.distributed.Client``); the same ``Run`` as ``traceinsight.load(path)``.

    Each host's ``analyze_mode`` runs as one task on a worker; the results (small frames) come
    back to this process. The workers need traceinsight installed and the trace files at the same
    paths (a shared or network file system).
    """
    from traceinsight import runfolder
    from traceinsight.analysis.load import _foreign_modes, _straggler_notes
    from traceinsight.model import Run

    path = Path(path).resolve()
    files = runfolder.find_xplanes(path)
    if not files:
        raise TraceinsightError(f"{path}: no *.xplane.pb traces found")
    root = path.parent if path.is_file() else path
    groups = _foreign_modes(root, files)
    names = list(groups)
    futures = client.map(_analyze, names, [[str(f) for f in groups[k]] for k in names],
                         key=[f"traceinsight-host-{i}" for i in range(len(names))], pure=False)
    results = client.gather(futures)
    modes = _straggler_notes(dict(zip(names, results)),
                             {k: Path(groups[k][0]).parent for k in names})
    if all(m.status == "failed" for m in modes.values()):
        raise TraceinsightError(f"{path}: no readable TensorFlow trace: "
                                + "; ".join(f"{k}: {m.error}" for k, m in modes.items()))
    return Run(path=path, name=path.name.replace(".xplane.pb", ""), modes=modes,
               manifest={"source": str(path)}, source="traces")


if __name__ == "__main__":
    _worker_main()
