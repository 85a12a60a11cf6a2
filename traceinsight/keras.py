"""``traceinsight.keras.Profile``: a Keras callback that profiles a window of a ``fit``'s batches
and writes a run folder, as ``traceinsight run`` does (see ``traceinsight.capture.inprocess``).

    import traceinsight.keras
    model.fit(x, y, epochs=2, callbacks=[traceinsight.keras.Profile(skip_steps=5, steps=10)])

The class subclasses the ``Callback`` of the Keras ``tf.keras`` is, so TensorFlow is imported
when ``Profile`` is first read, not when this module or ``traceinsight`` is imported.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "Profile":
        from traceinsight.capture.inprocess import keras_callback_class
        cls = keras_callback_class()
        globals()["Profile"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
