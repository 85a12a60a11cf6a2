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
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from traceinsight.columns import Columns, fields_equal, fields_repr
from traceinsight.finding import Finding
from traceinsight.modekind import ModeKind, mode_kind
from traceinsight.resample import bootstrap_medians, samples_digest
from traceinsight.stepsource import StepSource

if TYPE_CHECKING:
    import pandas as pd

    from traceinsight.analysis.mode import TraceAnalysis
    from traceinsight.compare import Comparison

CATEGORIES: tuple[str, ...] = ("op", "dispatch", "tracing", "compile", "input", "python", "other")

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
    # loadavg_end, other_cpu_busy (share of all CPUs other processes used), own_cpu_busy}
    load: dict | None = None

    @property
    def round_medians_ms(self) -> np.ndarray | None:
        """Median ms/step of each round with steps (None without rounds)."""
        if not self.rounds:
            return None
        meds = [float(np.median(r)) * 1e3 for r in self.rounds if len(r)]
        return np.asarray(meds, dtype=float) if meds else None

    @property
    def median_ms(self) -> float:
        return float(np.median(self.steps_s) * 1e3) if len(self.steps_s) else float("nan")

    @property
    def distortion(self) -> float | None:
        """Traced median / untraced median - 1 (0.10 = the profiler made steps 10 % slower)."""
        if self.traced_steps_s is None or not len(self.traced_steps_s) or not len(self.steps_s):
            return None
        return float(np.median(self.traced_steps_s) / np.median(self.steps_s) - 1.0)


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
                           "device_steps", "devices", "kernels", "stages")


class Table:
    """A table field of a frozen dataclass (``ModeResult``'s, ``compare.Comparison``'s): stored in
    one form, ``Columns``, read publicly as a DataFrame.

    Set it to ``Columns`` (what the analysis computes) or to a DataFrame (tables made by hand):
    a DataFrame is converted once, here, and its data copied, so the object never shares a table
    with the caller; None (left out) is an empty table, with the columns ``names`` when given.
    Read (``mode.steps``), it is a new DataFrame built from the columns on every read (pandas is
    imported then, not before): the reader may change it, the object stays as it was. Code
    inside the package reads the columns, ``ModeResult.table(name)``."""

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return None      # the dataclass default: no table
        return obj.__dict__[self.name].to_pandas()

    def __set__(self, obj: Any, value: Any) -> None:
        if value is None:
            value = Columns.no_rows(self.names) if self.names else Columns()
        elif not isinstance(value, Columns):
            value = Columns.from_pandas(value)      # a DataFrame (only pandas code makes one)
        obj.__dict__[self.name] = value


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


@dataclass(frozen=True, eq=False)
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
                  inclusive_ms (per step, scaled to the host pass's python time when both passes
                  exist), calls_per_step.
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
                  starting in steady steps, per steady step); see ``analysis.tfdata``. Empty
                  without tf.data.

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
    __repr__ = fields_repr     # tables shown as stored: no DataFrame built to print a mode

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
    # what the mode is (base, input, flavour, backend; ``traceinsight.modekind``): the loader sets
    # it from run.json; left out (a foreign trace, an old run folder, a mode made by hand) it is
    # derived from the name, here, once
    kind: ModeKind = None  # type: ignore[assignment]
    # what analyses and shows this mode when it is displayed alone (``alone``): the same
    # ``Run.analyzer`` and ``Run.display`` as the run it was loaded in
    # (``traceinsight.derive.complete`` sets them)
    analyzer: Analyzer | None = field(default=None, repr=False, compare=False)
    display: Display | None = field(default=None, repr=False, compare=False)
    # the per-event data of one capture pass (event table, attribution, steps) where the loader
    # was asked to keep it (``traceinsight.load(path, keep_trace={mode: pass})``: what the
    # Chrome-trace export draws); never cached, never sent between processes. None: not kept
    trace: TraceAnalysis | None = field(default=None, repr=False, compare=False)
    # bootstrap medians of ``step_samples_ms`` resampled elsewhere from these very samples (by the
    # worker process that analysed the mode, kept by the analysis cache with their digest, or
    # carried over by ``replace``); None: resampled here when first read (``boot_medians``)
    boot: np.ndarray | None = field(default=None, repr=False, compare=False)

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
        kw.update(changes)
        return ModeResult(**kw)

    def steady_mask(self) -> np.ndarray:
        """Per row of ``steps``: a steady step (neither the first nor cut by the trace's end)."""
        return steady_mask(self.table("steps"))

    @property
    def n_steady(self) -> int:
        return int(self.steady_mask().sum())

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
        return float(np.median(wall)) if len(wall) else float("nan")

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

    def category_medians(self) -> dict[str, float]:
        """Median ms/step per category (steady steps), in CATEGORIES order (NaN: none)."""
        b = self.table("breakdown")
        if b.empty:
            return {c: float("nan") for c in CATEGORIES}
        return {c: float(b.row(c)["median"]) for c in CATEGORIES}

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
        """Mean wall ms of the host-traced steady steps: the sum of ``category_means`` (what the
        traced steps cost in total, per step; nan without a breakdown)."""
        b = self.table("breakdown")
        if b.empty or b.index is None or "total" not in b.index or "mean" not in b:
            return float("nan")
        return float(b.row("total")["mean"])

    def category_means(self) -> dict[str, float]:
        """Mean ms/step per category over the steady traced steps, in CATEGORIES order: what each
        category costs in total divided by the steps, so they add up to ``traced_mean_ms`` (a
        stall in 3 of 30 steps counts here, where the median ignores it). NaN: none."""
        b = self.table("breakdown")
        if b.empty or "mean" not in b:
            return {c: float("nan") for c in CATEGORIES}
        return {c: float(b.row(c)["mean"]) for c in CATEGORIES}

    def category_shares(self) -> dict[str, float]:
        """Each category's share of the traced steps' total time (``category_means`` over
        ``traced_mean_ms``)."""
        total = self.traced_mean_ms
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
    host_groups: tuple
    program_groups: tuple[tuple[str, ...], ...]
    concentrated: Mapping[str, Mapping[str, dict]]
    disagreements: tuple[Comparison, ...]
    findings_error: str | None = None

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
    nothing above itself."""

    def figures(self, run: Run, hosts_compared: tuple | None) -> RunFigures: ...
    def compare(self, run: Run, a: str, b: str) -> Comparison: ...


class Display(Protocol):
    """How a run shows itself in a notebook (``_repr_html_``) and a plain REPL (``show()``):
    ``traceinsight.report.notebook.NOTEBOOK``, a renderer, given to the run by whoever makes it
    for a person to look at (``traceinsight.load``, ``traceinsight.testing``): the model and the
    analysis never import the renderers."""

    def html(self, run: Run) -> str: ...
    def show(self, run: Run, file: Any) -> None: ...


@dataclass(frozen=True)
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

    def __post_init__(self, hosts_compared: tuple | None) -> None:
        if self.analyzer is not None:
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

    def host_groups(self) -> tuple:
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
