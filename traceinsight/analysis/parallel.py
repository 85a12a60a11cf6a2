"""Many hosts, analysed in parallel: one process per core, one host at a time per process.

A logdir of a multi-worker job holds one trace per host (``<logdir>/plugins/profile/<session>/
<host>.xplane.pb``); each host is analysed on its own (``load.analyze_mode``), so the hosts are
independent jobs. ``analyze_modes`` runs them in a process pool (spawned processes: the viewer loads
runs from a thread, and forking a threaded process is unsafe) with at most one host per process at
a time, so a worker's peak memory is that of the largest host it analyses, not of the logdir.
Small logdirs stay serial (starting the pool costs ~0.5 s, more than analysing a few small traces).
The results are the same ``ModeResult`` objects, in the same order, as one host after another
(``tests/test_parallel.py`` checks they are equal).

``analyze_with_dask`` runs the same per-host analysis on a Dask distributed cluster (the hosts'
files must be readable by the workers at the same paths: a shared file system), see README.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

from traceinsight.errors import TraceinsightError

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


def analyze_modes(groups: dict[str, list[Path]], jobs: int | None = None,
                  analyze: Callable[[str, list[Path]], Any] | None = None) -> dict[str, Any]:
    """``{mode name: its trace files}`` -> ``{mode name: ModeResult}`` (same order), analysed
    in ``jobs`` processes (default: ``$TRACEINSIGHT_JOBS``, else every usable core when the traces
    hold at least 32 MB, else serially)."""
    analyze = analyze or _analyze
    n = _jobs(groups, jobs)
    if n <= 1:
        return {name: analyze(name, files) for name, files in groups.items()}
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    # largest first, so the last job to start is a small one (less idle time at the end)
    order = sorted(groups, key=lambda k: -sum(_size(f) for f in groups[k]))
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        futures = {name: pool.submit(analyze, name, groups[name]) for name in order}
        done = {name: f.result() for name, f in futures.items()}
    return {name: done[name] for name in groups}


def _size(f: Path) -> int:
    try:
        return Path(f).stat().st_size
    except OSError:
        return 0


def analyze_with_dask(path: str | Path, client) -> "Run":  # noqa: F821
    """Analyse a logdir's hosts on a Dask distributed cluster (``client``: a
    ``dask.distributed.Client``); the same ``Run`` as ``traceinsight.load(path)``.

    Each host's ``analyze_mode`` runs as one task on a worker; the results (small frames) come
    back to this process. The workers need traceinsight installed and the trace files at the same
    paths (a shared or network file system).
    """
    from traceinsight import runfolder
    from traceinsight.analysis.load import _foreign_modes
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
    modes = dict(zip(names, results))
    if all(m.status == "failed" for m in modes.values()):
        raise TraceinsightError(f"{path}: no readable TensorFlow trace: "
                                + "; ".join(f"{k}: {m.error}" for k, m in modes.items()))
    return Run(path=path, name=path.name.replace(".xplane.pb", ""), modes=modes,
               manifest={"source": str(path)}, source="traces")
