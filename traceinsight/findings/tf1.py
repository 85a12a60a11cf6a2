"""The TF1-vs-TF2 finding: a TF1 graph mode (tf_keras with eager disabled, run by a Session)
against its TF2 twin, with the fix for the TF2 mode by how its step is called.
"""

from __future__ import annotations

from typing import Iterable

from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import pairing
from traceinsight.modekind import ModeKind
from traceinsight.model import Run

# The fix for a TF2 mode slower than its TF1 twin, by how the step is called (``modekind.Axes``'
# call): each names the call that removes that call's own per-step overhead.
_TF2_FIX_GRAPH = ("# TF2 pays per call what a TF1 Session ran as one graph: keep the call in a graph\n"
                  "step = tf.function(lambda x: model(x, training=False))\n"
                  "y = step(tf.convert_to_tensor(x))      # tensors, fixed shapes: no retracing")
_TF2_FIXES = {
    "predict": ("# predict() sets up a batch loop (data adapter, callbacks) on every call; for one\n"
                "# batch per call, call the model instead:\n"
                "y = model.predict_on_batch(x)          # or: y = model(x, training=False)\n"
                "# in a loop, one traced graph with tensors in is cheaper still:\n"
                "step = tf.function(lambda x: model(x, training=False))\n"
                "y = step(tf.convert_to_tensor(x))"),
    "predict_on_batch": _TF2_FIX_GRAPH,
    "call": _TF2_FIX_GRAPH,
    "train_on_batch": (
        "# train_on_batch pays Keras' per-call work (numpy conversion, logs) every step: one traced\n"
        "# train step with tensors in, or fit over many batches\n"
        "@tf.function\n"
        "def train_step(x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(y, model(x, training=True))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "    return loss\n"
        "train_step(tf.convert_to_tensor(x), tf.convert_to_tensor(y))\n"
        "# or: model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(n).prefetch(tf.data.AUTOTUNE))"),
    "fit": ("# fit on numpy arrays converts and slices them in Python: feed a tf.data pipeline, and run\n"
            "# several batches per graph call\n"
            "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size).prefetch(tf.data.AUTOTUNE)\n"
            "model.compile(optimizer, loss, steps_per_execution=32)\n"
            "model.fit(ds, epochs=epochs)"),
}


def tf2_fix(kind: ModeKind) -> str:
    """The tf1-vs-tf2 finding's fix for the TF2 mode of this kind, by its call."""
    axes = kind.axes()
    return _TF2_FIXES.get(axes.call if axes is not None else "", _TF2_FIX_GRAPH)


def rule_tf1_vs_tf2(run: Run) -> Iterable[Finding]:
    """A TF1 graph mode (tf_keras with eager disabled, run by a Session) against its TF2 twin:
    which is faster, by how much, and where the difference lies (the traced categories and op
    families) — the tf2_vs_tf1 question."""
    for m in run.ok_modes():
        if m.kind.flavour != "tf1" or not len(m.step_samples_ms):
            continue
        t = pairing.tf2_twin(run, m)
        if t is None:
            continue
        c = pairing.compare_modes(run, t, m)   # TF2 against TF1: positive when TF2 is slower
        if not c.significant:
            continue   # rule_no_difference says so
        slow, fast = (t, m) if c.delta_ms > 0 else (m, t)
        sc = c if c.delta_ms > 0 else c.flipped()
        cause = (f" Where: {sc.sentence(label=f'{slow.name} − {fast.name}')}."
                 + ev.family_evidence(sc))
        tf2_slower = slow is t
        yield Finding(
            rule="tf1-vs-tf2",
            title=(f"{slow.name} (TF2) is {ev.fmt_ratio(sc.ratio)}× slower than {fast.name} (TF1 graph)"
                   if tf2_slower else
                   f"{slow.name} (TF1 graph) is {ev.fmt_ratio(sc.ratio)}× slower than {fast.name} (TF2)"),
            evidence=ev.vs(sc) + "." + cause,
            saving_ms=sc.delta_ms,
            saving_basis=f"measured: median step of {slow.name} minus {fast.name}, {sc.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(slow.name, fast.name),
            fix=(tf2_fix(t.kind) if tf2_slower else
                 "# the TF2 mode is faster here: move off tf.compat.v1 Sessions"))
