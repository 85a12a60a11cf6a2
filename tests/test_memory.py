"""Memory per mode: the allocator's events per step (analysis/memory.py) against a synthetic trace
whose events are placed by hand; the untraced phase's peak resident memory (capture/memory.py)
against an allocation of known size; what the reports and the viewer show, and say when nothing
is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import present
from traceinsight.analysis.mode import analyze_mode
from traceinsight.capture.memory import PHASE, PeakRss
from traceinsight.derive import complete
from traceinsight.model import Run, Timing
from traceinsight.report import render
from traceinsight.testing import sample_run

from xspace_builder import Space

RUNS = Path(__file__).parent / "data" / "runs"
MIB = 2**20


def allocating_steps(with_allocations: bool = True) -> Space:
    """Four marked steps of 100 µs; step 1 is the first (it traces), steps 2-4 allocate 2, 3 and
    2 buffers (sizes and the allocator's state after each set by hand); one allocation falls
    between steps."""
    sp = Space()
    sp.task_environment()
    main = sp.host().line("python")
    main.event("train", 0, 100, step_num=1, _r=1)
    main.event("f", 10, 80, tf_function_call="traced-nonXla", tracing_count=1)
    main.event("train", 100, 100, step_num=2, _r=1)
    main.event("train", 200, 100, step_num=3, _r=1)
    main.event("train", 300, 100, step_num=4, _r=1)
    for s in (100, 200, 300):
        main.event("f", s + 10, 80, tf_function_call="notTraced-nonXla", tracing_count=1)
    if with_allocations:
        # (start µs, requested, in use after, allocator peak)
        for t, req, used, peak in [(120, 1000, 1000, 5000), (130, 3000, 4000, 5000),
                                   (220, 1000, 1000, 5000), (230, 2000, 3000, 5000),
                                   (240, 4000, 7000, 7000),
                                   (320, 1000, 1000, 7000), (330, 1000, 2000, 7000),
                                   (450, 99999, 99999, 99999)]:        # after the last step
            main.event("MemoryAllocation", t, 0, requested_bytes=req, bytes_allocated=used,
                       peak_bytes_in_use=peak)
        for t in (150, 250, 260, 350):
            main.event("MemoryDeallocation", t, 0, bytes_allocated=0, peak_bytes_in_use=7000)
    return sp


@pytest.fixture(scope="module")
def mode(tmp_path_factory):
    path = allocating_steps().write(tmp_path_factory.mktemp("m") / "h.xplane.pb")
    return analyze_mode("m", [path])


def test_the_allocator_events_per_step_are_counted_as_placed(mode):
    mem = mode.memory
    assert mem["step_num"].tolist() == [1, 2, 3, 4]
    assert mem["allocations"].tolist() == [0, 2, 3, 2]        # the one after the last step: none
    assert mem["deallocations"].tolist() == [0, 1, 2, 1]
    assert mem["requested_bytes"].tolist() == [0, 4000, 7000, 2000]
    # the step's own peak is the most bytes in use at one of its allocations, not the allocator's
    # lifetime peak, which the events carry beside it
    assert mem["peak_in_use_bytes"].tolist()[1:] == [4000, 7000, 2000]
    assert np.isnan(mem["peak_in_use_bytes"][0])
    assert mem["allocator_peak_bytes"].tolist()[1:] == [5000, 7000, 7000]


def test_figures_are_over_the_steady_steps(mode):
    assert mode.steps["first"].tolist() == [True, False, False, False]
    f = mode.memory_figures()
    assert f.allocations == 2.0                  # median of 2, 3, 2 (the first step left out)
    assert f.requested_bytes == 4000.0           # median of 4000, 7000, 2000
    assert f.peak_in_use_bytes == 7000.0         # the most of any steady step
    assert np.isnan(f.peak_rss_bytes) and f.rss_basis is None      # no capture: not recorded
    assert f.recorded


def test_a_trace_without_allocator_events_records_no_memory(tmp_path):
    path = allocating_steps(with_allocations=False).write(tmp_path / "h.xplane.pb")
    m = analyze_mode("m", [path])
    assert m.memory.empty
    f = m.memory_figures()
    assert not f.recorded and np.isnan(f.allocations)
    run = complete(Run(path=None, name="r", modes={"m": m}, source="traces"))
    doc = json.loads(render(run, "json"))
    assert doc["modes"][0]["memory"] == {"peak_rss_bytes": None, "rss_basis": None,
                                         "allocations_per_step": None,
                                         "requested_bytes_per_step": None,
                                         "peak_in_use_bytes": None}
    assert present.MEMORY_TITLE not in render(run, "md")


def test_the_untraced_phase_peak_counts_an_allocation_made_in_it():
    before = PeakRss()
    block = np.ones(256 * MIB // 8)          # 256 MiB, every page written
    inside = before.finish()
    del block
    after = PeakRss().finish()
    if inside["basis"] != PHASE:
        pytest.skip("this kernel cannot reset the peak resident memory (/proc/self/clear_refs)")
    # the allocation is seen (memory the process gave back meanwhile may take a little off)
    assert inside["peak_rss_bytes"] - inside["rss_start_bytes"] >= 0.9 * 256 * MIB
    # a phase after it, which allocated nothing, does not carry that peak
    assert after["peak_rss_bytes"] < inside["peak_rss_bytes"] - 200 * MIB


def test_reports_and_viewer_show_the_capture_peak_and_the_allocators():
    from traceinsight.tui.mode import memory_line

    run = traceinsight.load(RUNS / "conv1d")
    eager = run.modes["eager"]
    timing = Timing(steps_s=eager.timing.steps_s, first_step_s=eager.timing.first_step_s,
                    memory={"peak_rss_bytes": 512 * MIB, "basis": "phase"})
    run = complete(Run(path=None, name="r", modes={"eager": eager.replace(timing=timing)},
                       source="traces"))
    doc = json.loads(render(run, "json"))
    mem = doc["modes"][0]["memory"]
    assert mem["peak_rss_bytes"] == 512 * MIB and mem["rss_basis"] == "phase"
    assert mem["allocations_per_step"] > 0
    md = render(run, "md")
    assert present.MEMORY_TITLE in md and "| `eager` | 512 | the timing phase |" in md
    html = render(run, "html")
    assert "Memory per mode" in html and "<td>the timing phase</td>" in html.replace(' class="r"', "")
    line = memory_line(run.modes["eager"])
    assert line is not None and line.startswith("memory: peak RSS 512 MiB while timed untraced")
    assert memory_line(sample_run().modes["eager"]) is None


def _with_peak(m, peak_mib: float, basis: str = "phase"):
    t = m.timing
    return m.replace(timing=Timing(steps_s=t.steps_s, first_step_s=t.first_step_s,
                                   traced_steps_s=t.traced_steps_s,
                                   memory={"peak_rss_bytes": int(peak_mib * MIB), "basis": basis}))


def test_a_mode_holding_markedly_more_memory_is_a_finding():
    from traceinsight.testing import make_mode

    def run_of(peaks: dict[str, float], basis: str = "phase"):
        modes = {n: _with_peak(make_mode(n, {"op": 1.0, "python": 0.5}), p, basis)
                 for n, p in peaks.items()}
        return complete(Run(path=None, name="r", modes=modes, source="run"))

    found = [f for f in run_of({"function": 400, "xla": 900, "eager": 420}).findings
             if f.rule == "memory"]
    assert len(found) == 1
    f = found[0]
    assert f.modes == ("xla", "function") and f.saving_ms is None and f.severity == "info"
    assert f.title == "xla holds 2.2× the memory of function (900 MiB vs 400 MiB)"
    assert "+500 MiB" in f.evidence
    # below the factor, below the floor, or the process's lifetime peak only: no finding
    for peaks, basis in [({"function": 400, "xla": 590}, "phase"),
                         ({"function": 40, "xla": 100}, "phase"),
                         ({"function": 400, "xla": 900}, "process")]:
        assert not [f for f in run_of(peaks, basis).findings if f.rule == "memory"], peaks
