"""Run an unmodified training script under traceinsight's startup hook and write what it traced
as a mode of a run folder (what ``traceinsight run`` does; ``capture.inprocess`` opens and
finishes a mode the same way from inside a script).

The hook (``capture/hook/``) marks and times the script's steps and traces a window of them; this
module starts the script with the hook first on its PYTHONPATH, passes its output and exit status
through (filtering TensorFlow's profiler log lines from its stderr), and turns the hook's result
file into the mode's ``timings.json`` and traces, keeping whatever was traced if the script
crashes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from traceinsight.errors import TraceinsightError

# tracer levels of the traced window (host tracer 3 sees the eager runtime; python tracer off: it
# inflates Python several-fold and grows the trace many times over)
LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
RESULT = ".agent.json"



def script_of(cmd: list[str]) -> Path | None:
    """The Python file the command runs (``python train.py``, ``./train.py``), if it names one."""
    for i, a in enumerate(cmd):
        if a == "-m" or a == "-c":
            return None
        if a.endswith(".py") and Path(a).is_file():
            return Path(a).resolve()
        if i > 0 and not a.startswith("-"):
            return None
    return None


def _sha256(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _script_env(spec: dict) -> dict[str, str]:
    """The script's environment plus the hook: only the hook's own folder goes on PYTHONPATH, and
    the hook restores PYTHONPATH (and drops its variables) before the script runs."""
    from traceinsight.capture.hook.agent import PATH_ENV, SPEC_ENV
    env = dict(os.environ)
    site = Path(__file__).resolve().parents[1] / "capture" / "hook" / "site"
    before = env.get("PYTHONPATH", "")
    env[PATH_ENV] = before
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + ([before] if before else []))
    env[SPEC_ENV] = json.dumps(spec)
    return env


# TensorFlow's own log lines about the profiler the hook runs (server start, session start / stop,
# saving), written by the script's process: TF 2.15 - 2.16 ``2026-11-25 12:04:45.117710: I
# external/local_tsl/tsl/profiler/lib/profiler_session.cc:119] ...``, TF 2.21 (absl) ``I0000
# 00:00:1795608729.634534   25171 profiler_session.cc:132] ...``. INFO and WARNING only.
_PROFILER_LOG = re.compile(
    rb"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] \S*(?:tsl/profiler|core/profiler)/\S+"
    rb"|[IW]\d{4} \d\d:\d\d:[\d.]+ +\d+ (?:profiler_server|profiler_session|save_profile)\.cc:\d+)\] ")
_MAYBE_LOG = re.compile(rb"^(?:\d{0,4}(?:-[\d-]{0,5}(?: .*)?)?|[IW]\d{0,4}(?: .*)?)$", re.S)


class StderrFilter:
    """Relays the script's stderr to ours unchanged, except TensorFlow's log lines about the
    profiler session the hook starts (the script without traceinsight would not print them).

    A pseudo-terminal when our stderr is a terminal (the script still sees one), else a pipe."""

    def __init__(self) -> None:
        import threading
        self.tty = sys.stderr.isatty()
        if self.tty:
            import termios
            import tty
            self.read_fd, self.write_fd = os.openpty()
            tty.setraw(self.write_fd, termios.TCSANOW)   # bytes through as written (no \r\n)
        else:
            self.read_fd, self.write_fd = os.pipe()
        self.dropped = 0
        self.thread = threading.Thread(target=self._relay, name="traceinsight-stderr", daemon=True)

    def start(self) -> int:
        self.thread.start()
        return self.write_fd

    def child_started(self) -> None:
        os.close(self.write_fd)    # the child holds it now: EOF when the script and its children end

    def _out(self, data: bytes) -> None:
        try:
            sys.stderr.flush()
            os.write(sys.stderr.fileno(), data)
        except (OSError, ValueError):
            pass

    def _relay(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except OSError:      # a pty reads EIO once the child side is closed
                chunk = b""
            if not chunk:
                break
            buf += chunk
            keep = []
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if _PROFILER_LOG.match(line):
                    self.dropped += 1
                else:
                    keep.append(line + b"\n")
            if buf and not _MAYBE_LOG.match(buf[:64]):   # a partial line (a progress bar): now
                keep.append(buf)
                buf = b""
            if keep:
                self._out(b"".join(keep))
        if buf:
            self._out(buf)
        os.close(self.read_fd)

    def join(self) -> None:
        self.thread.join(timeout=10)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def open_mode(*, mode: str, into: Path | None, out: Path, name: str | None, stem: str,
              settings: dict[str, Any], workload: dict[str, Any],
              command: str) -> tuple[Any, dict[str, Any], Path, str, Path]:
    """Create the run folder (or open ``into``) and the mode's empty folder: (the RunWriter, the
    manifest, the run folder, the mode's folder name, its path). ``traceinsight.profile`` and the
    Keras callback open their run folders through here too."""
    from traceinsight import __version__, runfolder
    from traceinsight.capture import orchestrate as orch

    if into is not None:
        run_path = into
        manifest = runfolder.read_manifest(run_path)
        if mode in (manifest.get("modes") or {}):
            raise TraceinsightError(f"{run_path} already has a mode {mode!r} (choose another --mode)")
    else:
        run_path = out / (name or f"{orch.utc_stamp()}-{stem}")
        if run_path.exists():
            raise TraceinsightError(f"{run_path} already exists (choose another --name, or --into it)")
        env_info = orch.host_environment()   # the script runs in this environment (+ the hook)
        manifest = {
            "schema_version": runfolder.SCHEMA_VERSION,
            "tool": f"traceinsight {__version__}",
            "created_utc": _now(),
            "workload": workload,
            "command": command,
            "environment": env_info,
            "options": {k: v for k, v in settings.items()},
            "modes": {},
        }
        try:
            run_path.mkdir(parents=True)
        except OSError as e:
            raise TraceinsightError(f"cannot create the run folder {run_path}: {e.strerror or e}") from None
    writer = orch.RunWriter(run_path, manifest)
    folder = runfolder.mode_dir(mode)
    mode_path = (run_path / folder).resolve()
    if mode_path.exists():
        raise TraceinsightError(f"{mode_path} already exists")
    mode_path.mkdir(parents=True)
    return writer, manifest, run_path, folder, mode_path


def run_script(cmd: list[str], *, mode: str | None, into: Path | None, out: Path, name: str | None,
               settings: dict[str, Any]) -> int:
    script = script_of(cmd)
    stem = script.stem if script else "script"
    mode = mode or stem
    writer, manifest, run_path, folder, mode_path = open_mode(
        mode=mode, into=into, out=out, name=name, stem=stem, settings=settings,
        workload={"path": str(script) if script else shlex.join(cmd), "sha256": _sha256(script),
                  "name": stem, "kind": "script", "doc": shlex.join(cmd)},
        command="traceinsight run -- " + shlex.join(cmd))
    entry: dict[str, Any] = {"dir": folder, "status": "running", "error": None, "stderr_tail": None, "summary": None,
             "profile_options": {}, "notes": [], "command": shlex.join(cmd),
             "script_sha256": _sha256(script), "settings": dict(settings)}
    manifest["modes"][mode] = entry
    writer.save()

    from traceinsight.capture import compat
    spec = dict(settings, result=str(mode_path / RESULT), logdir=str(mode_path / "host"),
                levels=LEVELS, client_python=compat.client_python())
    print(f"traceinsight: running {shlex.join(cmd)} (mode {mode}, run {run_path})", file=sys.stderr)
    # Ctrl-C reaches the script (same process group); we wait for it and keep what it traced.
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        relay = StderrFilter()
        try:
            proc = subprocess.Popen(cmd, env=_script_env(spec), stderr=relay.start())
        except OSError as e:
            relay.child_started()
            relay.join()
            entry.update(status="failed", error=f"cannot start {cmd[0]}: {e.strerror or e}")
            writer.save()
            raise TraceinsightError(f"cannot start {cmd[0]}: {e.strerror or e}") from None
        relay.child_started()
        rc = proc.wait()
        relay.join()
    finally:
        signal.signal(signal.SIGINT, old)
    finish_mode(writer, mode, mode_path, rc, settings)
    done: dict[str, Any] = writer.mode(mode)
    if done["status"] == "ok":
        print(f"traceinsight: {done['summary']['traced_n']} traced steps of mode {mode} in "
              f"{run_path}; open it with: traceinsight view {run_path}", file=sys.stderr)
    else:
        print(f"traceinsight: mode {mode}: {done['error']}", file=sys.stderr)
    return rc if rc >= 0 else 128 - rc


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return f"died with signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"died with signal {-rc}"
    return f"exited with status {rc}"


def finish_mode(writer, mode: str, mode_path: Path, rc: int, settings: dict) -> None:
    """Turn the agent's result file into timings.json and the mode's run.json entry."""
    from traceinsight import runfolder
    from traceinsight.capture import options as options_mod
    from traceinsight.capture.orchestrate import summary_of

    entry = writer.mode(mode)
    entry["exit_status"] = rc
    try:
        res = json.loads((mode_path / RESULT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        res = None
    if res is None:
        entry.update(status="failed", error=f"the script {_exit_text(rc)} and the traceinsight hook "
                     "never ran in it (not a Python command? a Python without this traceinsight?)")
        writer.save()
        return
    steps = list(res.get("steps_s") or [])
    nums = list(res.get("step_nums") or [])
    traced = list(res.get("traced") or [])
    trace = res.get("trace") or {}
    notes = list(res.get("notes") or [])
    path = trace.get("path")
    skip, window = settings["skip_steps"], settings["steps"]
    traced_steps = [(s, n) for s, n, t in zip(steps, nums, traced) if t]
    after = [(s, n) for s, n, t in zip(steps, nums, traced) if not t and n >= skip and
             (not traced_steps or n > traced_steps[-1][1])]
    timings: dict[str, Any] = {
        "mode": mode, "kind": "script", "pid": res.get("pid"),
        "first_step_s": steps[0] if nums and nums[0] == 0 else None,
        "first_step_traced": bool(traced[0]) if traced and nums[0] == 0 else False,
        "first_step_num": 0,
        "warmup_steps": sum(1 for n in nums if 0 < n < skip),
        # the untimed-by-the-profiler steady steps: untraced steps after the traced window
        "steps_s": [s for s, _ in after], "step_nums": [n for _, n in after],
        "all_steps": {"steps_s": steps, "step_nums": nums, "traced": traced},
        "details": {"command": entry.get("command"), "step_kinds": res.get("step_kinds") or {},
                    "skip_steps": skip, "steps": window, "versions": res.get("versions") or {},
                    "exit_status": rc},
    }
    host: dict[str, Any] = {"duration_ms": trace.get("duration_ms"),
                            "steps_s": [s for s, _ in traced_steps],
                            "step_nums": [n for _, n in traced_steps]}
    if trace:
        host["profile_options"] = options_mod.check(LEVELS, path,
                                                    (res.get("versions") or {}).get("tensorflow"))
        if path:
            try:   # relative to the run folder: the run can be moved
                host["trace"] = host["profile_options"]["trace"] = str(
                    Path(path).resolve().relative_to(writer.path.resolve()))
            except ValueError:
                host["trace"] = path
        if trace.get("problem"):
            host["problem"] = trace["problem"]
        timings["traced"] = {"host": host}
    env = writer.manifest.get("environment") or {}
    for k, v in (res.get("versions") or {}).items():
        env.setdefault(k, v)
    if rc != 0:
        notes.append(f"the script {_exit_text(rc)} after {len(steps)} steps")
    if trace and len(traced_steps) < window:
        notes.append(f"the trace holds {len(traced_steps)} of the {window} steps asked for "
                     "(the script ended, or the steps were slower than the warm-up's)")
    po = host.get("profile_options") or {}
    if trace and po and po.get("unverified"):
        notes.append(f"host pass: {po['unverified']}")
    elif trace and po and not po.get("ok"):
        notes.append(f"host pass: profiler options not as requested: {po.get('problem', 'unknown')}")
    runfolder.atomic_write_json(mode_path / runfolder.TIMINGS, timings)
    try:
        (mode_path / RESULT).unlink()
    except OSError:
        pass
    entry["profile_options"] = {"host": po} if po else {}
    entry["notes"] = notes
    entry["details"] = timings["details"]
    unmarked = int(res.get("unmarked_steps") or 0)
    if res.get("broken"):
        reason = notes[0] if notes else "the hook failed"
        if unmarked:
            notes.append(f"{unmarked} more step calls after that ran unmarked")
    if not steps and res.get("broken"):
        # the hook failed (at the first step, or wrapping TF / Keras): say why, never "no steps"
        error = f"traceinsight could not mark the script's steps: {reason}"
        entry.update(status="failed", error=error)
    elif not steps:
        error = ("no steps: the script called neither Keras fit / train_on_batch / predict nor a "
                 "tf.function" if res.get("versions", {}).get("tensorflow") else
                 "no steps: the script never imported TensorFlow")
        entry.update(status="failed", error=error)
    elif not trace:
        entry.update(status="failed", error=f"the script made {len(steps)} steps, not more than "
                     f"--skip-steps {skip}: nothing was traced")
    elif not path:
        entry.update(status="failed", error="the trace was not saved"
                     + (f": {trace['problem']}" if trace.get("problem") else ""))
    else:
        entry.update(status="ok", summary=summary_of(timings))
    writer.save()
