"""Every TensorFlow / Keras version difference the workload side depends on, in one place.

Each entry says which versions it is for. The supported range is ``OLDEST`` to ``NEWEST`` below
(``tensorflow`` and ``tensorflow-cpu`` builds; ``SUPPORTED_RANGE`` is its one wording, which messages
quote and tests/test_versions.py checks README and pyproject.toml against); README's "Supported
TensorFlow versions" table says what each version's traces hold.

This module uses only the standard library at import time and imports TensorFlow lazily: it runs
inside the workload process (``capture``'s runner) and inside the user's script (``run``'s hook,
which loads it by file path, in an interpreter that may have nothing but TensorFlow).

Entries:

* ``traceme_enabled``: is a profiler session recording right now?
  - TF 2.21+: ``_pywrap_traceme.traceme_enabled()``.
  - TF 2.12 - 2.20: no such function; ``tensorflow/python/profiler/trace.py`` keeps a module
    variable ``enabled`` that the profiler session sets while it records (server-started sessions
    included).
* ``trace_client``: the profiler client that asks the workload's profiler server for a trace with
  explicit tracer levels (``hook/trace_client.py`` picks the first it finds, in this order).
  - xprof's ``_pywrap_profiler_plugin.trace`` keeps the levels on every version.
  - The profiler's gRPC service called directly (``ProfilerService.Profile``) through ``grpcio``,
    which every TensorFlow depends on: keeps the levels on 2.12, 2.17, 2.18 and 2.21 (checked:
    python tracer frames appear when asked for; 2.21's recorded ``profile_options`` match). So
    capture needs no package beyond TensorFlow's own in the workload's interpreter.
  - TensorFlow's own ``_pywrap_profiler.trace`` (same signature) keeps them on 2.15 / 2.16 (python
    tracer events appear when asked for); it exists on 2.12 - 2.14 too (the levels kept there are
    not checked). From 2.18 (checked on 2.18 and 2.20) ``_pywrap_profiler``
    has no ``trace`` (2.21's public ``client.trace`` drops the options: ``session_manager.cc: ...
    expects an i value``). Used only when neither of the above is there.
  - ``tf.profiler.experimental.start(logdir, options)`` honours options on 2.12 - 2.16 and drops them
    on 2.21; capture never uses it (a server + client works on all versions).
  The client runs in its own process (``trace_client_cmd``) so its stdout line ("Starting to trace
  for ... ms") and its INFO log stay out of the workload's output, and a crash of the client cannot
  take the workload down.
* ``records_profile_options``: does a saved trace carry the ``profile_options`` stat?
  - TF 2.12 - 2.16, 2.18, 2.20 (checked; 2.17 / 2.19 taken to be alike): no, the levels cannot be
    verified from the trace. TF 2.21: yes.
* ``legacy_keras``: the Keras 2 module for ``tf_keras:*`` and ``tf1:*`` modes.
  - TF 2.12 - 2.15: Keras 2 is ``keras`` itself (``tf.keras``); the ``tf_keras`` package is used if
    installed.
  - TF 2.16+: Keras 3 is ``keras``; Keras 2 is the separate ``tf-keras`` package.
* ``legacy_keras_env``: whether a Keras 2 mode sets ``TF_USE_LEGACY_KERAS=1`` (so that ``tf.keras``
  inside TensorFlow is the same Keras 2 as the workload's).
  - TF 2.16+ (``keras`` is Keras 3): yes; ``tf.keras`` is then ``tf_keras``.
  - TF 2.12 - 2.15 (``keras`` is Keras 2): never. 2.15 reads the variable and, without the
    ``tf_keras`` package, breaks ``tf.keras`` ("Keras cannot be imported"); its own ``keras`` is
    Keras 2 already.
* Compile events: TF 2.12 - 2.16 write no XLA compile events; 2.18 writes ``CpuCompiler::*``, 2.20
  and 2.21 also ``JitCompiler::Compile``. The analysis handles that, nothing here.
* Event names of the traces themselves (a function's run on 2.12 - 2.14 is ``EagerKernelExecute``
  with nothing inside it on the calling thread) are the analysis's: ``analysis/rules.py``'s
  ``VERSION_NAMES``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from typing import Any, Callable

# the client program, run by path with any Python (stdlib + xprof or TensorFlow)
TRACE_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook", "trace_client.py")

OLDEST = (2, 12)
NEWEST = (2, 21)
# the range in words, for every message and page that names it
SUPPORTED_RANGE = f"{OLDEST[0]}.{OLDEST[1]} - {NEWEST[0]}.{NEWEST[1]}"


def version_tuple(version: str | None) -> tuple[int, int] | None:
    """``"2.16.2"`` -> (2, 16); None for anything else."""
    m = re.match(r"^(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def supported(version: str | None) -> bool:
    v = version_tuple(version)
    return v is not None and OLDEST <= v <= NEWEST


def traceme_enabled() -> Callable[[], bool]:
    """A function telling whether a profiler session records now (TraceMe events are kept)."""
    from tensorflow.python.profiler.internal import _pywrap_traceme
    fn = getattr(_pywrap_traceme, "traceme_enabled", None)   # TF 2.21+
    if fn is not None:
        return fn
    from tensorflow.python.profiler import trace as trace_module  # TF 2.12 - 2.20

    def enabled() -> bool:
        return bool(trace_module.enabled)
    return enabled


def records_profile_options(tf_version: str | None) -> bool | None:
    """Whether a trace saved by this TF carries ``profile_options``; None when not known."""
    v = version_tuple(tf_version)
    if v is None:
        return None
    return v >= (2, 21)


def has_xprof_client() -> bool:
    """xprof's profiler client importable in this interpreter (without importing it)."""
    try:
        return importlib.util.find_spec("xprof") is not None
    except (ImportError, ValueError):
        return False


def trace_client_cmd(python: str | None, address: str, logdir: str, duration_ms: int, attempts: int,
                     levels: dict[str, int]) -> list[str]:
    """The command that traces ``address`` into ``logdir`` (see ``hook/trace_client.py``).

    ``python``: the interpreter to run it with (the tool's own, which has xprof), or None for this
    one (then the client is xprof's if installed here, else TensorFlow's own)."""
    import json
    return [python or sys.executable, TRACE_CLIENT, json.dumps({
        "address": address, "logdir": logdir, "duration_ms": int(duration_ms),
        "attempts": int(attempts), "levels": dict(levels)})]


def legacy_keras_env(environ: dict[str, str] | Any) -> None:
    """Before TensorFlow is imported in a Keras 2 mode's process: ``TF_USE_LEGACY_KERAS=1`` where
    ``keras`` is Keras 3 (TF 2.16+), so that ``tf.keras`` is ``tf_keras`` too; where ``keras`` is
    Keras 2 (TF 2.12 - 2.15) it is not set (2.15 breaks ``tf.keras`` with it when ``tf_keras`` is
    not installed). In place."""
    if _keras_major() != 2:
        environ["TF_USE_LEGACY_KERAS"] = "1"


def _keras_major() -> int | None:
    """The installed ``keras`` distribution's major version, without importing it."""
    try:
        from importlib.metadata import version
        v = version_tuple(version("keras"))
    except Exception:
        return None
    return v[0] if v else None


def legacy_keras() -> Any:
    """The Keras 2 module: the ``tf_keras`` package if installed, else ``keras`` when it is Keras 2
    (TF 2.12 - 2.15), else ImportError naming what to install."""
    if importlib.util.find_spec("tf_keras") is not None:
        import tf_keras
        return tf_keras
    import keras
    if (version_tuple(getattr(keras, "__version__", "")) or (3, 0)) < (3, 0):
        return keras
    raise ImportError("Keras 2 modes need the tf-keras package matching this TensorFlow "
                      "(pip install --no-deps 'tf-keras==<TF major.minor>.*')")


def legacy_keras_available() -> bool:
    """Without importing Keras: tf_keras installed, or ``keras`` is Keras 2 (TF 2.12 - 2.15)."""
    if importlib.util.find_spec("tf_keras") is not None:
        return True
    try:
        from importlib.metadata import version
        return (version_tuple(version("keras")) or (3, 0)) < (3, 0)
    except Exception:
        return False


def install_hint(tf_version: str | None = None) -> str:
    """What to do when TensorFlow is missing or does not import, without replacing an installed one.
    The distribution is ``traceinsight-tf`` (``traceinsight`` on PyPI is another project)."""
    if tf_version:
        v = version_tuple(tf_version)
        pins = " (TF 2.12 - 2.16 need numpy<2 and protobuf<5)" if v is not None and v <= (2, 16) else ""
        return (f"TensorFlow {tf_version} is installed but does not import: `python -m pip check` there "
                f"names the package that conflicts with it{pins}; reinstall that one at the version "
                "TensorFlow requires, not TensorFlow")
    return (f"install the TensorFlow you want in that environment ({SUPPORTED_RANGE}, tensorflow or "
            "tensorflow-cpu; a new environment: pip install '/path/to/traceinsight-checkout[cpu]', "
            "i.e. traceinsight-tf[cpu], which is not on PyPI), or give capture "
            "an interpreter that has one: traceinsight capture --python /path/to/python")


def client_python() -> str | None:
    """The interpreter for the trace client, chosen by the tool's process: its own when it has
    xprof (whose client keeps the tracer levels on every TF), else None (the workload's own, whose
    TensorFlow brings grpcio for the direct gRPC client)."""
    return sys.executable if has_xprof_client() else None


class TraceProcess:
    """``trace_client_cmd`` running in its own process, its output kept in ``log_path``."""

    def __init__(self, cmd: list[str], log_path: str, env: dict[str, str] | None = None):
        self.cmd, self.log_path, self.env = cmd, log_path, env
        self.proc: Any = None
        self.error: str | None = None

    def start(self) -> None:
        import subprocess
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=self.env, close_fds=True)

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def join(self, timeout: float | None = None) -> None:
        if self.proc is None:
            return
        try:
            rc = self.proc.wait(timeout=timeout)
        except Exception:   # subprocess.TimeoutExpired: the client hangs; end it
            self.proc.kill()
            rc = self.proc.wait()
            self.error = "the profiler client did not finish in time"
            return
        if rc != 0:
            self.error = self._last_line() or f"the profiler client exited with status {rc}"

    def _last_line(self) -> str | None:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                lines = [ln.strip() for ln in f if ln.startswith("trace_client: ") and ln.strip()]
        except OSError:
            return None
        return lines[-1].removeprefix("trace_client: ")[:300] if lines else None
