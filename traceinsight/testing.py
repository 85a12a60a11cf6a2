"""Hand-made runs for tests of renderers (TUI, reports, findings), with numbers chosen by hand.

Renderers should also be tested on real committed runs (tests/data/runs, loaded with
``traceinsight.load``); these fixtures give exact, hand-computable figures and edge cases.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from traceinsight.analysis.hotspots import HOTSPOT_COLUMNS
from traceinsight.derive import complete
from traceinsight.model import CATEGORIES, ModeResult, Run, Timing
from traceinsight.stepsource import StepSource


def _steps(per_cat: dict[str, float], n: int, first_extra: dict[str, float] | None = None,
           jitter: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = []
    t = 0
    for i in range(n):
        cats = {c: per_cat.get(c, 0.0) * (1 + jitter * rng.standard_normal()) for c in CATEGORIES}
        if i == 0 and first_extra:
            for c, v in first_extra.items():
                cats[c] += v
        wall = sum(cats.values())
        rows.append({"step_num": i, "start_ps": t, "end_ps": t + int(wall * 1e9), "wall_ms": wall,
                     "first": i == 0 and bool(first_extra), **cats})
        t += int(wall * 1e9) + 1_000_000
    return pd.DataFrame(rows)


def _breakdown(steps: pd.DataFrame) -> pd.DataFrame:
    steady = steps[~steps["first"]]
    cols = list(CATEGORIES) + ["wall_ms"]
    b = pd.DataFrame({"median": steady[cols].median(), "p25": steady[cols].quantile(0.25),
                      "p75": steady[cols].quantile(0.75), "mean": steady[cols].mean()})
    return b.rename(index={"wall_ms": "total"})


# the hotspot columns after the first seven, for a hand-made frame that leaves them out: it issues
# no op and is no entry point
_HOTSPOT_DEFAULTS = (0.0, 0.0, 0.0, 0.0, 0.0, False)


def make_mode(name: str, per_cat: dict[str, float], *, ops: Sequence[tuple] = (),
              retraces: Sequence[tuple] = (), hotspots: Sequence[tuple] = (), other: Sequence[tuple] = (),
              first_extra: dict[str, float] | None = None, n_steps: int = 20,
              untraced_ms: float | None = None, traced_ms: float | None = None,
              jitter: float = 0.02, notes: tuple[str, ...] = (), rounds: int = 4) -> ModeResult:
    """ops: (op, type, thread, calls_per_step, self_ms_per_step); retraces: (function, calls,
    traced_calls, tracing_ms, compile_ms, changes[, cause, cause_detail]); hotspots: (function, file, line, group, self_ms,
    inclusive_ms, calls_per_step[, op_calls_per_step, conversions_per_step, slices_per_step,
    input_ms, dispatch_ms, entry]: the ops this frame issues, 0 when left out); other: (name,
    ms_per_step, count). The untraced steps come in ``rounds`` interleaved rounds
    (``interleaved_rounds``), as a capture of several modes times them; ``rounds=1``: one timing
    phase, as a mode timed apart."""
    steps = _steps(per_cat, n_steps, first_extra, jitter)
    # crc32, not hash(): str hashes are salted per process, and snapshot tests need the same figures.
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    base = untraced_ms if untraced_ms is not None else sum(per_cat.values())
    steps_s = base * 1e-3 * (1 + 0.02 * rng.standard_normal(40))
    timing = Timing(steps_s=steps_s,
                    first_step_s=(base + sum((first_extra or {}).values())) * 1e-3,
                    traced_steps_s=None if traced_ms is None else
                    traced_ms * 1e-3 * (1 + 0.02 * rng.standard_normal(10)),
                    **interleaved_rounds(steps_s, rounds))
    ops_df = pd.DataFrame(list(ops), columns=["op", "type", "thread", "calls_per_step",
                                              "self_ms_per_step"])
    if not ops_df.empty:
        ops_df["share"] = ops_df["self_ms_per_step"] / ops_df.groupby("thread")[
            "self_ms_per_step"].transform("sum")
        ops_df = ops_df.sort_values(["self_ms_per_step", "op"], ascending=[False, True], kind="stable",
                                    ignore_index=True)
    first = steps.loc[steps["first"], list(CATEGORIES)]
    return ModeResult(
        name=name, status="ok", timing=timing, steps=steps, breakdown=_breakdown(steps),
        first_step=first.iloc[0] if len(first) else None, ops=ops_df,
        retraces=pd.DataFrame([tuple(r) + ("", "")[len(r) - 6:] for r in retraces],
                              columns=["function", "calls", "traced_calls", "tracing_ms",
                                       "compile_ms", "changes", "cause", "cause_detail"]),
        hotspots=pd.DataFrame([tuple(h) + _HOTSPOT_DEFAULTS[len(h) - 7:] for h in hotspots],
                              columns=HOTSPOT_COLUMNS),
        other=pd.DataFrame(list(other), columns=["name", "ms_per_step", "count"]),
        step_rule="step markers 'train' (step_num)",
        step_source=StepSource.MARKERS_STEP_NUM, notes=notes,
        profile_options={"host": {"requested": {"host_tracer_level": 3, "python_tracer_level": 0},
                                  "recorded": {"host_tracer_level": 3, "python_tracer_level": 0},
                                  "ok": True}})


def interleaved_rounds(steps_s: np.ndarray, rounds: int, other_cpu_busy: float | None = 0.02,
                       start: float = 1_800_000_000.0, offset: float = 0.0) -> dict:
    """``Timing`` fields for steps timed in ``rounds`` rounds of equal size (the last takes the
    rest): ``rounds`` and a load record per round. Round i's window is
    [start + 10 i + offset, start + 10 i + offset + 1]: every mode made with the same ``start`` ran
    its round i within the same ten seconds as the others' (interleaved, A B C A B C ...); another
    ``start`` is another capture. ``rounds=1``: no rounds (a mode timed apart)."""
    steps_s = np.asarray(steps_s, dtype=float)
    if rounds <= 1:
        return {}
    parts = tuple(np.array_split(steps_s, rounds))
    recs = [{"round": i, "t_start_unix": start + 10 * i + offset,
             "t_end_unix": start + 10 * i + offset + 1, "other_cpu_busy": other_cpu_busy,
             "steal": 0.0 if other_cpu_busy is not None else None} for i in range(rounds)]
    return {"rounds": parts, "load": {"rounds": recs}}


def sample_run() -> Run:
    """A Conv1D-like run: eager is Python/dispatch bound, function is op bound, XLA compiles in its
    first step and is a little slower per step, one mode failed."""
    conv = ("functional_1/conv1d_1/convolution", "_MklNativeFusedConv2D")
    modes = {
        "eager": make_mode("eager", {"op": 4.3, "python": 4.0, "dispatch": 1.4, "input": 0.5},
                           ops=[("Conv2D", "Conv2D", "main", 1, 2.5), ("MatMul", "MatMul", "main", 2, 1.2),
                                ("BiasAdd", "BiasAdd", "main", 3, 0.6)],
                           hotspots=[("Layer.__call__", "layer.py", 812, "keras", 0.9, 3.5, 4),
                                     ("step", "model.py", 12, "user", 0.1, 9.0, 1),
                                     ("convert_to_tensor", "tensor_conversion.py", 40, "tensorflow", 0.4, 0.5, 3)],
                           untraced_ms=9.5, traced_ms=10.2),
        "function": make_mode("function", {"op": 3.8, "python": 0.9, "dispatch": 0.2, "input": 0.3},
                              ops=[(conv[0], conv[1], "worker", 1, 2.4),
                                   ("functional_1/dense_1/MatMul", "MatMul", "worker", 2, 1.1)],
                              retraces=[("function", 21, 1, 85.0, 0.0, "")],
                              first_extra={"tracing": 85.0}, untraced_ms=4.6, traced_ms=5.4),
        "xla": make_mode("xla", {"op": 4.9, "python": 0.8, "dispatch": 0.2, "input": 0.3},
                         ops=[("convolution.1", "convolution", "worker", 1, 3.6),
                              ("broadcast_add_fusion", "fusion", "worker", 1, 1.0)],
                         retraces=[("function", 21, 1, 60.0, 140.0, "")],
                         first_extra={"tracing": 60.0, "compile": 140.0}, untraced_ms=6.2,
                         traced_ms=6.9),
        "predict": ModeResult(name="predict", status="failed",
                              error="ValueError: predict() needs a batch dimension"),
    }
    manifest = {"schema_version": 1, "workload": {"path": "samples/conv1d.py", "name": "conv1d",
                                                  "kind": "keras", "sha256": "0" * 64},
                "command": "traceinsight capture samples/conv1d.py",
                "environment": {"tensorflow": "2.21.0", "keras": "3.15.1", "python": "3.11.7",
                                "numpy": "2.4.6", "os": "Linux", "cpu": "Test CPU", "cores": 2,
                                "gpus": [], "env_vars": {"TF_ENABLE_ONEDNN_OPTS": None}}}
    from traceinsight.report.notebook import NOTEBOOK
    return complete(Run(path=None, name="sample-conv1d", modes=modes, manifest=manifest),
                    display=NOTEBOOK)
