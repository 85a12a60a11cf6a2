"""A full disk while an in-process mode (``run``, ``profile()``, the Keras callback) is finished,
without TensorFlow: the agent's result file is written here by hand, and the disk "fills" by
making ``runfolder.atomic_write_bytes`` refuse with ENOSPC, as a full disk does, until the space
the mode set aside (``RESERVE``) is given back. The same faults with real captures, and a
real full disk (a tmpfs, root only), are in tests/test_inprocess_faults.py."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from traceinsight import runfolder
from traceinsight.capture import script
from traceinsight.capture.reserve import RESERVE, RESERVE_MIN_BYTES
from traceinsight.errors import TraceinsightError

SETTINGS = {"skip_steps": 2, "steps": 3, "step_function": None, "trace_ms": None,
            "max_trace_ms": 30000}


def _record(tmp_path: Path) -> script.RecordedMode:
    return script.RecordedMode(
        mode="train", into=None, out=tmp_path, name="run", stem="train", settings=SETTINGS,
        workload={"path": "train.py", "name": "train", "kind": "script", "doc": None},
        command="traceinsight run -- python train.py", entry={"command": "python train.py"})


def _agent_file(rec: script.RecordedMode, n: int = 8) -> dict:
    """An agent's result: ``n`` untraced steps (no trace: the mode cannot be ``ok``, but its steps
    are kept in timings.json)."""
    res = {"pid": os.getpid(), "versions": {"tensorflow": "2.21.0"}, "steps_s": [0.01] * n,
           "step_nums": list(range(n)), "traced": [False] * n, "step_kinds": {"tf.function": n},
           "trace": {}, "notes": [], "exited": True, "broken": False, "unmarked_steps": 0}
    (rec.mode_path / script.RESULT).write_text(json.dumps(res))
    return res


@pytest.fixture
def full_disk(monkeypatch):
    """``fill(run_path, reserve=True)``: from now on every run-folder write fails with ENOSPC;
    with ``reserve``, writes succeed again once the run's reserve is given back."""
    real = runfolder.atomic_write_bytes

    def fill(run_path: Path, reserve: bool = True) -> list[str]:
        refused: list[str] = []

        def write(path, data):
            if not reserve or (run_path / RESERVE).exists():
                refused.append(Path(path).name)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(path, data)
        monkeypatch.setattr(runfolder, "atomic_write_bytes", write)
        return refused
    return fill


def test_a_mode_sets_space_aside_and_gives_it_back(tmp_path):
    rec = _record(tmp_path)
    kept = rec.run_path / RESERVE
    assert kept.stat().st_size >= RESERVE_MIN_BYTES
    # allocated, not a sparse file: the space is the disk's no more
    assert kept.stat().st_blocks * 512 >= RESERVE_MIN_BYTES
    _agent_file(rec)
    rec.finish(0)
    assert not kept.exists() and not (rec.run_path / ".capture.lock").exists()
    (entry,) = runfolder.read_manifest(rec.run_path)["modes"].values()
    assert (entry["status"], entry["error"]) == ("failed", "the trace was not saved"), entry
    assert runfolder.read_timings(rec.mode_path / runfolder.TIMINGS)["all_steps"]["step_nums"] \
        == list(range(8))


def test_timings_the_disk_cannot_hold_fail_the_mode_in_the_space_set_aside(tmp_path, full_disk,
                                                                           capfd):
    rec = _record(tmp_path)
    _agent_file(rec)
    refused = full_disk(rec.run_path)
    entry = rec.finish(0)
    # timings.json refused, then run.json, which is written again once the reserve is given back
    assert refused == [runfolder.TIMINGS, runfolder.MANIFEST]
    on_disk = runfolder.read_manifest(rec.run_path)["modes"]["train"]
    assert on_disk["status"] == entry["status"] == "failed"
    assert on_disk["error"] == (f"the disk is full (ENOSPC): cannot write "
                                f"{rec.mode_path / runfolder.TIMINGS} (No space left on device): "
                                "the 8 steps measured are not recorded")
    assert (rec.mode_path / script.RESULT).is_file()     # what the agent wrote is kept
    rec.say()
    err = capfd.readouterr().err
    assert err.strip() == f"traceinsight: recording failed: mode train: {on_disk['error']}"
    rec.say(0)       # ``run``: the script's exit status is passed through, and said to be its own
    assert capfd.readouterr().err.strip() == (f"traceinsight: recording failed: mode train: "
                                              f"{on_disk['error']}; exit status 0 is the "
                                              "script's own")


def test_run_json_the_disk_cannot_hold_even_so_is_said_in_one_line(tmp_path, full_disk, capfd):
    rec = _record(tmp_path)
    _agent_file(rec)
    full_disk(rec.run_path, reserve=False)
    entry = rec.finish(0)         # never raises
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"traceinsight: could not finish mode train of {rec.run_path}: the disk is full "
        f"(ENOSPC): cannot write {rec.run_path / runfolder.MANIFEST} (No space left on device); "
        "its entry in run.json was not updated"), err
    assert entry["status"] == "failed"     # in memory; run.json keeps its last word
    assert rec.handoff is not None and rec.handoff["res"] is None   # for a watcher, if any
    rec.say()
    assert capfd.readouterr().err == ""    # said once
    rec.say(0)       # ``run``: that the script's exit status is its own
    assert capfd.readouterr().err == ("traceinsight: recording failed: mode train is not "
                                      "recorded; exit status 0 is the script's own\n")
    assert not (rec.run_path / RESERVE).exists()


def test_no_space_to_set_aside_refuses_to_start_and_leaves_nothing(tmp_path, monkeypatch):
    def refuse(fd, offset, size):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "posix_fallocate", refuse)
    with pytest.raises(TraceinsightError) as e:
        _record(tmp_path)
    assert str(e.value).startswith("the disk is full (ENOSPC): cannot set aside ")
    assert str(e.value).endswith("(No space left on device); free some space")
    assert not (tmp_path / "run").exists()


def test_an_agent_whose_last_write_failed_is_not_read_as_the_last_word(tmp_path):
    """``run``'s agent told its parent that its last write failed: the file is older than the
    script's end, and the mode says so rather than what the older file suggests."""
    rec = _record(tmp_path)
    _agent_file(rec, n=1)      # the record before the failure
    failure = {"path": str(rec.mode_path / script.RESULT), "errno": errno.EFBIG,
               "strerror": os.strerror(errno.EFBIG), "after_steps": 1, "trace_saved": False,
               "error": "OSError: [Errno 27] File too large"}
    r, w = os.pipe()
    for message in ({"write_failed": dict(failure, after_steps=0)}, {"write_ok": 1},
                    {"write_failed": failure}):
        os.write(w, json.dumps(message).encode() + b"\n")
    told = script._agent_told(r)      # noqa: SLF001 - the parent's reading of its pipe
    os.close(w)
    os.close(r)
    assert told == failure
    entry = rec.finish(0, write_failed=told)
    assert entry["status"] == "failed"
    assert entry["error"] == (
        f"the file-size limit was reached (EFBIG): traceinsight could not write its record of the "
        f"steps ({failure['path']}: File too large) once it held 1 step (the script ended): only "
        "what it wrote before that is recorded, not the end of the traced window")
    assert not any("exit handler did not run" in n for n in entry["notes"]), entry["notes"]


def test_a_write_that_succeeds_after_a_failed_one_is_the_last_word():
    r, w = os.pipe()
    os.write(w, b'{"write_failed": {"after_steps": 3}}\n{"write_ok": 5}\nnot json\n')
    assert script._agent_told(r) is None      # noqa: SLF001
    os.close(w)
    os.close(r)


def test_a_mode_that_fails_at_its_start_on_a_full_disk_never_raises(tmp_path, full_disk, capfd):
    """``fail`` (the script could not start, the agent could not be made): with the reserve's
    space its status is written; without, one line, and the lock and the reserve go."""
    rec = _record(tmp_path)
    full_disk(rec.run_path)
    rec.fail("cannot start python9: No such file or directory")
    assert runfolder.read_manifest(rec.run_path)["modes"]["train"]["status"] == "failed"
    rec2 = _record(tmp_path / "second")
    full_disk(rec2.run_path, reserve=False)
    rec2.fail("cannot start python9: No such file or directory")     # never raises
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "could not finish mode train" in err, err
    assert runfolder.read_manifest(rec2.run_path)["modes"]["train"]["status"] == "running"
    assert not (rec2.run_path / RESERVE).exists()
    assert not (rec2.run_path / ".capture.lock").exists()


def test_an_agent_that_could_never_write_says_why_nothing_was_saved(tmp_path):
    rec = _record(tmp_path)
    failure = {"path": str(rec.mode_path / script.RESULT), "errno": errno.ENOSPC,
               "strerror": os.strerror(errno.ENOSPC), "after_steps": 0, "trace_saved": False}
    entry = rec.finish(0, write_failed=failure)
    assert entry["status"] == "failed"
    assert entry["error"] == (
        "the script exited with status 0; the disk is full (ENOSPC): traceinsight could not "
        f"write its record of the steps ({failure['path']}: No space left on device): nothing it "
        "measured was saved")
