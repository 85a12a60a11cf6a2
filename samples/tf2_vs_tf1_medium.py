"""The same "TF2 slower than TF1?" question on the medium model: batch 32 x 1400 x 30.

Ten times longer sequences than ``tf2_vs_tf1_small.py`` (same layers, Adam 1e-4, binary
crossentropy): per-step kernel time grows while Python and dispatch overhead stays the same, so the
gaps between eager / graph and train_on_batch / fit shrink in relative terms. Capture both samples
and compare: which overheads are fixed per step, which scale with the data? ``tf1:train_on_batch`` /
``tf1:fit`` are the TF1 baseline (Keras 2 in a TF1 graph; skipped, and said so, without ``tf_keras``).
"""

from tf2_vs_tf1_small import CHANNELS, batch, build, compile_kwargs  # noqa: F401  (same model)

STEPS = 1400

MODES = ["eager", "function", "xla", "train_on_batch-eager", "train_on_batch", "fit", "fit-dataset",
         "tf1:train_on_batch", "tf1:fit"]


def model():
    return build(STEPS)


def data():
    return batch(STEPS)
