"""A run being written is locked: a second capture (new or --resume) is refused in one line naming the
live capture, without advising --resume; a lock left by a dead capture is taken over. (No TensorFlow:
the refusal happens before any workload process starts. The lock against a real running capture is
tested in test_capture.py's interrupted-capture test.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from traceinsight.capture import lock as lock_mod
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError

WORKLOAD = "def step(x):\n    return x\n\ndef inputs():\n    return (1.0,)\n"


def _run_folder(tmp_path):
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "modes": {}}))
    return run


def test_second_lock_is_refused_and_names_the_holder(tmp_path):
    run = _run_folder(tmp_path)
    with lock_mod.RunLock(run):
        info = lock_mod.holder(run)
        assert info["pid"] == os.getpid()
        with pytest.raises(TraceinsightError) as e:
            lock_mod.RunLock(run).acquire()
        msg = str(e.value)
        assert f"pid {os.getpid()}" in msg and "being written by another capture" in msg
        assert "--resume" not in msg
    assert lock_mod.holder(run) is None
    lock_mod.RunLock(run).acquire().release()  # free again


def test_resume_and_same_name_are_refused_while_a_capture_writes(tmp_path, capsys):
    run = _run_folder(tmp_path)
    wl = tmp_path / "w.py"
    wl.write_text(WORKLOAD)
    with lock_mod.RunLock(run):
        assert main(["capture", "--resume", str(run)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("traceinsight: error: ") and len(err.splitlines()) == 1
        assert "being written by another capture" in err and "--resume" not in err
        assert main(["capture", str(wl), "--out", str(run.parent), "--name", "r"]) == 2
        err = capsys.readouterr().err.strip()
        assert "being written by another capture" in err and "--resume" not in err
    # nobody writes it: the usual advice
    assert main(["capture", str(wl), "--out", str(run.parent), "--name", "r"]) == 2
    assert "already exists (use --resume" in capsys.readouterr().err


def test_lock_of_a_dead_capture_is_taken_over(tmp_path):
    run = _run_folder(tmp_path)
    # a capture process takes the lock and is killed while holding it
    code = ("import sys, os, signal; from traceinsight.capture.lock import RunLock; "
            "RunLock(sys.argv[1]).acquire(); print(os.getpid(), flush=True); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == -9
    dead = int(proc.stdout.split()[0])
    assert json.loads((run / lock_mod.LOCK_FILE).read_text())["pid"] == dead  # stale file left
    assert lock_mod.holder(run) is None
    with lock_mod.RunLock(run):
        assert lock_mod.holder(run)["pid"] == os.getpid()


def test_a_mode_left_running_says_whether_a_capture_still_writes_it(tmp_path):
    """run.json calls a mode running: while a capture holds the run's lock, the readers say it is
    being captured (by whom); once none does, that its process ended without writing its end,
    never that it was simply not captured."""
    from traceinsight.analysis.load import load_timings
    run = tmp_path / "runs" / "r"
    (run / "m").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "modes": {
        "m": {"dir": "m", "status": "running", "error": None}}}))
    with lock_mod.RunLock(run):
        mode = load_timings(run).modes["m"]
        assert mode.status == "missing"
        assert mode.error.startswith(f"being captured now (pid {os.getpid()}, since ")
    mode = load_timings(run).modes["m"]
    assert mode.status == "missing" and mode.error.startswith("not finished: the process that "
                                                              "captured it ended without")
