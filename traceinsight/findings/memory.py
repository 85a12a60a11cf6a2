"""Memory findings: one mode's process holding markedly more memory than another mode of the
same program.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from traceinsight.finding import Finding
from traceinsight.model import Run

# Every rule id a finding can carry (``Finding.rule``): the one list of them. The JSON report's
# schema lists the same ids (``schemas/report.schema.json``, the finding's ``rule``) so that a
# consumer can rely on them; tests/test_finding_rules.py checks that the schema and every
# ``rule=`` of this module agree with it.
# One mode holds markedly more memory than another mode of the same program when its peak is
# this many times the other's and at least this much more: a difference a user running close to
# the machine's memory would act on (a few MiB between two processes of TensorFlow is noise).
MEMORY_FACTOR = 1.5
MEMORY_MIN_BYTES = 64 * 2**20


def rule_memory(run: Run) -> Iterable[Finding]:
    """13. One mode's process held markedly more memory while it was timed untraced than another
    mode of the same program (``ModeResult.memory_figures``: the phase's own peak resident memory):
    the price of its speed, or a reason to pick another mode. Not a speed-up: info."""
    for group in run.program_groups:
        peaks = {}
        for name in group:
            f = run.modes[name].memory_figures()
            if f.rss_basis == "phase" and np.isfinite(f.peak_rss_bytes) and f.peak_rss_bytes > 0:
                peaks[name] = f
        if len(peaks) < 2:
            continue
        low = min(peaks, key=lambda n: (peaks[n].peak_rss_bytes, n))
        for name, f in sorted(peaks.items(), key=lambda kv: -kv[1].peak_rss_bytes):
            base = peaks[low]
            extra = f.peak_rss_bytes - base.peak_rss_bytes
            if name == low or f.peak_rss_bytes < MEMORY_FACTOR * base.peak_rss_bytes \
                    or extra < MEMORY_MIN_BYTES:
                continue
            mib = lambda b: f"{b / 2**20:.0f} MiB"   # noqa: E731
            evidence = (f"Peak resident memory while timed untraced: {name} {mib(f.peak_rss_bytes)}, "
                        f"{low} {mib(base.peak_rss_bytes)} ({f.peak_rss_bytes / base.peak_rss_bytes:.1f}×, "
                        f"+{mib(extra)}).")
            if np.isfinite(f.peak_in_use_bytes) and np.isfinite(base.peak_in_use_bytes):
                evidence += (f" TensorFlow's allocator held at most {mib(f.peak_in_use_bytes)} vs "
                             f"{mib(base.peak_in_use_bytes)} in a traced step"
                             + (" (so most of the difference is outside the allocator's tensors: "
                                "compiled code, caches, buffers of the runtime)."
                                if f.peak_in_use_bytes - base.peak_in_use_bytes < extra / 2 else "."))
            m = run.modes[name]
            if m.kind.input == "dataset":
                fix = ("# tf.data buffers whole batches: bound them\n"
                       "ds = ds.prefetch(2)            # not a large fixed buffer\n"
                       "opts = tf.data.Options(); opts.autotune.ram_budget = 2**30  # bytes\n"
                       "ds = ds.with_options(opts)")
            else:
                fix = (f"# {name} trades memory for its speed; where memory is short, run as {low}\n"
                       "# (its step time is in the mode table), or shrink the batch")
            yield Finding(
                rule="memory", title=f"{name} holds {f.peak_rss_bytes / base.peak_rss_bytes:.1f}× the "
                f"memory of {low} ({mib(f.peak_rss_bytes)} vs {mib(base.peak_rss_bytes)})",
                evidence=evidence, fix=fix, saving_ms=None,
                saving_basis="not a speed-up: memory", modes=(name, low))
