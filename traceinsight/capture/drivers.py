"""Drivers: how one step of a mode is run (one call per step, or one batch inside ``fit``)."""

from __future__ import annotations

from typing import Any, Callable

from traceinsight.capture.steps import Recorder, materialize


class CallDriver:
    """One call per step."""

    def __init__(self, tf, call: Callable[..., Any], prepare: Callable[[int], tuple] | None = None,
                 details: dict | None = None):
        self.tf = tf
        self.call = call            # (args) -> outputs
        self.prepare = prepare or (lambda i: ())
        self.details = details if details is not None else {}   # the caller's own dict, even empty
        self.signatures: Any = None   # the argument source whose signatures are logged (function modes)

    def run(self, rec: Recorder) -> None:
        tf = self.tf
        while not rec.done:
            args = self.prepare(rec.next_step)
            rec.begin()
            try:
                materialize(tf, self.call(*args))
            except BaseException:
                if rec.in_step:
                    rec.end()
                raise
            rec.end()


def _materialize_logs(values: list) -> None:
    for v in values:
        if hasattr(v, "numpy"):
            v.numpy()


class FitDriver:
    """One step = one batch inside ``model.fit``; markers and times from batch callbacks.

    The first step of the process starts before ``fit()`` is called, so it holds fit's setup and the
    train function's tracing. Later ``fit()`` calls' setup (one per phase) is outside every step.
    """

    def __init__(self, tf, keras, model, fit_args: dict, details: dict,
                 wait: Callable[[list], None] | None = None):
        self.tf, self.keras, self.model = tf, keras, model
        self.fit_args = fit_args
        self.details = details
        self.first = True
        # how a step's results are waited for inside the step (Keras on JAX: block_until_ready)
        self.wait = wait or _materialize_logs

    def run(self, rec: Recorder) -> None:
        driver = self

        class _StepCallback(self.keras.callbacks.Callback):  # type: ignore[name-defined]
            def on_train_batch_begin(self, batch, logs=None):
                if not rec.in_step:
                    rec.begin()

            def on_train_batch_end(self, batch, logs=None):
                driver.wait(list((logs or {}).values()))   # the step's results, materialized
                rec.end()
                if rec.done:
                    driver.model.stop_training = True

        if rec.done:
            return
        if self.first:
            rec.begin()  # the first step includes fit()'s setup
            self.first = False
        self.model.fit(callbacks=[_StepCallback()], verbose=0, **self.fit_args)
        if rec.in_step:  # fit returned without a batch (should not happen): close the marker
            rec.end()

