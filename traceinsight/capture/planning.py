"""Planning a capture: its settings (``Options``: defaults, the workload's ``CAPTURE``, a run's
saved options, the flags), the probe of the workload, which modes run and in what order, a new
run folder or the resume of one (its lock, the workload it may run), and run.json, rewritten
atomically after every change (``RunWriter``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from traceinsight import __version__, runfolder
from traceinsight.capture import lock as lock_mod
from traceinsight.capture import modes as modes_mod
from traceinsight.capture import reserve
from traceinsight.capture.children import run_child
from traceinsight.capture.environment import TF_ENV_VARS, child_env, host_environment
from traceinsight.capture.workload import WorkloadFile, inspect_file
from traceinsight.errors import TraceinsightError


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
    python_max_steps: int = 8   # 6 or more give its per-step figures (eager layers) an interval
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


# ----------------------------------------------------------------------------- run folder

def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


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
            raise reserve.write_error(self.path / runfolder.MANIFEST, e) from None

    def mode(self, name: str) -> dict:
        return self.manifest["modes"][name]


def mode_entry(name: str, mode: modes_mod.Mode | None = None) -> dict:
    """A mode's run.json entry before it is captured."""
    entry: dict = {"dir": runfolder.mode_dir(name), "status": "pending", "error": None, "stderr_tail": None,
                   "summary": None, "profile_options": {}, "notes": []}
    if mode is not None:
        # the mode's kind as data: the analysis pairs modes by it (traceinsight.modekind)
        entry["kind"] = mode.mode_kind().to_dict()
    return entry


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

    def release(self) -> None:
        """The capture ends: the space set aside for its last word goes (``reserve``), then
        the lock."""
        reserve.give_back(self.run_path)
        if self.lock is not None:
            self.lock.release()


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
            mode = modes_mod.get(wf.kind, m)
            if mode is None:
                try:
                    modes_mod.check(wf.kind, m, True)
                except ValueError as e:
                    raise TraceinsightError(f"{wf.path.name}: {e}") from None
            elif mode.row.fixed_signature:   # its signature comes from a captured run
                raise TraceinsightError(
                    f"{wf.path.name}: mode {m!r} runs the step with the input_signature a "
                    "retracing finding quotes, which a new run has not recorded: capture the "
                    f"run, then add it (--verify, or --resume RUN --modes {m})")
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
        "modes": {m: mode_entry(m, modes_mod.get(wf.kind, m)) for m in modes},
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
            # space for the run's last word on a disk that fills while the modes run
            reserve.set_aside(run_path, manifest)
        except BaseException:
            lock.release()
            raise
    except BaseException:  # a full disk at the start: no empty run folder left behind
        shutil.rmtree(run_path, ignore_errors=True)
        raise
    return Plan(wf, modes, probe, run_path, opts, notes=notes, lock=lock), writer


def resume_run(run_path: Path, requested: list[str] | None, overrides: dict[str, Any], command: str,
               workload: str | Path | None = None, say: Callable[[str], None] | None = None,
               signatures: dict[str, tuple[str, list]] | None = None
               ) -> tuple[Plan, RunWriter, list[str]]:
    """``say``: told the workload's path and sha256 before anything of it runs (the probe
    imports it). ``signatures``: a fixed-signature mode's (source mode, input signature as data),
    as ``capture --verify`` found it; one named without is given its run's (``verify.signature_for``)."""
    lock = lock_mod.RunLock(run_path).acquire()   # before anything of the run is read or changed
    try:
        return _resume_locked(run_path, requested, overrides, command, workload, lock, say,
                              signatures)
    except BaseException:
        lock.release()
        raise


def _resume_locked(run_path, requested, overrides, command, workload, lock, say=None,
                   signatures=None):
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
            manifest["modes"][m] = mode_entry(m, modes_mod.get(wf.kind, m))
    todo = [m for m, e in manifest["modes"].items()
            if e.get("status") != "ok" and (not requested or m in requested)]
    for m in todo:
        mode = modes_mod.get(wf.kind, m)
        entry = manifest["modes"][m]
        if mode is None or not mode.row.fixed_signature:
            continue
        given = (signatures or {}).get(m)
        if given is None and entry.get("input_signature") is None:
            from traceinsight.capture.verify import signature_for
            try:
                given = signature_for(Path(run_path), manifest, m)
            except TraceinsightError as e:
                raise TraceinsightError(f"{wf.path.name}: {e}") from None
        if given is not None:   # the mode's own data: its process runs the step with it
            entry["input_signature_from"], entry["input_signature"] = given
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
    # space for the run's last word (given back by Plan.release); before run.json is touched, so
    # a disk without it leaves the run as it was
    reserve.set_aside(Path(run_path), manifest)
    try:
        writer.save()
    except BaseException:
        reserve.give_back(Path(run_path))
        raise
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


