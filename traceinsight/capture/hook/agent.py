"""Inside the user's script (``traceinsight run``): mark steps, time them, trace a window of them.

Loaded by this folder's ``sitecustomize`` when the environment variable ``TRACEINSIGHT_RUN_SPEC``
holds the run's settings (JSON). Nothing here imports TensorFlow: an import hook waits until the
script imports ``tensorflow`` / ``keras`` itself, then wraps

* ``keras.Model.fit``: one step per training batch (a Keras callback's batch begin / end; the
  batch's logs are fetched to numpy inside the step, as ``capture``'s fit mode does);
* ``keras.Model.train_on_batch`` / ``test_on_batch`` / ``predict_on_batch`` / ``predict``: one
  step per call (``evaluate`` is wrapped only so its inner calls are not steps);
* ``tf.function`` calls (``Function.__call__``): one step per outermost call made outside those
  Keras methods (a custom training loop's ``train_step``), optionally only the function named by
  ``--step-function``.

Every step gets TF's step marker ``tf.profiler.experimental.Trace("train", step_num=i, _r=1)``
and a ``perf_counter`` time. TF's profiler server starts on loopback at the first step; at step
``skip_steps`` a profiler client in its own process (``traceinsight.capture.compat``: xprof's
client from the tool's interpreter, which keeps explicit tracer levels on every TF) traces it, its
output kept out of the script's; the trace is duration-based, so after the ``steps``-th traced step the script waits,
outside every step, until the trace is saved. Results go to a JSON file that the parent
(``traceinsight.capture.script``) turns into the run folder; it is rewritten every
``SAVE_EVERY`` steps, after the trace and at exit, so a script that crashes leaves what was traced.

Everything is guarded: a failure of the agent prints one line and lets the script run untraced.
This file and ``compat`` use only the standard library (TensorFlow once the script imports it):
they are loaded by path into any interpreter, which needs nothing of traceinsight's dependencies.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

SPEC_ENV = "TRACEINSIGHT_RUN_SPEC"
# the script's PYTHONPATH before ``run`` put the hook's folder first ("" = it had none)
PATH_ENV = "TRACEINSIGHT_RUN_PYTHONPATH"
SAVE_EVERY = 200
MAX_RECORDED_STEPS = 1_000_000

_agent: "Agent | None" = None


def _say(msg: str) -> None:
    print(f"traceinsight: {msg}", file=sys.stderr, flush=True)


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__


def _load_compat():
    """``traceinsight/capture/compat.py`` by path, under a private name: the interpreter may have
    another traceinsight installed, or none."""
    name = "_traceinsight_run_compat"
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat.py")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _atomic_json(path: str, obj: Any) -> None:
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".agent.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Agent:
    def __init__(self, spec: dict):
        self.spec = spec
        self.pid = os.getpid()
        self.result_path: str = spec["result"]
        self.logdir: str = spec["logdir"]
        self.skip = int(spec.get("skip_steps", 5))
        self.window = int(spec.get("steps", 10))
        self.levels = dict(spec["levels"])
        self.step_function = spec.get("step_function") or None
        self.tf: Any = None     # the tensorflow module, once the script imports it
        self.steps_s: list[float] = []
        self.step_nums: list[int] = []
        self.traced: list[bool] = []
        self.kinds: dict[str, int] = {}
        self.next_step = 0
        self.guard = 0                  # inside a wrapped Keras method (or the agent itself)
        self.open: tuple | None = None  # (marker, traced, t0)
        self.notes: list[str] = []
        self.versions: dict[str, str] = {}
        self.trace: dict[str, Any] = {}
        self.trace_proc: Any = None     # compat.TraceProcess
        self.unmarked = 0               # steps the script made after the agent broke
        self.port: int | None = None
        self.broken = False
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ steps

    def _usable(self) -> bool:
        return not self.broken and self.tf is not None and os.getpid() == self.pid

    def begin(self, kind: str) -> bool:
        """Open a step; False when this call is not a step (nested, another process, broken)."""
        if self.open is not None:
            return False
        if not self._usable():
            if self.broken and os.getpid() == self.pid:
                self.unmarked += 1
            return False
        try:
            if self.port is None:
                self._start_server()
            if self.next_step == self.skip and self.trace_proc is None:
                self._start_trace()
            marker = self.tf.profiler.experimental.Trace("train", step_num=self.next_step, _r=1)
            marker.__enter__()
            traced = bool(self._enabled())
        except Exception as e:
            self.disable(f"could not open step {self.next_step}", e)
            return False
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.open = (marker, traced, time.perf_counter())
        return True

    def end(self) -> None:
        t1 = time.perf_counter()
        assert self.open is not None, "end() without begin()"
        marker, traced, t0 = self.open
        self.open = None
        try:
            traced = traced and bool(self._enabled())
            marker.__exit__(None, None, None)
        except Exception as e:
            self.disable("could not close a step", e)
        if len(self.steps_s) < MAX_RECORDED_STEPS:
            self.steps_s.append(t1 - t0)
            self.step_nums.append(self.next_step)
            self.traced.append(traced)
        self.next_step += 1
        if self.trace_proc is not None and "path" not in self.trace \
                and self.next_step >= self.skip + self.window:
            self._finish_trace()      # outside every step: the script waits for the trace file
        elif self.next_step % SAVE_EVERY == 0:
            self.save()

    # ------------------------------------------------------------------ profiler

    def _start_server(self) -> None:
        self.port = free_port()
        self.tf.profiler.experimental.server.start(self.port)

    def _duration_ms(self) -> int:
        if self.spec.get("trace_ms"):
            return int(self.spec["trace_ms"])
        warm = self.steps_s[1:] or self.steps_s
        per_step = statistics.median(warm) if warm else 0.0
        # twice the expected window, plus the time the profiler takes to start; bounded
        want = 2.0 * per_step * self.window * 1e3 + 500.0
        return int(min(max(want, float(self.spec.get("min_trace_ms", 1000))),
                       float(self.spec.get("max_trace_ms", 30000))))

    def _start_trace(self) -> None:
        compat = _load_compat()
        duration = self._duration_ms()
        self.trace = {"started_before_step": self.next_step, "duration_ms": duration,
                      "levels": self.levels}
        os.makedirs(self.logdir, exist_ok=True)
        cmd = compat.trace_client_cmd(self.spec.get("client_python"), f"localhost:{self.port}",
                                      self.logdir, duration, 3, self.levels)
        log = os.path.join(os.path.dirname(self.result_path), ".trace_client.log")
        self.trace_proc = compat.TraceProcess(cmd, log, env=dict(os.environ))
        self.trace_proc.start()
        deadline = time.perf_counter() + 60.0
        while time.perf_counter() < deadline:
            if self._enabled():
                return
            if not self.trace_proc.is_alive():
                self.trace_proc.join()
                break
            time.sleep(0.0005)
        self.trace["problem"] = "the profiler never started recording" + (
            f" ({self.trace_proc.error})" if self.trace_proc.error else "")

    def _finish_trace(self) -> None:
        if self.trace_proc is None or "path" in self.trace:
            return
        self.trace_proc.join(timeout=self.trace.get("duration_ms", 0) / 1e3 + 120.0)
        self.trace["path"] = None
        files = []
        for root, _dirs, names in os.walk(self.logdir):
            files += [os.path.join(root, n) for n in names if n.endswith(".xplane.pb")]
        if files:
            self.trace["path"] = max(files, key=os.path.getmtime)
        if self.trace_proc.error:
            self.trace.setdefault("problem", self.trace_proc.error)
        self.trace["traced_steps"] = sum(self.traced)
        self.save()

    def _enabled(self) -> bool:
        # cache the version's check itself (compat: traceme_enabled on 2.21, trace.enabled before)
        self._enabled = _load_compat().traceme_enabled()  # type: ignore[method-assign]
        return self._enabled()

    def disable(self, what: str, e: BaseException) -> None:
        """Stop tracing after ``what`` failed (the script goes on untraced, and the run says why)."""
        self.broken = True
        self.notes.append(f"{what}: {_one_line(e)}; the rest of the script ran untraced")
        _say(f"{what} ({_one_line(e)}); the rest of the script runs untraced")

    # ------------------------------------------------------------------ results

    def save(self, exiting: bool = False) -> None:
        with self.lock:
            try:
                _atomic_json(self.result_path, {
                    "pid": self.pid, "versions": self.versions, "steps_s": self.steps_s,
                    "step_nums": self.step_nums, "traced": self.traced, "step_kinds": self.kinds,
                    "trace": self.trace, "notes": self.notes, "exited": exiting,
                    "broken": self.broken, "unmarked_steps": self.unmarked,
                    "skip_steps": self.skip, "steps": self.window,
                    "step_function": self.step_function})
            except Exception as e:  # the parent reports a missing result
                _say(f"could not write {self.result_path}: {_one_line(e)}")

    def at_exit(self) -> None:
        if os.getpid() != self.pid:
            return
        if self.open is not None:    # the script exited inside a step (sys.exit in a callback)
            self.end()
        if self.trace_proc is not None and "path" not in self.trace:
            self._finish_trace()     # the script ended inside the traced window: keep the trace
        self.save(exiting=True)

    # ------------------------------------------------------------------ wrapping

    def on_import(self, name: str, module) -> None:
        try:
            if name == "tensorflow":
                self.tf = module
                self.versions["tensorflow"] = getattr(module, "__version__", "?")
                self.wrap_tf_function()
                # registered after TensorFlow's own exit handlers, so it runs before them (LIFO)
                atexit.register(self.at_exit)
            elif name == "keras":
                self.versions["keras"] = getattr(module, "__version__", "?")
                self._wrap_keras(module)
        except Exception as e:
            self.disable(f"could not wrap {name}", e)

    def wrap_tf_function(self) -> None:
        from tensorflow.python.eager.polymorphic_function import polymorphic_function
        cls = polymorphic_function.Function
        original = cls.__call__
        agent = self
        wanted = self.step_function

        def __call__(fn, *args, **kwargs):
            if agent.guard or agent.open is not None or (
                    wanted and getattr(fn, "_name", None) != wanted
                    and getattr(getattr(fn, "_python_function", None), "__name__", None) != wanted):
                return original(fn, *args, **kwargs)
            if not agent.begin("tf.function"):
                return original(fn, *args, **kwargs)
            try:
                return original(fn, *args, **kwargs)
            finally:
                agent.end()

        __call__.__wrapped__ = original  # type: ignore[attr-defined]
        cls.__call__ = __call__

    def _wrap_keras(self, keras) -> None:
        model_cls = keras.Model
        agent = self

        class StepCallback(keras.callbacks.Callback):
            """One step per training batch (traceinsight run)."""

            def on_train_batch_begin(self, batch, logs=None):
                if agent.open is None:
                    agent.begin("fit batch")

            def on_train_batch_end(self, batch, logs=None):
                for v in (logs or {}).values():
                    if hasattr(v, "numpy"):
                        v.numpy()
                if agent.open is not None:
                    agent.end()

        def guarded(method, per_call_step: str | None):
            def wrapper(model, *args, **kwargs):
                if per_call_step and agent.guard == 0 and agent.open is None \
                        and agent.begin(per_call_step):
                    agent.guard += 1
                    try:
                        return method(model, *args, **kwargs)
                    finally:
                        agent.guard -= 1
                        agent.end()
                agent.guard += 1
                try:
                    return method(model, *args, **kwargs)
                finally:
                    agent.guard -= 1
            wrapper.__wrapped__ = method  # type: ignore[attr-defined]
            wrapper.__name__ = method.__name__
            wrapper.__doc__ = method.__doc__
            return wrapper

        fit = model_cls.fit

        def fit_wrapper(model, *args, **kwargs):
            if agent.guard or agent.open is not None:
                return fit(model, *args, **kwargs)
            if len(args) >= 6:                     # fit(x, y, batch_size, epochs, verbose, callbacks)
                args = list(args)
                args[5] = list(args[5] or []) + [StepCallback()]
            else:
                kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [StepCallback()]
            agent.guard += 1
            try:
                return fit(model, *args, **kwargs)
            finally:
                agent.guard -= 1
                if agent.open is not None:
                    agent.end()

        fit_wrapper.__wrapped__ = fit  # type: ignore[attr-defined]
        fit_wrapper.__name__ = "fit"
        fit_wrapper.__doc__ = fit.__doc__
        model_cls.fit = fit_wrapper
        for name in ("train_on_batch", "test_on_batch", "predict_on_batch", "predict"):
            setattr(model_cls, name, guarded(getattr(model_cls, name), name))
        model_cls.evaluate = guarded(model_cls.evaluate, None)


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Calls ``agent.on_import(name, module)`` right after ``tensorflow`` / ``keras`` execute."""

    WATCH = ("tensorflow", "keras")

    def __init__(self, agent: Agent):
        self.agent = agent
        self.busy: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.WATCH or name in self.busy:
            return None
        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        agent = self.agent

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                agent.on_import(name, module)

            def __getattr__(self, attr):    # get_resource_reader & co.
                return getattr(loader, attr)

        spec.loader = Loader()
        return spec


def install() -> None:
    """Start the agent when ``traceinsight run`` asked for it (once, in the script's process)."""
    global _agent
    raw = os.environ.pop(SPEC_ENV, None)   # the script's own child processes run untouched
    if not raw or _agent is not None:
        return
    try:
        spec = json.loads(raw)
        agent = Agent(spec)
    except Exception as e:
        _say(f"bad {SPEC_ENV} ({_one_line(e)}); the script runs untraced")
        return
    _agent = agent
    sys.meta_path.insert(0, _ImportWatcher(agent))
    agent.save()


def chain_sitecustomize(ours: str) -> None:
    """Run the ``sitecustomize`` module ours shadows (the interpreter's or a venv's), if any."""
    from importlib.machinery import PathFinder
    here = os.path.dirname(os.path.abspath(ours))
    paths = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:
        _say(f"the interpreter's sitecustomize failed: {_one_line(e)}")
