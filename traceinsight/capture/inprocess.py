"""Profiling from inside a running script: ``traceinsight.profile`` (a context manager for a
custom training loop) and ``traceinsight.keras.Profile`` (a callback for ``fit``).

Both are ``traceinsight run`` without the second process: the same step recorder
(``capture.hook.agent.Agent``: TF's step marker, ``perf_counter`` timing, the warm-up steps, the
traced window, a profiler session in this process with explicit tracer levels and no server) and
the same run folder (``capture.script.RecordedMode``: the run's lock, atomic writes, a mode ``ok``
only when its trace parses), so ``view`` / ``report`` read the folder like any other run. What
counts as a step:

* the callback: each training batch of the ``fit`` it is given to (as ``run`` does for ``fit``);
* the context manager: each outermost ``tf.function`` call inside the block begins a step, the
  loop's iteration, which lasts until the next such call (as ``run`` does for a custom loop; the
  last call's iteration, with no next call, is no step), or only calls of the function named by
  ``step_function``; or, in a loop with no
  ``tf.function`` (plain eager code), the steps the block marks by hand: ``p.step()`` at the top
  of each iteration, or ``with p.step(): ...`` around it. Once the block marks a step, only its
  marks are steps. A mark is TF's own step marker inside the traced window and a clock read
  outside it (``tools/bench_step_marker.py`` prints what one costs).

Nothing is printed on stdout; one line on stderr says where the run folder is, and TensorFlow's
log lines about the profiler session are held back. Nothing raises into the user's code: when
tracing cannot start (the run folder cannot be made, the profiler fails) one warning says why and
the code runs untraced; the code's own exception (``fit`` raising, Ctrl-C) goes on unchanged, the
mode finished first and saying so. The callback finishes its mode as soon as the traced window's
trace is saved (``provisional`` in run.json), and again when ``fit`` ends: a ``fit`` that raises
after the window leaves a complete mode, one that raises before it is finished when the
interpreter exits. A process that dies (``os._exit``, a signal) runs nothing more: a watcher
process (``capture.script.watch``) finishes its mode then.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any


def _script_name() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return Path(path).stem if path else "session"


def _untraced(what: str, why: str) -> None:
    """Tracing cannot start: one warning, and the user's code runs untraced (never an exception
    into it)."""
    warnings.warn(f"traceinsight: {what}: {why}; the code runs untraced", RuntimeWarning,
                  stacklevel=4)


class Session:
    """One mode of a run folder recorded in this process (see the module docstring)."""

    def __init__(self, *, mode: str | None = None, name: str | None = None, out: str | Path = "runs",
                 into: str | Path | None = None, skip_steps: int = 5, steps: int = 10,
                 step_function: str | None = None, trace_ms: int | None = None,
                 max_trace_ms: int = 30000, kind: str) -> None:
        from traceinsight.errors import TraceinsightError
        if skip_steps < 0 or steps < 1:
            raise TraceinsightError("skip_steps must not be negative and steps must be at least 1")
        for key, value in (("trace_ms", trace_ms), ("max_trace_ms", max_trace_ms)):
            if value is not None and value < 1:
                raise TraceinsightError(f"{key} must be positive")
        self.stem = _script_name()
        self.mode = mode or self.stem
        self.name, self.out = name, Path(out)
        self.into = Path(into) if into is not None else None
        self.kind = kind
        self.settings: dict[str, Any] = {"skip_steps": skip_steps, "steps": steps,
                                         "step_function": step_function, "trace_ms": trace_ms,
                                         "max_trace_ms": max_trace_ms}
        self.agent: Any = None
        self.recorded: Any = None     # capture.script.RecordedMode
        self.run_path: Path | None = None
        self.mode_path: Path | None = None
        self.finished = False
        self.untraced = False         # tracing could not start: the code runs as it would alone
        self._finishing = threading.Lock()

    def start(self) -> bool:
        """Open the run folder and the step agent; False (one warning) when tracing cannot start
        (the run folder cannot be made, TensorFlow's profiler fails): the code then runs untraced."""
        from traceinsight.capture.script import PY_NAMES, RecordedMode
        from traceinsight.errors import TraceinsightError
        main = sys.modules.get("__main__")
        script = getattr(main, "__file__", None)
        command = " ".join(sys.argv) if sys.argv and sys.argv[0] else None
        try:
            import tensorflow as tf
            self.recorded = RecordedMode(
                mode=self.mode, into=self.into, out=self.out, name=self.name, stem=self.stem,
                settings=self.settings,
                workload={"path": str(Path(script).resolve()) if script else self.stem,
                          "name": self.stem, "kind": self.kind, "doc": command},
                command=f"python {command}" if command else "", entry={"command": command},
                names=PY_NAMES)
        except (TraceinsightError, OSError, ImportError) as e:
            self.untraced = True
            _untraced(f"cannot profile mode {self.mode!r}", str(e))
            return False
        self.run_path, self.mode_path = self.recorded.run_path, self.recorded.mode_path
        from traceinsight.capture.script import watch
        self.recorded.watch_fd = watch(self.recorded)   # finishes the mode if this process dies
        try:
            from traceinsight.capture.hook.agent import Agent
            spec = self.recorded.agent_spec(quiet=True)
            if self.recorded.watch_fd is not None:
                # the watcher learns when the agent's file cannot be written (a full disk): should
                # this process die, it does not take that older file for the last word
                spec["status_fd"] = self.recorded.watch_fd
            agent = Agent(spec)
            agent.tf = tf
            agent.versions["tensorflow"] = getattr(tf, "__version__", "?")
            try:
                import keras
                agent.versions["keras"] = getattr(keras, "__version__", "?")
            except Exception:
                pass
            agent.save()
            agent.start_worker()
        except Exception as e:    # the result file cannot be written (a full disk): untraced
            self.untraced = True
            self.recorded.fail(f"traceinsight could not start: {e}")
            _untraced(f"cannot profile mode {self.mode!r}", str(e))
            return False
        self.agent = agent
        atexit.register(self._at_exit)
        return True

    # the agent's steps -------------------------------------------------------------------------

    def begin(self, kind: str) -> bool:
        return self.agent is not None and not self.finished and self.agent.open is None \
            and self.agent.begin(kind)

    def end(self) -> None:
        if self.agent is not None and self.agent.open is not None:
            self.agent.end()

    @property
    def window_saved(self) -> bool:
        """The traced window is over and its trace saved (or it could not be)."""
        return self.agent is not None and "path" in self.agent.trace

    def finish(self, failed: BaseException | None = None, final: bool = True) -> None:
        """Close the mode: the agent's result into timings.json and run.json (``finish_mode``).
        Never raises, except a KeyboardInterrupt while it waits for the trace: then the mode is
        written first (saying so) and the interrupt goes on."""
        if self.finished or self.agent is None or self.recorded is None:
            return
        if not final:
            with self._finishing:
                if not self.finished:
                    self.recorded.finish(0, final=False, res=self.agent.state())
            return
        agent = self.agent
        interrupted: BaseException | None = None
        raised = None
        if failed is not None:
            raised = (f"the profiled code raised {type(failed).__name__}"
                      if not isinstance(failed, KeyboardInterrupt) else
                      "the profiled code was interrupted (KeyboardInterrupt)")
        self.finished = True
        try:
            # raised inside a step; or the loop's last step call, whose iteration has no end
            agent.close_open()
            agent.broken = True          # no step after this one
            while not agent.wait_trace(timeout=0.2):
                pass
        except KeyboardInterrupt as e:   # a second Ctrl-C while the trace is saved
            interrupted = e
            raised = (raised or "the profiled code ended") + \
                ", and interrupted again while traceinsight waited for its trace"
        except Exception as e:
            agent.notes.append(f"traceinsight could not stop the trace: {e}")
        agent.save(exiting=True)     # for the watcher, should finishing fail
        agent.stop_telling()         # the watcher's pipe is closed once the mode is finished
        with self._finishing:
            # from the agent's own state: its file may be older (a full disk refused a write)
            self.recorded.finish(0, raised=raised, res=agent.state(exiting=True))
        self.recorded.say()
        if interrupted is not None:
            raise interrupted

    def _at_exit(self) -> None:
        if not self.finished and os.getpid() == getattr(self.agent, "pid", None):
            try:
                if self.agent is not None and self.kind == "keras callback":
                    self.agent.notes.append("fit did not return normally (on_train_end never ran); "
                                            "the mode was finished when the interpreter exited")
                self.finish()
            except BaseException as e:       # exiting: one line, never a traceback
                print(f"traceinsight: could not finish {self.run_path}: {e!r}", file=sys.stderr)


class profile:    # noqa: N801 - used as ``with traceinsight.profile(...)``, like a function
    """``with traceinsight.profile(): ...``: every outermost ``tf.function`` call in the block is a
    step (``step_function``: only calls of the function of that name); warm-up steps, then a
    traced window, then the run folder (see ``traceinsight.capture.inprocess``).

    Arguments as ``traceinsight run``'s options: ``mode``, ``name``, ``out``, ``into``,
    ``skip_steps`` (5), ``steps`` (10), ``step_function``, ``trace_ms``, ``max_trace_ms``.
    After the block, ``.run_path`` is the run folder and ``.load()`` analyses it.

    A loop with no ``tf.function`` marks its steps by hand (``step``)::

        with traceinsight.profile() as p:
            for batch in data:
                with p.step():          # or p.step() at the top of the iteration
                    eager_train(batch)
    """

    def __init__(self, **options: Any) -> None:
        self.session = Session(kind="profile", **options)
        self._restore: Any = None
        self._mark = _StepMark(self.session)

    def step(self) -> "_StepMark":
        """Mark a step by hand: called alone at the top of each iteration, the step lasts until the
        next call or the block's end; ``with p.step(): ...`` ends it with the ``with`` block. From
        the first mark on, only marked steps are steps (the block's tf.function calls are not)."""
        agent = self.session.agent
        if agent is None or self.session.finished:
            return self._mark         # untraced: nothing to mark
        agent.manual = True
        agent.mark("marked step")
        return self._mark

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
        if not self.session.start():
            return self
        try:
            from tensorflow.python.eager.polymorphic_function import polymorphic_function
            cls = polymorphic_function.Function
            self._restore = (cls, cls.__call__)
            self.session.agent.wrap_tf_function()      # run's own step rule for custom loops
            agent = self.session.agent
            if agent.step_function and agent.step_module in sys.modules:
                # a plain Python function of that name, defined by now: its calls are steps
                agent.wrap_module_step_function(sys.modules[agent.step_module])
        except Exception as e:
            self.session.agent.disable("could not wrap tf.function", e)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._restore is not None:
            cls, call = self._restore
            cls.__call__ = call
            self._restore = None
        self.session.finish(exc)       # the block's own exception goes on unchanged


class _StepMark:
    """What ``profile.step()`` returns: as a context manager, it ends the step at the block's end."""

    __slots__ = ("session",)

    def __init__(self, session: Session) -> None:
        self.session = session

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        agent = self.session.agent
        if agent is not None and not self.session.finished:
            agent.close()


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
            if self.session.agent is None and not self.session.untraced and self.session.start():
                # once the trace is saved the run folder is complete: a fit that raises later
                # (a callback, Ctrl-C) never calls on_train_end, and the mode must not stay
                # "running". Written on the agent's thread, outside the training's steps.
                self.session.agent.on_saved = lambda: self.session.finish(final=False)

        def on_train_batch_begin(self, batch, logs=None):
            if not self.session.finished:
                self.session.begin("fit batch")

        def on_train_batch_end(self, batch, logs=None):
            # the batch's results fetched inside the step, as ``run`` and ``capture`` do
            if self.session.agent is not None and self.session.agent.open is not None:
                for v in (logs or {}).values():
                    if hasattr(v, "numpy"):
                        v.numpy()
            self.session.end()

        def on_train_end(self, logs=None):
            self.session.finish()

    return Profile
