"""``capture --remote``: two local worker processes running TF's profiler server on loopback,
traced at once from this process (which never imports TensorFlow)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder
from traceinsight.capture import remote
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError
from traceinsight.model import CATEGORIES

pytestmark = pytest.mark.capture

WORKER = Path(__file__).parent / "scripts" / "profiled_worker.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("workers")
    procs, addrs = [], []
    for i in range(2):
        port = free_port()
        ready = tmp / f"ready{i}"
        procs.append((subprocess.Popen([sys.executable, str(WORKER), str(port), str(ready)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), ready))
        addrs.append(f"localhost:{port}")
    try:
        deadline = time.monotonic() + 120
        while not all(r.exists() for _, r in procs):
            assert time.monotonic() < deadline, "workers did not start"
            assert all(p.poll() is None for p, _ in procs), "a worker died"
            time.sleep(0.2)
        yield addrs
    finally:
        for p, _ in procs:      # the processes this fixture started, by their own handles
            p.kill()
            p.wait()


def test_two_workers_traced_together(workers, tmp_path):
    rc = main(["capture", "--remote", ",".join(workers), "--duration-ms", "1500",
               "--out", str(tmp_path), "--name", "job"])
    assert rc == 0
    run_path = tmp_path / "job"
    manifest = runfolder.read_manifest(run_path)
    assert list(manifest["modes"]) == workers
    sessions = set()
    for w in workers:
        entry = manifest["modes"][w]
        assert entry["status"] == "ok", entry["error"]
        assert entry["profile_options"]["host"]["ok"] is True
        files = runfolder.pass_traces(run_path, entry["dir"], "host")
        assert len(files) == 1
        sessions.add(files[0].parent.name)
    assert len(sessions) == 1          # one session folder name: TensorBoard shows one capture
    run = traceinsight.load(run_path, use_cache=False)
    for w in workers:
        m = run.modes[w]
        assert m.ok, m.error
        assert len(m.steps) >= 5          # ~2.5 ms steps in a 1.5 s window
        cats = m.steps[list(CATEGORIES)].sum(axis=1).to_numpy()
        np.testing.assert_allclose(cats, m.steps["wall_ms"].to_numpy(), rtol=0.01)
        # the worker's own markers are consecutive step numbers
        nums = m.steps["step_num"].to_numpy()
        assert (np.diff(nums) == 1).all()
    # the two traces overlap in time: traced together, not one after the other
    t = [json_times(run_path, manifest["modes"][w]) for w in workers]
    assert max(t[0][0], t[1][0]) < min(t[0][1], t[1][1])
    # one job's two hosts, compared: each host's median is its mode's, the spread theirs
    (g,) = run.host_groups()
    assert sorted(h.mode for h in g.hosts) == sorted(workers)
    medians = {h.mode: h.median_ms for h in g.hosts}
    assert medians == {w: pytest.approx(run.modes[w].median_ms) for w in workers}
    assert g.spread_ms == pytest.approx(max(medians.values()) - min(medians.values()), abs=1e-6)
    # the workers number their own steps from their own start: matched by step_num where the
    # numbers meet, each step's waits are the slowest wall minus each host's wall of that number
    walls = [dict(zip(run.modes[h.mode].steady_steps["step_num"],
                      run.modes[h.mode].steady_steps["wall_ms"])) for h in g.hosts]
    common = sorted(set(walls[0]) & set(walls[1]))
    assert g.aligned == bool(common)
    assert [s.step_num for s in g.steps] == common
    for s in g.steps:
        w = [d[s.step_num] for d in walls]
        assert s.wait_ms == pytest.approx([max(w) - x for x in w], abs=1e-6)


def json_times(run_path, entry):
    """profile_start_time / profile_stop_time (ns) the trace records of itself."""
    from traceinsight.analysis.events import load_files
    table = load_files(runfolder.pass_traces(run_path, entry["dir"], "host"))
    env = [p for p in table.planes if p.name == "Task Environment"][0].stats
    return env["profile_start_time"], env["profile_stop_time"]


def test_dead_worker_and_bad_addresses(workers, tmp_path, capsys):
    dead = f"localhost:{free_port()}"
    rc = main(["capture", "--remote", f"{workers[0]},{dead}", "--duration-ms", "300",
               "--out", str(tmp_path), "--name", "half"])
    assert rc == 0
    modes = runfolder.read_manifest(tmp_path / "half")["modes"]
    assert modes[workers[0]]["status"] == "ok"
    assert modes[dead]["status"] == "failed" and modes[dead]["error"]
    capsys.readouterr()
    rc = main(["capture", "--remote", dead, "--duration-ms", "300", "--out", str(tmp_path)])
    assert rc == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "traceinsight: error: no worker returned a trace")
    for bad in ("nohost", "h:0", "h:70000", "a:1,a:1", ""):
        with pytest.raises(TraceinsightError):
            remote.parse_workers(bad)
    assert main(["capture", "--remote", "h:1"]) == 2   # no --duration-ms
