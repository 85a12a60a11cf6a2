"""The routes that run inside the user's own process (``traceinsight run -- python script.py``,
``with traceinsight.profile(...)``, ``traceinsight.keras.Profile``) against faults, as an unlucky
or hostile user meets them: the script dies inside or after the traced window (``os._exit``,
SIGSEGV), raises, is interrupted; the run is locked by a capture; the run folder cannot be made;
the disk is full. Each must keep what was measured, say what happened, never mark a mode ``ok``
with a bad trace, never raise into the user's code, and never listen on an address another
machine can reach (``tests/scripts/listeners.py`` reads the process's sockets from /proc)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from traceinsight import runfolder
from traceinsight.capture import lock as lock_mod
from traceinsight.cli import main

pytestmark = pytest.mark.capture

SCRIPTS = Path(__file__).parent / "scripts"
LOOP = SCRIPTS / "faulty_loop.py"
PY = sys.executable
SKIP, WINDOW = 5, 5          # as faulty_loop.py asks
# the steps a script that dies inside the window has saved: those before the session's start (no
# writes while it records), a step ahead of the window; a loop's session starts after its first
# step (SETTLE_MAX + 1 ahead of the window: see agent.Agent.end)
LOOP_SAVED = 1
ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _script(route: str, out: Path, fault: str, *more: str,
            python: str = PY) -> subprocess.CompletedProcess:
    """The script run by itself, profiling itself (``profile`` / ``callback`` routes)."""
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run([python, str(LOOP), route, str(out), fault, *more], capture_output=True,
                          text=True, timeout=300, env=_env())


def _run(out: Path, fault: str, *more: str, capfd=None, python: str = PY) -> int:
    """The plain loop under ``traceinsight run``."""
    out.mkdir(parents=True, exist_ok=True)
    return main(["run", "--out", str(out), "--name", "run", "--skip-steps", str(SKIP), "--steps",
                 str(WINDOW), "--", python, str(LOOP), "plain", str(out), fault, *more])


def _mode(out: Path) -> tuple[dict, dict | None]:
    manifest = runfolder.read_manifest(out / "run")
    (name, entry), = manifest["modes"].items()
    path = out / "run" / entry["dir"] / runfolder.TIMINGS
    return entry, (runfolder.read_json(path) if path.is_file() else None)


def _user(out: Path) -> dict:
    return json.loads((out / "user.json").read_text())


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]


# ----------------------------------------------------------------------------- listeners


def test_no_listener_off_loopback_while_run_traces(tmp_path):
    assert _run(tmp_path, "none") == 0
    user = _user(tmp_path)
    assert user["checked"] and user["not_loopback"] == []
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW


@pytest.mark.parametrize("route", ["profile", "callback"])
def test_no_listener_off_loopback_in_process(tmp_path, route):
    done = _script(route, tmp_path, "none")
    assert done.returncode == 0, done.stderr[-3000:]
    _no_traceback(done.stderr)
    user = _user(tmp_path)
    assert user["checked"] and user["not_loopback"] == []
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert entry["profile_options"]["host"]["recorded"]["host_tracer_level"] == 3
    assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW
    # TF's own lines about the profiler session are held back from the script's stderr
    assert "profiler_session" not in done.stderr and "Profiler server" not in done.stderr


def no_listener_off_loopback(tmp_path: Path, route: str, python: str) -> None:
    """One in-process route run under ``python``: no listener off loopback while it traced, and
    its mode ok with the window's steps (``tests/test_old_tf.py`` runs it on the oldest TF)."""
    if route == "run":
        assert _run(tmp_path, "none", python=python) == 0
    else:
        done = _script(route, tmp_path, "none", python=python)
        assert done.returncode == 0, done.stderr[-3000:]
    user = _user(tmp_path)
    assert user["checked"] and user["not_loopback"] == []
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW


def test_steps_are_met_when_time_passes_between_them(tmp_path):
    """Python work between steps (here a sleep) does not shorten the traced window."""
    done = _script("profile", tmp_path, "none", "14", "0.2")
    assert done.returncode == 0, done.stderr[-3000:]
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW


# ----------------------------------------------------------------------------- the script dies


def test_run_exit_inside_the_window_keeps_the_steps(tmp_path):
    assert _run(tmp_path, "exit_in") == 7
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "failed"
    assert "exited with status 7 inside the traced window" in entry["error"]
    assert "never imported" not in entry["error"]
    assert timings is not None and len(timings["all_steps"]["step_nums"]) >= LOOP_SAVED


def test_run_segv_inside_the_window_keeps_the_steps(tmp_path):
    rc = _run(tmp_path, "segv_in")
    assert rc == 128 + 11
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "failed" and "SIGSEGV inside the traced window" in entry["error"]
    # the steps saved when the profiler started
    assert timings is not None and len(timings["all_steps"]["step_nums"]) >= LOOP_SAVED


def test_run_exit_after_the_window_keeps_the_trace(tmp_path):
    # time between steps: the trace is saved before the script exits, three steps later
    assert _run(tmp_path, "exit_after", "16", "0.1") == 7
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert any("exited with status 7" in n for n in entry["notes"])
    assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW


def _finished(out: Path, timeout_s: float = 120.0) -> tuple[dict, dict | None]:
    """The mode once it is finished for good (the watcher finishes it after the process: also a
    mode the callback finished before ``fit`` ended, ``provisional``)."""
    import time
    deadline = time.monotonic() + timeout_s
    while True:
        entry, timings = _mode(out)
        if entry["status"] != "running" and not entry.get("provisional") \
                or time.monotonic() > deadline:
            return entry, timings
        time.sleep(0.2)


@pytest.mark.parametrize("fault", ["exit_in", "segv_in", "exit_after"])
@pytest.mark.parametrize("route", ["profile", "callback"])
def test_in_process_death_is_finished_by_the_watcher(tmp_path, route, fault):
    """Nothing of a process runs after os._exit or SIGSEGV: the watcher process finishes the mode,
    with the steps the agent had saved and what happened."""
    done = _script(route, tmp_path, fault, "16", "0.05")
    assert done.returncode == (7 if fault.startswith("exit") else -11)
    entry, timings = _finished(tmp_path)
    assert not entry.get("provisional")
    said = "the process ended without finishing the mode (os._exit, a signal or a crash)"
    if fault == "exit_after":        # the window's trace was saved before: the mode stands
        assert entry["status"] == "ok", entry["error"]
        assert any(n.startswith(said) for n in entry["notes"]), entry["notes"]
        assert timings is not None and len(timings["traced"]["host"]["step_nums"]) == WINDOW
    else:
        assert entry["status"] == "failed", entry
        assert entry["error"].startswith(said + " inside the traced window"), entry["error"]
        assert timings is not None and len(timings["all_steps"]["step_nums"]) >= (
            SKIP - 1 if route == "callback" else LOOP_SAVED)
    assert not (tmp_path / "run" / entry["dir"] / ".agent.json").exists()


# ----------------------------------------------------------------------------- the code raises


def test_profile_block_raising_finishes_the_mode(tmp_path):
    done = _script("profile", tmp_path, "raise_in")
    assert done.returncode == 1
    # the user's own exception, unchanged, and nothing of ours in the traceback
    assert f"RuntimeError: the script's own error at step {SKIP + 2}" in done.stderr
    assert "traceinsight" not in done.stderr.split("Traceback", 1)[1].split("RuntimeError")[0]
    entry, timings = _mode(tmp_path)
    assert entry["status"] == "ok", entry["error"]
    assert any("raised RuntimeError" in n for n in entry["notes"])
    assert timings is not None and 1 <= len(timings["traced"]["host"]["step_nums"]) < WINDOW


def test_profile_block_interrupted_finishes_the_mode(tmp_path):
    done = _script("profile", tmp_path, "interrupt_in")
    assert done.returncode != 0 and "KeyboardInterrupt" in done.stderr
    entry, _ = _mode(tmp_path)
    assert entry["status"] != "running"
    assert any("interrupted" in n for n in entry["notes"]), entry


@pytest.mark.parametrize("fault", ["raise_in", "raise_after"])
def test_fit_raising_finishes_the_mode(tmp_path, fault):
    done = _script("callback", tmp_path, fault)
    assert done.returncode == 1 and "RuntimeError: the script's own error" in done.stderr
    entry, timings = _mode(tmp_path)
    assert entry["status"] != "running"
    assert timings is not None
    if fault == "raise_after":      # the window was saved before fit raised
        assert entry["status"] == "ok", entry["error"]
        assert len(timings["traced"]["host"]["step_nums"]) == WINDOW
    assert any("on_train_end never ran" in n for n in entry["notes"]), entry["notes"]


# ----------------------------------------------------------------------------- the run folder


def test_run_into_a_locked_run_refuses_naming_the_holder(tmp_path, capfd):
    assert _run(tmp_path, "none") == 0
    capfd.readouterr()
    with lock_mod.RunLock(tmp_path / "run"):
        rc = main(["run", "--into", str(tmp_path / "run"), "--mode", "extra", "--", PY, "-c", "0"])
        err = capfd.readouterr().err
    assert rc != 0 and f"pid {os.getpid()}" in err and "Traceback" not in err
    assert "extra" not in runfolder.read_manifest(tmp_path / "run")["modes"]


def _untraced_script(tmp_path: Path, **options) -> subprocess.CompletedProcess:
    code = ("import warnings, tensorflow as tf, traceinsight\n"
            "f = tf.function(lambda x: x * 2)\n"
            f"with traceinsight.profile(**{options!r}) as p:\n"
            "    for _ in range(4): y = f(tf.constant(1.0))\n"
            "print('ran', float(y), p.run_path)\n")
    return subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=_env())


def test_profile_runs_untraced_when_the_folder_cannot_be_made(tmp_path):
    (tmp_path / "runs" / "taken").mkdir(parents=True)
    done = _untraced_script(tmp_path, out="runs", name="taken")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[:2] == ["ran", "2.0"]
    _no_traceback(done.stderr)
    assert "name=" in done.stderr and "--name" not in done.stderr
    assert done.stderr.count("runs untraced") == 1


def test_profile_runs_untraced_in_a_read_only_folder(tmp_path):
    if os.geteuid() == 0 and shutil.which("unshare") is None:
        pytest.skip("root writes into a read-only folder")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("this user writes into a read-only folder (root)")
        done = _untraced_script(tmp_path, out=str(ro))
    finally:
        ro.chmod(0o700)
    assert done.returncode == 0 and done.stdout.startswith("ran 2.0"), done.stderr[-3000:]
    _no_traceback(done.stderr)


def test_profile_into_a_locked_run_runs_untraced(tmp_path):
    assert _run(tmp_path, "none") == 0
    with lock_mod.RunLock(tmp_path / "run"):
        done = _untraced_script(tmp_path, into=str(tmp_path / "run"), mode="extra")
    assert done.returncode == 0 and done.stdout.startswith("ran 2.0"), done.stderr[-3000:]
    _no_traceback(done.stderr)
    assert f"pid {os.getpid()}" in done.stderr
    assert "extra" not in runfolder.read_manifest(tmp_path / "run")["modes"]


# ----------------------------------------------------------------------------- a full disk


@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MiB tmpfs, filled to ``free`` bytes by the test (root only: skipped elsewhere)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")

    def fill(free: int) -> Path:
        st = os.statvfs(mnt)
        avail = st.f_bavail * st.f_frsize
        with open(mnt / "filler", "wb") as f:
            f.write(b"\0" * max(0, avail - free))
        return mnt
    yield fill
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("free_kib", [8, 24, 200])
@pytest.mark.parametrize("route", ["profile", "callback", "run"])
def test_full_disk_is_never_ok_and_never_raises(tiny_disk, tmp_path, capfd, route, free_kib):
    """A real full disk (a tmpfs): the mode ends ``failed`` saying the disk was full, or ``ok``
    with a trace that parses, never ``running``; or, when even the space the mode's end needs
    cannot be set aside, the capture does not start, saying so in one line (``run``: a non-zero
    exit; in process: one warning, the code runs untraced)."""
    out = tmp_path / "user"
    out.mkdir()
    disk = tiny_disk(free_kib << 10)
    if route == "run":
        rc = main(["run", "--out", str(disk), "--name", "run", "--skip-steps", str(SKIP),
                   "--steps", str(WINDOW), "--", PY, str(LOOP), "plain", str(out), "none"])
        err = capfd.readouterr().err
    else:
        done = _script(route, out, "none", "16", "0", str(disk))
        err = done.stderr
        rc = done.returncode
        assert rc == 0, err[-3000:]
        assert (out / "user.json").is_file()       # the script itself ran to its end
    _no_traceback(err)
    if not (disk / "run" / runfolder.MANIFEST).is_file():
        assert "the disk is full (ENOSPC)" in err, err[-3000:]      # said so, in one line
        if route == "run":
            assert rc != 0 and not (out / "user.json").exists()
        else:
            assert err.count("runs untraced") == 1
        assert not (disk / "run").exists()       # nothing half-made left behind
        return
    assert rc == 0, err[-3000:]
    entry, timings = _finished(disk)
    assert entry["status"] in ("ok", "failed"), entry
    if entry["status"] == "ok":     # then its trace parses and the disk was not full
        from traceinsight.capture.orchestrate import verify_traces
        assert verify_traces(disk / "run", entry["dir"], timings) is None
    else:
        assert "disk is full" in entry["error"], entry["error"]
        assert f"mode faulty_loop: {entry['error']}" in err
    assert not (disk / "run" / ".capture.reserve").exists()


# the in-process routes with a disk that fills once the steps are done (after the traced window):
# every write of the process then fails with ENOSPC (``runfolder.atomic_write_bytes``: run.json,
# timings.json; the agent's result file), except, with ``reserve``, once the space traceinsight
# set aside for the mode's end is given back (a real full disk does that: see the tmpfs test
# above, which needs root)
FILLING = """
import errno, os, sys
import tensorflow as tf
import traceinsight
from traceinsight import runfolder
from traceinsight.capture.hook import agent as agent_mod
route, runs, how = sys.argv[1], sys.argv[2], sys.argv[3]
reserve = how != "never"
full = []

def refuse(path):
    if full and (not reserve or os.path.exists(os.path.join(runs, "run", ".capture.reserve"))):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

write_bytes, write_json = runfolder.atomic_write_bytes, agent_mod._atomic_json
def atomic_write_bytes(path, data):
    refuse(path)
    return write_bytes(path, data)
def agent_json(path, obj):
    refuse(path)
    return write_json(path, obj)
runfolder.atomic_write_bytes, agent_mod._atomic_json = atomic_write_bytes, agent_json

if route == "profile":
    f = tf.function(lambda x: x * 2)
    with traceinsight.profile(out=runs, name="run", skip_steps=3, steps=5) as p:
        for i in range(16):
            if how == "die" and i == 1:     # full before the window (the agent saves before it)
                full.append(1)
            f(tf.constant(1.0))
        p.session.agent.wait_trace()
        if how == "die":
            os._exit(3)
        full.append(1)
else:
    import keras, numpy as np
    import traceinsight.keras
    class Fill(keras.callbacks.Callback):     # before Profile: the disk is full at fit's end
        def on_train_end(self, logs=None):
            full.append(1)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    data = np.zeros((16 * 16, 4), "float32")
    model.fit(data, data[:, :2], batch_size=16, epochs=1, verbose=0, callbacks=[
        Fill(), traceinsight.keras.Profile(out=runs, name="run", skip_steps=3, steps=5)])
print("done")
"""


@pytest.mark.parametrize("route", ["profile", "callback"])
def test_a_disk_full_at_the_modes_end_fails_it_saying_so(tmp_path, route):
    """timings.json cannot be written: the mode ends ``failed``, its error naming the full disk
    and the file (run.json written in the space set aside), the trace and the earlier record
    kept; the user's code is not disturbed (no exception, one line on stderr)."""
    done = subprocess.run([PY, "-c", FILLING, route, str(tmp_path), "reserve"],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-3000:]
    _no_traceback(done.stderr)
    entry, _ = _finished(tmp_path)
    assert entry["status"] == "failed", entry
    timings = tmp_path / "run" / entry["dir"] / runfolder.TIMINGS
    # fit's 16 batches; the loop's 16 calls are 15 iterations (the last has no next call)
    n = 15 if route == "profile" else 16
    assert entry["error"] == (f"the disk is full (ENOSPC): cannot write {timings.resolve()} "
                              f"(No space left on device): the {n} steps measured are not "
                              "recorded"), entry["error"]
    assert f"traceinsight: recording failed: mode session: {entry['error']}" in done.stderr
    # the agent's own file could not be written either: one line, the mode finished from memory
    assert done.stderr.count("No space left on device") == 2, done.stderr[-3000:]
    assert any(n.endswith("(the mode was finished from the steps it held in memory)")
               for n in entry["notes"]), entry["notes"]
    assert runfolder.pass_traces(tmp_path / "run", entry["dir"], "host")    # the trace is kept
    assert not (tmp_path / "run" / ".capture.reserve").exists()
    assert not (tmp_path / "run" / ".capture.lock").exists()


def test_a_run_json_the_process_cannot_write_is_written_by_its_watcher(tmp_path):
    """Even the space set aside does not let the process write run.json: it says so in one
    line, and its watcher process writes the mode's end from the state the process handed it,
    saying why (here the disk has room again by then, so the mode stands)."""
    done = subprocess.run([PY, "-c", FILLING, "profile", str(tmp_path), "never"],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-3000:]
    _no_traceback(done.stderr)
    assert "could not finish mode" in done.stderr and "was not updated" in done.stderr
    entry, timings = _finished(tmp_path)
    assert entry["status"] == "ok", entry
    assert any(n.startswith("the profiling process could not write the mode's end (the disk "
                            "is full (ENOSPC): cannot write") and "No space left on device" in n
               and n.endswith("traceinsight's watcher process wrote it after")
               for n in entry["notes"]), entry["notes"]
    # 16 calls of the loop: 15 iterations (the last has no next call)
    assert timings is not None and len(timings["all_steps"]["step_nums"]) == 15


def test_a_process_that_dies_on_a_full_disk_is_finished_by_its_watcher_saying_so(tmp_path):
    """The agent's file could not be written from before the traced window on, then the process
    died: its watcher, told of the failed write, does not take the older file for the last word
    (which would say the process died inside the traced window), and says the disk was full."""
    done = subprocess.run([PY, "-c", FILLING, "profile", str(tmp_path), "die"],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 3, done.stderr[-3000:]
    _no_traceback(done.stderr)
    entry, timings = _finished(tmp_path)
    assert entry["status"] == "failed", entry
    result = (tmp_path / "run" / entry["dir"]).resolve() / ".agent.json"
    assert entry["error"] == (
        "the disk is full (ENOSPC): traceinsight could not write its record of the steps "
        f"({result}: No space left on device) once it held 1 step (the process ended without "
        "finishing the mode (os._exit, a signal or a crash)): only what it wrote before that is "
        "recorded, not the end of the traced window"), entry["error"]
    # what it wrote before: its first record, and maybe one after the first step
    assert timings is not None and timings["all_steps"]["step_nums"] in ([], [0])
    assert runfolder.pass_traces(tmp_path / "run", entry["dir"], "host")    # the trace is kept


RLIMITED = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
import tensorflow as tf
f = tf.function(lambda x: x * 2)
for _ in range(12):
    f(tf.constant(1.0))
print("done")
"""


def test_run_says_when_its_agent_cannot_write_its_record(tmp_path, capfd):
    """``run``'s agent cannot write its result file past a file-size limit the script set
    (``ulimit -f``: EFBIG, as a full disk's ENOSPC): the script runs on undisturbed, and the mode
    ends ``failed`` saying why, not as if the script never imported TensorFlow (what its older
    record says)."""
    script = tmp_path / "limited.py"
    script.write_text(RLIMITED)
    rc = main(["run", "--out", str(tmp_path), "--name", "run", "--skip-steps", "3", "--steps",
               "5", "--", PY, str(script)])
    out, err = capfd.readouterr()
    assert rc == 0 and out.strip() == "done", err[-3000:]
    _no_traceback(err)
    entry, _ = _mode(tmp_path)
    result = (tmp_path / "run" / entry["dir"]).resolve() / ".agent.json"
    assert entry["status"] == "failed", entry
    assert entry["error"].startswith(
        "the file-size limit was reached (EFBIG): traceinsight could not write its record of the "
        f"steps ({result}: File too large) once it held 0 steps (the script ended)"), entry["error"]
    assert err.count(f"could not write {result}") == 1      # the agent's one line


def test_a_second_interrupt_while_the_trace_is_saved_still_finishes_the_mode(tmp_path):
    """Ctrl-C ends the block inside the window; a second Ctrl-C lands while ``profile`` waits for
    the trace to be saved (made slow here): the mode is still finished, saying so, and the
    interrupt goes on."""
    code = f"""
import os, signal, sys, threading, time
import tensorflow as tf
import traceinsight
f = tf.function(lambda x: x * 2)
try:
    with traceinsight.profile(out={str(tmp_path)!r}, name="run", skip_steps=1, steps=50):
        for i in range(6):
            f(tf.constant(1.0))
        compat = sys.modules["_traceinsight_run_compat"]
        stop = compat.LocalTrace.stop
        def slow(self):
            time.sleep(3)
            stop(self)
        compat.LocalTrace.stop = slow
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("interrupted")
"""
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0 and done.stdout.strip() == "interrupted", done.stderr[-3000:]
    _no_traceback(done.stderr)
    entry, _ = _mode(tmp_path)
    assert entry["status"] == "failed"
    assert any("interrupted again while traceinsight waited for its trace" in n
               for n in entry["notes"])
    assert "the trace was still being saved then" in entry["error"]
