"""Faults and foreign run folders at capture and write time: a full disk on every write path
(lock, run.json, traces, export, report, cache) ends in one line and exit 1 or 2, leaves no temp
file and never marks a truncated trace good; the capture lock goes when the capture ends;
``--resume`` of a run from elsewhere runs nothing run.json chooses; ``--remote`` survives a server
that answers garbage; the memory guard sees the process's own limits. No TensorFlow: everything
here is refused or checked before a workload would run. The full disk is simulated (a file
object that fails with ENOSPC) and, where the machine lets us mount one, real (a tiny tmpfs)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_runfolder_fuzz import GOOD_RUN, make_run, tiny_trace

import traceinsight
from traceinsight import runfolder
from traceinsight.capture import lock as lock_mod
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError


def one_line(code, err, codes=(1, 2)):
    assert code in codes, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("traceinsight: error:"), err
    assert "Traceback" not in err


def temp_files(folder: Path) -> list[Path]:
    return [p for p in Path(folder).rglob("*") if p.name.endswith(".tmp")]


class FullDisk:
    """A file object that takes ``room`` bytes, then fails every write with ENOSPC."""

    def __init__(self, f, room: int):
        self.f, self.room = f, room

    def write(self, b):
        if len(b) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(b)
        return self.f.write(b)

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def full_disk(monkeypatch, room: int = 100):
    """Every file opened with os.fdopen (the atomic writes, export's trace) fills after ``room``
    bytes."""
    real = os.fdopen

    def fdopen(fd, *a, **k):
        return FullDisk(real(fd, *a, **k), room)
    monkeypatch.setattr(os, "fdopen", fdopen)


class Hang(Exception):
    pass


@pytest.fixture
def no_hang():
    def alarm(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------- simulated ENOSPC
def test_run_json_on_a_full_disk_is_one_line_and_no_temp_file(tmp_path, monkeypatch):
    from traceinsight.capture.planning import RunWriter
    from traceinsight.errors import WriteError
    run = make_run(tmp_path)
    before = (run / "run.json").read_bytes()
    full_disk(monkeypatch)
    with pytest.raises(WriteError) as e:
        RunWriter(run, dict(GOOD_RUN)).save()
    assert e.value.exit_status == 1 and "No space left" in str(e.value)
    assert (run / "run.json").read_bytes() == before   # the old one, whole
    assert temp_files(run) == []


def test_lock_on_a_full_disk_is_one_line_and_leaves_no_lock(tmp_path, monkeypatch):
    run = tmp_path / "r"
    run.mkdir()

    def write(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(lock_mod.os, "write", write)
    with pytest.raises(TraceinsightError, match="No space left"):
        lock_mod.RunLock(run).acquire()
    assert not (run / lock_mod.LOCK_FILE).exists()


def test_export_trace_on_a_full_disk_ends_without_hanging(tmp_path, monkeypatch, capsys, no_hang):
    run = make_run(tmp_path)
    out = tmp_path / "out"
    full_disk(monkeypatch, room=64)
    try:
        code = main(["export", str(run), "--mode", "eager", "--tables", "none", "-o", str(out)])
    except Hang:
        pytest.fail("export hangs on a full disk")
    one_line(code, capsys.readouterr().err, codes=(1,))
    assert temp_files(out) == [] and not (out / "trace.json.gz").exists()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_tables_on_a_full_disk(tmp_path, monkeypatch, capsys, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    run = make_run(tmp_path)
    traceinsight.load(run)            # cached first: the tables' own writes are what fail
    out = tmp_path / "out"
    full_disk(monkeypatch)
    for argv in (["export", str(run), "--tables", fmt, "-o", str(out)],
                 ["export", str(run), "--mode", "eager", "--trace", "none", "--tables", fmt,
                  "-o", str(out)]):
        one_line(main(argv), capsys.readouterr().err, codes=(1,))
        assert list(out.rglob("*")) == []


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_report_on_a_full_disk(tmp_path, monkeypatch, capsys, fmt):
    run = make_run(tmp_path)
    traceinsight.load(run)            # cached first: the report's own write is what fails
    full_disk(monkeypatch)
    code = main(["report", str(run), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")])
    one_line(code, capsys.readouterr().err, codes=(1,))
    assert temp_files(tmp_path) == [] and not (tmp_path / f"r.{fmt}").exists()


def test_cache_on_a_full_disk_is_skipped(tmp_path, monkeypatch):
    run = make_run(tmp_path)
    full_disk(monkeypatch)
    loaded = traceinsight.load(run)
    assert loaded.modes["eager"].ok
    assert temp_files(run) == [] and list((run / ".traceinsight").rglob("*.json")) == []


def test_other_os_errors_reach_the_user_as_one_line(tmp_path, capsys):
    run = make_run(tmp_path)
    code = main(["export", str(run), "--mode", "eager", "-o", "/proc/nope/x"])
    one_line(code, capsys.readouterr().err)


# ------------------------------------------------------------- a truncated trace is not good
def test_a_truncated_trace_is_never_recorded_ok(tmp_path, monkeypatch):
    from traceinsight.capture import orchestrate as orch
    run = make_run(tmp_path)
    timings = {"traced": {"host": {"trace": "host/plugins/profile/s/h.xplane.pb"},
                          "python": {"trace": "python/plugins/profile/s/h.xplane.pb"}}}
    tiny_trace(run / "eager/python/plugins/profile/s/h.xplane.pb")
    assert orch.verify_traces(run, "eager", timings) is None
    p = run / "eager/python/plugins/profile/s/h.xplane.pb"
    p.write_bytes(p.read_bytes()[:40])            # cut by a full disk
    assert "python pass: the trace is unreadable" in orch.verify_traces(run, "eager", timings)
    p.write_bytes(b"")
    assert "unreadable" in orch.verify_traces(run, "eager", timings)
    p.unlink()
    assert "python pass: no trace file" in orch.verify_traces(run, "eager", timings)
    tiny_trace(p)

    class Full:
        f_bavail, f_frsize = 3, 4096
    monkeypatch.setattr(os, "statvfs", lambda _: Full())
    assert "disk is full" in orch.verify_traces(run, "eager", timings)


# ------------------------------------------------------------------------------ a real tmpfs
@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 4 MiB tmpfs, where this machine lets the test mount one (root, mount allowed)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root: the full disk is simulated above instead")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()}): simulated above instead")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_real_full_disk(tiny_tmpfs, tmp_path, capsys, no_hang):
    run = make_run(tiny_tmpfs)
    fill(tiny_tmpfs)
    try:
        # analyze: the cache cannot be written, the analysis still shows
        assert main(["analyze", str(run)]) == 0
        for argv in (["report", str(run), "-o", str(tiny_tmpfs / "r.html")],
                     ["export", str(run), "--mode", "eager", "-o", str(tiny_tmpfs / "x")],
                     ["export", str(run), "--tables", "csv", "-o", str(tiny_tmpfs / "t")]):
            one_line(main(argv), capsys.readouterr().err, codes=(1,))
        try:
            lock_mod.RunLock(run).acquire().release()
        except TraceinsightError as e:
            assert "No space left" in str(e)
        assert not (run / lock_mod.LOCK_FILE).exists()
    except Hang:
        pytest.fail("hangs on a full disk")
    assert temp_files(tiny_tmpfs) == []


# ------------------------------------------------------------------------------- the lock
def test_a_finished_capture_leaves_no_lock_file(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    with lock_mod.RunLock(run):
        assert (run / lock_mod.LOCK_FILE).exists()
    assert not (run / lock_mod.LOCK_FILE).exists()
    # a waiting capture that opened the old file before it was removed locks a new one
    a = lock_mod.RunLock(run).acquire()
    fd = os.open(run / lock_mod.LOCK_FILE, os.O_RDWR)
    a.release()
    b = lock_mod.RunLock(run).acquire()
    try:
        assert (run / lock_mod.LOCK_FILE).exists()
        with pytest.raises(TraceinsightError, match="being written"):
            lock_mod.RunLock(run).acquire()
    finally:
        b.release()
        os.close(fd)


def test_the_lock_file_is_never_created_through_a_symlink(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    target = tmp_path / "victim"
    (run / lock_mod.LOCK_FILE).symlink_to(target)
    with pytest.raises(TraceinsightError):
        lock_mod.RunLock(run).acquire()
    assert not target.exists()


# ------------------------------------------------------------------- --resume of a foreign run
def foreign_run(tmp_path, workload: dict | None = None, **changes) -> Path:
    run = make_run(tmp_path)
    manifest = json.loads(json.dumps(GOOD_RUN))
    manifest["modes"]["eager"]["status"] = "failed"
    if workload is not None:
        manifest["workload"] = workload
    manifest.update(changes)
    (run / "run.json").write_text(json.dumps(manifest))
    return run


def resume(capsys, run, *extra):
    code = main(["capture", "--resume", str(run), *extra])
    return code, capsys.readouterr().err


def test_resume_refuses_a_workload_that_is_not_here(tmp_path, capsys):
    code, err = resume(capsys, foreign_run(tmp_path))      # /x/model.py: not on this machine
    one_line(code, err)
    assert "/x/model.py" in err and "name it to run it" in err


def test_resume_refuses_a_recorded_workload_whose_sha256_differs(tmp_path, capsys):
    evil = tmp_path / "evil.py"
    evil.write_text("import os\nos.system('touch pwned')\n\ndef step(x):\n    return x\n\n"
                    "def inputs():\n    return (1.0,)\n")
    for sha in (None, "0" * 64):
        run = foreign_run(tmp_path / str(sha), workload={"path": str(evil), "sha256": sha,
                                                          "name": "m", "kind": "function"})
        code, err = resume(capsys, run)
        one_line(code, err)
        assert "sha256" in err and "name it to run it" in err
    assert not (Path.cwd() / "pwned").exists()


@pytest.mark.parametrize("options", [[1, 2], {"timeout": "soon"}, {"rounds": [3]},
                                     {"timeout": 1e400}, {"min_steps": {"a": 1}}, "x"])
def test_resume_with_bad_options_is_one_line(tmp_path, capsys, options):
    wl = tmp_path / "model.py"
    wl.write_text("def step(x):\n    return x\n\ndef inputs():\n    return (1.0,)\n")
    run = foreign_run(tmp_path, options=options)
    code, err = resume(capsys, run, str(wl))
    one_line(code, err)


@pytest.mark.parametrize("entry", [{"status": "failed"}, {"dir": "out", "status": "failed"},
                                   "x"])
def test_resume_refuses_modes_without_a_folder_inside_the_run(tmp_path, capsys, entry):
    wl = tmp_path / "model.py"
    wl.write_text("def step(x):\n    return x\n\ndef inputs():\n    return (1.0,)\n")
    run = foreign_run(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (run / "out").symlink_to(tmp_path / "elsewhere")
    manifest = json.loads((run / "run.json").read_text())
    manifest["modes"]["eager"] = entry
    (run / "run.json").write_text(json.dumps(manifest))
    code, err = resume(capsys, run, str(wl))
    one_line(code, err)
    assert (tmp_path / "elsewhere").is_dir()


# ------------------------------------------------------------------- --remote and garbage
FAKE_SERVER = r"""
import os, sys
from concurrent import futures
import grpc
payload = {"ff": b"\xff", "truncated": b"\x0a\x80\x80\x04abc",
           "random": os.urandom(2048)}[sys.argv[1]]
class Handler(grpc.GenericRpcHandler):
    def service(self, details):   # every method answers these bytes as its reply message
        return grpc.unary_unary_rpc_method_handler(lambda request, context: payload)
server = grpc.server(futures.ThreadPoolExecutor(2))
server.add_generic_rpc_handlers((Handler(),))
print(server.add_insecure_port("127.0.0.1:0"), flush=True)
server.start()
server.wait_for_termination()
"""


@pytest.mark.parametrize("reply", ["ff", "truncated", "random"])
def test_remote_capture_survives_a_server_answering_garbage(tmp_path, capsys, reply):
    pytest.importorskip("grpc")
    pytest.importorskip("xprof.convert._pywrap_profiler_plugin")
    server = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, reply], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(server.stdout.readline())
        code = main(["capture", "--remote", f"127.0.0.1:{port}", "--duration-ms", "100",
                     "--out", str(tmp_path), "--name", "r"])
    finally:
        server.kill()
        server.wait()
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert all(c not in err for c in "\x1b\x07\u202e")
    entry = runfolder.read_manifest(tmp_path / "r")["modes"][f"127.0.0.1:{port}"]
    assert entry["status"] == "failed" and entry["error"]
    assert not (tmp_path / "r" / ".remote").exists()


def test_a_crashed_client_is_one_line():
    from traceinsight.capture import remote
    assert "SIGSEGV" in remote._client_error(-signal.SIGSEGV, "", "")
    assert "larger than" in remote._client_error(-signal.SIGXFSZ, "", "")
    line = remote._client_error(3, '{"error": "bad\\u001b]0;x\\u0007\\nreply"}\n', "")
    assert "\x1b" not in line and "\n" not in line and "bad" in line
    line = remote._client_error(1, "", "E0000 grpc said \x1b[2J" + "x" * 10_000)
    assert "\x1b" not in line and len(line) < 400


# --------------------------------------------------------------------------- memory guard
def test_memory_guard_respects_an_address_space_limit(tmp_path):
    """Under RLIMIT_AS the guard counts what the limit leaves, not the machine's free memory."""
    code = ("import resource, sys; from pathlib import Path\n"
            "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
            "from traceinsight.analysis import events\n"
            "assert events.available_memory() <= 3 << 30, events.available_memory()\n"
            "p = Path(sys.argv[1]); f = open(p, 'wb'); f.truncate(1 << 30); f.close()\n"
            "try:\n    events.check_trace_size(p)\nexcept Exception as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.xplane.pb")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "of memory available: not read" in r.stdout


def test_memory_guard_reads_the_cgroup_limit(tmp_path):
    from traceinsight.analysis import events
    (tmp_path / "proc").write_text("0::/job\n")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "memory.max").write_text("1073741824\n")
    (tmp_path / "job" / "memory.current").write_text("73741824\n")
    assert events._cgroup_left(str(tmp_path), str(tmp_path / "proc")) == 1_000_000_000
    (tmp_path / "job" / "memory.max").write_text("max\n")
    assert events._cgroup_left(str(tmp_path), str(tmp_path / "proc")) is None
    (tmp_path / "proc").write_text("4:memory:/job\n")     # cgroup v1
    (tmp_path / "memory" / "job").mkdir(parents=True)
    (tmp_path / "memory" / "job" / "memory.limit_in_bytes").write_text("2000\n")
    (tmp_path / "memory" / "job" / "memory.usage_in_bytes").write_text("500\n")
    assert events._cgroup_left(str(tmp_path), str(tmp_path / "proc")) == 1500


# ------------------------------------------------------------------ full disk, fuzzed
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

WRITES = {
    "report-json": (["report", "{run}", "--format", "json", "-o", "{out}/r.json"], "r.json"),
    "report-html": (["report", "{run}", "--format", "html", "-o", "{out}/r.html"], "r.html"),
    "export-trace": (["export", "{run}", "--mode", "eager", "--tables", "none", "-o", "{out}"],
                     "trace.json.gz"),
    "export-trace-raw": (["export", "{run}", "--mode", "eager", "--tables", "none", "--no-gzip",
                          "-o", "{out}"], "trace.json"),
}


@settings(max_examples=40, derandomize=True, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(what=st.sampled_from(sorted(WRITES)), room=st.integers(0, 40_000))
def test_fuzz_a_disk_that_fills_at_any_byte(tmp_path_factory, what, room):
    """The disk fills after ``room`` bytes of a report or an export: either the file is written
    whole (it parses) and the exit is 0, or the exit is 1 with one line, no file and no temp
    file. Never a hang, never a partial file left looking finished."""
    import contextlib
    import gzip
    import io

    import pytest as _pytest
    root = tmp_path_factory.mktemp("full")
    run = make_run(root)
    traceinsight.load(run)          # the cache written before the disk fills
    out = root / "out"
    argv, name = WRITES[what]
    with _pytest.MonkeyPatch.context() as mp:
        full_disk(mp, room)
        err = io.StringIO()

        def alarm(*_):
            raise Hang()
        old = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(60)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main([a.format(run=run, out=out) for a in argv])
        except Hang:
            _pytest.fail(f"{what} hangs with {room} bytes of room")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    assert temp_files(root) == []
    target = out / name
    if code == 0:
        data = target.read_bytes()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
        if name.endswith((".json", ".gz")):
            json.loads(data)        # whole
    else:
        one_line(code, err.getvalue(), codes=(1,))
        assert not target.exists()
