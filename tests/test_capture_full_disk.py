"""``traceinsight capture`` on a disk that fills: the mode being captured ends ``failed`` naming
the disk, the modes captured stay ``ok`` and readable, the modes not yet run stay ``pending``
saying they were not run because the disk is full, the command ends in one line (exit 1, no
traceback), ``report`` reads the run and ``capture --resume`` completes it once space is freed.

The quick tests need no TensorFlow: the workload processes are stood in for (``orchestrate``'s
``run_child`` copies a committed trace into the mode's folder and hands back its timings) and the
disk "fills" by making ``runfolder.atomic_write_bytes`` refuse with ENOSPC at one write point
(run.json, timings.json, the mode's stderr.log) until the space the run set aside
(``reserve.RESERVE``) is given back, as a real full disk does once that file is deleted. The
workload process's own refused writes (its result) are tested through its exit status. The tests
marked ``capture`` run real captures: the trace write refused in the workload process (TensorFlow's
own error, injected), and a real full disk (a tmpfs: root only, skipped elsewhere)."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from traceinsight import runfolder
from traceinsight.analysis.load import load
from traceinsight.capture import children, environment, orchestrate, planning, reserve
from traceinsight.cli import main
from traceinsight.tui import get_app

from test_tui import screen_text
from tui_runs import settle

ROOT = Path(__file__).resolve().parents[1]
COSTLY = ROOT / "samples" / "costly_loop.py"
TRACED = ROOT / "tests" / "data" / "attribution" / "costly-loop-v1" / "function"
MODES = ["eager", "function", "v1-session"]
ENOSPC = os.strerror(errno.ENOSPC)


def one_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("traceinsight: error: "), err
    assert "Traceback" not in err
    return lines[0]


def modes_of(run: Path) -> dict[str, dict]:
    return runfolder.read_manifest(run)["modes"]


@pytest.fixture
def stand_in(monkeypatch):
    """Workload processes stood in for: each mode "captures" the committed function trace."""
    stand_in_for(monkeypatch)


def stand_in_for(monkeypatch) -> None:
    timings = runfolder.read_json(TRACED / runfolder.TIMINGS)
    host = timings["traced"]["host"]["trace"].split("/", 1)[1]

    def probe(wf, timeout):
        return {"has_y": False, "tensorflow": "2.21.0", "keras": "3.15.1", "numpy": "2.4.6",
                "gpus": [], "tf_keras_installed": False, "jax_installed": False}

    def run_child(what, spec, workdir, timeout, env, stderr_path=None, poll=None,
                  keep_alive=False):
        try:
            workdir.mkdir(parents=True, exist_ok=True)
            shutil.copytree(TRACED / "host", workdir / "host")
            if stderr_path is not None:
                runfolder.atomic_write_bytes(stderr_path, b"the workload's output\n")
        except OSError as e:
            raise reserve.write_error(stderr_path or workdir, e) from None
        got = json.loads(json.dumps(timings))
        got["mode"] = spec["mode"]
        got["traced"]["host"]["trace"] = str(workdir.resolve() / host)
        if not keep_alive:
            return children.ChildResult(True, got, "", None, 0)
        got["rounds"] = [{"round": 0, "steps_s": got["steps_s"], "step_nums": got["step_nums"],
                          "other_cpu_busy": 0.0}]
        return children.ChildResult(True, got, "", None, None, live=LiveStandIn())

    monkeypatch.setattr(planning, "probe_workload", probe)
    monkeypatch.setattr(orchestrate, "run_child", run_child)


class LiveStandIn:
    """A mode's process kept alive for the interleaved rounds: each round, five 2 ms steps."""

    proc = type("Proc", (), {"poll": staticmethod(lambda: None)})

    def ask_round(self, i: int, out: Path, timeout: float) -> dict:
        return {"round": i, "steps_s": [0.002] * 5, "step_nums": list(range(1000 * i, 1000 * i + 5)),
                "other_cpu_busy": 0.0}

    def close(self) -> None:
        pass

    def kill(self) -> None:
        pass


def fill_at(monkeypatch, run: Path, name: str, nth: int = 1, reserve_back: bool = True) -> list:
    """From the ``nth`` write of a file called ``name`` on, every write fails with ENOSPC until
    the run's reserve is given back (never, with ``reserve_back`` False). Returns the refused
    writes' names."""
    real = runfolder.atomic_write_bytes
    seen: list[int] = [0]
    refused: list[str] = []

    def write(path, data):
        path = Path(path)
        if path.name == name:
            seen[0] += 1
        if seen[0] >= nth and (not reserve_back or (run / reserve.RESERVE).exists()):
            refused.append(path.name)
            raise OSError(errno.ENOSPC, ENOSPC)
        return real(path, data)
    monkeypatch.setattr(runfolder, "atomic_write_bytes", write)
    return refused


def refuse_inside(monkeypatch, run: Path) -> None:
    """Every write inside the run folder fails with ENOSPC (the analysis cache's included)."""
    real = runfolder.atomic_write_bytes

    def write(path, data):
        if Path(path).resolve().is_relative_to(run.resolve()):
            raise OSError(errno.ENOSPC, ENOSPC)
        return real(path, data)
    monkeypatch.setattr(runfolder, "atomic_write_bytes", write)


def capture(out: Path, *more: str) -> int:
    return main(["capture", str(COSTLY), "--modes", ",".join(MODES), "--out", str(out),
                 "--name", "run", "--rounds", "1", "--no-python-tracer", *more])


def check_stopped(run: Path, err: str, failed: str, what: str) -> dict[str, dict]:
    """The mode ``failed`` failed on the disk (its error naming ``what`` it could not write), the
    modes before it kept ok, those after it not run, saying why; one line; nothing left behind."""
    line = one_line(err)
    modes = modes_of(run)
    i = MODES.index(failed)
    assert [modes[m]["status"] for m in MODES] == ["ok"] * i + ["failed"] + ["pending"] * (
        len(MODES) - i - 1), modes
    error = modes[failed]["error"]
    assert error.startswith("the disk is full ") and what in error, error
    resume = f"traceinsight capture --resume {run}"
    for m in MODES[i + 1:]:
        assert modes[m]["error"] == (f"not run: the disk is full (ENOSPC) (mode {failed} failed "
                                     f"on it); free some space, then: {resume}"), modes[m]
    assert line == (f"traceinsight: error: {error}; mode {failed} failed"
                    + (f"; not run: {', '.join(MODES[i + 1:])}" if i + 1 < len(MODES) else "")
                    + (f"; {i} mode(s) captured are kept" if i else "; no mode was captured")
                    + f". Free some space, then: {resume}")
    for m in MODES[:i]:     # kept whole: its timings and trace read back
        assert runfolder.read_timings(run / modes[m]["dir"] / runfolder.TIMINGS)["mode"] == m
    assert not (run / reserve.RESERVE).exists() and not (run / ".capture.lock").exists()
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]
    return modes


def report_reads(run: Path, tmp_path: Path, capsys) -> str:
    """``report`` reads the run (the failed and not-run modes said, the kept one measured)."""
    out = tmp_path / "report.md"
    assert main(["report", str(run), "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return out.read_text()


@pytest.mark.parametrize("name, nth, what", [
    ("run.json", 4, "run.json"),        # the second mode's start ("running")
    ("run.json", 5, "run.json"),        # the second mode's end ("ok"): it stays ok
    (runfolder.TIMINGS, 2, runfolder.TIMINGS),
    ("stderr.log", 2, "stderr.log"),
])
def test_a_disk_that_fills_during_a_mode_stops_the_capture_saying_so(
        stand_in, tmp_path, monkeypatch, capsys, name, nth, what):
    out = tmp_path / "runs"
    run = out / "run"
    refused = fill_at(monkeypatch, run, name, nth)
    assert capture(out) == 1
    err = capsys.readouterr().err
    assert refused and refused[0] == name
    if (name, nth) == ("run.json", 5):
        # the mode's timings.json and trace were written: only run.json's word on it was refused,
        # written then with the space set aside: it is ok, and the next mode is the one stopped
        modes = modes_of(run)
        assert [modes[m]["status"] for m in MODES] == ["ok", "ok", "pending"], modes
        assert one_line(err).startswith("traceinsight: error: the disk is full (ENOSPC): cannot "
                                        f"write {run / 'run.json'} (No space left on device); "
                                        "not run: v1-session; 2 mode(s) captured are kept.")
        return
    modes = check_stopped(run, err, "function", what)
    assert modes["function"]["error"].startswith("the disk is full (ENOSPC): cannot write ")
    # the disk still full: report reads the run, its analysis cache not written
    monkeypatch.undo()
    refuse_inside(monkeypatch, run)
    text = report_reads(run, tmp_path, capsys)
    assert "failed: the disk is full (ENOSPC)" in text and "missing: not run: the disk" in text
    assert not [p for p in run.rglob("*") if p.is_file() and ".traceinsight" in p.parts]
    # space freed: --resume captures what the disk stopped, and nothing else
    monkeypatch.undo()
    stand_in_for(monkeypatch)
    assert main(["capture", "--resume", str(run), "--no-python-tracer"]) == 0, \
        capsys.readouterr().err
    assert [modes_of(run)[m]["status"] for m in MODES] == ["ok"] * 3
    assert not (run / reserve.RESERVE).exists()
    report_reads(run, tmp_path, capsys)       # with room, the analysis is cached in the run
    assert [p for p in run.rglob("*") if p.is_file() and ".traceinsight" in p.parts]


def test_a_disk_full_from_the_first_write_of_a_mode_fails_it_and_keeps_none(
        stand_in, tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs"
    run = out / "run"
    fill_at(monkeypatch, run, "run.json", nth=2)     # the first mode's start
    assert capture(out) == 1
    check_stopped(run, capsys.readouterr().err, "eager", "run.json")
    monkeypatch.undo()
    text = report_reads(run, tmp_path, capsys)      # a run with no mode measured still reads
    assert "failed: the disk is full (ENOSPC)" in text and "missing: not run: the disk" in text


def test_a_disk_that_fills_in_the_interleaved_rounds_keeps_every_mode_on_its_first_round(
        stand_in, tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs"
    run = out / "run"
    fill_at(monkeypatch, run, runfolder.TIMINGS, nth=len(MODES) + 1)   # the rounds' rewrite
    assert main(["capture", str(COSTLY), "--modes", ",".join(MODES), "--out", str(out),
                 "--name", "run", "--rounds", "2", "--no-python-tracer"]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith("traceinsight: error: the disk is full (ENOSPC): cannot write ")
    assert line.endswith("the 3 mode(s) captured are kept (one whose interleaved rounds could not "
                         "be written is timed in its first round only, its notes say so)"), line
    assert "--resume" not in line      # nothing to resume
    for entry in modes_of(run).values():
        assert entry["status"] == "ok", entry
        assert any(n.startswith("its interleaved rounds are not recorded (the disk is full")
                   for n in entry["notes"]), entry["notes"]
        timings = runfolder.read_timings(run / entry["dir"] / runfolder.TIMINGS)
        assert [r["round"] for r in timings["rounds"]] == [0]
        assert entry["summary"]["n"] == len(timings["steps_s"])
    assert not (run / reserve.RESERVE).exists() and not (run / ".capture.lock").exists()


def test_run_json_the_disk_refuses_even_with_the_reserve_is_said_in_the_one_line(
        stand_in, tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs"
    run = out / "run"
    fill_at(monkeypatch, run, runfolder.TIMINGS, nth=2, reserve_back=False)
    assert capture(out) == 1
    line = one_line(capsys.readouterr().err)
    assert "; run.json could not be updated even with the space set aside (the disk is full " \
           "(ENOSPC): cannot write" in line, line
    modes = modes_of(run)          # run.json keeps its last word: readable, the first mode ok
    assert [modes[m]["status"] for m in MODES] == ["ok", "running", "pending"], modes
    assert not (run / reserve.RESERVE).exists() and not (run / ".capture.lock").exists()


def test_no_space_to_set_aside_refuses_to_start_and_leaves_nothing(
        stand_in, tmp_path, monkeypatch, capsys):
    def refuse(fd, offset, size):
        raise OSError(errno.ENOSPC, ENOSPC)
    monkeypatch.setattr(os, "posix_fallocate", refuse)
    out = tmp_path / "runs"
    assert capture(out) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith("traceinsight: error: the disk is full (ENOSPC): cannot set aside ")
    assert not (out / "run").exists()


def test_the_viewer_opens_a_run_the_disk_stopped(stand_in, tmp_path, monkeypatch, capsys):
    """``view``: the overview shows the mode kept, the failed one (with why) and the one not
    run."""
    out = tmp_path / "runs"
    run = out / "run"
    fill_at(monkeypatch, run, runfolder.TIMINGS, nth=2)
    assert capture(out) == 1
    monkeypatch.undo()

    async def shown() -> str:
        app = get_app(load(run))
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot)
            return screen_text(app)
    text = asyncio.run(shown())
    rows: dict[str, str] = {}        # the mode table's rows: each mode's first line
    for words in (ln.split() for ln in text.splitlines()):
        if words and words[0] in MODES:
            rows.setdefault(words[0], words[-1])
    assert rows == {"eager": "fastest", "function": "failed", "v1-session": "missing"}, text
    assert "function   failed: the disk is full (ENOSPC): cannot write" in text, text
    # the mode not run says why, whole, among the bars (its reason is longer than a trace name)
    flat = " ".join(text.split())
    assert "v1-session missing: not run: the disk is full (ENOSPC)" in flat, text
    assert "capture --resume" in flat, text


def test_a_resume_without_space_to_set_aside_leaves_the_run_as_it_was(
        stand_in, tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs"
    run = out / "run"
    fill_at(monkeypatch, run, runfolder.TIMINGS, nth=2)
    assert capture(out) == 1
    capsys.readouterr()
    before = (run / runfolder.MANIFEST).read_bytes()
    monkeypatch.undo()
    stand_in_for(monkeypatch)

    def refuse(fd, offset, size):
        raise OSError(errno.ENOSPC, ENOSPC)
    monkeypatch.setattr(os, "posix_fallocate", refuse)
    assert main(["capture", "--resume", str(run), "--no-python-tracer"]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith("traceinsight: error: the disk is full (ENOSPC): cannot set aside ")
    assert (run / runfolder.MANIFEST).read_bytes() == before
    assert not (run / reserve.RESERVE).exists() and not (run / ".capture.lock").exists()


def test_the_workload_process_says_a_refused_write_by_its_exit_status(tmp_path):
    """``reserve.hand_back`` (the workload process's result, error, round): a disk that refuses
    it ends the process with the errno as its status and one line, never a traceback."""
    code = ("import errno, os, sys\n"
            "from traceinsight import runfolder\n"
            "from traceinsight.capture import reserve\n"
            "def refuse(path, data):\n"
            "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
            "runfolder.atomic_write_bytes = refuse\n"
            "reserve.hand_back(sys.argv[1] + '/.mode.result.json', {'steps_s': [0.1]})\n"
            "print('not reached')\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == errno.ENOSPC and done.stdout == "", done
    assert done.stderr == (f"traceinsight: the disk is full (ENOSPC): cannot write "
                           f"{tmp_path}/.mode.result.json ({ENOSPC})\n")


def test_a_workload_process_that_exits_so_is_a_full_disk_to_the_parent(tmp_path, monkeypatch):
    """The parent's reading of that status: the mode cannot be recorded (``DiskFull``, naming
    the mode's folder), not "exited with status 28"."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexit {errno.ENOSPC}\n")
    fake.chmod(0o755)
    monkeypatch.setattr(environment, "workload_python", str(fake))
    mode = tmp_path / "eager"
    with pytest.raises(reserve.DiskFull) as e:
        children.run_child("mode", {}, mode, 60, dict(os.environ), stderr_path=mode / "stderr.log")
    assert str(e.value) == (f"the disk is full (ENOSPC): the workload process could not write "
                            f"its result in {mode}")
    assert e.value.errno == errno.ENOSPC


@pytest.mark.parametrize("keep_alive", [False, True])
def test_a_workload_output_the_disk_refuses_is_a_full_disk(tmp_path, monkeypatch, keep_alive):
    """The mode's stderr.log, written by the parent as the process ends (or, kept alive for the
    rounds, once its result is there): refused, the mode cannot be recorded (``DiskFull``), the
    process is not left running and its temporary log goes."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho $$ > {tmp_path}/pid\nfor a; do out="$a"; done\n'
                    'echo "its output" >&2\nprintf "{}" > "$out"\n'
                    + ("sleep 600\n" if keep_alive else ""))
    fake.chmod(0o755)
    monkeypatch.setattr(environment, "workload_python", str(fake))
    mode = tmp_path / "eager"
    refused = fill_at(monkeypatch, tmp_path / "no-run", "stderr.log", reserve_back=False)
    with pytest.raises(reserve.DiskFull) as e:
        children.run_child("mode", {}, mode, 60, dict(os.environ), stderr_path=mode / "stderr.log",
                           keep_alive=keep_alive)
    assert refused == ["stderr.log"]
    assert str(e.value) == f"the disk is full (ENOSPC): cannot write {mode / 'stderr.log'} ({ENOSPC})"
    assert not [p for p in mode.iterdir() if p.name.endswith(".tmp")]
    with pytest.raises(ProcessLookupError):     # not left running (and reaped)
        os.kill(int((tmp_path / "pid").read_text()), 0)


def test_a_pass_whose_trace_could_not_be_saved_is_never_ok(tmp_path):
    """A traced pass whose save failed (``profiling``: ``save_failed``) fails its mode, even
    with no trace file to look at."""
    timings = {"traced": {"host": {"trace": None, "live": True, "save_failed": True,
                                   "problem": "saving the trace failed: OSError: no"}}}
    assert orchestrate.verify_traces(tmp_path, "eager", timings) == \
        "host pass: saving the trace failed: OSError: no"


# ------------------------------------------------------------------ real captures (TensorFlow)
FAST = ["--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
        "--host-trace-ms", "2500", "--host-max-steps", "10"]
# the modes' processes kept alive for interleaved rounds, as a capture's default does
ROUNDS = ["--rounds", "2", "--round-time", "0.2", "--round-min-steps", "3"]

# a workload process whose profiler cannot save its trace, as TensorFlow does on a full disk (the
# file cut where the disk filled, then ResourceExhaustedError naming it), in the mode named by
# TRACEINSIGHT_TEST_FULL_AT; loaded as the workload process's sitecustomize
SHIM = '''
import os
if os.environ.get("TRACEINSIGHT_TEST_FULL_AT") and "--spec" in os.sys.argv:
    import json
    spec = json.loads(os.sys.argv[os.sys.argv.index("--spec") + 1])
    if spec.get("mode") == os.environ["TRACEINSIGHT_TEST_FULL_AT"]:
        from traceinsight.capture import compat
        start = compat.LocalTrace.start

        def start_then_fill(self):
            start(self)
            stop = self.tf.profiler.experimental.stop

            def stop_on_a_full_disk():
                stop()
                path = self.path()
                with open(path, "r+b") as f:
                    f.truncate(os.path.getsize(path) // 2)
                raise self.tf.errors.ResourceExhaustedError(
                    None, None, f"{path}; No space left on device")
            self.tf.profiler.experimental.stop = stop_on_a_full_disk
        compat.LocalTrace.start = start_then_fill
'''


@pytest.mark.capture
def test_a_trace_the_disk_cuts_in_the_workload_process(tmp_path, monkeypatch, capsys):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM)
    monkeypatch.setenv("PYTHONPATH", str(shim))
    monkeypatch.setenv("TRACEINSIGHT_TEST_FULL_AT", "function")
    out = tmp_path / "runs"
    run = out / "run"
    assert capture(out, *FAST, *ROUNDS) == 1
    modes = check_stopped(run, capsys.readouterr().err, "function",
                          "the host pass's trace could not be saved (saving the trace failed: "
                          "ResourceExhaustedError: ")
    assert modes["eager"]["summary"]["n"] >= 5
    monkeypatch.delenv("TRACEINSIGHT_TEST_FULL_AT")
    assert main(["capture", "--resume", str(run), *FAST, "--no-python-tracer"]) == 0, \
        capsys.readouterr().err
    assert [modes_of(run)[m]["status"] for m in MODES] == ["ok"] * 3


@pytest.fixture
def tmpfs(tmp_path):
    """A 1.5 MiB tmpfs (root, mount allowed; skipped elsewhere: the faults are injected above)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): injected above instead")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.capture
def test_a_real_full_disk(tmpfs, tmp_path, capsys):
    """Three modes' traces (some hundreds of KiB each) on a 1.5 MiB disk: it fills during one of
    them, whichever: that one fails naming the disk, those before stay ok and their traces parse,
    those after are not run; once the disk is larger, --resume completes the run."""
    rc = capture(tmpfs, *FAST, *ROUNDS)
    err = capsys.readouterr().err
    run = tmpfs / "run"
    assert rc == 1, err[-3000:]
    modes = modes_of(run)
    failed = [m for m in MODES if modes[m]["status"] == "failed"]
    assert len(failed) == 1, modes
    check_stopped(run, err, failed[0], "")
    from traceinsight.analysis.events import open_planes
    for m in MODES[:MODES.index(failed[0])]:     # the modes kept: their traces parse
        for trace in runfolder.pass_traces(run, modes[m]["dir"], "host"):
            open_planes(trace)
    report_reads(run, tmp_path, capsys)
    subprocess.run(["mount", "-o", "remount,size=8m", str(tmpfs)], check=True)
    assert main(["capture", "--resume", str(run), *FAST, "--no-python-tracer"]) == 0, \
        capsys.readouterr().err
    assert [modes_of(run)[m]["status"] for m in MODES] == ["ok"] * 3
