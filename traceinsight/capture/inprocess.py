"""Profiling from inside a running script: ``traceinsight.profile`` (a context manager for a
custom training loop) and ``traceinsight.keras.Profile`` (a callback for ``fit``).

Both are ``traceinsight run`` without the second process: the same step recorder
(``capture.hook.agent.Agent``: TF's step marker, ``perf_counter`` timing, the warm-up steps, the
traced window through xprof's client with explicit tracer levels) and the same run-folder writing
(``capture.script.open_mode`` and ``finish_mode``), so ``view`` / ``report`` read the folder like
any other run. What counts as a step:

* the callback: each training batch of the ``fit`` it is given to (as ``run`` does for ``fit``);
* the context manager: each outermost ``tf.function`` call inside the block (as ``run`` does for a
  custom loop), or only calls of the function named by ``step_function``.

Nothing is printed on stdout; one line on stderr says where the run folder is. A failure of the
profiler leaves the script running untraced (the agent's own guard).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path
from typing import Any

_server_lock = threading.Lock()
_server_port: int | None = None     # TF's profiler server starts once per process


def _profiler_port(tf: Any) -> int:
    global _server_port
    with _server_lock:
        if _server_port is None:
            from traceinsight.capture.hook.agent import free_port
            port = free_port()
            tf.profiler.experimental.server.start(port)
            _server_port = port
        return _server_port


def _script_name() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return Path(path).stem if path else "session"


class Session:
    """One mode of a run folder recorded in this process (see the module docstring)."""

    def __init__(self, *, mode: str | None = None, name: str | None = None, out: str | Path = "runs",
                 into: str | Path | None = None, skip_steps: int = 5, steps: int = 10,
                 step_function: str | None = None, trace_ms: int | None = None,
                 max_trace_ms: int = 30000, kind: str) -> None:
        from traceinsight.errors import TraceinsightError
        if skip_steps < 0 or steps < 1:
            raise TraceinsightError("skip_steps must not be negative and steps must be at least 1")
        self.stem = _script_name()
        self.mode = mode or self.stem
        self.name, self.out = name, Path(out)
        self.into = Path(into) if into is not None else None
        self.kind = kind
        self.settings: dict[str, Any] = {"skip_steps": skip_steps, "steps": steps,
                                         "step_function": step_function, "trace_ms": trace_ms,
                                         "max_trace_ms": max_trace_ms}
        self.agent: Any = None
        self.writer: Any = None
        self.run_path: Path | None = None
        self.mode_path: Path | None = None
        self.finished = False

    def start(self) -> None:
        import tensorflow as tf

        from traceinsight.capture.hook.agent import Agent
        from traceinsight.capture.script import LEVELS, RESULT, open_mode

        main = sys.modules.get("__main__")
        script = getattr(main, "__file__", None)
        command = " ".join(sys.argv) if sys.argv and sys.argv[0] else None
        writer, manifest, self.run_path, folder, self.mode_path = open_mode(
            mode=self.mode, into=self.into, out=self.out, name=self.name, stem=self.stem,
            settings=self.settings,
            workload={"path": str(Path(script).resolve()) if script else self.stem,
                      "name": self.stem, "kind": self.kind, "doc": command},
            command=f"python {command}" if command else "")
        manifest["modes"][self.mode] = {
            "dir": folder, "status": "running", "error": None, "stderr_tail": None, "summary": None,
            "profile_options": {}, "notes": [], "command": command,
            "settings": dict(self.settings)}
        writer.save()
        self.writer = writer
        spec = dict(self.settings, result=str(self.mode_path / RESULT),
                    logdir=str(self.mode_path / "host"), levels=LEVELS)
        try:   # the trace client's interpreter, where the version differences module has one
            import importlib
            compat = importlib.import_module("traceinsight.capture.compat")
            spec["client_python"] = compat.client_python()
        except ImportError:
            pass
        agent = Agent(spec)
        agent.tf = tf
        agent.versions["tensorflow"] = getattr(tf, "__version__", "?")
        try:
            import keras
            agent.versions["keras"] = getattr(keras, "__version__", "?")
        except Exception:
            pass
        try:
            agent.port = _profiler_port(tf)
        except Exception as e:
            agent.disable("could not start TF's profiler server", e)
        self.agent = agent
        agent.save()
        atexit.register(self._at_exit)

    # the agent's steps -------------------------------------------------------------------------

    def begin(self, kind: str) -> bool:
        return self.agent is not None and self.agent.open is None and self.agent.begin(kind)

    def end(self) -> None:
        if self.agent is not None and self.agent.open is not None:
            self.agent.end()

    def finish(self, failed: BaseException | None = None) -> None:
        """Close the mode: the agent's result into timings.json and run.json (``finish_mode``)."""
        if self.finished or self.agent is None or self.mode_path is None:
            return
        self.finished = True
        from traceinsight.capture.script import finish_mode
        agent = self.agent
        agent.at_exit()           # closes an open step, waits for a trace still running, saves
        agent.broken = True       # no step after this one
        if failed is not None:
            agent.notes.append(f"the profiled code raised {type(failed).__name__}")
            agent.save(exiting=True)
        finish_mode(self.writer, self.mode, self.mode_path, 1 if failed is not None else 0,
                    self.settings)
        done = self.writer.mode(self.mode)
        if done["status"] == "ok":
            print(f"traceinsight: {done['summary']['traced_n']} traced steps of mode {self.mode} in "
                  f"{self.run_path}; open it with: traceinsight view {self.run_path}",
                  file=sys.stderr, flush=True)
        else:
            print(f"traceinsight: mode {self.mode}: {done['error']}", file=sys.stderr, flush=True)

    def _at_exit(self) -> None:
        if not self.finished and os.getpid() == getattr(self.agent, "pid", None):
            try:
                self.finish()
            except Exception as e:       # exiting: one line, never a traceback
                print(f"traceinsight: could not finish {self.run_path}: {e}", file=sys.stderr)


class profile:    # noqa: N801 - used as ``with traceinsight.profile(...)``, like a function
    """``with traceinsight.profile(): ...``: every outermost ``tf.function`` call in the block is a
    step (``step_function``: only calls of the function of that name); warm-up steps, then a
    traced window, then the run folder (see ``traceinsight.capture.inprocess``).

    Arguments as ``traceinsight run``'s options: ``mode``, ``name``, ``out``, ``into``,
    ``skip_steps`` (5), ``steps`` (10), ``step_function``, ``trace_ms``, ``max_trace_ms``.
    After the block, ``.run_path`` is the run folder and ``.load()`` analyses it."""

    def __init__(self, **options: Any) -> None:
        self.session = Session(kind="profile", **options)
        self._restore: Any = None

    @property
    def run_path(self) -> Path | None:
        return self.session.run_path

    def load(self):
        import traceinsight
        if self.session.run_path is None:
            from traceinsight.errors import TraceinsightError
            raise TraceinsightError("nothing was profiled yet")
        return traceinsight.load(self.session.run_path)

    def __enter__(self) -> "profile":
        self.session.start()
        from tensorflow.python.eager.polymorphic_function import polymorphic_function
        cls = polymorphic_function.Function
        self._restore = (cls, cls.__call__)
        self.session.agent.wrap_tf_function()      # run's own step rule for custom loops
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._restore is not None:
            cls, call = self._restore
            cls.__call__ = call
            self._restore = None
        self.session.finish(exc)


def keras_callback_class() -> type:
    """``traceinsight.keras.Profile``: a subclass of the Keras ``Callback`` that ``tf.keras`` is
    (Keras 3, or tf_keras / Keras 2 where TensorFlow uses those)."""
    import tensorflow as tf

    class Profile(tf.keras.callbacks.Callback):
        """Pass to ``fit(callbacks=[...])``: each training batch is a step; ``skip_steps`` warm-up
        batches (5), then ``steps`` traced batches (10), then the run folder. Other arguments as
        ``traceinsight run``'s options (``mode``, ``name``, ``out``, ``into``, ``trace_ms``,
        ``max_trace_ms``). After ``fit``, ``.run_path`` is the run folder."""

        def __init__(self, **options: Any) -> None:
            super().__init__()
            self.session = Session(kind="keras callback", **options)

        @property
        def run_path(self) -> Path | None:
            return self.session.run_path

        def on_train_begin(self, logs=None):
            if self.session.agent is None:
                self.session.start()

        def on_train_batch_begin(self, batch, logs=None):
            if not self.session.finished:
                self.session.begin("fit batch")

        def on_train_batch_end(self, batch, logs=None):
            # the batch's results fetched inside the step, as ``run`` and ``capture`` do
            for v in (logs or {}).values():
                if hasattr(v, "numpy"):
                    v.numpy()
            self.session.end()

        def on_train_end(self, logs=None):
            self.session.finish()

    return Profile
