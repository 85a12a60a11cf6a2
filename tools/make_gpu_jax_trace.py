"""Record a JAX training loop's trace on an NVIDIA GPU (jax.profiler, CUPTI): the committed
``tests/data/jax/jax_cuda_mlp.xplane.pb`` and the timings beside it
(``jax_cuda_mlp.json``). TensorFlow is not needed; run it where JAX sees a CUDA GPU:

    python tools/make_gpu_jax_trace.py OUT_FOLDER [--steps 8]

The loop: a jitted SGD step of a 3-layer MLP (batch 256, 1024 wide, float32), compiled before
the trace, then ``--steps`` steps, each inside ``jax.profiler.StepTraceAnnotation("train",
step_num=i)`` and ending with ``block_until_ready`` inside it, so each annotated step holds its
kernels. Then 50 small eager ops (``jnp`` adds, each dispatched on its own and waited for)
inside a ``TraceAnnotation("small adds")``, after the steps: a Python loop of small ops on a GPU.

Timed with ``time.perf_counter`` beside the trace, as a user's own loop would be: the same steps
again without the profiler (after it), each step's wall time, written into the JSON with the
JAX version and the device's name. These are what the tests compare the trace's step times
with (the profiler's cost is inside the traced ones).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--cpu", action="store_true",
                    help="a dry run on JAX's CPU device (checks this script, records no GPU)")
    args = ap.parse_args()

    import jax
    import jax.numpy as jnp

    gpus = [d for d in jax.devices() if d.platform == "gpu" or args.cpu]
    if not gpus:
        print("no GPU for JAX here: nothing recorded", file=sys.stderr)
        return 1

    key = jax.random.PRNGKey(0)
    k1, k2, k3, kx = jax.random.split(key, 4)
    width = 1024
    params = {"w1": jax.random.normal(k1, (width, width)) * 0.02,
              "w2": jax.random.normal(k2, (width, width)) * 0.02,
              "w3": jax.random.normal(k3, (width, 10)) * 0.02}
    x = jax.random.normal(kx, (256, width))
    y = jax.nn.one_hot(jnp.arange(256) % 10, 10)

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"])
        h = jax.nn.relu(h @ p["w2"])
        return jnp.mean((h @ p["w3"] - y) ** 2)

    @jax.jit
    def step(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), value

    params, value = step(params, x, y)            # compiled here, outside the trace
    value.block_until_ready()
    small = jnp.ones((8,))
    (small + small).block_until_ready()           # the eager add's kernel compiled too

    def loop(p, annotate: bool) -> tuple[object, list[float], float]:
        walls = []
        for i in range(args.steps):
            t0 = time.perf_counter()
            if annotate:
                with jax.profiler.StepTraceAnnotation("train", step_num=i):
                    p, v = step(p, x, y)
                    v.block_until_ready()
            else:
                p, v = step(p, x, y)
                v.block_until_ready()
            walls.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        if annotate:
            with jax.profiler.TraceAnnotation("small adds"):
                s = small
                for _ in range(50):
                    s = (s + small).block_until_ready()
        else:
            s = small
            for _ in range(50):
                s = (s + small).block_until_ready()
        return p, walls, time.perf_counter() - t0

    params, _, _ = loop(params, annotate=False)    # warm
    logdir = Path(tempfile.mkdtemp(prefix="jaxtrace-"))
    options = jax.profiler.ProfileOptions()
    options.host_tracer_level = 2
    options.python_tracer_level = 0
    jax.profiler.start_trace(str(logdir), profiler_options=options)
    params, traced, traced_small = loop(params, annotate=True)
    jax.profiler.stop_trace()
    params, untraced, untraced_small = loop(params, annotate=False)

    found = sorted(logdir.rglob("*.xplane.pb"))
    if len(found) != 1:
        print(f"expected one trace under {logdir}, found {len(found)}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found[0], args.out / "jax_cuda_mlp.xplane.pb")
    (args.out / "jax_cuda_mlp.json").write_text(json.dumps({
        "jax": jax.__version__, "device": gpus[0].device_kind, "steps": args.steps,
        "small_adds": 50,
        "traced_step_ms": [round(w * 1e3, 4) for w in traced],
        "untraced_step_ms": [round(w * 1e3, 4) for w in untraced],
        "traced_small_ms": round(traced_small * 1e3, 4),
        "untraced_small_ms": round(untraced_small * 1e3, 4),
    }, indent=1) + "\n")
    print(json.dumps(json.loads((args.out / "jax_cuda_mlp.json").read_text())))
    print(f"{(args.out / 'jax_cuda_mlp.xplane.pb').stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
