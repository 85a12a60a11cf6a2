"""The one model of a captured run that flows capture -> analysis -> rendering.

Everything the TUI, the reports and the diff show is read from these frozen objects; renderers never
look at traces themselves. Times are milliseconds per step unless a name says otherwise.

Categories (the attribution contract, see ``traceinsight.analysis.rules``): every step's main-thread
wall time is split exclusively into ``CATEGORIES``.

Tables: the public Python API gives pandas DataFrames (``mode.steps``, ``run.summary()``: a new
one on every read); everything inside the package (analysis, findings, stats, compare, report,
tui) reads numpy ``Columns`` through one accessor, ``ModeResult.table(name)`` /
``Run.table("summary")`` (a comparison's: ``compare.Comparison.table(name)``). Each table is
stored once, as Columns; there are no twin methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, fields
from enum import Enum
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from traceinsight import present as fmt
from traceinsight.categories import CATEGORIES
from traceinsight.columns import Columns, Table, fields_equal
from traceinsight.modekind import ModeKind, mode_kind
from traceinsight.resample import bootstrap_medians, median, samples_digest
from traceinsight.stepsource import StepSource, StepSpan

if TYPE_CHECKING:
    import pandas as pd

    # (types only: what a run's figures hold is computed from above; a trace's analysis, which
    # makes none of them, then defines none of their classes: start-up time)
    from traceinsight.comparison import Comparison
    from traceinsight.factortable import FactorTable
    from traceinsight.finding import Finding
    from traceinsight.hostgroup import HostGroup
    from traceinsight.machineload import RoundLoad


CATEGORY_HELP: dict[str, str] = {
    "op": "kernels running (eager kernels, graph-function and XLA executable runs)",
    "dispatch": "the eager runtime and tf.function call machinery around kernels",
    "tracing": "tf.function tracing / retracing (graph building)",
    "compile": "XLA compilation",
    "input": "getting inputs into tensors and onto the device (convert_to_tensor, tf.constant, copies, tf.data waits)",
    "python": "main-thread time covered by no TensorFlow runtime event",
    "other": "TensorFlow events no rule places yet (listed by name)",
}


@dataclass(frozen=True, eq=False)
class Timing:
    """Per-step wall times measured with time.perf_counter in the workload process (seconds)."""

    __eq__ = fields_equal    # arrays compared element by element (the dataclass's == cannot)

    steps_s: np.ndarray                 # untraced phase, one entry per step (every round's steps)
    first_step_s: float | None = None   # the process's first call (tracing / compilation live here)
    traced_steps_s: np.ndarray | None = None  # host-traced phase, same clock: profiler distortion
    # untraced steps per round: round i of every mode of a capture ran in turn (A B C A B C ...), so
    # rounds of the same index are paired; None when timings.json has no rounds
    rounds: tuple[np.ndarray, ...] | None = None
    # machine load while timing: cpu_count, cpu_usable, loadavg_start / loadavg_end (of the mode's
    # process), timing_phase (round 0) and rounds[i]: {round, t_start_unix, t_end_unix, loadavg,
    # loadavg_end, other_cpu_busy (share of all CPUs other processes used, steal included), steal,
    # own_cpu_busy}, one per round of ``rounds``; set_aside: the same for each disturbed attempt
    # whose steps are not used, with its action; traced_phase: the same over the host pass's
    # traced steps. Read through ``round_loads`` / ``set_aside`` / ``traced_other_cpu_busy``.
    load: dict | None = None
    # peak resident memory of the mode's process during its untraced timing phase
    # (``capture/memory.py``): peak_rss_bytes, basis ("phase": that phase's own peak; "process":
    # the process's lifetime peak, where the phase's could not be measured), rss_start_bytes,
    # rss_end_bytes; None where timings.json has none (foreign traces, older run folders)
    memory: dict | None = None
    # the profiler's cost measured in the workload process: a loop of one small eager op timed
    # untraced and traced (``Calibration``); None where the capture ran none (older run folders,
    # graph-mode processes, foreign traces)
    calibration: Calibration | None = None
    # a script's mode: what one step spans (a loop's iteration from one step call to the next, a
    # fit batch, a hand-marked step), and the functions whose calls began the iterations; None
    # and () elsewhere (a capture's steps are its own driver's, foreign traces, older run folders)
    step_span: StepSpan | None = None
    step_calls: tuple[str, ...] = ()

    @property
    def round_loads(self) -> tuple[RoundLoad, ...] | None:
        """Per round of ``rounds`` (same order): its index, window, load and steps, as data; None
        without rounds or without a load record per round."""
        from traceinsight.machineload import RoundLoad
        recs = (self.load or {}).get("rounds")
        if not self.rounds or not isinstance(recs, list) or len(recs) != len(self.rounds):
            return None
        return tuple(RoundLoad.of(r if isinstance(r, dict) else {}, n_steps=len(s))
                     for r, s in zip(recs, self.rounds))

    @property
    def set_aside(self) -> tuple[RoundLoad, ...]:
        """The disturbed attempts the capture did not use (re-run, or set aside), in the order
        they ran; () in run folders written before the capture kept such a record."""
        from traceinsight.machineload import RoundAction, RoundLoad
        recs = (self.load or {}).get("set_aside")
        if not isinstance(recs, list):
            return ()
        out = []
        for r in recs:
            if isinstance(r, dict):
                try:
                    action = RoundAction(r.get("action"))
                except ValueError:
                    continue
                out.append(RoundLoad.of(r, action=action))
        return tuple(out)

    @property
    def other_cpu_busy(self) -> float | None:
        """The share of the CPUs other processes took while the used steps were timed: the
        median over the rounds that recorded it (the timing phase's without rounds); None when
        nothing recorded it."""
        loads = self.round_loads
        vals = [r.other_cpu_busy for r in loads or () if r.other_cpu_busy is not None]
        if vals:
            return float(median(vals))
        phase = (self.load or {}).get("timing_phase")
        v = phase.get("other_cpu_busy") if isinstance(phase, dict) else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def traced_other_cpu_busy(self) -> float | None:
        """The share of the CPUs other processes took while the host pass's traced steps ran
        (``load["traced_phase"]``); None where it was not recorded (older run folders, foreign
        traces)."""
        phase = (self.load or {}).get("traced_phase")
        v = phase.get("other_cpu_busy") if isinstance(phase, dict) else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def round_medians_ms(self) -> np.ndarray | None:
        """Median ms/step of each round with steps (None without rounds)."""
        if not self.rounds:
            return None
        meds = [float(median(r)) * 1e3 for r in self.rounds if len(r)]
        return np.asarray(meds, dtype=float) if meds else None

    @property
    def median_ms(self) -> float:
        return float(median(self.steps_s) * 1e3) if len(self.steps_s) else float("nan")

    @property
    def distortion(self) -> float | None:
        """Traced median / untraced median - 1 (0.10 = the profiler made steps 10 % slower)."""
        if self.traced_steps_s is None or not len(self.traced_steps_s) or not len(self.steps_s):
            return None
        return float(median(self.traced_steps_s) / median(self.steps_s) - 1.0)


@dataclass(frozen=True)
class Calibration:
    """The capture's calibration of the profiler (``capture/calibrate.py``): ``calls`` calls of one
    small eager op per block, each block timed with perf_counter, untraced and then inside the
    host-traced pass (where each traced block is one ``runfolder.CALIBRATION_MARKER`` window of
    the trace). The fastest block of each kind is the least disturbed by other processes."""

    calls: int
    untraced_s: tuple[float, ...]
    traced_s: tuple[float, ...]

    @property
    def excess_s_per_call(self) -> float | None:
        """What tracing added to one call (fastest traced block - fastest untraced, per call;
        never below 0); None without both kinds of block."""
        if not self.untraced_s or not self.traced_s or self.calls < 1:
            return None
        return max(0.0, (min(self.traced_s) - min(self.untraced_s)) / self.calls)


@dataclass(frozen=True)
class CompileCall:
    """One XLA-compiled function call whose compilation the trace holds no event for."""

    function: str
    step_num: int | None      # the step holding the call (None: outside every step)
    first_op_ms: float        # the call's op time as recorded (compilation and the run together)
    steady_op_ms: float | None  # median op time of the function's later calls (None: no later call)
    compile_ms: float | None  # first_op_ms - steady_op_ms, moved from op to compile (None: unknown,
    #                           or not separable: the excess over steady_op_ms is in other)


class CompileKind(str, Enum):
    """How a mode's XLA compile time was obtained where the trace records no compile event."""
    DERIVED = "derived"              # every compiling call's from its op time against later calls
    NOT_RECORDED = "not recorded"    # a call has no later call: its op time is compile and run
    # every compiling call's op time beyond its later calls' is compile and the function's first-run
    # setup together (instantiation, graph optimisation, which a call without XLA pays too), which
    # the trace cannot split: shown in other, not compile (TF 2.12 - 2.16)
    NOT_SEPARABLE = "not separable"


@dataclass(frozen=True)
class CompileEstimate:
    """``ModeResult.compile_estimate``: set when the trace holds XLA-compiled function calls that
    compile (their first call, or a retrace) but no XLA compile events (TF 2.15 and 2.16 write
    none). ``kind`` is ``CompileKind.DERIVED`` when every such call's compile time was derived from
    its op time against the function's later calls (shown in ``compile``, labelled derived), or
    ``NOT_RECORDED`` when at least one call has no later call to compare with: that call's op
    time holds compilation and run unsplit and is shown in ``other``, never in ``op``;
    ``NOT_SEPARABLE`` when each call's op time beyond its later calls' (``excess_ms``) holds
    compilation and the first run's other setup, unsplit: shown in ``other``."""

    kind: CompileKind
    calls: tuple[CompileCall, ...]

    @property
    def derived_ms(self) -> float:
        return float(sum(c.compile_ms for c in self.calls if c.compile_ms is not None))

    @property
    def excess_ms(self) -> float:
        """The compiling calls' op time beyond their later calls' (compile and first-run setup)."""
        return float(sum(c.first_op_ms - c.steady_op_ms for c in self.calls
                         if c.steady_op_ms is not None))

    @property
    def label(self) -> str:
        if self.kind is CompileKind.DERIVED:
            return "compile (derived: the trace holds no XLA compile events)"
        if self.kind is CompileKind.NOT_SEPARABLE:
            return "compile not separable (the trace holds no XLA compile events)"
        return "compile not recorded (the trace holds no XLA compile events)"


@dataclass(frozen=True)
class TracerEvents:
    """``ModeResult.tracer_events``: what the host trace says about the profiler's own cost.

    per_step:  category -> events per steady traced step whose recording cost lands in that
               category's time. A TraceMe is stamped inside its own span and recorded when it
               ends, so a main-thread event's cost lands in the event around it (its parent's
               category; python for an event with none); a zero-length event (memory
               allocations) lands in the category running at its instant; an event of another
               thread of the host delays what the main thread waits for: the main thread's
               category at its instant.
    calibration_events: events the trace holds per call of the capture's calibration loop (None:
               the trace holds no calibration; ``Timing.calibration`` has its timing).
    """

    per_step: dict[str, float]
    calibration_events: float | None = None


class CorrectionKind(str, Enum):
    """How a mode's drawn breakdown (``ModeResult.category_means``) was made from its traced one."""
    CALIBRATED = "calibrated"        # the tracer's measured cost per event taken out where it lands
    PROPORTIONAL = "proportional"    # no calibration recorded: the traced split scaled, as it is
    # a calibration recorded but not usable: its traced loop ran no slower than the untraced one,
    # or its cost would empty the whole traced step (other processes' load swamped the
    # profiler's cost): scaled as PROPORTIONAL
    INCONCLUSIVE = "inconclusive"
    TRACED = "traced"                # no untraced timing (foreign traces): the traced steps drawn


@dataclass(frozen=True)
class Correction:
    """``ModeResult.correction`` (``analysis/overhead.py`` computes it): the user's untraced step,
    split into categories, from the host-traced steps' split.

    traced:       category -> mean ms/step of the steady traced steps (adds up to ``traced_ms``).
    event_cost:   category -> the profiler's cost taken out where it lands: the calibrated cost
                  per event times the events landing there per step (never more than the
                  category's traced time). Zero unless ``kind`` is CALIBRATED.
    scale:        what is left after ``event_cost`` is scaled by this to ``untraced_ms`` (the cost
                  no event accounts for, the traced steps' mean against the untraced median, and
                  the machine between the two passes); 1.0 for TRACED.
    user:         category -> ms/step drawn: (traced - event_cost) * scale; adds up to
                  ``untraced_ms``, the mode's headline median (TRACED: the traced means).
    traced_ms:    mean wall ms of the steady traced steps; untraced_ms: the untraced median (nan
                  for TRACED); per_event_us: the calibrated cost of one event (None otherwise);
    events_per_step: main-thread events per steady traced step (None when not counted).
    """

    kind: CorrectionKind
    traced: dict[str, float]
    event_cost: dict[str, float]
    scale: float
    user: dict[str, float]
    traced_ms: float
    untraced_ms: float
    per_event_us: float | None = None
    events_per_step: float | None = None

    @property
    def removed(self) -> dict[str, float]:
        """category -> traced minus drawn ms/step (negative: the untraced step has more of it)."""
        return {c: self.traced[c] - self.user[c] for c in self.traced}

    @property
    def event_cost_ms(self) -> float:
        return float(sum(v for v in self.event_cost.values() if np.isfinite(v)))

    @property
    def method(self) -> str:
        """How the drawn split was obtained, in words (shown, never parsed)."""
        if self.kind is CorrectionKind.TRACED:
            return ("drawn as traced: no untraced timing (a trace not captured by traceinsight, "
                    "or a script that timed no untraced step: see the notes), so the profiler's "
                    "cost cannot be taken out")
        if self.kind is CorrectionKind.CALIBRATED:
            return (f"the profiler's cost measured in the mode's own process "
                    f"({self.per_event_us:.2f} µs per event, {self.events_per_step or 0:.0f} "
                    "events per step: "
                    f"{self.event_cost_ms:.3g} ms) taken out where it lands, the rest scaled "
                    f"×{self.scale:.2f} to the untraced median")
        why = ("the capture's calibration is not usable (it measured no cost, or more than the "
               "whole traced step: the machine's load swamped it)"
               if self.kind is CorrectionKind.INCONCLUSIVE else
               "this run recorded no calibration of the profiler's cost")
        return (f"every category scaled ×{self.scale:.2f} to the untraced median: {why}, so "
                "where the profiler's cost landed is not known")


def steady_mask(steps: Columns) -> np.ndarray:
    """Per row of a steps table: a steady step (neither the first step nor one cut by the end of
    the trace)."""
    if steps.empty:
        return np.zeros(len(steps), dtype=bool)
    mask = ~steps["first"].astype(bool)
    if "partial" in steps:
        mask &= ~steps["partial"].astype(bool)
    return mask


# A ModeResult's tables, in field order: what ``ModeResult.table(name)`` reads.
TABLES: tuple[str, ...] = ("steps", "breakdown", "ops", "retraces", "hotspots", "other",
                           "device_steps", "devices", "kernels", "stages", "memory", "layers",
                           "layer_steps")


class FirstStep:
    """``ModeResult.first_step``: {category: ms} of the process's first step, or None when the
    trace does not have it apart. Set it to a mapping (a dict, or a pandas Series indexed by
    category) or None; it is kept as a dict of floats, and read as a new dict (a plain figure per
    category, the same for the Python API and the package)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return None
        v = obj.__dict__["first_step"]
        return None if v is None else dict(v)

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__["first_step"] = (None if value is None else
                                      {str(k): float(x) for k, x in value.items()})


@dataclass(frozen=True)
class MemoryFigures:
    """A mode's memory, as the capture and the trace record it (``ModeResult.memory_figures``).
    NaN: not recorded (a foreign trace has no untraced phase; a trace below host tracer level 3,
    JAX's or a device-only one, no allocator events).

    peak_rss_bytes:    the mode's process's peak resident memory while it was timed untraced.
    rss_basis:         "phase" (that phase's own peak) or "process" (the process's lifetime
                       peak, where the phase's could not be measured); None: not recorded.
    allocations:       TF allocator allocations per steady traced step (median).
    requested_bytes:   bytes those allocations asked for per steady traced step (median).
    peak_in_use_bytes: the most bytes the allocator held at once in a steady traced step.
    """
    peak_rss_bytes: float
    rss_basis: str | None
    allocations: float
    requested_bytes: float
    peak_in_use_bytes: float

    @property
    def recorded(self) -> bool:
        return any(np.isfinite(v) for v in (self.peak_rss_bytes, self.allocations,
                                            self.peak_in_use_bytes))


@dataclass(frozen=True, eq=False, repr=False)   # its own __eq__ and __repr__ below
class ModeResult:
    """One execution mode of a run (or one foreign trace, shown as a mode).

    Tables (all may be empty, never None; columns below):
      steps:      one row per step of the host-traced pass: step_num, start_ps, end_ps, wall_ms,
                  first (bool: the process's first call), then one ``<category>`` column per
                  CATEGORIES entry in ms; the categories sum to wall_ms.
      breakdown:  index CATEGORIES; columns median, p25, p75, mean (ms/step over steady steps, i.e.
                  excluding the first step); plus a row "total".
      ops:        op, type, thread ("main" or "worker"), calls_per_step, self_ms_per_step, share
                  (of that thread group's op time), sorted by self_ms_per_step descending.
      retraces:   function, calls, traced_calls, tracing_ms (total over the trace), compile_ms,
                  changes (str: what changed between traces, "" when unknown).
      hotspots:   function, file, line, group ("user", "keras", "tensorflow", "traceinsight",
                  "other"), self_ms,
                  inclusive_ms (the python-category time inside the function's outermost calls,
                  callees' Python included, their ops and dispatch not; per step, scaled to the
                  host pass's python time when both passes exist), calls_per_step.
      other:      name, ms_per_step, count: events the rules do not place.
      device_steps: per (host, device, step): wall_ms, compute_ms (summed kernel time), h2d_ms,
                  d2h_ms, d2d_ms (copies), busy_ms, idle_ms, launch_ms (host kernel launches),
                  kernels (count), span_ms (the step's device time on that device), after_host_ms
                  (how far it ends after the host step; NaN under the time-window rule); see
                  ``traceinsight.analysis.device``. Empty on CPU-only traces.
      devices:    per (host, device): medians over steady steps of the same figures, steps, and
                  ``slowest`` (the device that sets the step).
      kernels:    op, op_type, kernel (whole name), calls, device_ms (steady steps, all devices),
                  ms_per_step, share.
      stages:     tf.data stages (``Iterator::*`` events) of the trace the steps come from: stage,
                  kind, count, total_ms, self_ms, share (whole trace, as XProf's
                  input_pipeline_analyzer), calls_per_step, ms_per_step (self time of the events
                  starting in steady steps, per steady step), parallel_calls and autotuned (the
                  parallelism its events recorded, 0: none); see ``analysis.tfdata``. Empty
                  without tf.data.
      memory:     per step of the host-traced pass, what TensorFlow's allocator events record
                  (``analysis.memory``): step_num, allocations, deallocations, bytes_allocated,
                  peak_bytes_in_use (the allocator's peak so far, NaN where no event carries it).
                  Empty where the trace records no allocation ("not recorded", never zero).
      layers:     time per steady step by Keras layer (``analysis.layers``): graph and XLA, the
                  ops' self time by the layer scope in graph op names or an XLA op's HLO
                  metadata; eager, the main thread's time under each layer class's ``call`` in
                  the python-tracer pass, by category (``<category>_ms``, scaled to the host
                  pass; ``layer_calls_per_step``), Keras' own frames a row of their own. Columns
                  layer, placed, ms_per_step, calls_per_step, ops, share, source; a last row "(not
                  in a layer)" holds what nothing places. Empty where nothing places any time.
      layer_steps: the layers table's rows step by step: layer (the row's ``layer``), step_num
                  (each steady step of the pass the table comes from: the host pass; an eager
                  mode's python-tracer pass, each category scaled as the table's), ms (that row's
                  time in that step, zeros included). The samples a layer's ratio between two
                  modes and its interval are computed from (``RunFigures.layer_matrix``).

    ``host_events_recorded`` is False when the trace cannot split host time (host tracer level 0,
    or no TF Python-API events on the main thread): the steps' category columns are then NaN
    ("not recorded"), never python.

    One table type per reader: **the public Python API gives pandas DataFrames; everything
    inside the package reads numpy ``Columns``.** Each table is stored once, as
    ``traceinsight.columns.Columns`` (the analysis makes them; a DataFrame given by hand is
    converted when the mode is made). ``mode.steps`` (``.ops``, ...) is the public read: a new
    DataFrame on every read, which the reader may change without changing the mode.
    ``mode.table("steps")`` is the package's read: the stored columns, no pandas (``traceinsight
    analyze`` never imports it); a module that needs pandas' grouping or sorting builds a
    DataFrame from them itself, and says so. ``first_step`` is a dict, read the same way by both;
    the steady steps are ``steady_steps`` (public) or ``table("steps").take(steady_mask())``.
    """

    # two modes are equal when their data are (tables compared as stored, by value); unhashable
    __eq__ = fields_equal
    def __repr__(self) -> str:
        """A few of the mode's figures and its non-empty tables' sizes, as stored (no DataFrame
        built, no pandas imported): printing a mode in a REPL shows what it holds in a line or
        two, not every array. ``fields_repr`` writes every field, for debugging."""
        shown = [f"name={self.name!r}", f"status={self.status!r}"]
        if self.error:
            shown.append(f"error={self.error[:120]!r}")
        if self.ok:
            shown.append(f"median_ms={fmt.ms(self.median_ms)}")
            t = self.timing
            if t is not None and len(t.steps_s):
                shown.append(f"untraced_steps={len(t.steps_s)}")
        shown += [f"{name}=Columns({len(self.table(name))} rows)" for name in TABLES
                  if not self.table(name).empty]
        return f"ModeResult({', '.join(shown)})"

    name: str
    status: str = "ok"                  # "ok" | "failed" | "missing"
    error: str | None = None
    timing: Timing | None = None
    steps: Table = Table()
    breakdown: Table = Table()
    first_step: FirstStep = FirstStep()  # category -> ms of the first step, when the trace has it
    ops: Table = Table()
    retraces: Table = Table()
    hotspots: Table = Table()
    other: Table = Table()
    step_rule: str = ""                 # how steps were found, in words (shown, never parsed)
    step_source: StepSource = StepSource.UNKNOWN  # the same, as data (what decisions read)
    profile_options: dict[str, Any] = field(default_factory=dict)  # pass -> {requested, recorded, ok}
    notes: tuple[str, ...] = ()         # things the user should know (missing pass, options mismatch)
    trace_paths: tuple[str, ...] = ()
    host_events_recorded: bool = True
    device_steps: Table = Table()
    devices: Table = Table()
    kernels: Table = Table()
    # how compile time was obtained where the trace writes no XLA compile events (None: recorded,
    # or no XLA compilation in the trace)
    compile_estimate: CompileEstimate | None = None
    stages: Table = Table()
    memory: Table = Table()
    layers: Table = Table()
    layer_steps: Table = Table()
    # what the mode is (base, input, flavour, backend; ``traceinsight.modekind``): the loader sets
    # it from run.json; left out (a foreign trace, an old run folder, a mode made by hand) it is
    # derived from the name, here, once
    kind: ModeKind = None  # type: ignore[assignment]
    # what analyses and shows this mode when it is displayed alone (``alone``): the same
    # ``Run.analyzer`` and ``Run.display`` as the run it was loaded in
    # (``traceinsight.derive.complete`` sets them)
    analyzer: Analyzer | None = field(default=None, repr=False, compare=False)
    display: Display | None = field(default=None, repr=False, compare=False)
    # bootstrap medians of ``step_samples_ms`` resampled elsewhere from these very samples (by the
    # worker process that analysed the mode, kept by the analysis cache with their digest, or
    # carried over by ``replace``); None: resampled here when first read (``boot_medians``)
    boot: np.ndarray | None = field(default=None, repr=False, compare=False)
    # what the host trace says about the profiler's own cost (events per step by where their
    # cost lands; the calibration loop's events): the analysis counts them (None: not counted)
    tracer_events: TracerEvents | None = None
    # the user's untraced step split into categories (``analysis/overhead.py``, computed when a
    # run is made with an analyzer, ``Run.__post_init__``): what ``category_means`` draws. None:
    # not computed (a mode made by hand and in no completed run), and the breakdown is the traced one
    correction: Correction | None = None

    def __post_init__(self) -> None:
        if self.kind is None:
            object.__setattr__(self, "kind", mode_kind(self.name))

    def table(self, name: str) -> Columns:
        """The package's one read of a table (``steps``, ``breakdown``, ``ops``, ...; ``TABLES``):
        the stored ``Columns`` themselves, shared, read-only by convention. The Python API reads
        the attribute of the same name instead (a DataFrame)."""
        if name not in TABLES:
            raise KeyError(f"no table {name!r} (tables: {', '.join(TABLES)})")
        return self.__dict__[name]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def replace(self, **changes: Any) -> ModeResult:
        """``dataclasses.replace`` that passes the tables on in their own form (Columns stay
        Columns: no DataFrame is built), and the bootstrap medians when they were resampled and
        the step samples stay the same."""
        kw = {f.name: self.__dict__[f.name] for f in fields(self) if f.init}
        # the same step samples keep their medians; other samples are resampled when read
        kw["boot"] = None if {"timing", "steps"} & changes.keys() else self.known_boot_medians
        if {"timing", "steps", "breakdown", "tracer_events"} & changes.keys():
            kw["correction"] = None      # made from these: computed again when a run is made
        kw.update(changes)
        return ModeResult(**kw)

    def steady_mask(self) -> np.ndarray:
        """Per row of ``steps``: a steady step (neither the first nor cut by the trace's end)."""
        return steady_mask(self.table("steps"))

    @property
    def n_steady(self) -> int:
        return int(self.steady_mask().sum())

    def memory_figures(self) -> MemoryFigures:
        """The mode's memory figures (``MemoryFigures``): the untraced phase's peak resident
        memory from the capture, and the allocator's figures over the steady traced steps."""
        nan = float("nan")
        mem = self.timing.memory if self.timing is not None else None
        rss = mem.get("peak_rss_bytes") if isinstance(mem, dict) else None
        basis = mem.get("basis") if isinstance(mem, dict) and rss is not None else None
        table = self.table("memory")
        steady = self.steady_mask()
        if table.empty or len(table) != len(steady) or not steady.any():
            return MemoryFigures(float(rss) if rss is not None else nan, basis, nan, nan, nan)

        def steady_of(col: str) -> np.ndarray:
            v = np.asarray(table[col], dtype=float)[steady]
            return v[np.isfinite(v)]

        allocs, req, peak = (steady_of(c) for c in ("allocations", "requested_bytes",
                                                    "peak_in_use_bytes"))
        return MemoryFigures(
            peak_rss_bytes=float(rss) if rss is not None else nan, rss_basis=basis,
            allocations=float(median(allocs)) if len(allocs) else nan,
            requested_bytes=float(median(req)) if len(req) else nan,
            peak_in_use_bytes=float(peak.max()) if len(peak) else nan)

    def _steady_wall_ms(self) -> np.ndarray:
        steps = self.table("steps")
        if steps.empty:
            return np.array([])
        return steps["wall_ms"].astype(float)[self.steady_mask()]

    @property
    def median_ms(self) -> float:
        """Median ms/step: untraced timing when captured, else the traced steps' wall time."""
        if self.timing is not None and len(self.timing.steps_s):
            return self.timing.median_ms
        wall = self._steady_wall_ms()
        return float(median(wall)) if len(wall) else float("nan")

    @property
    def step_samples_ms(self) -> np.ndarray:
        """The per-step samples the median and its confidence interval are computed from."""
        if self.timing is not None and len(self.timing.steps_s):
            return np.asarray(self.timing.steps_s, dtype=float) * 1e3
        return self._steady_wall_ms()

    @property
    def steady_steps(self) -> pd.DataFrame:
        """The public read of the steady rows of ``steps`` (a new DataFrame, the rows keeping
        their index); the package reads ``table("steps").take(steady_mask())``."""
        steps = self.steps
        return steps if steps.empty else steps[self.steady_mask()]

    def _boot_inputs(self) -> tuple[np.ndarray, tuple[int, ...] | None]:
        """The samples ``boot_medians`` resamples and their strata (the interleaved rounds' sizes,
        when the samples are those rounds' steps in order)."""
        samples = self.step_samples_ms
        rounds = self.timing.rounds if self.timing is not None and len(self.timing.steps_s) else None
        strata = tuple(len(r) for r in rounds) if rounds else None
        return samples, (strata if strata and sum(strata) == len(samples) else None)

    @property
    def boot_digest(self) -> str:
        """A digest of what ``boot_medians`` resamples (``resample.samples_digest``): the analysis
        cache keeps the medians with it and gives them back only to the same samples."""
        return samples_digest(*self._boot_inputs())

    @property
    def known_boot_medians(self) -> np.ndarray | None:
        """``boot_medians`` where they were already resampled or given, else None (nothing is
        resampled to answer): what the analysis cache and ``replace`` carry on."""
        return self.__dict__.get("boot_medians", self.boot)

    @cached_property
    def boot_medians(self) -> np.ndarray:
        """Bootstrap medians of ``step_samples_ms`` (fixed seed), computed once per mode: its
        interval and every ratio it takes part in reuse them. Resampled within each interleaved
        round when the samples are the rounds' steps in order; ``boot`` when it was given."""
        if self.boot is not None:
            return np.asarray(self.boot, dtype=float)
        samples, strata = self._boot_inputs()
        return bootstrap_medians(samples, strata=strata)

    @property
    def traced_ms(self) -> float:
        """Median wall ms of the host-traced steady steps (nan without a breakdown)."""
        b = self.table("breakdown")
        if b.empty or b.index is None or "total" not in b.index:
            return float("nan")
        return float(b.row("total")["median"])

    def traced_category_medians(self) -> dict[str, float]:
        """Median ms/step per category over the steady traced steps, as traced (the profiler's
        cost in them), in CATEGORIES order (NaN: none)."""
        b = self.table("breakdown")
        if b.empty:
            return {c: float("nan") for c in CATEGORIES}
        return {c: float(b.row(c)["median"]) for c in CATEGORIES}

    def category_medians(self) -> dict[str, float]:
        """The typical step's category medians, corrected as the means are: each traced median
        times its category's drawn / traced mean (``correction``), so no category of the typical
        step holds the profiler's cost the means had taken out. Medians do not add up."""
        med = self.traced_category_medians()
        c = self.correction
        if c is None or c.kind is CorrectionKind.TRACED:
            return med
        return {k: (v * c.user[k] / c.traced[k] if c.traced[k] > 0 else 0.0 * v)
                for k, v in med.items()}

    def alone(self) -> Run:
        """This mode as a run of its own (what a notebook shows for it), analysed by this
        mode's ``analyzer``."""
        return Run(path=None, name=self.name, modes={self.name: self}, source="traces",
                   analyzer=self.analyzer, display=self.display)

    def _repr_html_(self) -> str | None:
        """Jupyter's rich display: this mode's HTML report, as a run of its own."""
        return self.alone()._repr_html_()

    def show(self, file: Any = None) -> None:
        """Print this mode's text summary (what ``traceinsight analyze`` prints), for a REPL."""
        self.alone().show(file)

    @property
    def traced_mean_ms(self) -> float:
        """Mean wall ms of the host-traced steady steps: the sum of ``traced_category_means``
        (what the traced steps cost in total, per step, the profiler's cost included; nan
        without a breakdown)."""
        b = self.table("breakdown")
        if b.empty or b.index is None or "total" not in b.index or "mean" not in b:
            return float("nan")
        return float(b.row("total")["mean"])

    def traced_category_means(self) -> dict[str, float]:
        """Mean ms/step per category over the steady traced steps, as traced, in CATEGORIES order:
        what each category cost the traced steps in total divided by the steps (the profiler's
        cost included), adding up to ``traced_mean_ms``. NaN: none."""
        b = self.table("breakdown")
        if b.empty or "mean" not in b:
            return {c: float("nan") for c in CATEGORIES}
        return {c: float(b.row(c)["mean"]) for c in CATEGORIES}

    def category_means(self) -> dict[str, float]:
        """The user's untraced step, split into categories (ms/step, CATEGORIES order): the
        traced means with the profiler's cost taken out (``correction``: how, and by how much),
        adding up to the headline median (``median_ms``). Means, so a stall in 3 of 30 steps
        counts here where a median ignores it. Without an untraced timing (foreign traces) or a
        correction (a mode made by hand), the traced means. NaN: not recorded."""
        c = self.correction
        return dict(c.user) if c is not None else self.traced_category_means()

    @property
    def breakdown_ms(self) -> float:
        """What ``category_means`` add up to: the untraced median where the mode has one (the
        traced mean step otherwise)."""
        vals = [v for v in self.category_means().values() if np.isfinite(v)]
        return float(sum(vals)) if vals else float("nan")

    def category_shares(self) -> dict[str, float]:
        """Each category's share of the user's step (``category_means`` over ``breakdown_ms``)."""
        total = self.breakdown_ms
        return {c: (v / total if np.isfinite(v) and np.isfinite(total) and total > 0 else float("nan"))
                for c, v in self.category_means().items()}


@dataclass(frozen=True)
class RunFigures:
    """The figures of a whole run, computed once when the run is made and never changed: what
    needs more than one mode. Every renderer reads them from here (``Run.table("summary")``,
    ``Run.findings``, ``Run.compare``, ``Run.host_groups()``, ``Run.program_groups``); the analysis
    above the model (``traceinsight.derive``) computes them.

    summary:        one row per mode (``stats.summarize``): median, interval, ratio to the fastest.
    findings:       what to change, ranked (``findings.find``): a tuple of frozen ``Finding``s.
    comparisons:    (a, b) -> ``compare.Comparison`` for every pair a page of the run shows (each
                    mode against the fastest, the pairs the findings compare), both ways round.
    host_groups:    the hosts of each multi-host profile session compared
                    (``analysis.hosts.HostGroup``); () when no session has two hosts.
    program_groups: the ok modes grouped by the program they run (``compare.program_groups``).
    concentrated:   mode -> category -> its cost concentrated in a few steps
                    (``stats.concentrated_costs``: stalls, periodic work), for every mode.
    disagreements:  the compared pairs whose traced steps order the modes the other way round
                    from their untraced medians (``findings.traced_disagreements``).
    findings_error: why there are no findings when a rule failed on this run (``"ValueError:
                    ..."``; every page says it), else None. The other figures stand.
    """

    summary: Columns
    findings: tuple[Finding, ...]
    comparisons: Mapping[tuple[str, str], Comparison]
    host_groups: tuple[HostGroup, ...]
    program_groups: tuple[tuple[str, ...], ...]
    concentrated: Mapping[str, Mapping[str, dict]]
    disagreements: tuple[Comparison, ...]
    findings_error: str | None = None
    # the factors that separate the modes, each measured from a pair that differs in it alone
    # (``factors.factor_table``); None with ``factors_error`` when it failed on this run
    factors: FactorTable | None = None
    factors_error: str | None = None
    # what the pictures and tables show beside the tables themselves, computed here so that a
    # renderer only formats: each ok mode's steps marked (first, stalls against the steady
    # median, retraces: ``analysis.step_marks.StepMarks``) and the self time of one call of each
    # op of its ops table, in the table's order (``analysis.results.ms_per_call``; NaN: no calls)
    step_marks: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # each mode's step times for the viewer's step chart, with their outliers and the figures the
    # chart scales by (``analysis.step_marks.StepSeries``: timed steps, then traced ones)
    step_series: Mapping[str, tuple[Any, ...]] = field(default_factory=lambda: MappingProxyType({}))
    op_ms_per_call: Mapping[str, tuple[float, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    # each mode's Python hotspots in the order the reports list them (the user's frames first:
    # ``analysis.results.hotspots_listed_order``)
    hotspots_listed: Mapping[str, Columns] = field(default_factory=lambda: MappingProxyType({}))
    # the cross-mode layer view: each layer in every mode with a layers table, its ratio to the
    # mode it is compared with and the ratio's interval (``layer_matrix.layer_matrix``)
    layer_matrix: Columns = field(default_factory=Columns)

    def comparison(self, a: str, b: str) -> Comparison | None:
        return self.comparisons.get((a, b))

    def concentrated_costs(self, mode: str) -> Mapping[str, dict]:
        return self.concentrated[mode]

    def traced_disagreements(self) -> tuple[Comparison, ...]:
        return self.disagreements


class Analyzer(Protocol):
    """What computes a run's figures, and shows it: ``traceinsight.derive.ANALYZER``, the one
    implementation, given to a run (and its modes) by ``derive.complete``. It keeps nothing: the
    figures it computes live on the run (``Run.figures``). The model only calls it, so it imports
    nothing above itself. ``figures`` reads the run's modes only (the run being made holds no
    figures until it returns: ``derive.figures_of`` is one pass over them)."""

    def figures(self, run: Run, hosts_compared: tuple | None) -> RunFigures: ...
    def compare(self, run: Run, a: str, b: str) -> Comparison: ...
    def corrected(self, mode: ModeResult) -> ModeResult: ...


class Display(Protocol):
    """How a run shows itself in a notebook (``_repr_html_``) and a plain REPL (``show()``):
    ``traceinsight.report.notebook.NOTEBOOK``, a renderer, given to the run by whoever makes it
    for a person to look at (``traceinsight.load``, ``traceinsight.testing``): the model and the
    analysis never import the renderers."""

    def html(self, run: Run) -> str: ...
    def show(self, run: Run, file: Any) -> None: ...


@dataclass(frozen=True, repr=False)   # its own __repr__ below
class Run:
    """A captured run (a run folder) or a set of foreign traces, analysed.

    Data: the modes and, when the run was made with an ``analyzer`` (every loader and
    ``traceinsight.testing`` make it so, through ``traceinsight.derive.complete``), its
    ``figures`` (``RunFigures``), computed once, when the run is made. As a mode's tables, the
    run's are DataFrames for the Python API (``summary()``, ``breakdown()``, ``ops()``,
    ``retraces()``, ``hotspots()``: new ones on every call) and ``Columns`` inside the package
    (``table("summary")``). A Run made without an analyzer holds its modes and the figures of each
    mode, and raises TypeError when asked for the whole run's. A copy (``dataclasses.replace``)
    computes its own figures from its own modes."""

    path: Path | None
    name: str
    modes: dict[str, ModeResult]
    manifest: dict[str, Any] = field(default_factory=dict)   # run.json as written by capture
    source: str = "run"                 # "run" | "traces"
    # the hosts' comparison when the loader already made it (``analysis.load``: it notes the
    # straggler on each host's mode); not kept as a field, so a copy (``dataclasses.replace``)
    # computes its own from its modes. None: the analysis compares the hosts
    hosts_compared: InitVar[tuple | None] = None
    analyzer: Analyzer | None = field(default=None, repr=False, compare=False)
    display: Display | None = field(default=None, repr=False, compare=False)
    # the whole run's figures: made here, from the modes, by the analyzer (None without one)
    figures: RunFigures | None = field(default=None, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        """A few lines: the run, each mode's median against the fastest (or why it did not run),
        and the top finding; ``print(run.summary())`` and ``run.findings`` hold the rest."""
        where = f" from {self.path}" if self.path is not None else ""
        lines = [f"Run({self.name!r}, {len(self.modes)} mode{'s' * (len(self.modes) != 1)}{where})"]
        # the summary's figures, formatted as every page shows them (a run made without an
        # analyzer has its modes' medians only)
        rows = {r["mode"]: r for r in self.figures.summary.records()} if self.figures else {}
        width = max((len(n) for n in self.modes), default=0)
        for name, m in self.modes.items():
            if not m.ok:
                lines.append(f"  {name:<{width}}  {m.status}: {(m.error or '')[:100]}")
                continue
            r = rows.get(name, {})
            vs = ("fastest" if r.get("fastest") else
                  f"{fmt.ratio_ci(r['ratio'], r.get('ratio_lo'), r.get('ratio_hi'))} the fastest"
                  if fmt.is_num(r.get("ratio")) else "")
            lines.append(f"  {name:<{width}}  {fmt.ms(m.median_ms)} ms/step  {vs}".rstrip())
        if self.figures is not None and self.figures.findings:
            lines.append(f"  top finding: {self.figures.findings[0].title}")
        return "\n".join(lines)

    def __post_init__(self, hosts_compared: tuple | None) -> None:
        if self.analyzer is not None:
            # each mode's user step first (its correction, computed once and kept on the mode):
            # the figures compare the modes by it; a copy's modes made anew get theirs here too
            fixed = {n: self.analyzer.corrected(m)
                     for n, m in self.modes.items() if m.ok and m.correction is None}
            if fixed:
                object.__setattr__(self, "modes", {n: fixed.get(n, m) for n, m in self.modes.items()})
            object.__setattr__(self, "figures", self.analyzer.figures(self, hosts_compared))

    def _figures(self) -> RunFigures:
        if self.figures is None:
            raise TypeError(f"run {self.name!r} was made without an analyzer: its summary, "
                            "comparisons and findings need one (traceinsight.derive.complete)")
        return self.figures

    @property
    def environment(self) -> dict[str, Any]:
        return self.manifest.get("environment", {})

    @property
    def command(self) -> str | None:
        return self.manifest.get("command")

    def ok_modes(self) -> list[ModeResult]:
        return [m for m in self.modes.values() if m.ok]

    def breakdown(self) -> pd.DataFrame:
        """Mode x category median ms/step (each mode's ``category_medians``)."""
        import pandas as pd

        rows = {m.name: m.category_medians() for m in self.ok_modes()}
        return pd.DataFrame.from_dict(rows, orient="index", dtype=float).reindex(
            columns=list(CATEGORIES)) if rows else pd.DataFrame(columns=list(CATEGORIES))

    def summary(self) -> pd.DataFrame:
        """One row per mode: the figures of the overview (see traceinsight.stats.summarize); a
        new DataFrame on every call (the public read of ``table("summary")``)."""
        return self.table("summary").to_pandas()

    def table(self, name: str) -> Columns:
        """The package's one read of a run's table, as ``Columns`` (as ``ModeResult.table``):
        ``"summary"``, one of the run's figures. The Python API reads ``summary()`` (a
        DataFrame)."""
        if name != "summary":
            raise KeyError(f"no run table {name!r} (tables: summary; a mode's: ModeResult.table)")
        return self._figures().summary

    @cached_property      # read by every rule and page: the modes' medians are sorted once
    def fastest(self) -> str | None:
        """The ok mode with the lowest median ms/step (ties: the first in the run's order); every
        screen and document reads it from here."""
        best, best_ms = None, float("inf")
        for m in self.ok_modes():
            ms = m.median_ms
            if np.isfinite(ms) and ms < best_ms:
                best, best_ms = m.name, ms
        return best

    def by_speed(self) -> list[ModeResult]:
        """Ok modes with a median, fastest first (ties in the run's order)."""
        ok = [m for m in self.ok_modes() if np.isfinite(m.median_ms)]
        return sorted(ok, key=lambda m: m.median_ms)   # sorted() is stable: ties keep run order

    def compare(self, a: str, b: str) -> Comparison:
        """Mode a against mode b: the run's own comparison where a page of it shows the pair
        (``figures.comparisons``: each mode against the fastest, the findings' pairs), else
        computed for this call by the analyzer (the compare screen and the diff pick any pair).
        b against a is exactly the reciprocal of a against b (``Comparison.flipped``)."""
        c = self._figures().comparison(a, b)
        if c is not None:
            return c
        assert self.analyzer is not None      # a run with figures has the analyzer that made them
        return self.analyzer.compare(self, a, b)

    def host_groups(self) -> tuple[HostGroup, ...]:
        """The hosts of each multi-host profile session compared: per-host step time, the
        straggler, the spread, per-step waits (``traceinsight.analysis.hosts.HostGroup``); ()
        when no session has two hosts."""
        return self._figures().host_groups

    @property
    def program_groups(self) -> tuple[tuple[str, ...], ...]:
        """Ok modes grouped by the program they run (``compare.program_groups``): foreign traces of
        different programs in one folder are not compared as modes."""
        return self._figures().program_groups

    def same_program(self, a: str, b: str) -> bool:
        return any(a in g and b in g for g in self.program_groups)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What to change, ranked (``traceinsight.findings.find``): one of the run's figures."""
        return self._figures().findings

    @property
    def factors(self) -> FactorTable | None:
        """The factor table (``traceinsight.factors``): each factor's effect from the pair of
        modes that differs in it alone, the multi-factor gaps split, the interactions; one of the
        run's figures (None when it failed on this run: ``figures.factors_error``)."""
        return self._figures().factors

    def concentrated_costs(self, mode: str) -> Mapping[str, dict]:
        """A mode's costs concentrated in a few steps, per category (``stats.concentrated_costs``:
        the steps they hit, their share): one of the run's figures."""
        return self._figures().concentrated_costs(mode)

    def traced_disagreements(self) -> tuple[Comparison, ...]:
        """The compared pairs whose traced steps contradict their untraced medians, slower
        against faster (``findings.traced_disagreements``): one of the run's figures."""
        return self._figures().traced_disagreements()

    def ops(self) -> pd.DataFrame:
        return _concat_modes(self, "ops")

    @property
    def layer_matrix(self) -> Columns:
        """The cross-mode layer view (``RunFigures.layer_matrix``), as the package reads it."""
        return self._figures().layer_matrix

    def layers(self) -> pd.DataFrame:
        """The same layer in every mode that has a layers table: one row per (layer, mode) with
        its ms per step, the mode it is compared with (``versus``: the fastest of its program
        doing the same work), the ratio of the layer's per-step medians and its 95 % interval
        (``traceinsight.layer_matrix``); a new DataFrame on every call. Each mode's own table is
        ``run.modes[name].layers``."""
        return self.layer_matrix.to_pandas()

    def retraces(self) -> pd.DataFrame:
        return _concat_modes(self, "retraces")

    def hotspots(self) -> pd.DataFrame:
        return _concat_modes(self, "hotspots")

    def _repr_html_(self) -> str | None:
        """Jupyter's rich display: the HTML report (``traceinsight.report.notebook``); None (the
        plain repr) for a run made without a display."""
        if self.display is None:
            return None
        self._figures()      # a run without figures says how to get them
        return self.display.html(self)

    def show(self, file: Any = None) -> None:
        """Print the text summary (what ``traceinsight analyze`` prints), for a plain REPL."""
        self._figures()
        if self.display is None:
            raise TypeError(f"run {self.name!r} was made without a display: traceinsight.load "
                            "gives one (or print traceinsight.report.terminal.render(run, ...))")
        self.display.show(self, file)


def _concat_modes(run: Run, attr: str) -> pd.DataFrame:
    import pandas as pd

    frames = [getattr(m, attr).assign(mode=m.name) for m in run.ok_modes()
              if not m.table(attr).empty]
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    return df[["mode"] + [c for c in df.columns if c != "mode"]]
