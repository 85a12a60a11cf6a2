"""traceinsight: why is my TensorFlow model slow in this mode, and what do I change?

Python API::

    import traceinsight
    run = traceinsight.load("runs/20261121T120000Z-conv1d")   # or a .xplane.pb / logdir
    run.breakdown()      # mode x category, median ms/step
    run.summary()        # median, CI, ratio to fastest, first step, profiler distortion
    run.ops(); run.retraces(); run.hotspots()

Importing this package never imports TensorFlow.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["load", "__version__"]


def load(path, **kwargs):
    """Load and analyse a run folder, a TensorBoard logdir, a profile session or an .xplane.pb."""
    from traceinsight.analysis.load import load as _load
    return _load(path, **kwargs)
