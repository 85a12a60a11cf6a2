"""The parent side of a capture: one subprocess per mode, timeouts, run.json, progress, summary.

Never imports TensorFlow: the workload runs in ``python -m traceinsight.capture.runner`` processes,
which hand results back through JSON files (never pickle). run.json is rewritten atomically after
every state change, so an interrupted capture (Ctrl-C, a killed process) leaves a readable run that
``--resume`` completes.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from traceinsight import __version__, machineload, runfolder
from traceinsight.capture import lock as lock_mod
from traceinsight.capture import modes as modes_mod
from traceinsight.capture.workload import WorkloadFile, inspect_file
from traceinsight.errors import TraceinsightError, WriteError

# Environment variables that change what TensorFlow / Keras do (recorded in run.json when set).
TF_ENV_VARS = (
    "TF_ENABLE_ONEDNN_OPTS", "TF_USE_LEGACY_KERAS", "XLA_FLAGS", "TF_XLA_FLAGS", "KERAS_BACKEND",
    "TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_NUM_INTEROP_THREADS", "TF_NUM_INTRAOP_THREADS",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TF_GPU_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
    "CUDA_VISIBLE_DEVICES", "TF_DETERMINISTIC_OPS", "TF_ENABLE_XLA", "TF_XLA_ENABLE_XLA_DEVICES",
    "PYTHONHASHSEED", "TF_RUN_EAGER_OP_AS_FUNCTION", "TF_ENABLE_MLIR_BRIDGE",
)

STDERR_TAIL_LINES = 25
# processes a mode may take to hold its whole first step in the host trace (see capture_mode)
FIRST_STEP_ATTEMPTS = 3


@dataclass
class Options:
    """Capture settings (the command's flags)."""

    timeout: float = 600.0
    min_steps: int = 30
    min_time: float = 2.0
    max_time: float = 30.0
    warmup_steps: int = 5
    host_trace_ms: int = 3000
    host_max_steps: int = 100
    python_tracer: bool = True
    python_trace_ms: int = 1500
    python_max_steps: int = 5
    rounds: int = 4             # untraced timing rounds per mode, interleaved across modes
    round_time: float = 1.0     # rounds after the first: at least this many seconds ...
    round_min_steps: int = 3    # ... and this many steps each

    def spec(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "timeout"}

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def resolve(cls, *layers: dict[str, Any] | None) -> "Options":
        """Built-in defaults, then each layer in turn (a run's saved options, the workload's
        ``CAPTURE``, the flags given on the command line); unknown keys are ignored."""
        values = cls().as_dict()
        for layer in layers:
            if layer is not None and not isinstance(layer, dict):
                raise TraceinsightError(f"options: expected an object of settings, got "
                                        f"{type(layer).__name__}")
            for k, v in (layer or {}).items():
                if k in values and v is not None:
                    values[k] = _option_value(k, v, type(values[k]))
        opts = cls(**values)
        opts.validate()
        return opts

    def validate(self) -> None:
        for name in ("timeout", "host_trace_ms", "python_trace_ms"):
            if not getattr(self, name) > 0:
                raise TraceinsightError(f"{name} must be positive")
        for name in ("min_steps", "host_max_steps", "python_max_steps", "rounds", "round_min_steps"):
            if getattr(self, name) < 1:
                raise TraceinsightError(f"{name} must be at least 1")
        for name in ("min_time", "max_time", "warmup_steps", "round_time"):
            if getattr(self, name) < 0:
                raise TraceinsightError(f"{name} must not be negative")


@dataclass
class ModeState:
    name: str
    status: str = "pending"
    error: str | None = None
    stderr_tail: str | None = None
    started: float | None = None
    ended: float | None = None
    notes: list[str] = field(default_factory=list)
    # notes about the TensorFlow, the same for every mode and pass (its traces record no
    # profile_options): in the mode's notes once, and printed once per capture
    tf_notes: list[str] = field(default_factory=list)
    live: "LiveChild | None" = None   # the mode's process, kept alive for interleaved rounds

    @property
    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        return (self.ended or time.monotonic()) - self.started


# ----------------------------------------------------------------------------- environment

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_environment() -> dict[str, Any]:
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "os": platform.platform(),
        "machine": platform.machine(),
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "cpu_cores_usable": affinity,
        "env": {k: os.environ[k] for k in TF_ENV_VARS if k in os.environ},
        "tf_keras_installed": modes_mod.tf_keras_installed(),
    }


def child_env(mode: modes_mod.Mode | None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("KERAS_BACKEND", "tensorflow")
    # TF's INFO logs (profiler session chatter) would bury a failing mode's real error in stderr.
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    env["PYTHONUNBUFFERED"] = "1"
    # a Keras 2 mode's TF_USE_LEGACY_KERAS is set in its process, where the Keras installed is known
    # (compat.legacy_keras_env: TF 2.16+ only; it breaks tf.keras on 2.15)
    if mode is not None and mode.backend != "tensorflow":
        env["KERAS_BACKEND"] = mode.backend
    # the child must import this very traceinsight, also when it is not installed, and in another
    # interpreter (--python) nothing else of this one (its numpy, protobuf ...)
    root = package_path() if workload_python else str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# The interpreter workload processes run under (``capture --python``); None: this one.
workload_python: str | None = None
_package_dir: str | None = None


def set_workload_python(python: str | None) -> None:
    """Use ``python`` for the workload processes, after checking it can run them (Python >= 3.10)."""
    global workload_python
    if python is None:
        workload_python = None
        return
    path = shutil.which(python) or python
    try:
        out = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TraceinsightError(f"--python {python}: cannot run it ({getattr(e, 'strerror', None) or e})") from None
    # the version is the output's last line; a wrapper may print a banner before it, and bytes
    # that are not UTF-8 or a line cut short are not a version
    lines = out.stdout.decode("utf-8", "replace").strip().splitlines()
    m = re.fullmatch(r"(\d+)\.(\d+)", lines[-1].strip()) if lines else None
    if out.returncode != 0 or m is None:
        raise TraceinsightError(f"--python {python}: not a Python interpreter (exit status "
                                f"{out.returncode}, no 'X.Y' version on its last line of output)")
    version = f"{m.group(1)}.{m.group(2)}"
    if (int(m.group(1)), int(m.group(2))) < (3, 10):
        raise TraceinsightError(f"--python {python}: Python {version}; the workload side needs Python >= 3.10")
    workload_python = os.path.abspath(path)


def package_path() -> str:
    """A folder holding only a link to this ``traceinsight`` package, for another interpreter's
    PYTHONPATH (the workload side needs TensorFlow and the standard library, nothing of ours)."""
    global _package_dir
    if _package_dir is None or not os.path.isdir(_package_dir):
        import atexit
        folder = tempfile.mkdtemp(prefix="traceinsight-path-")
        os.symlink(Path(__file__).resolve().parents[1], os.path.join(folder, "traceinsight"))
        atexit.register(shutil.rmtree, folder, True)
        _package_dir = folder
    return _package_dir


# ----------------------------------------------------------------------------- child processes

@dataclass
class ChildResult:
    ok: bool
    result: dict                  # the child's result ({} when it failed)
    error: str                    # why it failed ("" when ok)
    stderr_tail: str | None
    returncode: int | None
    setup_problem: bool = False   # this Python cannot capture (no TensorFlow / xprof)
    live: "LiveChild | None" = None  # the process, still running, when it was kept alive for rounds


def _tail(text: str, n: int = STDERR_TAIL_LINES) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


@dataclass
class LiveChild:
    """A mode's workload process kept alive after its capture, to time interleaved rounds."""

    proc: subprocess.Popen
    log_tmp: str
    stderr_path: Path | None

    def ask_round(self, i: int, out: Path, timeout: float) -> dict | None:
        """Ask for round ``i``; its result, or None when the process died or timed out."""
        if self.proc.poll() is not None:
            return None
        if out.exists():
            out.unlink()
        try:
            stdin = self.proc.stdin
            if stdin is None:
                return None
            stdin.write((json.dumps({"round": i, "out": str(out)}) + "\n").encode())
            stdin.flush()
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if out.exists():
                data = json.loads(out.read_text())
                out.unlink()
                return data
            if self.proc.poll() is not None:
                return None
            time.sleep(0.02)
        return None

    def close(self) -> None:
        """End the process (asked, then killed) and write its whole output to stderr.log."""
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                self.proc.stdin.write(b'{"exit": true}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self.proc)
        try:
            text = Path(self.log_tmp).read_text(encoding="utf-8", errors="replace")
            if self.stderr_path is not None and self.stderr_path.parent.is_dir():
                runfolder.atomic_write_bytes(self.stderr_path, text.encode())
        finally:
            try:
                os.unlink(self.log_tmp)
            except OSError:
                pass

    def kill(self) -> None:
        _kill_group(self.proc)
        try:
            os.unlink(self.log_tmp)
        except OSError:
            pass


def run_child(what: str, spec: dict, workdir: Path, timeout: float, env: dict[str, str],
              stderr_path: Path | None = None, poll: Callable[[], None] | None = None,
              keep_alive: bool = False) -> ChildResult:
    """Run the runner in its own process group; kill the group on timeout or Ctrl-C.

    ``keep_alive``: return as soon as the result is written, leaving the process running (it then
    serves interleaved rounds, see ``LiveChild``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / f".{what}.result.json"
    err_file = out.with_name(out.name + ".error")
    for p in (out, err_file):
        if p.exists():
            p.unlink()
    cmd = [workload_python or sys.executable, "-m", "traceinsight.capture.runner", what, "--spec", json.dumps(spec),
           "--out", str(out)]
    log_fd, log_tmp = tempfile.mkstemp(dir=workdir, prefix=f".{what}.stderr.", suffix=".tmp")
    timed_out = False
    alive = False
    try:
        with os.fdopen(log_fd, "wb") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if keep_alive else subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            deadline = time.monotonic() + timeout
            try:
                while True:
                    try:
                        proc.wait(timeout=0.2)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if keep_alive and out.exists():
                        alive = True
                        break
                    if poll is not None:
                        poll()
                    if time.monotonic() > deadline:
                        timed_out = True
                        _kill_group(proc)
                        break
            except BaseException:  # Ctrl-C: do not leave the workload running
                _kill_group(proc)
                raise
        text = Path(log_tmp).read_text(encoding="utf-8", errors="replace")
        if stderr_path is not None:
            runfolder.atomic_write_bytes(stderr_path, text.encode())
    finally:
        if not alive:
            try:
                os.unlink(log_tmp)
            except OSError:
                pass
    tail = _tail(text)
    rc = proc.returncode
    if alive:
        result = json.loads(out.read_text())
        out.unlink()
        return ChildResult(True, result, "", tail, None, live=LiveChild(proc, log_tmp, stderr_path))
    if timed_out:
        return ChildResult(False, {}, f"timed out after {timeout:g} s (--timeout)", tail, rc)
    if rc == 0 and out.exists():
        result = json.loads(out.read_text())
        out.unlink()
        return ChildResult(True, result, "", tail, rc)
    if err_file.exists():
        info = json.loads(err_file.read_text())
        err_file.unlink()
        return ChildResult(False, {}, str(info.get("error") or f"failed (exit status {rc})"), tail, rc,
                           bool(info.get("setup")))
    elif rc is not None and rc < 0:
        try:
            error = f"died with signal {signal.Signals(-rc).name}"
        except ValueError:
            error = f"died with signal {-rc}"
        if -rc == signal.SIGKILL:
            error += " (a SIGKILL nobody asked for is usually the out-of-memory killer)"
    else:
        last = tail.splitlines()[-1] if tail else ""
        error = f"exited with status {rc}" + (f": {last}" if last else "")
    return ChildResult(False, {}, error, tail, rc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group of the child we started, nothing else
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# ----------------------------------------------------------------------------- run folder

def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def summary_of(timings: dict) -> dict[str, Any]:
    steps = np.asarray(timings.get("steps_s") or [], dtype=float) * 1e3
    traced = np.asarray(((timings.get("traced") or {}).get("host") or {}).get("steps_s") or [], dtype=float) * 1e3
    out: dict[str, Any] = {"n": int(len(steps))}
    if len(steps):
        p25, med, p75 = np.percentile(steps, [25, 50, 75])
        out.update(median_ms=float(med), p25_ms=float(p25), p75_ms=float(p75),
                   min_ms=float(steps.min()), max_ms=float(steps.max()))
    else:
        out.update(median_ms=None, p25_ms=None, p75_ms=None)
    first = timings.get("first_step_s")
    out["first_step_ms"] = float(first) * 1e3 if first is not None else None
    out["traced_median_ms"] = float(np.median(traced)) if len(traced) else None
    out["traced_n"] = int(len(traced))
    out["distortion"] = (float(np.median(traced) / np.median(steps) - 1.0)
                         if len(traced) and len(steps) else None)
    return out


def _option_value(name: str, value: Any, kind: type) -> Any:
    """A setting converted to its type; one line when it cannot be (a run.json from elsewhere)."""
    import math

    from traceinsight.present import safe
    try:
        if isinstance(value, (dict, list)) or (kind is not bool and isinstance(value, bool)):
            raise TypeError
        out = kind(value)
        if isinstance(out, float) and not math.isfinite(out):
            raise ValueError
        return out
    except (TypeError, ValueError, OverflowError):
        raise TraceinsightError(f"option {safe(name, 60)}: {safe(repr(value), 60)} is not "
                                f"{'an' if kind is int else 'a'} {kind.__name__}") from None


class RunWriter:
    """Holds run.json in memory and rewrites it atomically on every change."""

    def __init__(self, path: Path, manifest: dict):
        self.path = Path(path)
        self.manifest = manifest

    def save(self) -> None:
        self.manifest["updated_utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            runfolder.atomic_write_json(self.path / runfolder.MANIFEST, self.manifest)
        except OSError as e:   # the atomic write left the old run.json and no temp file
            raise WriteError(f"cannot write {self.path / runfolder.MANIFEST}: "
                             f"{e.strerror or e}") from None

    def mode(self, name: str) -> dict:
        return self.manifest["modes"][name]


def _mode_entry(name: str, mode: modes_mod.Mode | None = None) -> dict:
    entry: dict = {"dir": runfolder.mode_dir(name), "status": "pending", "error": None, "stderr_tail": None,
             "summary": None, "profile_options": {}, "notes": []}
    if mode is not None:
        # the mode's kind as data: the analysis pairs modes by it (traceinsight.modekind)
        entry["kind"] = mode.mode_kind().to_dict()
    return entry


# ----------------------------------------------------------------------------- the capture

@dataclass
class Plan:
    workload: WorkloadFile
    modes: list[str]
    probe: dict
    run_path: Path
    opts: Options
    resume: bool = False
    notes: list[str] = field(default_factory=list)   # said to the user before the modes run
    lock: lock_mod.RunLock | None = None              # held while the run is written


def probe_workload(wf: WorkloadFile, timeout: float) -> dict:
    """Import and call the workload once in a child process (nothing written in the runs dir)."""
    with tempfile.TemporaryDirectory(prefix="traceinsight-probe-") as tmp:
        res = run_child("probe", {"workload": str(wf.path), "kind": wf.kind}, Path(tmp),
                        timeout=min(timeout, 600.0), env=child_env(None))
    if not res.ok:
        raise TraceinsightError(res.error if res.setup_problem else f"{wf.path.name}: {res.error}")
    return res.result


def resolve_modes(wf: WorkloadFile, requested: list[str] | None, has_y: bool,
                  notes: list[str] | None = None, skipped: dict[str, str] | None = None,
                  legacy_keras: bool | None = None, tf_version: str | None = None,
                  jax: bool | None = None) -> list[str]:
    """``legacy_keras`` / ``jax``: Keras 2 / JAX available in the workload's interpreter (the
    probe's answers; None: ask this one). ``skipped``: filled with the modes a workload's MODES
    named that cannot run here, and why."""
    if legacy_keras is None:
        legacy_keras = modes_mod.tf_keras_installed()
    if jax is None:
        jax = modes_mod.jax_installed()
    names = requested if requested else (list(wf.modes) if wf.modes else
                                         modes_mod.default_modes(wf.kind, has_y))
    seen: list[str] = []
    for name in names:
        mode = modes_mod.get(wf.kind, name)
        if not requested and mode is not None and mode.legacy_keras and not legacy_keras:
            # a sample's MODES name TF1 / Keras 2 modes: skip them (said) rather than refuse the file
            if notes is not None:
                notes.append(f"{name} skipped: it needs tf_keras ({modes_mod.tf_keras_install(tf_version)})")
            if skipped is not None:
                skipped[name] = "needs tf_keras"
            continue
        if not requested and mode is not None and mode.backend == "jax" and not jax:
            if notes is not None:   # the same for a sample's Keras-on-JAX modes without JAX
                notes.append(f"{name} skipped: it needs JAX ({modes_mod.JAX_INSTALL})")
            if skipped is not None:
                skipped[name] = "needs JAX"
            continue
        try:
            modes_mod.check(wf.kind, name, has_y, legacy_keras, tf_version, jax)
        except ValueError as e:
            raise TraceinsightError(f"{wf.path.name}: {e}") from None
        if name not in seen:
            seen.append(name)
    if not seen:
        raise TraceinsightError(f"{wf.path.name}: no modes to capture")
    return seen


def _refuse_existing(run_path: Path) -> None:
    if not run_path.exists():
        return
    info = lock_mod.holder(run_path)
    if info is not None:  # another capture writes it now: --resume would delete its mode folder
        raise TraceinsightError(lock_mod.busy_message(run_path, info))
    raise TraceinsightError(f"{run_path} already exists (use --resume {run_path} or another --name)")


def new_run(workload: str | Path, requested: list[str] | None, out_dir: Path, name: str | None,
            overrides: dict[str, Any], command: str) -> tuple[Plan, RunWriter]:
    wf = inspect_file(workload)
    opts = Options.resolve(wf.capture, overrides)
    if requested or wf.modes:  # refuse unknown names before spending a TF import on the probe
        for m in requested or wf.modes or ():
            if modes_mod.get(wf.kind, m) is None:
                try:
                    modes_mod.check(wf.kind, m, True)
                except ValueError as e:
                    raise TraceinsightError(f"{wf.path.name}: {e}") from None
    if name:  # refused before spending a TF import on the probe
        _refuse_existing(Path(out_dir) / name)
    probe = probe_workload(wf, opts.timeout)
    notes: list[str] = []
    skipped: dict[str, str] = {}
    if probe.get("unsupported"):
        notes.append(probe["unsupported"])
    modes = resolve_modes(wf, requested, bool(probe.get("has_y")), notes, skipped,
                          legacy_keras=probe.get("tf_keras_installed"), tf_version=probe.get("tensorflow"),
                          jax=probe.get("jax_installed"))
    run_name = name or f"{utc_stamp()}-{wf.name}"
    run_path = Path(out_dir) / run_name
    _refuse_existing(run_path)
    env = host_environment()
    workload_env = child_env(None)
    env["workload_env"] = {k: workload_env[k] for k in TF_ENV_VARS if k in workload_env}
    env.update(tensorflow=probe.get("tensorflow"), keras=probe.get("keras"), numpy=probe.get("numpy"),
               gpus=probe.get("gpus", []), tf_built_with_cuda=probe.get("tf_built_with_cuda"))
    for k in ("python", "python_executable", "tf_keras_installed"):   # the workload's interpreter
        if probe.get(k) is not None:
            env[k] = probe[k]
    manifest = {
        "schema_version": runfolder.SCHEMA_VERSION,
        "tool": f"traceinsight {__version__}",
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "workload": {"path": str(wf.path), "sha256": wf.sha256, "name": wf.name, "kind": wf.kind,
                     "doc": wf.doc.strip().splitlines()[0] if wf.doc.strip() else ""},
        "command": command,
        "environment": env,
        "options": opts.as_dict(),
        "options_from_workload": dict(wf.capture or {}),
        "modes": {m: _mode_entry(m, modes_mod.get(wf.kind, m)) for m in modes},
        # modes the workload asks for that this environment cannot run: named on every page
        "skipped_modes": skipped,
    }
    try:
        run_path.mkdir(parents=True)
    except OSError as e:
        raise TraceinsightError(f"cannot create the run folder {run_path}: {e.strerror or e}") from None
    try:
        lock = lock_mod.RunLock(run_path).acquire()
        try:
            writer = RunWriter(run_path, manifest)
            writer.save()
        except BaseException:
            lock.release()
            raise
    except BaseException:  # a full disk at the start: no empty run folder left behind
        shutil.rmtree(run_path, ignore_errors=True)
        raise
    return Plan(wf, modes, probe, run_path, opts, notes=notes, lock=lock), writer


def resume_run(run_path: Path, requested: list[str] | None, overrides: dict[str, Any], command: str,
               workload: str | Path | None = None, say: Callable[[str], None] | None = None
               ) -> tuple[Plan, RunWriter, list[str]]:
    """``say``: told the workload's path and sha256 before anything of it runs (the probe
    imports it)."""
    lock = lock_mod.RunLock(run_path).acquire()   # before anything of the run is read or changed
    try:
        return _resume_locked(run_path, requested, overrides, command, workload, lock, say)
    except BaseException:
        lock.release()
        raise


def _resume_locked(run_path, requested, overrides, command, workload, lock, say=None):
    manifest = runfolder.read_manifest(run_path)
    check_resumable(Path(run_path), manifest)
    wf = resume_workload(Path(run_path), manifest, workload)
    if say is not None:
        say(f"workload: {wf.path} (sha256 {wf.sha256})")
    # the run's own settings, so resumed modes are measured like the others, unless flags say otherwise
    try:
        opts = Options.resolve(manifest.get("options"), overrides)
    except TraceinsightError as e:
        raise TraceinsightError(f"{Path(run_path) / runfolder.MANIFEST}: {e}") from None
    notes = [] if say is not None else [f"workload: {wf.path} (sha256 {wf.sha256})"]
    if wf.sha256 != manifest["workload"].get("sha256"):
        notes.append(f"{wf.path.name} changed since the run began (sha256 differs): "
                     "resumed modes run the new code")
        manifest["workload"]["sha256_resumed"] = wf.sha256
    for m in requested or []:
        if m not in manifest["modes"]:
            manifest["modes"][m] = _mode_entry(m, modes_mod.get(wf.kind, m))
    todo = [m for m, e in manifest["modes"].items()
            if e.get("status") != "ok" and (not requested or m in requested)]
    probe = probe_workload(wf, opts.timeout) if todo else {}
    for m in todo:
        try:
            modes_mod.check(wf.kind, m, bool(probe.get("has_y")), probe.get("tf_keras_installed"),
                            probe.get("tensorflow"), probe.get("jax_installed"))
        except ValueError as e:
            raise TraceinsightError(f"{wf.path.name}: {e}") from None
    manifest.setdefault("resumed", []).append(
        {"utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": command, "modes": todo,
         "options": opts.as_dict()})
    writer = RunWriter(Path(run_path), manifest)
    writer.save()
    return Plan(wf, todo, probe, Path(run_path), opts, resume=True, lock=lock), writer, notes


def check_resumable(run_path: Path, manifest: dict) -> None:
    """Every mode of a run to resume has a folder inside the run (``dir``), not a symlink: a
    resumed mode's folder is deleted and written again, so run.json must not name one elsewhere."""
    from traceinsight.present import safe
    for name, entry in (manifest.get("modes") or {}).items():
        where = f"{run_path / runfolder.MANIFEST}: mode {safe(name, 80)}"
        if not isinstance(entry, dict) or not isinstance(entry.get("dir"), str):
            raise TraceinsightError(f"{where} has no folder (field dir): not a run capture wrote")
        try:
            runfolder.inside(run_path, entry["dir"], "mode folder")
        except TraceinsightError as e:
            raise TraceinsightError(f"{where}: {e}") from None
        if os.path.islink(run_path / entry["dir"]):
            raise TraceinsightError(f"{where}: its folder is a symlink: refused")


def resume_workload(run_path: Path, manifest: dict, named: str | Path | None) -> WorkloadFile:
    """The workload a resume runs. One the user names is run. Otherwise only the file run.json
    records, if it still exists and still has the sha256 recorded with it: a run folder can come
    from elsewhere, and its run.json must not choose a program to execute."""
    from traceinsight.present import safe
    if named:
        return inspect_file(Path(named))
    recorded = manifest.get("workload") or {}
    path, sha = recorded.get("path"), recorded.get("sha256")
    if not isinstance(path, str) or not path:
        raise TraceinsightError(f"{run_path}: run.json records no workload file: name it "
                                f"(traceinsight capture --resume {run_path} MODEL.py)")
    again = f"name it to run it: traceinsight capture --resume {run_path} {safe(path, 200)}"
    if not Path(path).is_absolute() or not Path(path).is_file():
        raise TraceinsightError(f"{run_path}: the recorded workload {safe(path, 200)} is not an "
                                f"existing file here; {again}")
    wf = inspect_file(Path(path))
    if not isinstance(sha, str) or wf.sha256 != sha:
        raise TraceinsightError(
            f"{run_path}: the recorded workload {safe(path, 200)} has sha256 {wf.sha256}, not the "
            f"{safe(sha, 70) if isinstance(sha, str) else 'none'} recorded when the run was "
            f"captured (changed, or a run from elsewhere); {again}")
    return wf


PROGRESS = ".progress.json"  # written by the runner at each phase (runner.PROGRESS)


def read_phase(mode_path: Path) -> str | None:
    try:
        return json.loads((Path(mode_path) / PROGRESS).read_text()).get("phase")
    except (OSError, ValueError, AttributeError):
        return None


def _relative_traces(obj: Any, run_path: Path) -> None:
    """Trace paths in timings.json relative to the run folder (the run can be moved)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "trace" and isinstance(v, str) and os.path.isabs(v):
                try:
                    obj[k] = str(Path(v).relative_to(run_path))
                except ValueError:
                    pass
            else:
                _relative_traces(v, run_path)


def capture_mode(plan: Plan, writer: RunWriter, name: str, opts: Options,
                 poll: Callable[[], None] | None = None, keep_alive: bool = False) -> ModeState:
    """Capture one mode in its own process. ``keep_alive``: leave that process running afterwards
    (``state.live``) for interleaved rounds (``run_rounds``)."""
    state = ModeState(name, status="running", started=time.monotonic())
    entry = writer.mode(name)
    mode = modes_mod.get(plan.workload.kind, name)
    mode_path = writer.path / entry["dir"]
    if mode_path.exists():  # a failed or interrupted earlier attempt: start clean
        shutil.rmtree(mode_path)
    entry.update(status="running", error=None, stderr_tail=None, summary=None, profile_options={}, notes=[])
    writer.save()
    spec = opts.spec() | {"workload": str(plan.workload.path), "kind": plan.workload.kind, "mode": name,
                          "mode_path": str(mode_path.resolve())}
    spec["rounds"] = opts.rounds if keep_alive else 1
    attempts: list[dict] = []
    while True:
        # The host trace must hold the whole first step (tracing, XLA's compile). Capture is
        # duration-based (xprof's client cannot stop a trace early), and a process takes its first
        # step once: when the first step outlasts the trace, the mode starts again in a fresh
        # process whose host trace is long enough for the first step just measured.
        spec["retry_cut_first_step"] = len(attempts) < FIRST_STEP_ATTEMPTS - 1
        try:
            res = run_child("mode", spec, mode_path, opts.timeout, child_env(mode),
                            stderr_path=mode_path / "stderr.log", poll=poll, keep_alive=keep_alive)
        except KeyboardInterrupt:
            entry.update(status="failed", error="interrupted (Ctrl-C)")
            writer.save()
            raise
        if not (res.ok and res.result.get("first_step_cut")):
            break
        if res.live is not None:
            res.live.close()
        first_s = float(res.result["first_step_s"])
        longer = int(first_s * 1e3 * 1.25) + max(2000, opts.host_trace_ms)
        attempts.append({"host_trace_ms": spec["host_trace_ms"], "first_step_s": first_s,
                         "first_step_traced_whole": False})
        if longer / 1e3 + first_s > opts.timeout * 0.8:  # would not fit: keep the cut first step
            spec["retry_cut_first_step"] = False
            attempts[-1]["note"] = f"a {longer} ms host trace would not fit --timeout {opts.timeout:g} s"
        spec["host_trace_ms"] = max(longer, spec["host_trace_ms"]) if "note" not in attempts[-1] \
            else spec["host_trace_ms"]
        shutil.rmtree(mode_path)
    state.ended = time.monotonic()
    entry["wall_s"] = round(state.elapsed or 0.0, 3)
    phase = read_phase(mode_path)
    try:
        (mode_path / PROGRESS).unlink()
    except OSError:
        pass
    if not res.ok:
        if phase and phase != "done":
            entry["phase"] = phase
            if res.returncode is None or res.returncode < 0 or res.error.startswith("timed out"):
                res.error += f", during: {phase}"
        if (mode_path / "stderr.log").is_file():
            res.error += f"; full output: {mode_path / 'stderr.log'}"
        entry.update(status="failed", error=res.error, stderr_tail=res.stderr_tail)
        state.status, state.error, state.stderr_tail = "failed", res.error, res.stderr_tail
        writer.save()
        return state
    timings = res.result
    # the share of the CPUs from which this capture called a round disturbed (run_rounds)
    timings["disturbed_other_cpu"] = machineload.DISTURBED_OTHER_CPU
    if attempts:
        timings["first_step_attempts"] = attempts + [
            {"host_trace_ms": spec["host_trace_ms"], "first_step_s": timings.get("first_step_s"),
             "first_step_traced_whole": bool(timings.get("first_step_traced"))}]
        timings["host_trace_ms"] = spec["host_trace_ms"]
        if timings.get("first_step_traced"):
            state.notes.append(
                f"the first step ({attempts[0]['first_step_s']:.1f} s) outlasted the "
                f"{attempts[0]['host_trace_ms']} ms host trace: captured again in a fresh process "
                f"with a {spec['host_trace_ms']} ms host trace, which holds the whole first step")
    _relative_traces(timings.get("traced") or {}, writer.path.resolve())
    for pass_name, p in (timings.get("traced") or {}).items():
        po = p.get("profile_options") or {}
        entry["profile_options"][pass_name] = po
        if po.get("unverified"):
            if po["unverified"] not in state.tf_notes:
                state.tf_notes.append(po["unverified"])
                state.notes.append(po["unverified"])
        elif po.get("ok") is False:   # None: the tracer records no options (jax.profiler)
            state.notes.append(f"{pass_name} pass: profiler options not as requested: "
                               f"{po.get('problem', 'unknown')}")
        if p.get("problem"):
            state.notes.append(f"{pass_name} pass: {p['problem']}")
        if p.get("first_step_note"):
            state.notes.append(p["first_step_note"])
    problem = verify_traces(writer.path, entry["dir"], timings)
    if problem is None:
        try:
            runfolder.atomic_write_json(mode_path / runfolder.TIMINGS, timings)
        except OSError as e:
            problem = f"cannot write {runfolder.TIMINGS}: {e.strerror or e}"
    if problem is not None:   # never recorded ok: a truncated trace is not a measurement
        entry.update(status="failed", error=problem)
        state.status, state.error = "failed", problem
        if res.live is not None:
            res.live.kill()
        writer.save()
        return state
    entry.update(status="ok", summary=summary_of(timings), notes=state.notes,
                 details=timings.get("details", {}))
    state.status = "ok"
    state.live = res.live
    writer.save()
    return state


# A disk with less free space than this after a mode's capture was likely full while the
# profiler wrote: its traces may be cut short even where they parse.
MIN_FREE_BYTES = 256 << 10


def verify_traces(run_path: Path, folder: str, timings: dict) -> str | None:
    """Why a captured mode's traces cannot be trusted, or None: each pass the workload says it
    traced has a non-empty trace in the run folder that parses as an XSpace, and the disk was not full
    (the profiler writes its file on its own, and a full disk leaves a truncated one)."""
    from traceinsight.analysis.events import open_planes
    try:
        st = os.statvfs(run_path)
        if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
            return "the disk is full: its traces may be truncated (free some space and --resume)"
    except (OSError, AttributeError):
        pass
    for pass_name, info in (timings.get("traced") or {}).items():
        if pass_name not in runfolder.PASSES or not (info or {}).get("trace"):
            continue    # a pass that recorded nothing says so itself (its "problem")
        skipped: list[str] = []
        try:
            files = runfolder.pass_traces(run_path, folder, pass_name, skipped)
        except TraceinsightError as e:
            return str(e)
        if not files:
            return f"{pass_name} pass: no trace file written" + (f" ({skipped[0]})" if skipped
                                                                 else "")
        for f in files:
            try:
                open_planes(f)
            except TraceinsightError as e:
                return f"{pass_name} pass: the trace is unreadable ({e}); disk full?"
    return None


def rounds_fit(opts: Options, n_modes: int) -> bool:
    """Interleaved rounds need two modes or more (one mode has nothing to pair with)."""
    return opts.rounds > 1 and n_modes > 1


def run_rounds(writer: RunWriter, states: list[ModeState], opts: Options,
               poll: Callable[[], None] | None = None,
               on_round: Callable[[str, int], None] | None = None) -> None:
    """Rounds 1 .. rounds-1, interleaved: A B C, A B C, ... in the live processes of the modes that
    were captured (round 0 is each mode's own timing phase, taken in the same order). Each mode's
    timings.json then holds every round it uses (``rounds``) and ``steps_s`` = their steps.

    A round that other processes disturbed (``machineload.disturbed``) is timed again at once, up to
    ``MAX_RERUNS`` times, so it stays next to the other modes' round of the same index; re-runs stop
    for the rest of the capture once two in a row came back disturbed (the machine is busy, not
    bursting: more re-runs only cost time). Afterwards a mode's rounds still disturbed, round 0
    included, are set aside when the mode has a round measured undisturbed to stand on; when none
    was, they are all kept (the analysis says so on every page). ``rounds_set_aside`` records
    every attempt not used, with what was done with it."""
    live = [(s, s.live) for s in states if s.status == "ok" and s.live is not None]
    extra: dict[str, list[dict]] = {s.name: [] for s, _ in live}
    aside: dict[str, list[dict]] = {s.name: [] for s, _ in live}
    lost: dict[str, str] = {}
    busy_again = 0   # re-runs in a row that came back disturbed
    try:
        for i in range(1, opts.rounds):
            for st, child in live:
                if st.name in lost:
                    continue
                if on_round is not None:
                    on_round(st.name, i)
                if poll is not None:
                    poll()
                mode_path = writer.path / writer.mode(st.name)["dir"]
                got = child.ask_round(i, mode_path / ".round.json", opts.timeout)
                reruns = 0
                while (got is not None and machineload.disturbed(got.get("other_cpu_busy"))
                       and reruns < machineload.MAX_RERUNS and busy_again < 2):
                    aside[st.name].append(dict(got, action=machineload.RoundAction.RERUN.value))
                    reruns += 1
                    got = child.ask_round(i, mode_path / ".round.json", opts.timeout)
                    if got is not None:
                        busy_again = busy_again + 1 if machineload.disturbed(
                            got.get("other_cpu_busy")) else 0
                if got is None:
                    lost[st.name] = f"round {i}: the mode's process " + (
                        "died" if child.proc.poll() is not None else "did not answer in time")
                    child.kill()
                    continue
                extra[st.name].append(got)
    finally:
        for st, child in live:
            if st.name not in lost:
                child.close()
            st.live = None
    for st, _ in live:
        entry = writer.mode(st.name)
        tpath = writer.path / entry["dir"] / runfolder.TIMINGS
        timings = runfolder.read_json(tpath)
        for r in extra[st.name]:
            sigs = r.pop("input_signatures", None)
            if sigs is not None:
                timings["input_signatures"] = sigs
        for r in aside[st.name]:
            r.pop("input_signatures", None)
        rounds = list(timings.get("rounds") or []) + extra[st.name]
        # quiet: measured below the threshold (a round shorter than a clock tick has no figure,
        # and is kept without standing for a quiet one)
        quiet = [r for r in rounds if r.get("other_cpu_busy") is not None
                 and not machineload.disturbed(r["other_cpu_busy"])]
        if quiet:
            aside[st.name] += [dict(r, action=machineload.RoundAction.SET_ASIDE.value)
                               for r in rounds if machineload.disturbed(r.get("other_cpu_busy"))]
            rounds = [r for r in rounds if not machineload.disturbed(r.get("other_cpu_busy"))]
        timings["rounds"] = rounds
        if aside[st.name]:
            timings["rounds_set_aside"] = list(timings.get("rounds_set_aside") or []) + aside[st.name]
        timings["steps_s"] = [s for r in timings["rounds"] for s in r["steps_s"]]
        timings["step_nums"] = [n for r in timings["rounds"] for n in r["step_nums"]]
        if st.name in lost:
            st.notes.append(lost[st.name])
            entry["notes"] = list(st.notes)
        try:
            runfolder.atomic_write_json(tpath, timings)
        except OSError as e:   # the round 0 timings.json stays, whole
            raise WriteError(f"cannot write {tpath}: {e.strerror or e}") from None
        entry["summary"] = summary_of(timings)
    writer.save()
