"""The hosts' comparison in words: the sentences every renderer shows for a ``HostGroup``
(the terminal's and the viewer's hosts screens, markdown, HTML and the JSON document's
``sentences``). The analysis (``traceinsight.analysis.hosts``) decides the figures and the
straggler; this module only says them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from traceinsight import present

if TYPE_CHECKING:      # (a report of a run without host groups imports no host analysis)
    from traceinsight.analysis.hosts import HostGroup


def spread_sentence(g: HostGroup) -> str:
    """The straggler (or the tie), the spread and its interval."""
    n = len(g.hosts)
    fast = g.figures(g.fastest[0])
    slow = g.figures(g.slowest[0])
    nsteps = (" (n=1: one steady step per host, so no interval and no claim that the "
              "spread is more than noise)" if g.one_step else "")
    if len(g.fastest) == n:
        return (f"{'Both' if n == 2 else f'All {n}'} hosts have the same median step ({present.ms(fast.median_ms)} ms): "
                f"spread 1.00×, no straggler{nsteps}.")
    spread = (f"spread {present.ratio_ci(g.spread_ratio, g.spread_lo, g.spread_hi)}, "
              f"{present.signed_ms(g.spread_ms)} ms/step")
    fastest = (f"the fastest host {fast.host} ({present.ms(fast.median_ms)} ms)"
               if len(g.fastest) == 1 else
               f"the fastest hosts {present.names(g.fastest)} ({present.ms(fast.median_ms)} ms)")
    if g.straggler is None:
        head = (f"{present.names(g.slowest)} tie for the slowest median "
                f"({present.ms(slow.median_ms)} ms/step) against {fastest}: {spread}; no "
                "single straggler")
    else:
        head = (f"The straggler is {slow.host}: {present.ms(slow.median_ms)} ms/step median "
                f"against {fastest}: {spread}")
    if g.one_step:
        return head + nsteps + "."
    if g.significant is False:
        return head + " (within noise: the interval includes 1)."
    return head + "."


def category_sentence(g: HostGroup) -> str:
    """Which category explains the straggler's extra time ("" without a straggler)."""
    if g.straggler is None:
        return ""
    if g.category_kind == "none":
        return ("The hosts' category splits cannot be compared: some traces split host time "
                "and some only the device side.")
    fast = g.fastest[0]
    if g.explained_by is None:
        return (f"No category's median is larger on {g.straggler} than on {fast}: the extra "
                "time is spread over categories whose medians do not add up to the step's.")
    d = g.category_delta
    rest = [f"{c} {present.signed_ms(v)}" for c, v in
            sorted(d.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
            if c != g.explained_by and math.isfinite(v) and abs(v) >= 0.0005][:3]
    where = "device time per step" if g.category_kind == "device" else "ms per steady step"
    return (f"Its extra time is mostly {g.explained_by}: "
            f"{present.signed_ms(d[g.explained_by])} of {present.signed_ms(g.spread_ms)} "
            f"ms/step against {fast} (medians, {where})"
            + (f"; then {', '.join(rest)}." if rest else "."))


def step_sentence(g: HostGroup) -> str:
    """Who was slowest step by step, and the others' waits (or why steps cannot be matched)."""
    if not g.aligned:
        return f"Per-step comparison isn't possible: {g.alignment}."
    n = len(g.steps)
    counts = sorted(((h.straggler_steps, h.host) for h in g.hosts if h.straggler_steps),
                    key=lambda t: (-t[0], t[1]))
    who = ", ".join(f"{h} in {c}" for c, h in counts) if counts else "no single host"
    ties = f"; tied in {g.step_ties}" if g.step_ties else ""
    waits = ", ".join(f"{h.host} {present.ms(h.wait_median_ms)}" for h in g.hosts
                      if h.host != g.straggler)
    return (f"{g.alignment}. Slowest in a step: {who} of {n}{ties}. Median wait for the "
            f"step's slowest host (ms/step): {waits}.")


def sentences(g: HostGroup) -> list[str]:
    """Every sentence of the group, in the order renderers show them."""
    out = [spread_sentence(g), category_sentence(g), step_sentence(g)]
    out += [f"{h} is not compared: {why}." for h, why in g.missing]
    return [s for s in out if s]
