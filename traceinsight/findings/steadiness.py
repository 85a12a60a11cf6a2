"""Steadiness findings: costs concentrated in a few steps, pairs with no measurable difference,
the profiler's distortion of the traced steps, and a trace that holds no host events to split.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import inputs, pairing
from traceinsight.resample import median
from traceinsight.runview import RunView

# a cost concentrated in a few steps (``stats.concentrated``) speaks from this share of the
# traced time: the same material share as input-bound
CONCENTRATED_SHARE = 0.05


_PERIODIC_FIX = ("# work done every N steps (checkpoints, logging, evaluation, summaries):\n"
                 "if step % 100 == 0: ...          # less often, or\n"
                 "manager.save()                   # tf.train.CheckpointManager off the hot loop")


def rule_concentrated(run: RunView) -> Iterable[Finding]:
    """A cost in a few steps only (``stats.concentrated``) that is a material share of the traced
    time: Python or unplaced work in some steps (periodic checkpoints, logging, evaluation). Input
    stalls are the input-bound finding's, retraces the retracing finding's; op and dispatch
    outliers are left alone (on a shared machine a preempted step looks the same)."""
    for m in run.ok_modes():
        costs = run.concentrated_costs(m.name)
        for cat in ("python", "other"):
            hit = costs.get(cat)
            if hit is None or hit["share"] < CONCENTRATED_SHARE:
                continue
            saving = hit["excess_ms"] / hit["n_steps"]
            if saving < inputs.INPUT_MIN_MS:
                continue   # a share of a tiny step: not worth a change
            yield Finding(
                rule="concentrated-cost",
                title=f"{m.name}: {cat} time spikes in {len(hit['steps'])} of {hit['n_steps']} steps",
                evidence=f"In {m.name},{ev.stalls_text(run, m, cat)}",
                saving_ms=ev.traced_in_step(m, saving),
                saving_basis=("estimate: the spikes' time above the typical step, per step, as its "
                              "share of the category split applied to the untraced median"),
                saving_kind=SavingKind.ESTIMATE,
                modes=(m.name,), fix=_PERIODIC_FIX)


def rule_no_difference(run: RunView) -> Iterable[Finding]:
    """8. Pairs whose confidence intervals overlap: no measurable difference, not a ranking."""
    same = [pairing.compare_modes(run, a, b) for a, b in pairing.compared_pairs(run)]
    same = [c for c in same if np.isfinite(c.ratio) and not c.significant]
    if not same:
        return
    modes = tuple(dict.fromkeys(n for c in same for n in (c.a, c.b)))
    yield Finding(
        rule="no-difference",
        title="No measurable difference: " + "; ".join(f"{c.a} ≈ {c.b}" for c in same),
        evidence="; ".join(f"{c.a} {ev.fmt_ms(c.a_ms)} vs {c.b} {ev.fmt_ms(c.b_ms)} ms/step, ratio "
                           f"{c.ratio_text()}" + (" includes 1" if np.isfinite(c.ratio_lo)
                                                  and not c.note else "")
                           for c in same) + ".",
        saving_ms=None, saving_basis="the data cannot order these modes", modes=modes,
        fix="# Do not pick between these modes on speed: the difference is within noise.\n"
            "# Capture more steps to narrow the interval.")


def rule_distortion(run: RunView) -> Iterable[Finding]:
    """9. The profiler slowed the traced steps a lot, or the traced steps order two modes the
    other way round from the untraced ones: their category split is no evidence for that
    difference."""
    hits = []
    for m in run.ok_modes():
        t = m.timing
        d = t.distortion if t is not None else None
        if t is None or t.traced_steps_s is None:
            continue
        # (imported here: a trace analysed alone has no timings and compares nothing; start-up)
        from traceinsight.compare import is_distorted
        if is_distorted(d):
            traced = float(median(t.traced_steps_s) * 1e3)
            hits.append((d, m.name, t.median_ms, traced, t.traced_other_cpu_busy,
                         t.other_cpu_busy))
    disagree = run.traced_disagreements()
    if not hits and not disagree:
        return
    hits.sort(key=lambda h: (-abs(h[0]), h[1]))
    evidence = ""
    if hits:
        evidence = "Traced vs untraced median step: " + "; ".join(
            f"{n} {ev.fmt_ms(t)} vs {ev.fmt_ms(u)} ms ({d * 100:+.0f} %{_load_text(lt, lu)})"
            for d, n, u, t, lt, lu in hits) + \
            (". The category split comes from the traced steps, corrected to the untraced "
             "median (the profiler's cost taken out, the rest scaled: the breakdown's notes say "
             "how); its shares rest on that correction the more, the larger this difference. "
             "The mode medians come from untraced steps.")
        if any(h[0] < 0 for h in hits):
            evidence += (" The profiler only adds time: traced steps faster than untraced ones "
                         "mean the untraced steps ran slower for another reason (a busier "
                         "machine, or a program that slows down as it runs).")
    if disagree:
        evidence += (" " if evidence else "") + "Traced and untraced steps disagree: " + "; ".join(
            f"{c.a} is slower untraced ({ev.fmt_ms(c.a_ms)} vs {ev.fmt_ms(c.b_ms)} ms) but not traced "
            f"({ev.fmt_ms(c.traced_a_ms)} vs {ev.fmt_ms(c.traced_b_ms)} ms)" for c in disagree) + \
            ": the category split does not explain these differences."
    if hits:
        worst = hits[0][0]
        title = (("The profiler slowed traced steps by up to " if worst > 0 else
                  "Traced steps differ from untraced ones by up to ") + ev.pct(abs(worst)))
    else:
        title = "Traced steps order " + ", ".join(f"{c.a} and {c.b}" for c in disagree[:2]) + \
            " the other way round from untraced ones"
    modes = [h[1] for h in hits] + [n for c in disagree for n in (c.a, c.b)]
    yield Finding(
        rule="profiler-distortion", title=title, evidence=evidence,
        saving_ms=None, saving_basis="not a speed-up: a caveat on the category split",
        modes=tuple(dict.fromkeys(modes)),
        fix="# Compare modes by their untraced medians (the mode table); read the category\n"
            "# split as proportions. Fewer tracer levels (no python tracer) distort less.")


def _load_text(traced: float | None, untraced: float | None) -> str:
    """``; other processes took 3 % of the CPUs while traced, 48 % untraced`` where the machine's
    load changed between the two phases (``machineload.changed``)."""
    if traced is None or untraced is None:
        return ""     # (a trace analysed alone: no timings, no machine load; start-up time)
    from traceinsight.machineload import changed, percent
    if not changed(traced, untraced):
        return ""
    return (f"; other processes took {percent(traced)} of the CPUs while traced, "
            f"{percent(untraced)} untraced")


def rule_host_not_recorded(run: RunView) -> Iterable[Finding]:
    """10. The trace cannot split host time (host tracer level 0, or no TF Python-API events):
    say what it can tell (the device side) and how to capture so it can tell the rest."""
    hits = [m for m in run.ok_modes() if not m.host_events_recorded]
    if not hits:
        return
    parts = []
    for m in hits:
        part = f"{m.name}: {ev.fmt_ms(m.median_ms)} ms/step"
        dev = m.table("devices")
        slowest = (np.flatnonzero(np.asarray(dev["slowest"], dtype=bool)) if not dev.empty
                   else np.zeros(0, dtype=np.int64))
        if len(slowest):
            d = dev.take(slowest[:1]).records()[0]
            part += (f"; on the slowest device ({d['device']}) kernels {ev.fmt_ms(d['compute_ms'])} ms, "
                     f"copies {ev.fmt_ms(d['h2d_ms'] + d['d2h_ms'] + d['d2d_ms'])} ms, idle "
                     f"{ev.fmt_ms(d['idle_ms'])} ms")
        parts.append(part)
    yield Finding(
        rule="host-not-recorded",
        title="The trace holds no host events to split: Python, dispatch and input are unknown",
        evidence=("; ".join(parts) + ". The host trace holds no events of TF's Python API "
                  "(host_tracer_level 0, or a trace of device activity only), so the time the "
                  "device waits on the host cannot be attributed; the category columns say "
                  "'not recorded'."),
        saving_ms=None, saving_basis="not a speed-up: what this trace cannot tell",
        modes=tuple(m.name for m in hits),
        fix=("# capture the host side too: traceinsight capture model.py, or with XProf's client\n"
             "from xprof.convert import _pywrap_profiler_plugin as p\n"
             "p.trace('localhost:6009', logdir, '', True, 3000, 3,\n"
             "        {'host_tracer_level': 2, 'python_tracer_level': 1, 'device_tracer_level': 1})"))
