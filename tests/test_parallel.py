"""Many hosts in parallel: a logdir of several hosts analysed in worker processes, and on a Dask
LocalCluster, gives exactly the results of one host after another."""

from __future__ import annotations

import shutil
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


def test_parallel_equals_serial(logdir):
    from traceinsight.analysis.load import _foreign_modes
    from traceinsight.runfolder import find_xplanes
    groups = _foreign_modes(logdir, find_xplanes(logdir))
    assert len(groups) == 5
    serial = parallel.analyze_modes(groups, jobs=1)
    par = parallel.analyze_modes(groups, jobs=2)
    assert list(par) == list(serial) == list(groups)       # same order
    for name in groups:
        assert_same_mode(par[name], serial[name])
    assert sum(m.ok for m in par.values()) == 4
    assert par[next(k for k in groups if k.endswith("worker9"))].status == "failed"


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
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run = parallel.analyze_with_dask(logdir, client)
    assert list(run.modes) == list(serial.modes)
    for name in serial.modes:
        assert_same_mode(run.modes[name], serial.modes[name])


def test_unguarded_script_can_load_in_parallel(logdir, tmp_path):
    """A user's script calling traceinsight.load at top level (no ``if __name__ == "__main__"``)
    must not be re-run by the workers (what multiprocessing's spawn would do)."""
    import os
    import subprocess
    import sys
    script = tmp_path / "user.py"
    script.write_text("import traceinsight\n"
                      f"run = traceinsight.load({str(logdir)!r})\n"
                      "print(sum(m.ok for m in run.modes.values()))\n")
    env = dict(os.environ, **{parallel.JOBS_ENV: "2"})
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "4"
