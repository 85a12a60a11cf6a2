"""Each Keras layer of a workload timed alone, as the layers table of a captured run places it:
the layer's call on its own input, in a loop timed with perf_counter, in eager (``layer(x)``),
under tf.function (the graph modes) and with jit_compile (XLA), beside the run's layers table for
the same modes.

    python tools/time_layers_alone.py samples/slow_layers.py RUN [--calls 300]

Prints, per layer, ms per call alone in each mode; then, per mode of the run, its layers table
(ms per steady traced step) with, for each row, the same layers' alone time summed (an eager row
is a layer class: the alone times of its layers are added up; a graph row is one layer). The two
answer different questions (a traced step against one layer's wall time alone, on a loaded or
quiet machine), so compare the ranking and the ratios, not the figures one to one. The machine's
load average is printed beside them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
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

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.calls} calls each")
    print(f"{'layer (this process)':<28} {'eager ms':>9} {'fn ms':>9} {'xla ms':>9}")
    by_mode: dict[str, dict[str, float]] = {"eager": {}, "function": {}, "xla": {}}
    for layer in model.layers[1:]:
        arg = inputs[layer.name]
        by_mode["eager"][layer.name] = alone(layer, arg)
        by_mode["function"][layer.name] = alone(tf.function(layer), arg)
        by_mode["xla"][layer.name] = alone(tf.function(layer, jit_compile=True), arg)
        print(f"{layer.name:<28} " + " ".join(f"{by_mode[m][layer.name]:>9.3f}" for m in by_mode))
    load_after = os.getloadavg()[0]
    run = traceinsight.load(args.run)
    names = [layer.name for layer in model.layers[1:]]

    def members(row: str) -> list[str]:
        """The layers a row is: an eager class row lists them; a graph row is a path whose parts
        name one (with the graph's uniquifying ``_N``)."""
        if " [" in row:
            listed = row.split(" [", 1)[1].rstrip("]")
            if "…" not in listed:
                return [n for n in listed.split(", ") if n in names]
            cls = row.split(" [", 1)[0]
            return [layer.name for layer in model.layers[1:]
                    if getattr(type(layer).call, "__qualname__", "") == cls]
        for part in reversed(row.split("/")):
            for name in (part, re.sub(r"_\d+$", "", part)):
                if name in names:
                    return [name]
        return []

    for n in ("eager", "function", "xla"):
        if n not in run.modes or run.modes[n].table("layers").empty:
            continue
        print(f"\n{n}: the run's layers table (ms per steady traced step) beside its layers alone")
        for r in run.modes[n].table("layers").records():
            got = members(str(r["layer"]))
            mine = sum(by_mode[n][g] for g in got) if got else float("nan")
            print(f"  {str(r['layer'])[:60]:<60} {r['ms_per_step']:>8.3f}  {r['share'] * 100:5.1f} %"
                  f"   alone {mine:>8.3f}" + (f" ({len(got)} layers)" if len(got) > 1 else ""))
    print(f"\nload average after: {load_after:.2f}")


if __name__ == "__main__":
    main()
