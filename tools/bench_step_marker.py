"""What a hand-marked step costs (``traceinsight.profile``'s ``p.step()``) when it is not traced:
per mark, in microseconds, beside an empty loop of the same length and one ``perf_counter`` read
(the mark's floor: it reads the clock once), with the machine's load.

    .venv/bin/python tools/bench_step_marker.py [--marks 200000]

Each figure is the median over blocks of 2000 marks (see ``per_mark_us``). States timed, each
as ``p.step()`` alone (one call a step) and as ``with p.step(): pass``:

* warm-up: the steps before the profiler is asked to start (``skip_steps`` not reached);
* after the window: the trace saved, the steps after it timed as the mode's untraced steps;
* untraced: the block has ended (or tracing could not start): the mark does nothing.

A traced step (inside the window) is TF's own ``Trace`` marker, which the profiler records: its
cost is the profiler's, corrected by the analysis like every other traced event. Figures from a
loaded machine are noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings

BLOCK = 2000


def per_mark_us(fn, n: int) -> float:
    """The median over blocks of BLOCK marks of one block's time per mark: the agent's thread
    saves the steps now and then (at most about a twentieth of the time), and a block it lands
    in is the exception, not what a mark costs."""
    per = []
    for _ in range(max(1, n // BLOCK)):
        t0 = time.perf_counter()
        fn(BLOCK)
        per.append((time.perf_counter() - t0) / BLOCK * 1e6)
    return float(statistics.median(per))


def empty(n: int) -> None:
    for _ in range(n):
        pass


def clock(n: int) -> None:
    pc = time.perf_counter
    for _ in range(n):
        pc()


def bare(p):
    def loop(n: int) -> None:
        for _ in range(n):
            p.step()
    return loop


def with_form(p):
    def loop(n: int) -> None:
        for _ in range(n):
            with p.step():
                pass
    return loop


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--marks", type=int, default=200_000)
    n = ap.parse_args().marks
    import tensorflow as tf

    import traceinsight
    out = tempfile.mkdtemp(prefix="bench-marker-")
    load0 = os.getloadavg()
    rows: list[tuple[str, float]] = []
    base = per_mark_us(empty, n)
    rows.append(("empty loop", base))
    rows.append(("perf_counter read", per_mark_us(clock, n) - base))
    # warm-up: the session would start only after skip_steps marks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with traceinsight.profile(out=out, name="warmup", skip_steps=10 * n + 10, steps=1) as p:
            rows.append(("warm-up, p.step()", per_mark_us(bare(p), n) - base))
            rows.append(("warm-up, with p.step()", per_mark_us(with_form(p), n) - base))
    # after the window: one traced step of a small op, then the marks
    x = tf.ones((4, 4))
    with traceinsight.profile(out=out, name="after", skip_steps=1, steps=1) as p:
        for _ in range(3):
            with p.step():
                tf.matmul(x, x)
        p.session.agent.wait_trace()
        rows.append(("after the window, p.step()", per_mark_us(bare(p), n) - base))
        rows.append(("after the window, with p.step()", per_mark_us(with_form(p), n) - base))
    rows.append(("untraced (block ended), p.step()", per_mark_us(bare(p), n) - base))
    rows.append(("untraced (block ended), with p.step()", per_mark_us(with_form(p), n) - base))
    load1 = os.getloadavg()
    print(f"{n} marks per state; load average {load0[0]:.2f} -> {load1[0]:.2f} on "
          f"{os.cpu_count()} CPUs")
    for label, us in rows:
        print(f"  {label:40s} {us:7.3f} us per mark" + ("" if label == "empty loop" else
                                                        " (beyond the empty loop)"))


if __name__ == "__main__":
    main()
