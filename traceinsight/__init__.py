"""traceinsight: why is my TensorFlow model slow in this mode, and what do I change?

Python API::

    import traceinsight
    run = traceinsight.load("runs/20261121T120000Z-conv1d")   # or a .xplane.pb / logdir
    run.breakdown()      # mode x category, median ms/step
    run.summary()        # median, CI, ratio to fastest, first step, profiler distortion
    run.ops(); run.retraces(); run.hotspots()
    run                  # in a notebook: the HTML report; run.show() prints the text summary

From inside a training script (a run folder, as ``traceinsight run`` writes)::

    with traceinsight.profile(skip_steps=5, steps=10):    # a custom loop's tf.function steps
        for batch in data: train_step(batch)
    model.fit(..., callbacks=[traceinsight.keras.Profile()])   # import traceinsight.keras

Importing this package never imports TensorFlow.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["load", "profile", "__version__"]


def load(path, **kwargs):
    """Load and analyse a run folder, a TensorBoard logdir, a profile session or an .xplane.pb.
    The run shows itself in a notebook (the HTML report) and a REPL (``run.show()``)."""
    from traceinsight.analysis.load import load as _load
    from traceinsight.report.notebook import NOTEBOOK
    kwargs.setdefault("display", NOTEBOOK)
    return _load(path, **kwargs)


def profile(**options):
    """``with traceinsight.profile(...):`` profile the block's tf.function steps into a run folder
    (``traceinsight.capture.inprocess.profile``; TensorFlow is imported on entering the block)."""
    from traceinsight.capture.inprocess import profile as _profile
    return _profile(**options)
