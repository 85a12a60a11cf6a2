"""The environment a capture's workload processes run in: which interpreter (``capture
--python``), the variables they get (the user's own environment, left as it is, with only what
the workload side needs added), and what run.json records of this machine.

Never imports TensorFlow: another interpreter's TensorFlow is asked about by the probe
(``planning.probe_workload``), in its own process."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from traceinsight.capture import modes as modes_mod
from traceinsight.errors import TraceinsightError

# Environment variables that change what TensorFlow / Keras do (recorded in run.json when set).
TF_ENV_VARS = (
    "TF_ENABLE_ONEDNN_OPTS", "TF_USE_LEGACY_KERAS", "XLA_FLAGS", "TF_XLA_FLAGS", "KERAS_BACKEND",
    "TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_NUM_INTEROP_THREADS", "TF_NUM_INTRAOP_THREADS",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TF_GPU_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
    "CUDA_VISIBLE_DEVICES", "TF_DETERMINISTIC_OPS", "TF_ENABLE_XLA", "TF_XLA_ENABLE_XLA_DEVICES",
    "PYTHONHASHSEED", "TF_RUN_EAGER_OP_AS_FUNCTION", "TF_ENABLE_MLIR_BRIDGE",
)


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


