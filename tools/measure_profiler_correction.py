"""Check the breakdown's profiler correction against truths that do not come from the tool, and
print the figures (they are timings: run on a quiet machine, compare within one run).

(a) An eager loop of N small ops per step (``tf.math.add`` of two scalars), for two N: the cost
    of one op (op + dispatch + python + input of the drawn step, over N; and the slope between
    the two N, which leaves out what a step costs besides its ops) against ``timeit`` of the same
    op called alone in this process. The traced figures and the traced ones with only the
    calibrated per-event cost taken out are printed beside them. On a busy machine the medians
    and means carry other processes' time; the least disturbed steps do not: the fastest traced
    step minus the fastest untraced one is the profiler's cost alone, printed against what the
    calibration predicts (events per step × cost per event), and per op against ``timeit``.
(b) The same loop with an injected ``time.sleep`` per step: the sleep has no events, so it must
    stay whole in python: drawn python with the sleep minus drawn python without it, against the
    sleep.
(c) The fix applied: the same loop as a ``tf.function``. The measured saving (eager's untraced
    median minus function's) against the drawn python + dispatch + input difference, and the
    traced one.

    python tools/measure_profiler_correction.py [--out DIR] [--n 50,200] [--sleep-ms 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import timeit
from pathlib import Path

WORKLOAD = '''
"""{n} eager adds of two scalars per step{sleep_doc} (tools/measure_profiler_correction.py)."""
import time

import tensorflow as tf

N, SLEEP_S = {n}, {sleep_s}
MODES = {modes!r}


def step(x):
    for _ in range(N):
        tf.math.add(x, x)
    if SLEEP_S:
        time.sleep(SLEEP_S)
    return x


def inputs():
    return (tf.constant(1.0),)
'''

CAPTURE = ["--min-steps", "12", "--min-time", "0", "--max-time", "4", "--warmup", "3",
           "--host-trace-ms", "2000", "--host-max-steps", "12", "--no-python-tracer",
           "--rounds", "3", "--round-time", "0.3"]
EAGER_PARTS = ("op", "dispatch", "python", "input")


def capture(out: Path, name: str, n: int, sleep_s: float, modes: list[str]) -> Path:
    wl = out / f"{name}.py"
    wl.write_text(WORKLOAD.format(n=n, sleep_s=sleep_s, modes=modes,
                                  sleep_doc=f" and a {sleep_s * 1e3:g} ms sleep" if sleep_s else ""))
    cmd = [sys.executable, "-m", "traceinsight", "capture", str(wl), "--out", str(out), "--name", name,
           "--modes", ",".join(modes), *CAPTURE]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out / name


def alone_us() -> float:
    """One ``tf.math.add`` of two scalars, called alone: the fastest of 400 blocks of 50 calls,
    per call (µs); short blocks, so on a busy machine some run undisturbed."""
    import tensorflow as tf
    x = tf.constant(1.0)
    add = tf.math.add
    add(x, x)
    return min(timeit.repeat(lambda: add(x, x), number=50, repeat=400)) / 50 * 1e6


def fastest_ms(m) -> tuple[float, float]:
    """The least disturbed untraced and traced steps (ms): on a busy machine the medians carry
    other processes' time, the fastest steps the least of it."""
    t = m.timing
    return float(min(t.steps_s)) * 1e3, float(min(t.traced_steps_s)) * 1e3


def parts(d: dict, cats=EAGER_PARTS) -> float:
    return float(sum(d[c] for c in cats))


def load_line() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def other_busy(m) -> str:
    load = (m.timing.load or {}) if m.timing is not None else {}
    rounds = [r.get("other_cpu_busy") for r in load.get("rounds") or [] if r.get("other_cpu_busy") is not None]
    return "–" if not rounds else f"{min(rounds):.2f}–{max(rounds):.2f}"


def main(argv: list[str]) -> int:
    import traceinsight
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--n", default="50,200")
    ap.add_argument("--sleep-ms", type=float, default=5.0)
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="ti-correction-"))
    out.mkdir(parents=True, exist_ok=True)
    n1, n2 = (int(x) for x in args.n.split(","))
    print(f"load average before: {load_line()} ({os.cpu_count()} CPUs); runs in {out}")
    runs = {"a1": capture(out, f"adds{n1}", n1, 0.0, ["eager"]),
            "a2": capture(out, f"adds{n2}", n2, 0.0, ["eager", "function"]),
            "sleep": capture(out, f"adds{n1}-sleep", n1, args.sleep_ms / 1e3, ["eager"])}
    loaded = {k: traceinsight.load(p) for k, p in runs.items()}
    op_us = alone_us()
    print(f"load average after: {load_line()}")
    print(f"\n(a) one tf.math.add called alone (timeit, fastest of 400 blocks of 50): {op_us:.2f} µs\n")
    print("| N | untraced median ms | traced mean ms | method | per op, drawn µs | per op, traced µs "
          "| per op, traced − calibrated cost µs | other processes' CPU share |")
    print("|---:|---:|---:|---|---:|---:|---:|---|")
    eager = {}
    for key, n in (("a1", n1), ("a2", n2)):
        m = loaded[key].modes["eager"]
        c = m.correction
        drawn, traced = parts(c.user), parts(c.traced)
        evc = traced - parts(c.event_cost)
        eager[n] = (m.median_ms, drawn, traced, evc)
        print(f"| {n} | {m.median_ms:.3f} | {c.traced_ms:.3f} | {c.kind.value} | {drawn / n * 1e3:.2f} "
              f"| {traced / n * 1e3:.2f} | {evc / n * 1e3:.2f} | {other_busy(m)} |")
    dn = n2 - n1
    slope = [(eager[n2][i] - eager[n1][i]) / dn * 1e3 for i in range(4)]
    print(f"\nslope between N={n1} and N={n2} (what one more op costs, µs): untraced median "
          f"{slope[0]:.2f}, drawn {slope[1]:.2f}, traced {slope[2]:.2f}, traced − calibrated "
          f"cost {slope[3]:.2f}; alone {op_us:.2f}")
    print("\nthe least disturbed steps: the profiler's cost the calibration predicts (events per step "
          "× cost per event) against the fastest traced step minus the fastest untraced one")
    print("| run | fastest untraced ms | fastest traced ms | measured excess ms | predicted ms "
          "| per op untraced µs | per op traced − predicted µs | alone µs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, n in (("a1", n1), ("a2", n2), ("sleep", n1)):
        m = loaded[key].modes["eager"]
        c = m.correction
        lo_u, lo_t = fastest_ms(m)
        pred = (c.per_event_us or 0.0) * (c.events_per_step or 0.0) / 1e3
        print(f"| {runs[key].name} | {lo_u:.3f} | {lo_t:.3f} | {lo_t - lo_u:.3f} | {pred:.3f} "
              f"| {lo_u / n * 1e3:.2f} | {(lo_t - pred) / n * 1e3:.2f} | {op_us:.2f} |")

    s, base = loaded["sleep"].modes["eager"], loaded["a1"].modes["eager"]
    sleep_ms = args.sleep_ms
    cs, cb = s.correction, base.correction
    print(f"\n(b) a {sleep_ms:g} ms sleep per step (N={n1}): python with the sleep − python without it")
    print(f"  drawn {cs.user['python'] - cb.user['python']:.3f} ms ({cs.kind.value}, ×{cs.scale:.2f}); "
          f"traced {cs.traced['python'] - cb.traced['python']:.3f} ms; untraced medians "
          f"{s.median_ms - base.median_ms:.3f} ms apart, fastest untraced steps "
          f"{fastest_ms(s)[0] - fastest_ms(base)[0]:.3f} ms apart; truth {sleep_ms:.3f} ms "
          "(time.sleep overshoots by a scheduler tick or so)")

    f = loaded["a2"].modes["function"]
    e = loaded["a2"].modes["eager"]
    saving = e.median_ms - f.median_ms
    ce, cf = e.correction, f.correction
    print(f"\n(c) the fix applied (N={n2}, eager → tf.function): measured saving (untraced medians) "
          f"{saving:.3f} ms")
    print(f"  python + dispatch + input, eager − function: drawn "
          f"{parts(ce.user, EAGER_PARTS[1:]) - parts(cf.user, EAGER_PARTS[1:]):.3f} ms, traced "
          f"{parts(ce.traced, EAGER_PARTS[1:]) - parts(cf.traced, EAGER_PARTS[1:]):.3f} ms; "
          f"op: drawn {ce.user['op'] - cf.user['op']:.3f}, traced {ce.traced['op'] - cf.traced['op']:.3f} ms")
    print(f"  function: {cf.kind.value}, untraced {f.median_ms:.3f} ms, traced mean {cf.traced_ms:.3f} ms")
    print(textwrap.dedent(f"""
        how each eager mode's split was obtained:
          N={n1}: {base.correction.method}
          N={n2}: {ce.method}
          sleep: {cs.method}"""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
