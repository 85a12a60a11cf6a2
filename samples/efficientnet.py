"""Why does tf.function speed up a Keras forward pass without XLA, and why can XLA be slower on CPU?

EfficientNetV2S forward pass (``weights=None``: random weights, nothing downloaded), batch of 4.
Eager runs every layer's ops one by one from Python (hundreds of small ops per call); ``function``
traces the model once into a graph that TF's runtime runs (with grappler's optimizations and oneDNN
fusions) without Python in between; ``xla`` compiles the whole graph, which costs a long first step
and on CPU can give slower steady-state kernels than TF's oneDNN ones for convolutions.

The default resolution is 128x128 so a capture takes a minute or two on a laptop CPU; set
``EFFICIENTNET_RESOLUTION=384`` for the seed's 384x384 (much slower, especially XLA's compile).
"""

import os

import keras
import numpy as np

RESOLUTION = int(os.environ.get("EFFICIENTNET_RESOLUTION", "128"))
BATCH = 4

MODES = ["eager", "function", "xla", "predict_on_batch"]

# The first step of function / xla (tracing, XLA's compile) takes several seconds here: a host trace
# long enough to hold it, and a python-tracer pass long enough for one whole eager step.
CAPTURE = {"host_trace_ms": 10000, "host_max_steps": 10, "python_trace_ms": 4000, "python_max_steps": 2}


def model():
    return keras.applications.EfficientNetV2S(weights=None, input_shape=(RESOLUTION, RESOLUTION, 3),
                                              include_preprocessing=False)


def data():
    rng = np.random.default_rng(0)
    return rng.random((BATCH, RESOLUTION, RESOLUTION, 3), dtype=np.float32)
