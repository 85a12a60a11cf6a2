"""The driver of a Keras workload's mode (``model()`` + ``data()``)."""

from __future__ import annotations

import importlib
from typing import Any

from traceinsight.capture import modes as modes_mod
from traceinsight.capture.drivers import CallDriver, FitDriver
from traceinsight.capture.loading import WorkloadError, call_user, keras_batch
from traceinsight.modekind import CALL, EAGER, FIT, PREDICT, PREDICT_ON_BATCH, TRAIN_ON_BATCH, XLA


def default_loss(np, y) -> str:
    y = np.asarray(y)
    if np.issubdtype(y.dtype, np.integer):
        return "sparse_categorical_crossentropy" if y.max(initial=0) > 1 else "binary_crossentropy"
    if y.size and np.isin(y, (0, 1)).all():
        return "binary_crossentropy"
    return "mse"


def _batch_size(tf, np, x) -> int:
    """Rows of the batch (x may be an array, a tensor, or a structure of them for multi-input models)."""
    return int(np.shape(tf.nest.flatten(x)[0])[0])


def keras_driver(tf, mode: modes_mod.Mode, module):
    import numpy as np

    from traceinsight.capture import compat
    keras = compat.legacy_keras() if mode.legacy_keras else importlib.import_module("keras")
    model = call_user(module.model, "model()")
    if not hasattr(model, "predict_on_batch"):
        raise WorkloadError(f"model() returned {type(model).__name__}, not a keras.Model")
    x, y = keras_batch(module)
    details: dict[str, Any] = {"keras": getattr(keras, "__version__", "?"),
                               "keras_module": keras.__name__,
                               "model_class": f"{type(model).__module__}.{type(model).__name__}",
                               "x_shape": tf.nest.map_structure(lambda a: list(np.shape(a)), x),
                               "y_shape": tf.nest.map_structure(lambda a: list(np.shape(a)), y) if y is not None else None}
    if mode.tf1:
        details["graph"] = ("TF1: eager disabled, Keras 2 builds a v1 graph run by a Session "
                            f"(executing eagerly: {tf.executing_eagerly()})")
    if mode.needs_y and y is None:
        raise WorkloadError(f"mode {mode.name} trains, and data() returned no y")
    if mode.tensor_inputs:
        x = tf.nest.map_structure(tf.convert_to_tensor, x)
        if y is not None:
            y = tf.nest.map_structure(tf.convert_to_tensor, y)
    row = mode.row   # its compile and call axes decide how a step is called
    if mode.needs_y:
        ck = dict(call_user(module.compile_kwargs, "compile_kwargs()")) if hasattr(module, "compile_kwargs") \
            else {"optimizer": "adam", "loss": default_loss(np, y)}
        if mode.tf1:
            pass  # training_v1's compile takes neither run_eagerly nor jit_compile: a graph already
        else:
            ck.update(run_eagerly=row.compile == EAGER, jit_compile=row.compile == XLA)
        call_user(lambda: model.compile(**ck), "model.compile()")
        details["compile_kwargs"] = {k: (v if isinstance(v, (str, int, float, bool, type(None)))
                                         else f"{type(v).__module__}.{type(v).__name__}")
                                     for k, v in ck.items()}

    if row.call == CALL and row.compile == EAGER:
        return CallDriver(tf, lambda: model(x), details=details)
    if row.call == CALL:
        f = tf.function(model, jit_compile=True) if row.compile == XLA else tf.function(model)
        return CallDriver(tf, lambda: f(x), details=details)
    if row.call == PREDICT:
        n = _batch_size(tf, np, x)
        return CallDriver(tf, lambda: model.predict(x, batch_size=n, verbose=0), details=details)
    if row.call == PREDICT_ON_BATCH:
        return CallDriver(tf, lambda: model.predict_on_batch(x), details=details)
    if row.call == TRAIN_ON_BATCH:
        return CallDriver(tf, lambda: model.train_on_batch(x, y), details=details)
    n = _batch_size(tf, np, x)
    if row.call == FIT and not row.dataset:
        # Repeat the batch so one epoch holds several batches (epoch bookkeeping stays out of most
        # steps) without using much memory: at most 64 batches or ~64 MB.
        nbytes = sum(int(np.prod(np.shape(a))) * 4 for a in tf.nest.flatten((x, y)))
        reps = max(1, min(64, (64 << 20) // max(1, nbytes)))
        if mode.tensor_inputs:
            xs = tf.nest.map_structure(lambda a: tf.concat([a] * reps, 0), x)
            ys = tf.nest.map_structure(lambda a: tf.concat([a] * reps, 0), y)
        else:
            xs = tf.nest.map_structure(lambda a: np.concatenate([a] * reps, 0), x)
            ys = tf.nest.map_structure(lambda a: np.concatenate([a] * reps, 0), y)
        details.update(batches_per_epoch=reps, batch_size=n)
        return FitDriver(tf, keras, model, {"x": xs, "y": ys, "batch_size": n, "epochs": 10**9,
                                            "shuffle": False}, details)
    if row.call == FIT:
        ds = tf.data.Dataset.from_tensors((x, y)).repeat().prefetch(tf.data.AUTOTUNE)
        details.update(batch_size=n, dataset="from_tensors((x, y)).repeat().prefetch(AUTOTUNE)")
        return FitDriver(tf, keras, model, {"x": ds, "steps_per_epoch": 10**9, "epochs": 1}, details)
    raise WorkloadError(f"mode {mode.name} is not implemented")

