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
* ``LocalTrace``: a profiler session in this process, with explicit tracer levels, and no profiler
  server (``tf.profiler.experimental.server.start(port)`` takes no host and listens on every
  interface, ``[::]``, for the rest of the process: anyone who reaches the machine could pull
  traces). The public ``tf.profiler.experimental.start(logdir, ProfilerOptions(...))`` and
  ``stop()`` (which saves ``<logdir>/plugins/profile/<time>/<host>.xplane.pb``), on every version:
  - TF 2.21 converts each option value to ``bool`` first when the value allows it (a Python int
    does), so ``host_tracer_level=3`` arrives as ``True`` and is dropped (level 2, no python
    tracer). A value with ``__index__`` and no ``__bool__`` (``Level``) is no bool and is an int:
    the levels are kept (checked on 2.21.0: the trace records host 3 / python 1).
  - TF 2.15 (checked on 2.15.1: python tracer events and the larger host-3 trace appear) and the
    versions between read each option as an int: ``Level`` is one.
  The saved trace's recorded levels are checked as before (``options.check``).
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
  with nothing inside it on the calling thread) are the analysis's: ``analysis/names.py``, every
  trace name the analysis reads with the versions whose traces hold it.
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any, Callable

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
        pins = (f" (TF {OLDEST[0]}.{OLDEST[1]} - 2.16 need numpy<2 and protobuf<5)"
                if v is not None and v <= (2, 16) else "")
        return (f"TensorFlow {tf_version} is installed but does not import: `python -m pip check` there "
                f"names the package that conflicts with it{pins}; reinstall that one at the version "
                "TensorFlow requires, not TensorFlow")
    return (f"install the TensorFlow you want in that environment ({SUPPORTED_RANGE}, tensorflow or "
            "tensorflow-cpu; a new environment: pip install '/path/to/traceinsight-checkout[cpu]', "
            "i.e. traceinsight-tf[cpu], which is not on PyPI), or give capture "
            "an interpreter that has one: traceinsight capture --python /path/to/python")


# TensorFlow's own log lines about a profiler session (server start, session start / stop, saving):
# TF 2.15 - 2.16 ``2026-11-25 12:04:45.117710: I external/local_tsl/tsl/profiler/lib/
# profiler_session.cc:119] ...``, TF 2.21 (absl) ``I0000 00:00:1795608729.634534   25171
# profiler_session.cc:132] ...``. INFO and WARNING only.
PROFILER_LOG = re.compile(
    rb"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] \S*(?:tsl/profiler|core/profiler)/\S+"
    rb"|[IW]\d{4} \d\d:\d\d:[\d.]+ +\d+ (?:profiler_server|profiler_session|save_profile)\.cc:\d+)\] ")


def is_profiler_log(line: bytes) -> bool:
    """One of TensorFlow's log lines about a profiler session (see ``PROFILER_LOG``)."""
    return PROFILER_LOG.match(line) is not None


class Level:
    """A tracer level the profiler's options keep on every version (see ``LocalTrace`` above): an
    int through ``__index__``, and no ``__bool__``, so TF 2.21 cannot take it for a bool."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = int(value)

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return str(self.value)


class LocalTrace:
    """A profiler session in this process, no server: ``start`` records with ``levels`` into
    ``logdir``; ``stop`` (from any thread, once) saves the trace. ``error``: why it was not
    saved (one line), or None. ``stop_after(seconds)``: stop from a timer thread then, if still
    recording (a bound on the trace's length)."""

    def __init__(self, tf: Any, logdir: str, levels: dict[str, int]) -> None:
        import threading
        self.tf, self.logdir, self.levels = tf, str(logdir), dict(levels)
        self.error: str | None = None
        self.disk_full = False     # the trace could not be saved: the disk is full
        self.started = False
        self.stopped = False
        self._lock = threading.Lock()
        self._timer: Any = None

    def start(self) -> None:
        """Start recording; raises what TensorFlow raises (another session running, ...)."""
        os.makedirs(self.logdir, exist_ok=True)
        # delay_ms 0 (start now) given as a Level too: left out, 2.21 warns that it is no int
        options = self.tf.profiler.experimental.ProfilerOptions(
            **{k: Level(v) for k, v in {"delay_ms": 0, **self.levels}.items()})
        self.tf.profiler.experimental.start(self.logdir, options)
        self.started = True

    def stop_after(self, seconds: float) -> None:
        import threading
        self._timer = threading.Timer(max(0.0, seconds), self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        with self._lock:
            if self.stopped or not self.started:
                return
            self.stopped = True
            if self._timer is not None:
                self._timer.cancel()
            try:
                self.tf.profiler.experimental.stop()
            except Exception as e:   # a full disk, an unwritable folder: the trace is lost, say so
                msg = str(e).strip().splitlines()
                self.error = f"saving the trace failed: {type(e).__name__}: {msg[0] if msg else ''}"
                # TensorFlow raises ResourceExhaustedError for a file the disk refused (ENOSPC,
                # a quota), the file cut where the disk filled
                exhausted = getattr(getattr(self.tf, "errors", None), "ResourceExhaustedError", ())
                self.disk_full = isinstance(e, exhausted)

    def path(self) -> str | None:
        """The newest trace file under ``logdir`` (None when none was saved)."""
        files = []
        for root, _dirs, names in os.walk(self.logdir):
            files += [os.path.join(root, n) for n in names if n.endswith(".xplane.pb")]
        return max(files, key=os.path.getmtime) if files else None
