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
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from traceinsight import modekind
from traceinsight.capture import compat, reserve
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
                if compat.is_profiler_log(line):
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


# How the user named each option, for messages: the command line's flags, or the Python
# arguments of ``traceinsight.profile`` / ``traceinsight.keras.Profile``
CLI_NAMES = {"name": "--name", "into": "--into", "mode": "--mode", "skip_steps": "--skip-steps"}
PY_NAMES = {"name": "name=", "into": "into=", "mode": "mode=", "skip_steps": "skip_steps="}


class RecordedMode:
    """One mode recorded by a step agent (``run``'s hook, ``traceinsight.profile``, the Keras
    callback), from its run folder's creation to its end: the one place these routes take the
    run's lock (the one ``capture`` takes: a run written by two processes loses modes), write
    run.json and timings.json (atomically), and decide the mode's status (``finish``)."""

    def __init__(self, *, mode: str, into: Path | None, out: Path, name: str | None, stem: str,
                 settings: dict[str, Any], workload: dict[str, Any], command: str,
                 entry: dict[str, Any], names: dict[str, str] = CLI_NAMES) -> None:
        """Create the run folder (or open ``into``), lock it, and add the mode (status running)
        with its empty folder. Raises TraceinsightError naming the option to change."""
        from traceinsight import __version__, runfolder
        from traceinsight.capture import lock as lock_mod
        from traceinsight.capture.environment import host_environment
        from traceinsight.capture.planning import RunWriter, utc_stamp

        self.mode, self.settings = mode, settings
        if into is not None:
            run_path = into
            if not (run_path / runfolder.MANIFEST).is_file():
                raise TraceinsightError(f"{run_path} is not a run folder (no run.json) to add a "
                                        f"mode {names['into']} it")
            self.lock = lock_mod.RunLock(run_path).acquire()   # before run.json is read
            try:
                manifest = runfolder.read_manifest(run_path)
                if mode in (manifest.get("modes") or {}):
                    raise TraceinsightError(f"{run_path} already has a mode {mode!r} (choose "
                                            f"another {names['mode']})")
            except BaseException:
                self.lock.release()
                raise
        else:
            run_path = out / (name or f"{utc_stamp()}-{stem}")
            if run_path.exists():
                raise TraceinsightError(f"{run_path} already exists (choose another "
                                        f"{names['name']}, or {names['into']} it)")
            manifest = {
                "schema_version": runfolder.SCHEMA_VERSION,
                "tool": f"traceinsight {__version__}",
                "created_utc": _now(),
                "workload": workload,
                "command": command,
                "environment": host_environment(),   # the script runs in this environment
                "options": {k: v for k, v in settings.items()},
                "modes": {},
            }
            try:
                run_path.mkdir(parents=True)
            except OSError as e:
                raise TraceinsightError(f"cannot create the run folder {run_path}: "
                                        f"{e.strerror or e}") from None
            self.lock = lock_mod.RunLock(run_path).acquire()
        self.run_path = run_path
        try:
            reserve.set_aside(run_path, manifest)
            self.writer = RunWriter(run_path, manifest)
            self.folder = runfolder.mode_dir(mode)
            self.mode_path = (run_path / self.folder).resolve()
            if self.mode_path.exists():
                raise TraceinsightError(f"{self.mode_path} already exists (choose another "
                                        f"{names['mode']})")
            try:
                self.mode_path.mkdir(parents=True)
            except OSError as e:
                raise TraceinsightError(f"cannot create {self.mode_path}: {e.strerror or e}") \
                    from None
            manifest["modes"][mode] = {"dir": self.folder, "status": "running", "error": None,
                                       "stderr_tail": None, "summary": None, "profile_options": {},
                                       "notes": [], "settings": dict(settings),
                                       "kind": modekind.SCRIPT.to_dict(), **entry}
            self.writer.save()
        except BaseException:
            self._undo(into is None)
            raise
        self.done = False
        self.unfinished: str | None = None    # why the mode's end could not be written
        self.handoff: dict[str, Any] | None = None    # what the watcher needs to write it
        self.watch_fd: int | None = None
        self.watcher: Any = None

    def _undo(self, made: bool) -> None:
        """Opening failed half-way: take back what this mode added, and let the lock go."""
        import shutil
        if made:
            shutil.rmtree(self.run_path, ignore_errors=True)
        else:
            reserve.give_back(self.run_path)
            mode_path = getattr(self, "mode_path", None)
            if mode_path is not None and mode_path.is_dir() and not any(mode_path.iterdir()):
                mode_path.rmdir()
        self.lock.release()

    @property
    def entry(self) -> dict[str, Any]:
        return dict(self.writer.mode(self.mode))

    def agent_spec(self, quiet: bool) -> dict[str, Any]:
        """The step agent's settings (``capture.hook.agent.Agent``)."""
        return dict(self.settings, result=str(self.mode_path / RESULT),
                    logdir=str(self.mode_path / "host"), levels=LEVELS, quiet=quiet)

    def finish(self, rc: int, raised: str | None = None, final: bool = True,
               res: dict[str, Any] | None = None,
               write_failed: dict[str, Any] | None = None) -> dict[str, Any]:
        """The agent's result (``res``, the in-process routes' agent's own state; else its file)
        into timings.json and the mode's run.json entry (``finish_mode``); ``final``: let the
        run's lock go (else the mode is rewritten later, as a callback whose window ended does,
        before ``fit`` ends). Never raises: a write that fails even with the reserve's space
        (``reserve.save_manifest``) is said in one line, and run.json keeps its last word on the mode.
        Returns the mode's entry."""
        self.unfinished = self.handoff = None
        try:
            # a mode finished before its process ends (``final=False``) says so: the watcher
            # finishes it again if the process then dies
            self.writer.mode(self.mode)["provisional"] = not final
            finish_mode(self.writer, self.mode, self.mode_path, rc, self.settings, raised=raised,
                        final=final, res=res, write_failed=write_failed)
        except Exception as e:
            self.unfinished = str(e)
            # the watcher (in-process routes) tries once more, from this state, with the reason
            self.handoff = {"unfinished": str(e), "rc": rc, "raised": raised, "res": res}
            if final:    # (a provisional end that fails is written again at the final one)
                print(f"traceinsight: could not finish mode {self.mode} of {self.run_path}: "
                      f"{e}; its entry in run.json was not updated", file=sys.stderr, flush=True)
        finally:
            if final:
                self.release()
        return self.entry

    def fail(self, error: str) -> None:
        """The mode failed before any step could run: say why in run.json, let the lock go. Never
        raises (a write that fails is said in one line, as ``finish`` says it)."""
        self.writer.mode(self.mode).update(status="failed", error=error)
        try:
            reserve.save_manifest(self.writer)
        except Exception as e:
            self.unfinished = str(e)
            print(f"traceinsight: could not finish mode {self.mode} of {self.run_path}: "
                  f"{e}; its entry in run.json was not updated", file=sys.stderr, flush=True)
        finally:
            self.release()

    def release(self) -> None:
        if not self.done:
            self.done = True
            reserve.give_back(self.run_path)    # the mode's end is written (or could not be)
            self.lock.release()
            if self.watch_fd is not None:     # the watcher (``watch``) sees the mode finished
                if self.handoff is not None:  # ... or not: it tries once more
                    try:
                        os.set_blocking(self.watch_fd, True)   # (the agent's lines do not wait)
                        with os.fdopen(self.watch_fd, "wb", closefd=False) as pipe:
                            pipe.write(json.dumps(self.handoff).encode())
                    except (OSError, TypeError, ValueError):
                        pass
                os.close(self.watch_fd)
                self.watch_fd = None

    def say(self, rc: int | None = None) -> None:
        """The mode's end in one line on stderr. ``rc``: the script's exit status (``run``), which
        the command passes through even when the recording failed: the line says so."""
        done = self.entry
        own = f"; exit status {rc} is the script's own" if rc is not None else ""
        if self.unfinished is not None:     # ``finish`` said why, in one line
            if rc is not None:
                print(f"traceinsight: recording failed: mode {self.mode} is not recorded{own}",
                      file=sys.stderr, flush=True)
            return
        if done["status"] == "ok":
            print(f"traceinsight: {done['summary']['traced_n']} traced steps of mode {self.mode} "
                  f"in {self.run_path}; open it with: traceinsight view {self.run_path}",
                  file=sys.stderr, flush=True)
            if (done.get("details") or {}).get("untraced_steps") == 0:
                print(f"traceinsight: mode {self.mode}: {NO_UNTRACED_NOTE}: its figures are the "
                      "traced steps', the profiler's cost inside (its notes say why); run the "
                      "script longer for an untraced median", file=sys.stderr, flush=True)
        else:
            print(f"traceinsight: recording failed: mode {self.mode}: {done['error']}{own}",
                  file=sys.stderr, flush=True)


# the mode's note, and ``say``'s line, when its script timed no untraced step
NO_UNTRACED_NOTE = "no untraced step was timed after the trace"


def run_script(cmd: list[str], *, mode: str | None, into: Path | None, out: Path, name: str | None,
               settings: dict[str, Any]) -> int:
    script = script_of(cmd)
    stem = script.stem if script else "script"
    mode = mode or stem
    rec = RecordedMode(
        mode=mode, into=into, out=out, name=name, stem=stem, settings=settings,
        workload={"path": str(script) if script else shlex.join(cmd), "sha256": _sha256(script),
                  "name": stem, "kind": "script", "doc": shlex.join(cmd)},
        command="traceinsight run -- " + shlex.join(cmd),
        entry={"command": shlex.join(cmd), "script_sha256": _sha256(script)})
    # the agent tells us through this pipe when it cannot write its result file (a full disk)
    status_r, status_w = os.pipe()
    spec = dict(rec.agent_spec(quiet=False), status_fd=status_w)   # our stderr relay filters
    print(f"traceinsight: running {shlex.join(cmd)} (mode {mode}, run {rec.run_path})",
          file=sys.stderr)
    # Ctrl-C reaches the script (same process group); we wait for it and keep what it traced.
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        relay = StderrFilter()
        try:
            proc = subprocess.Popen(cmd, env=_script_env(spec), stderr=relay.start(),
                                    pass_fds=(status_w,))
        except OSError as e:
            relay.child_started()
            relay.join()
            rec.fail(f"cannot start {cmd[0]}: {e.strerror or e}")
            raise TraceinsightError(f"cannot start {cmd[0]}: {e.strerror or e}") from None
        finally:
            os.close(status_w)
        relay.child_started()
        rc = proc.wait()
        relay.join()
        rec.finish(rc, write_failed=_agent_told(status_r))
    finally:
        signal.signal(signal.SIGINT, old)
        os.close(status_r)
        rec.release()
    status = rc if rc >= 0 else 128 - rc
    rec.say(status)
    # the script's exit status, also when the recording failed (the line above says so): the
    # script ran as it would have without traceinsight, and a wrapper that checks its status
    # must see its own
    return status


def _agent_told(fd: int) -> dict[str, Any] | None:
    """What ``run``'s agent told through its pipe (``Agent._tell``): its failed write of the
    result file when no write succeeded after it (the file then holds an earlier state), else
    None. Read without waiting (a child of the script may still hold the pipe)."""
    data = b""
    try:
        os.set_blocking(fd, False)
        while len(data) < 1 << 20:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except OSError:     # nothing more now (BlockingIOError)
        pass
    return _told(data)[0]


def _told(data: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The lines an agent (``Agent._tell``) and, for a watcher, its process (``RecordedMode.
    release``) wrote to a pipe, one JSON document a line: the agent's failed write of its result
    file when no write succeeded after it (the file then holds an earlier state), and the
    process's handoff (``RecordedMode.handoff``); None for each not told."""
    failed = handoff = None
    for line in data.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if "write_ok" in message:
            failed = None
        elif isinstance(message.get("write_failed"), dict):
            failed = message["write_failed"]
        elif isinstance(message.get("res"), dict):
            handoff = message
    return failed, handoff


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return f"died with signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"died with signal {-rc}"
    return f"exited with status {rc}"


def _disk_full(path: Path) -> bool:
    from traceinsight.capture.orchestrate import MIN_FREE_BYTES
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < MIN_FREE_BYTES


def finish_mode(writer, mode: str, mode_path: Path, rc: int, settings: dict,
                raised: str | None = None, final: bool = True, res: dict[str, Any] | None = None,
                write_failed: dict[str, Any] | None = None) -> None:
    """Turn the agent's result (``res``: its state, from the in-process routes; else its result
    file) into timings.json and the mode's run.json entry. ``rc``: the script's exit status (0
    for an in-process route that ended normally); ``raised``: what the profiled code raised, if it
    did; ``write_failed``: ``run``'s agent said its last write of the result file failed (a full
    disk), so the file holds an earlier state. The mode is ``ok`` only when its trace parses and
    the disk was not full (``orchestrate.verify_traces``, as for ``capture``); the steps measured
    are kept whatever the status, unless the disk cannot hold them (then the mode fails, saying
    so). run.json is written with the reserve's space if need be (``_save_end``)."""
    from traceinsight import runfolder
    from traceinsight.capture import options as options_mod
    from traceinsight.capture.orchestrate import summary_of, verify_traces
    from traceinsight.stepsource import StepSpan

    entry = writer.mode(mode)
    entry["exit_status"] = rc
    from_memory = res is not None
    if res is None:
        try:
            res = json.loads((mode_path / RESULT).read_text(encoding="utf-8"))
            if not isinstance(res, dict):
                res = None
        except (OSError, ValueError):
            res = None
    if res is None:
        full = _disk_full(mode_path)
        entry.update(status="failed", error=(
            f"the script {_exit_text(rc)}; {_agent_write_failed(write_failed)}: nothing it "
            "measured was saved" if write_failed else
            f"the script {_exit_text(rc)}; the disk is full: traceinsight could not save what it "
            "measured" if full else
            f"the script {_exit_text(rc)} and the traceinsight hook never ran in it (not a Python "
            "command? a Python without this traceinsight?)"))
        _save_end(writer, final)
        return
    steps = list(res.get("steps_s") or [])
    nums = list(res.get("step_nums") or [])
    traced = list(res.get("traced") or [])
    trace = res.get("trace") or {}
    notes = list(res.get("notes") or [])
    path = trace.get("path")
    tf_version = (res.get("versions") or {}).get("tensorflow")
    skip, window = settings["skip_steps"], settings["steps"]
    traced_steps = [(s, n) for s, n, t in zip(steps, nums, traced) if t]
    # untraced steady steps: those that began after the trace was saved (a step that began while
    # it was being saved ran beside the profiler's work)
    settled = trace.get("settled_from_step")
    # a loop's iterations during which the agent's own thread worked (a save, the profiler's stop)
    disturbed = set(res.get("disturbed_steps") or ())
    after = [(s, n) for s, n, t in zip(steps, nums, traced) if not t and n >= skip and
             (not traced_steps or n > traced_steps[-1][1]) and (settled is None or n >= settled)
             and (not trace or "path" in trace) and n not in disturbed]
    kinds = res.get("step_kinds") or {}
    span = StepSpan.of_kinds(kinds)
    timings: dict[str, Any] = {
        "mode": mode, "kind": "script", "pid": res.get("pid"),
        "first_step_s": steps[0] if nums and nums[0] == 0 else None,
        "first_step_traced": bool(traced[0]) if traced and nums[0] == 0 else False,
        "first_step_num": 0,
        "warmup_steps": sum(1 for n in nums if 0 < n < skip),
        # the untimed-by-the-profiler steady steps: untraced steps after the traced window
        "steps_s": [s for s, _ in after], "step_nums": [n for _, n in after],
        "all_steps": {"steps_s": steps, "step_nums": nums, "traced": traced},
        "details": {"command": entry.get("command"), "step_kinds": kinds,
                    "skip_steps": skip, "steps": window, "versions": res.get("versions") or {},
                    "exit_status": rc, "untraced_steps": len(after)},
    }
    if span is not None:
        # what a step spans (``StepSpan``), and for a loop's iterations the calls that began them
        timings["step_span"] = span.value
    if res.get("step_calls"):
        timings["step_calls"] = sorted(res["step_calls"])
        timings["details"]["step_calls"] = dict(res["step_calls"])
        # the loop's last step call, whose iteration has no next call to end it, is no step
        timings["details"]["unended_iterations"] = int(res.get("unended_iterations") or 0)
    duration = None
    if trace.get("started_s") and trace.get("saved_s"):
        duration = max(0, int((trace["saved_s"] - trace["started_s"]) * 1e3))
    host: dict[str, Any] = {"duration_ms": duration,
                            "steps_s": [s for s, _ in traced_steps],
                            "step_nums": [n for _, n in traced_steps]}
    if settled is not None:
        host["settled_from_step"] = settled
    if trace:
        host["profile_options"] = options_mod.check(LEVELS, path, tf_version)
        if path:
            try:   # relative to the run folder: the run can be moved
                host["trace"] = host["profile_options"]["trace"] = str(
                    Path(path).resolve().relative_to(writer.path.resolve()))
            except ValueError:
                host["trace"] = path
        if trace.get("problem"):
            host["problem"] = trace["problem"]
        if isinstance(trace.get("load"), dict):   # the machine's load while the window was traced
            host["load"] = trace["load"]
        timings["traced"] = {"host": host}
    if isinstance(res.get("load"), dict):   # ... and while the untraced steps after it ran
        timings["load"] = res["load"]
    sigs = res.get("input_signatures")
    if isinstance(sigs, dict) and len(sigs) == 1 and isinstance(next(iter(sigs.values())), dict):
        # the traced calls' arguments, as capture records the inputs it feeds: where one function
        # made the steps (the retrace table reads them for every function it shows)
        timings["input_signatures"] = next(iter(sigs.values()))
    cal = res.get("calibration")
    if isinstance(cal, dict) and isinstance(cal.get("calls"), int) and cal.get("untraced_s") \
            and cal.get("traced_s") and path:
        # the profiler's cost, measured in the script's process as ``capture`` measures it (the
        # traced blocks are in this trace): the analysis takes it out where it lands
        timings["calibration"] = {k: cal[k] for k in ("calls", "untraced_s", "traced_s")}
        timings["details"]["calibration_s"] = cal.get("cost_s")   # the script's time it took
    env = writer.manifest.get("environment") or {}
    for k, v in (res.get("versions") or {}).items():
        env.setdefault(k, v)
    # the agent's exit handler never ran (os._exit, a signal), unless only its write failed
    died = not res.get("exited") and not write_failed
    if raised:
        notes.append(f"{raised} after {len(steps)} steps")
    elif rc != 0 or died and final:
        notes.append(f"the script {_exit_text(rc)} after {len(steps)} steps"
                     + (" (traceinsight's exit handler did not run)" if died and final else ""))
    if trace and path and traced_steps and len(traced_steps) < window:
        notes.append(f"the trace holds {len(traced_steps)} of the {window} steps asked for "
                     "(the script ended first, or the trace's time bound passed)")
    if trace and path and traced_steps and not after:
        later = sum(1 for n in nums if n > traced_steps[-1][1])
        notes.append(
            NO_UNTRACED_NOTE + (
                f": the script ended {later} step{'s' if later != 1 else ''} after the traced "
                "window, every one of them while the profiler was still saving the trace (a step "
                "then runs beside its work and is not timed)" if later else
                ": the script ended with the traced window")
            + ". The figures are the traced steps', the profiler's cost inside; run the script "
            "longer (more steps or epochs after the window) for an untraced median")
    po = host.get("profile_options") or {}
    if trace and path and po and po.get("unverified"):
        notes.append(f"host pass: {po['unverified']}")
    elif trace and path and po and not po.get("ok"):
        notes.append(f"host pass: profiler options not as requested: {po.get('problem', 'unknown')}")
    lost = res.get("write_error")
    if lost and not write_failed:     # the state came whole from memory, or a later write
        notes.append(f"{_agent_write_failed(lost)} when it held {lost.get('after_steps')} of them ("
                     + ("the mode was finished from the steps it held in memory" if from_memory
                        else "a later write of it succeeded") + ")")
    try:
        runfolder.atomic_write_json(mode_path / runfolder.TIMINGS, timings)
    except OSError as e:
        # the steps cannot be kept (nor a mode ``ok`` without them): the mode fails, saying so;
        # the agent's result file, if any, is left as it is
        entry.update(status="failed", summary=None, notes=notes, error=(
            f"{_agent_write_failed(write_failed)}, and " if write_failed else "")
            + f"{reserve.cannot_write(mode_path / runfolder.TIMINGS, e)}: the {len(steps)} steps "
            "measured are not recorded")
        _save_end(writer, final)
        return
    if final:
        try:
            (mode_path / RESULT).unlink()
        except OSError:
            pass
    entry["profile_options"] = {"host": po} if po and path else {}
    entry["notes"] = notes
    entry["details"] = timings["details"]
    unmarked = int(res.get("unmarked_steps") or 0)
    reason = notes[0] if notes else "the hook failed"
    if res.get("broken") and unmarked:
        notes.append(f"{unmarked} more step calls after that ran unmarked")
    how = f"the script {_exit_text(rc)}" if rc else (raised or "the script ended")
    error: str | None
    if write_failed and not (write_failed.get("trace_saved") and path):
        # the agent's record stops before the trace's end: what it holds cannot be matched with
        # the trace (nor with the steps the script made after)
        held = write_failed.get("after_steps")
        error = (f"{_agent_write_failed(write_failed)} once it held {held} "
                 f"step{'' if held == 1 else 's'} ({how}): only what it wrote before that is "
                 "recorded, not the end of the traced window")
    elif not steps and res.get("broken"):
        # the hook failed (at the first step, or wrapping TF / Keras): say why, never "no steps"
        error = f"traceinsight could not mark the script's steps: {reason}"
    elif not steps and tf_version:
        named = settings.get("step_function")
        error = (f"no steps: {how} before its first step" if rc or raised else
                 "no steps: the script called neither Keras fit / train_on_batch / predict nor a "
                 + (f"function named {named} (step_function)" if named else
                    "tf.function nor a TF1 Session.run")
                 + ", and marked no step by hand (traceinsight.profile's p.step())")
    elif not steps:
        error = (f"no steps: {how} before it imported TensorFlow" if rc or raised else
                 "no steps: the script never imported TensorFlow")
    elif trace.get("stopping_s") and "path" not in trace:
        error = (f"{how}; the trace was still being saved then (after the traced window) and is "
                 f"lost: {len(steps)} steps measured ({len(traced_steps)} in the window)")
    elif trace and "path" not in trace:
        # the agent does not write its file while the window is traced: what it wrote last is kept
        error = (f"{how} inside the traced window, before the trace was saved: the "
                 f"{len(steps)} steps recorded before the window are kept, none traced")
    elif not traced_steps and len(steps) <= skip and not trace.get("problem"):
        # (a loop's last call began the window's first iteration, which has no end: the
        # profiler's own problem at its start, if any, is the reason said)
        error = (f"{how} after {len(steps)} steps, not more than the {skip} warm-up steps "
                 f"(skip_steps): nothing was traced")
    elif not path:
        error = "the trace was not saved" + (f": {trace['problem']}" if trace.get("problem") else "")
    elif not traced_steps:
        error = "no step was traced" + (f": {trace['problem']}" if trace.get("problem") else "")
    else:
        error = verify_traces(writer.path, runfolder.mode_dir(mode), timings, resume=False)
        if error is not None:
            error = f"the trace cannot be trusted: {error}"
    if error is None and write_failed:
        notes.append(f"{_agent_write_failed(write_failed)} when it held "
                     f"{write_failed.get('after_steps')} of them, after the trace was saved: the "
                     "steps after those are not recorded")
    if error is None:
        entry.update(status="ok", error=None, summary=summary_of(timings))
    else:
        entry.update(status="failed", error=error, summary=None)
    _save_end(writer, final)


def _save_end(writer, final: bool) -> None:
    """The mode's end into run.json: with the reserve's space if need be (``reserve.save_manifest``) when
    it is the last word; a provisional end (``final=False``) does without, keeping it for that."""
    if final:
        reserve.save_manifest(writer)
    else:
        writer.save()


def _agent_write_failed(failure: dict[str, Any]) -> str:
    """The agent's failed write of its result file (``Agent.save``'s record), in words."""
    words = reserve.space_words(failure.get("errno"))
    return (f"{words + ': ' if words else ''}traceinsight could not write its record of the steps "
            f"({failure.get('path')}: {failure.get('strerror') or failure.get('error')})")


# ----------------------------------------------------------------------------- a process that dies

def watch(rec: RecordedMode) -> Any:
    """For the in-process routes: a small process that finishes the mode if this one dies with it
    unfinished (``os._exit``, a signal, a crash: nothing of this process runs then). It waits for
    the end of a pipe whose other end only this process holds: the kernel closes it at any death,
    and ``RecordedMode.finish`` closes it (after letting the lock go) when the mode is finished.
    Through it the agent tells when its result file cannot be written (a full disk), and a
    process that could not write the mode's end hands over its state (``RecordedMode.handoff``).
    Returns the pipe's end to close, or None when no watcher could start (then a death leaves the
    mode ``running``, its agent's file kept)."""
    try:
        r, w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-m", "traceinsight.capture.script", "--watch", str(rec.run_path),
             rec.mode, json.dumps(rec.settings)],
            stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
            start_new_session=True,      # the user's Ctrl-C is not for it
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])
                 + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")})
        os.close(r)
    except (OSError, ValueError):
        return None
    rec.watcher = proc
    return w


# the most a process hands its watcher (its agent's state: a million steps are ~40 MB)
MAX_HANDOFF_BYTES = 256 << 20


def _watched(run_path: Path, mode: str, settings: dict) -> int:
    """The watcher's side: after the pipe's end, finish the mode if it is still ``running``."""
    from traceinsight import runfolder
    from traceinsight.capture import lock as lock_mod
    from traceinsight.capture.planning import RunWriter
    told = bytearray()     # what the process and its agent told (``_told``)
    try:
        while chunk := sys.stdin.buffer.read(65536):
            if len(told) < MAX_HANDOFF_BYTES:
                told += chunk
    except OSError:
        pass
    write_failed, handoff = _told(bytes(told)) if len(told) < MAX_HANDOFF_BYTES else (None, None)
    # the dead process's lock goes a moment after its pipe closes (the kernel releases a flock
    # when it drops the file, which it may do later): wait for it, a while
    lock = None
    for _ in range(300):
        try:
            lock = lock_mod.RunLock(run_path).acquire()
            break
        except TraceinsightError:
            time.sleep(0.1)
    if lock is None:
        return 1
    try:
        manifest = runfolder.read_manifest(run_path)
        entry = (manifest.get("modes") or {}).get(mode)
        if not isinstance(entry, dict) or (entry.get("status") != "running"
                                           and not entry.get("provisional")):
            return 0     # finished by its process
        entry["provisional"] = False
        writer = RunWriter(run_path, manifest)
        mode_path = (run_path / runfolder.mode_dir(mode)).resolve()
        if handoff is not None:
            # the process ended as it should but could not write the mode's end (a full disk):
            # written from its state, with why it is written late
            res = dict(handoff["res"])
            res["notes"] = [n for n in res.get("notes") or [] if isinstance(n, str)] + [
                f"the profiling process could not write the mode's end "
                f"({handoff.get('unfinished')}); traceinsight's watcher process wrote it after"]
            finish_mode(writer, mode, mode_path, int(handoff.get("rc") or 0), settings,
                        raised=handoff.get("raised"), res=res)
        else:
            finish_mode(writer, mode, mode_path, 0, settings,
                        raised="the process ended without finishing the mode (os._exit, a "
                        "signal or a crash)", write_failed=write_failed)
    except (TraceinsightError, OSError, ValueError):
        return 1
    finally:
        reserve.give_back(run_path)
        lock.release()
    return 0


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--watch":
    sys.exit(_watched(Path(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])))
