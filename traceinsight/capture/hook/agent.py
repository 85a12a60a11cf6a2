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
  ``--step-function``;
* a TF1 script's ``Session.run`` calls (``BaseSession.run``): one step per outermost call, as a
  ``tf.function`` call (not with ``--step-function``);
* or, when ``--step-function`` names a plain Python function (``module.func``, or ``func`` of the
  script itself), each call of it: ``module.func`` is wrapped when its module is imported;
  ``func`` of ``__main__`` is found at its first call (a trace function watches the script's
  calls from TensorFlow's import until then: that first call is not a step) and wrapped in the
  script's globals, so the calls after it are steps;
* ``traceinsight.profile``'s hand-marked steps (``p.step()``, ``capture.inprocess``): once the
  script marks a step by hand, only its marks are steps (``manual``).

A step marked per call (all but ``fit``'s batches and the hand-marked steps) is the loop's
iteration: from its call's start to the next step call's start (``call_step``), so that the loop's
input fetch and the rest of its body between calls are in it, as the loop's own timer would say;
the last call's iteration has no end and is no step (``drop_iteration``). The agent's own work
is done at a call's entry, between two iterations; the iterations right after a pause of the loop
(which find their input ready) are kept out of the untraced median, and a loop's session starts a
few steps ahead of the window so that its window begins settled (``_paused``).

Every step gets TF's step marker ``tf.profiler.experimental.Trace("train traceinsight",
step_num=i, _r=1)`` (a name apart from the ``train`` markers Keras 2's fit puts around each batch)
and a ``perf_counter`` time. At step ``skip_steps`` a profiler session starts in this process
(``compat.LocalTrace``: explicit tracer levels, and no profiler server: nothing listens on any
address); it records the next ``steps`` steps, however long the script takes between them, and
is stopped on a thread of its own once the last of them ends (or when ``max_trace_ms`` / ``trace_ms``
has passed), so the script's next step does not wait for the trace to be saved. A step that starts
while the trace is being saved is neither traced (it gets no step marker) nor counted as an
untraced step after the window. Results go to a JSON file that the parent
(``traceinsight.capture.script``) or ``capture.inprocess`` turns into the run folder; a thread of
the agent rewrites it as steps come (at most every ``SAVE_S`` seconds, and never while the window
is traced, so the traced steps share the process with no file write), after the trace and at
exit: a script that dies (``os._exit``, a signal) leaves the steps it made and what was traced.

The profiler's cost is calibrated as ``capture`` does it (``capture/calibrate.py``, loaded by
path): its untraced blocks on the script's thread right before the session's start is asked for
(between two steps), its traced blocks at the beginning of the window's first step, before that
step's time is taken; on the script's thread, because the analysis counts the events of the
thread that holds the step markers. Only where TensorFlow executes eagerly.

Everything is guarded: a failure of the agent prints one line and lets the script run untraced.
This file and ``compat`` use only the standard library (TensorFlow once the script imports it):
they are loaded by path into any interpreter, which needs nothing of traceinsight's dependencies.
"""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.util
import json
import os
import stat
import sys
import tempfile
import threading
import time
import types
from typing import Any

SPEC_ENV = "TRACEINSIGHT_RUN_SPEC"
# the script's PYTHONPATH before ``run`` put the hook's folder first ("" = it had none)
PATH_ENV = "TRACEINSIGHT_RUN_PYTHONPATH"
BETWEEN_S = 0.002    # how long after a step's call returns the agent's threads start their work
SAVE_S = 0.05     # the result file is rewritten at most this often while steps come
MAX_LOGGED_FUNCTIONS = 8   # step functions whose traced calls' arguments are recorded
MAX_RECORDED_STEPS = 1_000_000
# a loop's iterations after a pause of the agent (see Agent._paused): pauses shorter than this, or
# than this share of the loop's last iteration, are its per-call bookkeeping or a write of its
# record (they shorten the next iteration by at most their own length: a few % at most); at most
# this many iterations after one are kept out of the median
PAUSE_FLOOR_S = 0.0002
PAUSE_SHARE = 0.05
SETTLE_MAX = 4
# this agent's step marker: a ``train…`` name apart from the ``train`` markers Keras 2's fit puts
# around each batch, so that the analysis takes these as the steps (``analysis.names.
# SCRIPT_STEP_MARKER``, a test holds them equal: not imported, this file runs in the user's
# interpreter on the standard library alone)
STEP_MARKER = "train traceinsight"

_agent: "Agent | None" = None


def _say(msg: str) -> None:
    print(f"traceinsight: {msg}", file=sys.stderr, flush=True)


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__


def _load_compat():
    """``traceinsight/capture/compat.py`` by path, under a private name: the interpreter may have
    another traceinsight installed, or none."""
    return _load_capture_module("compat")


def _load_machine():
    """``traceinsight/capture/machine.py`` (the machine's load; standard library only), by path."""
    return _load_capture_module("machine")


def _load_calibrate():
    """``traceinsight/capture/calibrate.py`` (the profiler's cost; standard library until given
    TensorFlow), by path."""
    return _load_capture_module("calibrate")


def _load_capture_module(stem: str):
    name = f"_traceinsight_run_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), f"{stem}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _quiet_stderr:   # noqa: N801 - a context manager
    """Hold TensorFlow's log lines about the profiler session (start, stop, saving) back from the
    script's stderr while ``on``: file descriptor 2 goes to a temporary file, and every line that is
    not one of those is written back afterwards. Used by the in-process routes (``run``'s parent
    filters the script's stderr itself)."""

    def __init__(self, on: Any) -> None:
        self.on = bool(on)
        self.saved = -1
        self.tmp: Any = None

    def __enter__(self) -> None:
        if not self.on:
            return
        try:
            sys.stderr.flush()
            self.tmp = tempfile.TemporaryFile()
            self.saved = os.dup(2)
            os.dup2(self.tmp.fileno(), 2)
        except (OSError, ValueError):
            self._restore()

    def __exit__(self, *exc: Any) -> None:
        self._restore()

    def _restore(self) -> None:
        if self.saved < 0:
            return
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.saved = -1
        try:
            self.tmp.seek(0)
            kept = [ln for ln in self.tmp.read().splitlines(keepends=True)
                    if not _load_compat().is_profiler_log(ln)]
            self.tmp.close()
            if kept:
                os.write(2, b"".join(kept))
        except (OSError, ValueError):
            pass


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
        # a plain Python function named by ``--step-function``: its module (``__main__`` for an
        # undotted name) and name; a tf.function is matched by the last part
        module, _, func = (self.step_function or "").rpartition(".")
        self.step_module, self.step_name = module or "__main__", func
        self.manual = False             # the script marks its steps by hand (``p.step()``)
        self.tf: Any = None     # the tensorflow module, once the script imports it
        self.steps_s: list[float] = []
        self.step_nums: list[int] = []
        self.traced: list[bool] = []
        self.kinds: dict[str, int] = {}
        self.next_step = 0
        self.guard = 0                  # inside a wrapped Keras method (or the agent itself)
        self.open: tuple | None = None  # (marker, recording, t0)
        # Steps marked per call (a tf.function, a Keras per-call method, a --step-function) are
        # the loop's iterations: a step runs from its call's start to the next step call's start,
        # so the loop's input fetch and the rest of its body between calls are in it
        # (``call_step``). ``iterating``: the open step is such an iteration; ``loop_steps``: the
        # steps come per call now (the agent's thread then leaves the result file to the calls'
        # entries, between two iterations: on its own it would write inside one).
        self.iterating = False
        self.loop_steps = False
        self.in_call = 0                # inside a wrapped step call (its nested calls are not steps)
        self.step_calls: dict[str, int] = {}   # the functions whose calls began the iterations
        # per step function, the arguments of its traced calls (``log_args``): loading.SignatureLog
        self._arg_logs: dict[str, Any] = {}
        self._signature_log: Any = None     # loading.SignatureLog, loaded outside every step
        self._arg_log_failed = False
        self.unended = 0                # iterations with no next step call: not steps
        self._unended_markers: list = []   # their step markers, never exited (see drop_iteration)
        # the loop's iterations during which the agent's thread worked (start, stop, a save): its
        # work is in their time, so they are kept out of the untraced median
        self.disturbed: list[int] = []
        self._work_gen = 0              # odd while the agent's thread works
        self._settle_until = 0.0        # see _paused
        self._unsettled = 0
        self._open_work = 0             # _work_gen when the open iteration began
        self._next_save = 0.0
        self.notes: list[str] = []
        self.versions: dict[str, str] = {}
        self.trace: dict[str, Any] = {}
        self.session: Any = None        # compat.LocalTrace, once started
        # the profiler's start and stop are asked of the agent's own thread (``_work``)
        self.start_asked = False
        self.stop_asked = False
        self.started = threading.Event()   # the start was tried (session set, or a problem said)
        self.saved = threading.Event()     # the trace was saved (or there is none to save)
        self.traced_n = 0               # steps recorded whole by the session
        self.unmarked = 0               # steps the script made after the agent broke
        self.broken = False
        self.lock = threading.Lock()
        self._bound: threading.Timer | None = None
        self._write_lock = threading.Lock()
        self._saved_n = -1
        self._save_failed = False       # the last write of the result file failed
        self.write_error: dict[str, Any] | None = None   # the first write that failed
        # ``run``'s parent's pipe: told when a write of the result file fails (and when one
        # succeeds again); not inherited by the script's children
        self.status_fd: int | None = None
        self._status_id: tuple[int, int] | None = None
        fd = spec.get("status_fd")
        if isinstance(fd, int) and fd >= 0:
            try:
                st = os.fstat(fd)
                if stat.S_ISFIFO(st.st_mode):
                    os.set_inheritable(fd, False)
                    os.set_blocking(fd, False)
                    self.status_fd, self._status_id = fd, (st.st_dev, st.st_ino)
            except OSError:
                pass
        self._worker: threading.Thread | None = None
        self._worker_pid = -1
        self.on_saved: Any = None      # called on the agent's thread once the trace is saved
        # the profiler's cost in this process (``capture/calibrate.py``, as ``capture`` measures
        # it): 0 not yet, 1 untraced blocks taken (or tried), 2 traced blocks taken (or tried)
        self._cal_state = 0
        self.cal_untraced: list[float] | None = None
        self.cal_traced: list[float] | None = None
        self.cal_calls = 0
        self.cal_cost_s = 0.0           # the script's time the calibration took
        # the machine's load (``capture.machine.Usage``) over the traced window, and over the
        # untraced steps after it (those the mode's median is taken from), so that a page can
        # tell a busy machine from a code change, and a traced window that ran on a quieter or
        # busier machine than the untraced steps from the profiler's own cost
        self._traced_usage: Any = None
        self._after_usage: Any = None
        self._wake = threading.Event()
        # the agent's thread waits with nothing to do: the next step wakes it. A step only reads
        # this flag (Event.set takes a lock: a step pays it once per save, not every time)
        self._idle = False
        # a fork's child is not the traced process; checked per step without a system call
        self._forked = False
        try:
            os.register_at_fork(after_in_child=self._in_child)
        except (AttributeError, ValueError):   # not POSIX
            pass

    def _in_child(self) -> None:
        self._forked = True

    # ------------------------------------------------------------------ steps

    def _usable(self) -> bool:
        return not self.broken and self.tf is not None and not self._forked

    def _recording(self) -> bool:
        """The session records and is not being stopped: a step starting now is traced."""
        return self.session is not None and not self.stop_asked and not self.session.stopped \
            and bool(self._enabled())

    def begin(self, kind: str, iteration: bool = False, since: float | None = None) -> bool:
        """Open a step; False when this call is not a step (nested, another process, broken).
        ``iteration``: a loop iteration, ended by the next step call (``call_step``), whose entry
        was at ``since``: the agent's work from then until the iteration begins is a pause of the
        loop (``_paused``), and the window's first marked iteration waits until the loop has
        settled from it."""
        if self.open is not None:
            return False
        if self._unended_markers and self.saved.is_set():
            self._unended_markers.clear()    # the session has stopped: they can no longer record
        if not self._usable():
            if self.broken and not self._forked:
                self.unmarked += 1
            return False
        try:
            if (self.next_step >= self.skip or iteration and self.start_asked) \
                    and not self.started.is_set():
                # skip_steps 0, or steps back to back: the session starts before this step (a
                # loop's iteration waits for the start asked at a call's entry: a pause of the
                # loop at its start, settled before the window, see ``end``)
                if not self.start_asked:
                    self._calibrate_untraced()
                self._ask(start=True)
                self.started.wait(60.0)
            records = self._recording()
            if records and self._cal_state == 1 and (self.next_step >= self.skip or iteration):
                # the window's first step (a loop's: the first iteration the session records):
                # the traced blocks first, outside it (this step's time starts after them), and
                # it is a window step only if the session still records then
                self._calibrate_traced()
                records = self._recording()
            recording = self.next_step >= self.skip and records
            if iteration and since is not None:
                now = time.perf_counter()
                self._paused(since, now)
                if recording and not self._settled(now):
                    # the session records, but the loop has not settled from the agent's pause
                    # (its start, the calibration): the window begins with a later iteration
                    recording = False
            marker = None
            if recording:
                self.trace.setdefault("started_before_step", self.next_step)
                marker = self.tf.profiler.experimental.Trace(STEP_MARKER, step_num=self.next_step,
                                                             _r=1)
                marker.__enter__()
        except Exception as e:
            self.disable(f"could not open step {self.next_step}", e)
            return False
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.iterating = iteration
        self._open_work = self._work_gen
        self.open = (marker, recording, time.perf_counter())
        return True

    def end(self, t1: float | None = None) -> None:
        """Close the open step; ``t1``: its end, when taken before (the next step call's entry)."""
        if t1 is None:
            t1 = time.perf_counter()
        assert self.open is not None, "end() without begin()"
        marker, recording, t0 = self.open
        self.open = None
        iteration, self.iterating = self.iterating, False
        if iteration and (self._work_gen != self._open_work or self._work_gen % 2
                          or not self._settled(t0, count=True)):
            self.disturbed.append(self.next_step)
        traced = False
        if marker is not None:
            try:
                traced = recording and self._recording()
                marker.__exit__(None, None, None)
            except Exception as e:
                self.disable("could not close a step", e)
        # no lock: the three lists grow in this order, each by one append (atomic), and ``save``
        # copies the prefix all three hold
        if len(self.steps_s) < MAX_RECORDED_STEPS:
            self.steps_s.append(t1 - t0)
            self.step_nums.append(self.next_step)
            self.traced.append(traced)
        self.next_step += 1
        if traced:
            self.traced_n += 1
            if self.traced_n >= self.window:
                self._ask(stop=True)     # the agent's thread saves it: the next step does not wait
        elif not self.start_asked and self.next_step >= (
                max(1, self.skip - 1 - SETTLE_MAX) if iteration else self.skip - 1):
            # between this step and the next, before the session, a step ahead (_start_trace);
            # a loop's, up to SETTLE_MAX steps more ahead (not before its first step has ended):
            # the next iteration waits for the start and takes the traced blocks, and the
            # iterations the pause unsettles are before skip_steps where skip_steps allows
            self._calibrate_untraced()
            self._ask(start=True)
        elif self._calibration_after_due():
            self._calibrate_untraced_after()
        if self._idle and not self.loop_steps:
            self._idle = False
            self._wake.set()

    def call_step(self, kind: str, name: str | None) -> bool:
        """At the entry of a step call (``name``: its function's or method's name): end the loop's
        iteration the previous step call began, now, before anything else, and begin the next
        one. Between the two (outside both) go the agent's own work on the script's thread (the
        calibration, the wait for the profiler's start, the result file's write) and the traced
        window's edges (the start is asked a few steps ahead, the stop when the window's last
        iteration ends here), so that each iteration is the loop's own time, as its own timer
        around ``next(iterator)`` and the call would say. False: this call begins no step."""
        t = time.perf_counter()
        if self._forked:
            return False             # a fork's child is not the traced process (nor its file's)
        if self.open is not None:
            if not self.iterating:
                return False         # inside a fit batch or a hand-marked step
            self.end(t)
        self.loop_steps = True
        self._save_between(t)
        if not self.begin(kind, iteration=True, since=t):
            return False
        key = name or kind
        self.step_calls[key] = self.step_calls.get(key, 0) + 1
        return True

    def step_call(self, kind: str, name: str | None, call, args: tuple, kwargs: dict,
                  log_args: bool = False):
        """``call(*args, **kwargs)`` as a step call of the loop (``call_step`` at its entry), the
        calls nested in it no steps of their own; ``log_args``: its arguments are recorded where
        the step is traced (``log_args``). What every per-call wrapper runs once it has decided
        the call is one (outside the Keras methods, another step call and hand-marked steps)."""
        self.in_call += 1
        try:
            if self.call_step(kind, name) and log_args:
                self.log_args(name, args, kwargs)
            return call(*args, **kwargs)
        finally:
            self.in_call -= 1

    def log_args(self, name: str | None, args: tuple, kwargs: dict) -> None:
        """The arguments of a traced step's call, recorded as ``capture`` records the inputs it
        feeds (``loading.SignatureLog``): what the retrace table reads a retrace's cause and its
        fix's input signature from. Only the traced window's calls (the few µs it takes land in
        steps whose time the profiler's cost correction holds, never in the untraced median: the
        retraces the trace shows are the window's), and only positional arguments (an input
        signature binds those: a call with keyword arguments is not recorded)."""
        if kwargs or self.open is None or not self.open[1] or self._signature_log is None:
            return
        try:
            key = name or ""
            log = self._arg_logs.get(key)
            if log is None:
                if len(self._arg_logs) >= MAX_LOGGED_FUNCTIONS:
                    return
                log = self._arg_logs[key] = self._signature_log(None)
            log.record(self.next_step, args)
        except Exception as e:
            if not self._arg_log_failed:
                self._arg_log_failed = True
                self.notes.append(f"the step calls' arguments were not recorded: {_one_line(e)}")

    def _paused(self, t0: float, t1: float) -> None:
        """The agent worked from ``t0`` to ``t1`` while the script's loop waited (between two
        iterations, on its thread) or ran beside it (the agent's thread). Meanwhile the loop's
        input pipeline ran on: its next iterations find their batches ready, shorter than the
        loop's own, so the iterations that begin within the pause's length after it are not
        settled (at most ``SETTLE_MAX`` of them). A pause under ``PAUSE_FLOOR_S``, or under
        ``PAUSE_SHARE`` of the last iteration, is not counted."""
        last = self.steps_s[-1] if self.steps_s else 0.0
        if t1 - t0 >= max(PAUSE_FLOOR_S, PAUSE_SHARE * last):
            self._settle_until = max(self._settle_until, t1 + (t1 - t0))
            self._unsettled = 0

    def _settled(self, t: float, count: bool = False) -> bool:
        """An iteration beginning at ``t`` is past the agent's last pause's effect; ``count``:
        it is one of those that were not (counted towards ``SETTLE_MAX``)."""
        if t >= self._settle_until or self._unsettled >= SETTLE_MAX:
            return True
        if count:
            self._unsettled += 1
        return False

    def _save_between(self, t: float) -> None:
        """The result file's periodic write, on the script's thread between two iterations (the
        agent's thread writes it while steps come only when they are calls or batches: between
        them, outside every step). Never while the window is traced or its trace being saved."""
        if self.stop_asked and not self.saved.is_set() or self._recording() \
                or len(self.steps_s) == self._saved_n or t < self._next_save:
            return
        self.save()
        now = time.perf_counter()
        # at most about a twentieth of the time goes to saving, however long the list
        self._next_save = now + max(SAVE_S, 20 * (now - t))

    def drop_iteration(self) -> None:
        """The open iteration ends with no next step call (the loop's last call, when the script
        ends or its steps come another way: ``fit``, a hand-marked step): its end is unknown, so
        it is no step, counted in ``unended``. Its step marker (inside the traced window) is never
        exited: TensorFlow records a TraceMe when it stops, so it stays held, unrecorded, until
        the session has stopped (the trace then holds exactly the steps the agent counts)."""
        if self.open is None or not self.iterating:
            return
        marker = self.open[0]
        self.open = None
        self.iterating = False
        self.unended += 1
        if marker is not None:
            self._unended_markers.append(marker)

    def close_open(self) -> None:
        """The script ends (or ``profile()``'s block does): end the open step, or drop the open
        iteration (``drop_iteration``)."""
        if self.iterating:
            self.drop_iteration()
        elif self.open is not None:
            self.end()

    def mark(self, kind: str) -> bool:
        """A hand-marked step (``p.step()``): end the open step, if any, and begin the next at the
        same instant; False when the new one is not a step (as ``begin``). Where the profiler has
        no part in either step (a warm-up step before the session is asked to start, a step after
        the window) it takes the short path: one clock read and the step's record, nothing else."""
        if self.iterating:      # the loop's last step call before the first mark: no end
            self.drop_iteration()
        self.loop_steps = False
        t = time.perf_counter()
        now = self.open
        if (now is None or now[0] is None) and not self.broken and not self._forked \
                and self.tf is not None and (self.stop_asked or self.next_step + 2 < self.skip) \
                and not self._calibration_after_due():
            if now is not None:
                self._record(t - now[2])
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self.open = (None, False, t)
            return True
        if now is not None:
            self.end()
        return self.begin(kind)

    def close(self) -> None:
        """End the open step (``with p.step():``'s end), by the short path where ``mark`` takes it."""
        t = time.perf_counter()
        now = self.open
        if now is None:
            return
        if now[0] is None and not self.broken and not self._forked \
                and (self.stop_asked or self.next_step + 2 < self.skip) \
                and not self._calibration_after_due():
            self.open = None
            self._record(t - now[2])
        else:
            self.end()

    def _record(self, step_s: float) -> None:
        """An untraced step's record, ended by ``mark`` or ``close``."""
        if len(self.steps_s) < MAX_RECORDED_STEPS:
            self.steps_s.append(step_s)
            self.step_nums.append(self.next_step)
            self.traced.append(False)
        self.next_step += 1
        if self._idle:
            self._idle = False
            self._wake.set()

    # ------------------------------------------------------------------ calibration

    def _calibrate_untraced(self) -> None:
        """The calibration's untraced blocks (``calibrate.untraced``), once, on the script's
        thread just before the profiler's start is asked for: after one step's time is taken and
        before the next one's, with the session not yet started. Only where TensorFlow executes
        eagerly (a graph being built would get the blocks' ops)."""
        if self._cal_state != 0:
            return
        self._cal_state = 1
        self.cal_untraced = self._calibration("untraced")

    def _calibrate_traced(self) -> None:
        """The traced blocks (``calibrate.traced``: each in a calibration marker), once, on the
        script's thread at the beginning of the window's first step, before its time is taken:
        the analysis counts the events of the thread that holds the step markers. The window's
        time bound (``trace_ms``) is held meanwhile: it bounds the window's steps, not this. Kept
        only when the session still records after them."""
        self._cal_state = 2
        if not self.cal_untraced:
            return
        bound = self._bound
        if bound is not None:     # the window's time bound counts from its first step on
            bound.cancel()
        try:
            blocks = self._calibration("traced")
        finally:
            if bound is not None and not self.stop_asked:
                self._start_bound(bound.interval)
        if blocks and self._recording():
            self.cal_traced = blocks

    def _calibration_after_due(self) -> bool:
        """The traced blocks were kept and the window's trace is saved (the session has ended):
        the untraced blocks are to be taken again, once."""
        return self._cal_state == 2 and bool(self.cal_traced) and self.saved.is_set()

    def _calibrate_untraced_after(self) -> None:
        """The untraced blocks again after the traced window, as ``capture`` takes them on both
        sides of its traced pass, between two steps (after one's time is taken, before the
        next's): before the window the script's own start may still be busy (a Keras ``fit``'s
        tf.data threads filling their buffers while the first blocks ran made every untraced
        block slower than the traced ones, and the cost unmeasurable), so the fastest block of
        both sides is the one the analysis uses."""
        self._cal_state = 3
        after = self._calibration("untraced")
        if after and self.cal_untraced:
            self.cal_untraced = list(self.cal_untraced) + list(after)

    def _calibration(self, kind: str) -> list[float] | None:
        """One kind of calibration block (seconds each); None where TensorFlow does not execute
        eagerly here, or when it failed (noted: the mode's split is then scaled as it is)."""
        tf = self.tf
        t0 = time.perf_counter()
        self.guard += 1       # the blocks' op calls are never steps
        try:
            if not tf.executing_eagerly():
                return None
            cal = _load_calibrate()
            self.cal_calls = cal.CALLS
            return cal.untraced(tf) if kind == "untraced" else cal.traced(tf)
        except Exception as e:
            self.notes.append(f"the profiler's cost was not calibrated ({kind} blocks: "
                              f"{_one_line(e)})")
            return None
        finally:
            self.guard -= 1
            self.cal_cost_s += time.perf_counter() - t0

    def calibration(self) -> dict[str, Any] | None:
        """timings.json's ``calibration`` (as ``capture`` writes it); None without both kinds of
        block."""
        if not self.cal_untraced or not self.cal_traced:
            return None
        return {"calls": self.cal_calls, "untraced_s": list(self.cal_untraced),
                "traced_s": list(self.cal_traced), "cost_s": self.cal_cost_s}

    # ------------------------------------------------------------------ profiler

    def _bound_ms(self) -> int:
        """The traced window's longest wall time: ``trace_ms`` when given, else ``max_trace_ms``."""
        return int(self.spec.get("trace_ms") or self.spec.get("max_trace_ms") or 30000)

    def _ask(self, start: bool = False, stop: bool = False) -> None:
        """Ask the agent's thread to start / stop the profiler session (once each)."""
        if start:
            self.start_asked = True
        if stop:
            self.stop_asked = True
        self.start_worker()
        self._wake.set()

    def _between_steps(self) -> None:
        """On the agent's thread: wait until the script's thread has left the step it is in and
        the call that made it (its own step timer stops right after), so that work that holds the
        interpreter's lock lands between two steps when the script leaves time between them. Not
        when the steps are a loop's iterations: the script is always inside one (the iteration the
        work overlaps is then kept out of the median, ``end``)."""
        if self.loop_steps:
            return
        deadline = time.perf_counter() + 0.2
        n = self.next_step
        while self.open is not None and self.next_step == n and time.perf_counter() < deadline:
            time.sleep(0.0002)
        time.sleep(BETWEEN_S)

    def _start_trace(self) -> None:
        """Start the profiler session (on the agent's thread). Asked for when the second-to-last
        warm-up step ends, so that it records before the window's first step begins; a step that
        begins while it starts is one more warm-up step (the window begins at the first step from
        ``skip_steps`` on that begins while the session records; when the start has not ended
        by then, that step waits for it before its time is taken). Starting takes a few ms, much
        more the first time in a process, and holds the interpreter's lock: on the script's
        thread it would land inside a step."""
        try:
            if self.next_step < self.skip:
                self._between_steps()
            compat = _load_compat()
            bound = self._bound_ms()
            self.trace.update(bound_ms=bound, levels=self.levels)
            session = compat.LocalTrace(self.tf, self.logdir, self.levels)
            self.save()     # the last write before the window (none while it is traced)
            with _quiet_stderr(self.spec.get("quiet")):
                session.start()
            # the bound before the session is seen (``_calibrate_traced`` holds it), and both
            # before ``started``: a step waiting for it is then a window step
            self._start_bound(bound / 1e3)
            self.session = session
            self.trace["started_s"] = time.time()
            self._traced_usage = self._usage()
        except Exception as e:
            with self.lock:
                self.trace["problem"] = f"the profiler did not start: {_one_line(e)}"
                self.trace["path"] = None
            self.saved.set()
            return
        finally:
            self.started.set()

    def _start_bound(self, seconds: float) -> None:
        """The traced window's time bound: a stop asked for after ``seconds``."""
        self._bound = threading.Timer(seconds, self._ask, kwargs={"stop": True})
        self._bound.daemon = True
        self._bound.start()

    def _stop_now(self) -> None:
        """Stop the session and save its trace (on the agent's thread)."""
        session = self.session
        if session is None:
            self.saved.set()
            return
        if self._bound is not None:
            self._bound.cancel()
        try:
            self._between_steps()
            with self.lock:
                self.trace["stopping_s"] = time.time()
                if self._traced_usage is not None:
                    self.trace["load"] = self._traced_usage.finish()
            self.save()     # the window's steps, in case the script dies while the trace is saved
            with _quiet_stderr(self.spec.get("quiet")):
                session.stop()
            with self.lock:
                # the first step that began after the trace was saved (one open now began before)
                self.trace["settled_from_step"] = self.next_step + (1 if self.open is not None
                                                                    else 0)
                self.trace["path"] = session.path()
                if session.error:
                    self.trace["problem"] = session.error
                self.trace["traced_steps"] = self.traced_n
                self.trace["saved_s"] = time.time()
                self._after_usage = self._usage()   # from the first settled step on
        finally:
            self.saved.set()
        self.save()
        if self.on_saved is not None:
            self.on_saved()

    def _usage(self) -> Any:
        """A ``Usage`` starting now; None where it cannot be measured (the load is then unknown,
        never a reason to stop tracing)."""
        try:
            return _load_machine().Usage()
        except Exception:
            return None

    def _load(self) -> dict[str, Any] | None:
        """The machine's load while the untraced steps after the window ran, so far (timings.json's
        ``load``); None before the trace was saved."""
        usage = self._after_usage
        if usage is None:
            return None
        try:
            machine = _load_machine()
            return {**machine.cpu_count(), "timing_phase": usage.finish()}
        except Exception:
            return None

    def wait_trace(self, timeout: float | None = None) -> bool:
        """Stop the session if it still records and wait until the trace is saved; False when
        ``timeout`` passed first."""
        if not self.start_asked:
            return True
        self._ask(stop=True)
        return self.saved.wait(timeout)

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

    def start_worker(self) -> None:
        """The agent's thread: starts and stops the profiler session, and keeps the result file
        current while steps come (see the module docstring). Started outside every step."""
        if self._worker is None or self._worker_pid != os.getpid():
            self._worker_pid = os.getpid()
            self._worker = threading.Thread(target=self._work, name="traceinsight-agent",
                                            daemon=True)
            self._worker.start()

    def _work(self) -> None:
        next_save = 0.0
        while os.getpid() == self.pid:
            self._idle = True    # before the check: a step that ends after it wakes the wait
            timeout = None
            if self._recording():
                self._idle = False    # nothing to do in the window but stop (``_ask`` wakes it)
            elif len(self.steps_s) != self._saved_n and not self.loop_steps:
                self._idle = False
                timeout = max(0.0, next_save - time.perf_counter())
            self._wake.wait(timeout)
            self._idle = False
            self._wake.clear()
            # odd while this thread works: a loop iteration it overlaps is not timed (``end``)
            self._work_gen += 1
            t_work = time.perf_counter()
            try:
                if self.start_asked and not self.started.is_set():
                    self._start_trace()
                if self.stop_asked and self.started.is_set() and not self.saved.is_set():
                    self._stop_now()
            except Exception as e:     # never a traceback on the script's stderr
                self.notes.append(f"traceinsight's profiler thread failed: {_one_line(e)}")
                self.saved.set()
            try:
                if self._recording() or self.loop_steps:
                    # no file writes beside the traced steps (the stop saves them), nor inside
                    # a loop's iteration (``call_step`` writes between two)
                    continue
                if len(self.steps_s) != self._saved_n and time.perf_counter() >= next_save:
                    self._between_steps()
                    t0 = time.perf_counter()
                    self.save()
                    # at most about a twentieth of the time goes to saving, however long the list
                    next_save = time.perf_counter() + max(SAVE_S, 20 * (time.perf_counter() - t0))
            finally:
                if self.loop_steps:
                    self._paused(t_work, time.perf_counter())
                self._work_gen += 1

    def state(self, exiting: bool = False) -> dict[str, Any]:
        """What the result file holds: the steps so far and what was traced (the in-process
        routes finish their mode from it directly, the file only for a watcher)."""
        with self.lock:     # a copy, made quickly (the script's thread appends without a lock:
            # the prefix all three lists hold is whole)
            n = min(len(self.steps_s), len(self.step_nums), len(self.traced))
            return {
                "pid": self.pid, "versions": dict(self.versions), "steps_s": self.steps_s[:n],
                "step_nums": self.step_nums[:n], "traced": self.traced[:n],
                "step_kinds": dict(self.kinds), "trace": dict(self.trace),
                "notes": list(self.notes), "exited": exiting, "broken": self.broken,
                "unmarked_steps": self.unmarked, "skip_steps": self.skip, "steps": self.window,
                "step_function": self.step_function, "load": self._load(),
                "calibration": self.calibration(),
                "in_window": self.session is not None and "path" not in self.trace,
                "step_calls": dict(self.step_calls), "unended_iterations": self.unended,
                "disturbed_steps": list(self.disturbed),
                "input_signatures": {k: v.summary() for k, v in list(self._arg_logs.items())},
                "write_error": self.write_error}

    def save(self, exiting: bool = False) -> None:
        """Rewrite the result file; never raises. A write that fails (a full disk: ENOSPC, a
        file-size limit: EFBIG) is said once on stderr, recorded (``write_error``: the next write
        that succeeds carries it) and told to ``run``'s parent through ``status_fd``, as is the
        next write that succeeds: the parent then knows whether the file it reads is the last
        word or an older one."""
        state = self.state(exiting)
        n = len(state["steps_s"])
        with self._write_lock:
            try:
                _atomic_json(self.result_path, state)
                self._saved_n = n
                if self._save_failed:
                    self._save_failed = False
                    self._tell({"write_ok": n})
            except Exception as e:
                self._saved_n = n    # not again until a step comes
                if self._save_failed:
                    return
                self._save_failed = True
                err = getattr(e, "errno", None)
                failure = {"path": self.result_path, "error": _one_line(e), "errno": err,
                           "strerror": getattr(e, "strerror", None), "after_steps": n,
                           "trace_saved": "path" in state["trace"]}
                if self.write_error is None:
                    self.write_error = failure
                    _say(f"could not write {self.result_path}: {_one_line(e)}")
                self._tell({"write_failed": failure})

    def stop_telling(self) -> None:
        """No more lines to ``status_fd``: its owner is about to close it (``profile()`` and the
        callback tell their watcher, whose pipe closes when the mode is finished)."""
        with self._write_lock:
            self.status_fd = None

    def _tell(self, message: dict) -> None:
        """One line to ``run``'s parent (``status_fd``, a pipe it reads after the script ends)
        or to the in-process routes' watcher; never blocks, never raises."""
        fd = self.status_fd
        if fd is None or self._forked or os.getpid() != self.pid:
            return
        try:
            # still our pipe: a script that closed it may have opened a file under its number
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self._status_id:
                self.status_fd = None
                return
            os.write(fd, (json.dumps(message) + "\n").encode())
        except (OSError, ValueError, TypeError):
            pass

    def at_exit(self) -> None:
        if os.getpid() != self.pid:
            return
        # the script exited inside a step (sys.exit in a callback), or after its loop's last
        # step call (whose iteration has no end: dropped)
        self.close_open()
        self.wait_trace()            # the script ended inside the traced window: keep the trace
        self._unended_markers.clear()    # the session has stopped: they record nothing
        self.save(exiting=True)

    def on_import(self, name: str, module) -> None:
        try:
            if name == "tensorflow":
                self.tf = module
                self.versions["tensorflow"] = getattr(module, "__version__", "?")
                self.wrap_tf_function()
                self.wrap_session_run()
                if self.step_function and self.step_module == "__main__":
                    self.find_main_step_function()
                self.start_worker()
                self.save()
                # registered after TensorFlow's own exit handlers, so it runs before them (LIFO)
                atexit.register(self.at_exit)
            elif name == "keras":
                self.versions["keras"] = getattr(module, "__version__", "?")
                self._wrap_keras(module)
            if self.step_function and name == self.step_module:
                self.wrap_module_step_function(module)
        except Exception as e:
            self.disable(f"could not wrap {name}", e)

    # ------------------------------------------------------------------ --step-function

    def step_wrapper(self, fn):
        """``fn`` with each outermost call a step (a plain Python function named by
        ``--step-function``)."""
        agent = self

        name = getattr(fn, "__name__", None)

        @functools.wraps(fn)
        def step(*args, **kwargs):
            if agent.guard or agent.in_call or agent.manual:
                return fn(*args, **kwargs)
            return agent.step_call("python function", name, fn, args, kwargs)

        return step

    def wrap_module_step_function(self, module) -> None:
        """``--step-function module.func``: wrap ``func`` in its module once it is imported (calls
        through the module's globals and ``from module import func`` made after it get the
        wrapper). A tf.function of that name is left to ``wrap_tf_function``."""
        fn = getattr(module, self.step_name, None)
        if isinstance(fn, types.FunctionType):
            setattr(module, self.step_name, self.step_wrapper(fn))
        elif self.step_module != "__main__" and not hasattr(fn, "_python_function"):
            self.notes.append(f"--step-function: {self.step_function} is not a function of "
                              f"{self.step_module}; nothing was wrapped")

    def find_main_step_function(self) -> None:
        """``--step-function func`` of the script itself: the script defines it after this runs
        (at TensorFlow's import), so a trace function watches the script's calls (Python frames of
        this thread only; C calls are not seen) until the first call of a function of that name
        whose globals are ``__main__``'s, wraps it there, and stops: that first call is not a
        step, the next ones are. When the name is a tf.function, it stops at once and the
        tf.function's own wrapper marks its calls. A trace function already set (a debugger,
        coverage) is never replaced: then nothing is wrapped, and the run says so."""
        main = sys.modules.get("__main__")
        if main is None:
            return
        if sys.gettrace() is not None:
            self.notes.append(f"--step-function {self.step_function}: a trace function (a "
                              "debugger, coverage) was active, so the script's function was not "
                              "looked for; only a tf.function of that name marks steps")
            return
        g, name, agent = main.__dict__, self.step_name, self

        def watch(frame, event, arg):
            code = frame.f_code
            if code.co_name != name or frame.f_globals is not g:
                return None
            sys.settrace(None)
            fn = g.get(name)
            if isinstance(fn, types.FunctionType) and fn.__code__ is code:
                g[name] = agent.step_wrapper(fn)
                agent.notes.append(f"steps are the calls of {name} after its first (which "
                                   "traceinsight found it by)")
            return None

        sys.settrace(watch)

    def wrap_tf_function(self) -> None:
        from tensorflow.python.eager.polymorphic_function import polymorphic_function
        cls = polymorphic_function.Function
        original = cls.__call__
        agent = self
        wanted = self.step_name if self.step_function else None
        try:    # loaded here, outside every step, for the traced calls' arguments (``log_args``)
            self._signature_log = _load_capture_module("loading").SignatureLog
        except Exception as e:
            self.notes.append(f"the step calls' arguments will not be recorded: {_one_line(e)}")

        def __call__(fn, *args, **kwargs):
            if agent.guard or agent.in_call or agent.manual or (
                    wanted and getattr(fn, "_name", None) != wanted
                    and getattr(getattr(fn, "_python_function", None), "__name__", None) != wanted):
                return original(fn, *args, **kwargs)
            return agent.step_call("tf.function", getattr(fn, "_name", None),
                                   functools.partial(original, fn), args, kwargs, log_args=True)

        __call__.__wrapped__ = original  # type: ignore[attr-defined]
        cls.__call__ = __call__

    def wrap_session_run(self) -> None:
        """A TF1 script's ``Session.run`` (``tf.compat.v1.Session``, a ``MonitoredSession``'s
        inner session): each outermost call made outside the Keras methods and outside a step
        call is a step call, as a ``tf.function`` call is (a TF1 training loop's
        ``sess.run(train_op, feed_dict=...)``; its iteration runs to the next such call). Not with
        ``--step-function``, which names the steps' function."""
        if self.step_function:
            return
        from tensorflow.python.client import session as session_lib
        cls = session_lib.BaseSession
        original = cls.run
        agent = self

        def run(sess, *args, **kwargs):
            if agent.guard or agent.in_call or agent.manual:
                return original(sess, *args, **kwargs)
            return agent.step_call("Session.run", "Session.run", functools.partial(original, sess),
                                   args, kwargs)

        run.__wrapped__ = original  # type: ignore[attr-defined]
        cls.run = run

    def _wrap_keras(self, keras) -> None:
        """``keras.Model``'s fit and per-call methods, and, under Keras 2, those of its TF1-graph
        model class (``training_v1.Model``: what a model becomes when eager execution is disabled,
        whose methods override the base class's)."""
        agent = self

        class StepCallback(keras.callbacks.Callback):
            """One step per training batch (traceinsight run)."""

            def on_train_batch_begin(self, batch, logs=None):
                agent.loop_steps = False
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
                if per_call_step and agent.guard == 0 and agent.in_call == 0 and not agent.manual:
                    agent.guard += 1
                    try:
                        return agent.step_call(per_call_step, per_call_step,
                                               functools.partial(method, model), args, kwargs)
                    finally:
                        agent.guard -= 1
                agent.guard += 1
                try:
                    return method(model, *args, **kwargs)
                finally:
                    agent.guard -= 1
            wrapper.__wrapped__ = method  # type: ignore[attr-defined]
            wrapper.__name__ = method.__name__
            wrapper.__doc__ = method.__doc__
            return wrapper

        def wrap_model_class(model_cls) -> None:
            fit = model_cls.fit

            def fit_wrapper(model, *args, **kwargs):
                if agent.guard or agent.in_call or agent.open is not None and not agent.iterating:
                    return fit(model, *args, **kwargs)
                agent.drop_iteration()    # a loop's last step call before fit: its iteration has no end
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

        wrap_model_class(keras.Model)
        v1 = _keras_v1_model_class(keras)
        if v1 is not None and v1 is not keras.Model:
            wrap_model_class(v1)


def _keras_v1_model_class(keras):
    """Keras 2's TF1-graph model class (``training_v1.Model``), where this Keras has one (Keras 2
    and tf_keras; Keras 3 has none): a model built with eager execution disabled is of it."""
    package = getattr(keras, "__name__", "")
    for name in ("keras.src.engine.training_v1", "keras.engine.training_v1",
                 "tf_keras.src.engine.training_v1"):
        if not name.startswith(package + "."):
            continue
        try:
            return importlib.import_module(name).Model
        except Exception:     # another layout: no TF1-graph class to wrap
            continue
    return None


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Calls ``agent.on_import(name, module)`` right after ``tensorflow`` / ``keras`` (and the module
    of a ``--step-function module.func``) execute."""

    WATCH = ("tensorflow", "keras")

    def __init__(self, agent: Agent):
        self.agent = agent
        self.busy: set[str] = set()
        self.watch = set(self.WATCH)
        if agent.step_function and agent.step_module != "__main__":
            self.watch.add(agent.step_module)

    def find_spec(self, name, path=None, target=None):
        if name not in self.watch or name in self.busy:
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
    if agent.step_function and agent.step_module in sys.modules and agent.step_module != "__main__":
        agent.wrap_module_step_function(sys.modules[agent.step_module])
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
