"""Step recording: perf_counter times and a step marker around every step."""

from __future__ import annotations

import time
from typing import Any, Callable


class Recorder:
    """Times steps with perf_counter and wraps each one in a step marker: TensorFlow's
    ``Trace("train", step_num=i, _r=1)``, or the ``marker(step)`` / ``enabled()`` given (JAX's
    ``StepTraceAnnotation``, ``traceinsight.capture.jax_driver``)."""

    def __init__(self, tf, phase: str, next_step: int, done: Callable[["Recorder"], bool],
                 marker: Callable[[int], Any] | None = None,
                 enabled: Callable[[], bool] | None = None):
        if marker is None:
            trace = tf.profiler.experimental.Trace
            from traceinsight.analysis.names import STEP_MARKER_TRAIN  # the marker the analysis finds
            marker = lambda step: trace(STEP_MARKER_TRAIN, step_num=step, _r=1)   # noqa: E731
        if enabled is None:
            from traceinsight.capture import compat
            enabled = compat.traceme_enabled()
        self._marker, self._enabled = marker, enabled
        self.phase = phase
        self.next_step = next_step
        self._done = done
        self.steps_s: list[float] = []
        self.step_nums: list[int] = []
        self.traced: list[bool] = []
        self.t_phase = time.perf_counter()
        self._open: tuple[Any, bool, float] | None = None

    @property
    def in_step(self) -> bool:
        return self._open is not None

    def begin(self) -> None:
        marker = self._marker(self.next_step)
        marker.__enter__()
        traced = self._enabled()
        self._open = (marker, traced, time.perf_counter())

    def end(self) -> float:
        t1 = time.perf_counter()
        assert self._open is not None, "end() without begin()"
        marker, traced_at_begin, t0 = self._open
        traced = traced_at_begin and self._enabled()
        marker.__exit__(None, None, None)
        self._open = None
        self.steps_s.append(t1 - t0)
        self.step_nums.append(self.next_step)
        self.traced.append(traced)
        self.next_step += 1
        return t1 - t0

    @property
    def done(self) -> bool:
        return self._done(self)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t_phase


def materialize(tf, out) -> None:
    for t in tf.nest.flatten(out):
        if hasattr(t, "numpy"):
            t.numpy()

