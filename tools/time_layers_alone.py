"""Each Keras layer of a workload timed alone, as the layers table of a captured run places it:
the layer's call on its own input, in a loop timed with perf_counter, under tf.function (the
graph modes) and with jit_compile (XLA), beside the run's layers table for the same modes.

    python tools/time_layers_alone.py samples/tf2_vs_tf1_small.py RUN [--calls 300]

Prints, per layer, ms per call alone in each mode and the run's ms per step for it (the ops' self
time summed over threads, per steady traced step). The two answer different questions (a traced
step's op time against one layer's wall time alone, on a loaded or quiet machine), so compare the
ranking and the ratios, not the figures one to one.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload")
    p.add_argument("run")
    p.add_argument("--calls", type=int, default=300)
    args = p.parse_args()

    import tensorflow as tf

    import traceinsight

    spec = importlib.util.spec_from_file_location("workload", args.workload)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.model()
    x = tf.convert_to_tensor(mod.data()[0])
    # each layer's own input: the outputs of the layers before it, run once
    inputs, h = {}, x
    for layer in model.layers[1:]:
        inputs[layer.name] = h
        h = layer(h)

    def alone(fn, arg) -> float:
        for _ in range(20):
            fn(arg)
        times = []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            out = fn(arg)
            _ = out.numpy() if hasattr(out, "numpy") else out
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e3

    print(f"{'layer (this process)':<28} {'alone fn ms':>11} {'alone xla ms':>12}")
    for layer in model.layers[1:]:
        fn = tf.function(layer)
        xla = tf.function(layer, jit_compile=True)
        print(f"{layer.name:<28} {alone(fn, inputs[layer.name]):>11.3f} "
              f"{alone(xla, inputs[layer.name]):>12.3f}")
    run = traceinsight.load(args.run)
    for n in ("function", "xla"):
        if n not in run.modes:
            continue
        print(f"\n{n}: the run's layers table (ms per steady traced step; names of the capture's process)")
        for r in run.modes[n].table("layers").records():
            print(f"  {r['layer']:<44} {r['ms_per_step']:>8.3f}  {r['share'] * 100:5.1f} %")


if __name__ == "__main__":
    main()
