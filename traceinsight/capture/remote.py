"""``traceinsight capture --remote host:port[,host:port...] --duration-ms N``: trace a job that
already runs TF's profiler server (``tf.profiler.experimental.server.start(port)``) in each worker.

No TensorFlow here: xprof's profiler client (``_pywrap_profiler_plugin.trace``) asks each server for
a trace with explicit tracer levels (TF 2.21's own client drops them; the
recorded levels are checked against them), one client thread per worker, all started together so
the traces cover the same wall-clock window. A plain TF profiler server serves its own process only
(xprof's ``worker_list`` is for a profiler *analysis* service), hence one request per worker.

The result is a run folder with one mode per worker, named by its address, each holding its trace
in TensorBoard's layout under one shared session folder name::

    runs/<UTC time>-remote/run.json
    runs/<UTC time>-remote/<host-port>/host/plugins/profile/<session>/<host>.xplane.pb

so ``view`` / ``report`` / ``analyze`` show the hosts side by side (each analysed on its own: a
host's steps are its own step markers), and ``tensorboard --logdir`` the run. The workers' steps
are found by their step markers (``tf.profiler.experimental.Trace("train", step_num=...)``, as
XProf needs too); a worker that marks none is analysed without steps and says so.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from traceinsight.errors import TraceinsightError

LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
_ADDRESS = re.compile(r"^(?:grpc://)?([A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$")


def parse_workers(spec: str) -> list[str]:
    """``"h1:6009, h2:6009"`` -> ["h1:6009", "h2:6009"] (each checked, duplicates refused)."""
    workers = [w.strip() for w in spec.split(",") if w.strip()]
    if not workers:
        raise TraceinsightError("--remote: give host:port[,host:port...]")
    for w in workers:
        m = _ADDRESS.match(w)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise TraceinsightError(f"--remote: {w!r} is not host:port")
    if len(set(workers)) != len(workers):
        raise TraceinsightError("--remote: a worker is listed twice")
    return [w.removeprefix("grpc://") for w in workers]


# The profiler client runs in a child process: it is C++ that parses whatever the server sends,
# and a reply it cannot parse has crashed it (SIGSEGV). In a child, a crash is one failed worker.
_CLIENT = """
import json, resource, sys
limit = int(sys.argv[6])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
address, logdir, duration_ms, attempts, levels = sys.argv[1:6]
from xprof.convert import _pywrap_profiler_plugin
try:
    _pywrap_profiler_plugin.trace(address, logdir, "", True, int(duration_ms), int(attempts),
                                  json.loads(levels))
except Exception as e:
    lines = str(e).strip().splitlines()
    print(json.dumps({"error": type(e).__name__ + (": " + lines[0] if lines else "")}))
    sys.exit(3)
"""
# what the client may write (a trace larger than an XSpace can be is not one) and read back of
# its output (the server's error text, gRPC's log)
MAX_REPLY_BYTES = 2 << 30
MAX_CLIENT_OUTPUT = 64 << 10


def _tail(f, n: int = MAX_CLIENT_OUTPUT) -> str:
    f.seek(0, 2)
    size = f.tell()
    f.seek(max(0, size - n))
    return f.read().decode("utf-8", "replace")


def _client_error(returncode: int, out: str, err: str) -> str:
    """One escaped line: what went wrong in the profiler client."""
    import json
    import signal

    from traceinsight.present import safe
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = f"signal {-returncode}"
        what = f"the profiler client crashed ({sig}) on the server's reply"
        if -returncode == getattr(signal, "SIGXFSZ", None):
            what = f"the server's reply is larger than {MAX_REPLY_BYTES >> 20} MiB: refused"
        return what
    for line in reversed(out.splitlines()):
        try:
            msg = json.loads(line).get("error")
        except (ValueError, AttributeError):
            continue
        if isinstance(msg, str):
            return safe(msg, 300)
    last = next((ln for ln in reversed(err.splitlines()) if ln.strip()), "")
    return safe(f"the profiler client failed (exit status {returncode})"
                + (f": {last.strip()}" if last else ""), 300)


def _trace_one(address: str, logdir: Path, duration_ms: int, attempts: int, out: dict,
               timeout: float | None = None) -> None:
    import json
    import subprocess
    import sys
    import tempfile
    t0 = time.time()
    timeout = timeout if timeout is not None else attempts * (duration_ms / 1e3 + 60) + 30
    try:
        logdir.mkdir(parents=True, exist_ok=True)
        fout, ferr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    except OSError as e:   # a full disk: this worker fails, in one line
        out["error"] = f"cannot write {logdir}: {e.strerror or e}"
        return
    with fout, ferr:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CLIENT, address, str(logdir), str(int(duration_ms)),
             str(attempts), json.dumps(LEVELS), str(MAX_REPLY_BYTES)],
            stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            out["error"] = f"the profiler client did not finish in {timeout:.0f} s"
            rc = None
        except BaseException:   # Ctrl-C: the client does not outlive us
            proc.kill()
            proc.wait()
            raise
        if rc:
            out["error"] = _client_error(rc, _tail(fout), _tail(ferr))
    out["wall_s"] = round(time.time() - t0, 3)


def capture_remote(workers: list[str], duration_ms: int, out_dir: Path, name: str | None,
                   command: str, attempts: int = 3) -> tuple[Path, dict[str, dict]]:
    """Trace every worker at once; write the run folder. Returns (run path, mode entries)."""
    from traceinsight import __version__, runfolder
    from traceinsight.capture.environment import host_environment
    from traceinsight.capture.planning import RunWriter, utc_stamp

    if duration_ms < 1:
        raise TraceinsightError("--duration-ms must be positive")
    try:
        from xprof.convert import _pywrap_profiler_plugin  # noqa: F401
    except ImportError:
        raise TraceinsightError("remote capture needs xprof's profiler client: pip install xprof") \
            from None
    run_path = Path(out_dir) / (name or f"{utc_stamp()}-remote")
    if run_path.exists():
        raise TraceinsightError(f"{run_path} already exists (choose another --name)")
    try:
        run_path.mkdir(parents=True)
    except OSError as e:
        raise TraceinsightError(f"cannot create the run folder {run_path}: {e.strerror or e}") from None
    modes: dict[str, dict[str, Any]] = {w: {"dir": runfolder.mode_dir(w), "status": "running", "error": None,
                 "stderr_tail": None, "summary": None, "profile_options": {}, "notes": [],
                 "address": w} for w in workers}
    manifest: dict[str, Any] = {
        "schema_version": runfolder.SCHEMA_VERSION, "tool": f"traceinsight {__version__}",
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "workload": {"path": None, "sha256": None, "name": "remote", "kind": "remote",
                     "doc": f"remote capture of {', '.join(workers)}"},
        "command": command,
        # the machine that asked for the traces; the workers' own environment is in their traces
        "environment": host_environment(),
        "options": {"remote": workers, "duration_ms": duration_ms, "levels": LEVELS},
        "modes": modes,
    }
    writer = RunWriter(run_path, manifest)
    try:
        writer.save()
    except BaseException:   # a full disk at the start: no empty run folder left behind
        shutil.rmtree(run_path, ignore_errors=True)
        raise
    tmp = run_path / ".remote"
    results: dict[str, dict] = {w: {} for w in workers}
    threads = [threading.Thread(target=_trace_one, name=f"traceinsight-remote-{i}", daemon=True,
                                args=(w, tmp / str(i), duration_ms, attempts, results[w]))
               for i, w in enumerate(workers)]
    started = datetime.now(timezone.utc)
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        for m in modes.values():
            m.update(status="failed", error="interrupted (Ctrl-C)")
        writer.save()
        raise
    try:
        _collect(workers, modes, results, run_path, tmp, started)
    finally:   # whatever happened, no mode stays "running"
        for m in modes.values():
            if m["status"] == "running":
                m.update(status="failed", error=m.get("error") or "not collected")
        shutil.rmtree(tmp, ignore_errors=True)
        writer.save()
    return run_path, modes


def _collect(workers: list[str], modes: dict[str, dict[str, Any]], results: dict[str, dict],
             run_path: Path, tmp: Path, started: datetime) -> None:
    """Each worker's trace moved into its mode folder, checked (a regular, non-empty file no
    larger than an XSpace can be, that parses), and its mode entry filled in."""
    from traceinsight import runfolder
    from traceinsight.analysis.events import open_planes
    from traceinsight.capture import options as options_mod
    session = started.strftime("%Y_%m_%d_%H_%M_%S")
    for i, w in enumerate(workers):
        entry, res = modes[w], results[w]
        entry["trace_wall_s"] = res.get("wall_s")
        files = runfolder.find_xplanes(tmp / str(i))
        if not files:
            entry.update(status="failed", error=res.get("error") or "the server returned no trace")
            continue
        src = max(files, key=lambda p: p.stat().st_mtime)
        try:
            if src.stat().st_size > MAX_REPLY_BYTES:
                raise TraceinsightError("the server's reply is larger than an XSpace can be")
            open_planes(src)   # parses: a truncated or garbled reply is not a trace
        except TraceinsightError as e:
            entry.update(status="failed", error=f"the server's reply is not a readable trace "
                                                f"({str(e).split(': ', 1)[-1]})")
            continue
        dest = run_path / entry["dir"] / "host" / "plugins" / "profile" / session / src.name
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(src), dest)
        except OSError as e:
            entry.update(status="failed", error=f"cannot write {dest}: {e.strerror or e}")
            continue
        po = options_mod.check(LEVELS, dest)
        po["trace"] = str(dest.relative_to(run_path))
        entry["profile_options"] = {"host": po}
        if not po.get("ok"):
            entry["notes"].append(f"host pass: profiler options not as requested: "
                                  f"{po.get('problem', 'unknown')}")
        if res.get("error"):
            entry["notes"].append(res["error"])
        entry.update(status="ok", host=src.name[:-len(".xplane.pb")])


def run_command(args) -> int:
    """The ``capture --remote`` path of the capture command."""
    import shlex
    import sys

    workers = parse_workers(args.remote)
    if args.duration_ms is None:
        raise TraceinsightError("--remote needs --duration-ms N (how long to trace)")
    command = "traceinsight capture " + shlex.join(
        ["--remote", ",".join(workers), "--duration-ms", str(args.duration_ms)])
    print(f"tracing {len(workers)} worker(s) for {args.duration_ms} ms: {', '.join(workers)}",
          file=sys.stderr)
    run_path, modes = capture_remote(workers, args.duration_ms, Path(args.out), args.name, command)
    from traceinsight.present import safe
    for w, e in modes.items():   # the server's words are data: escaped
        line = f"{w}: {e['status']}" + (f" ({safe(e['error'], 300)})" if e["error"] else "")
        print(line + "".join(f"\n  note: {safe(n, 300)}" for n in e["notes"]), file=sys.stderr)
    ok = [w for w, e in modes.items() if e["status"] == "ok"]
    if not ok:
        raise TraceinsightError(f"no worker returned a trace (run folder kept: {run_path})")
    print(f"run: {run_path}\nnext: traceinsight view {run_path}")
    return 0
