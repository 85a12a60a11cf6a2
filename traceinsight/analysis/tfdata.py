"""tf.data by stage: the input pipeline's ``Iterator::*`` events, per stage.

tf.data records one event per ``GetNext`` of each iterator in the pipeline, named by its path from
the root (``Iterator::Root::Prefetch::MapAndBatch::TensorSlice``); stages run on the thread that
asks for the element (the step's thread for the root and a synchronous stage, tf.data's own threads
behind a prefetch or a parallel map). A stage's self time is its events' time less the stages
nested in them on the same thread, as XProf's input_pipeline_analyzer counts it, so a stage that
waits on a buffer another thread fills (Prefetch) holds that wait, and the stage that fills it
holds the work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from traceinsight.analysis.names import ITERATOR, ITERATOR_ROOT, TF_DATA_AUTOTUNE, TF_DATA_PARALLELISM
from traceinsight.columns import Columns
from traceinsight.resample import isin

STAGE_COLUMNS = ["stage", "kind", "count", "total_ms", "self_ms", "share", "calls_per_step",
                 "ms_per_step", "parallel_calls", "autotuned"]
PREFIX = ITERATOR


def stage_table_of(table, steps: Columns | None = None) -> Columns:
    """Per stage (``Iterator::*`` event name): kind (the last part of the name: Prefetch,
    ParallelMapV2, BatchV2, TensorSlice...), then over the whole trace (as XProf's
    input_pipeline_analyzer counts them) count, total_ms, self_ms and share (of all stages' self
    time), and per steady step calls_per_step and ms_per_step (self time of the events that start
    inside the steady steps of ``steps``, any thread, over their number; NaN without steady
    steps); then how the stage ran, from its events' stats: parallel_calls (the largest its events
    recorded: its ``num_parallel_calls``, or autotune's choice; 0 where none was recorded, as for
    a stage that has none) and autotuned (whether any of its events says it is autotuned).
    Largest self time first."""
    ids = [i for i, n in enumerate(table.names) if n.startswith(PREFIX)]
    if not ids:
        return Columns.no_rows(STAGE_COLUMNS)
    sel = np.flatnonzero(np.isin(table.name, np.asarray(ids, dtype=table.name.dtype)))
    own_ev = np.zeros(len(sel))          # each selected event's self time (ms)
    stack: list[tuple[int, int, int]] = []   # (end, line, index in sel) of the open stage events
    for k, i in enumerate(sel):   # in (line, start, -end) order: a parent comes before what it holds
        line, s, e = int(table.line[i]), int(table.start[i]), int(table.end[i])
        while stack and (stack[-1][1] != line or stack[-1][0] <= s):
            stack.pop()
        d = (e - s) / 1e9
        own_ev[k] += d
        if stack:   # nested in a stage on the same thread: not the parent's own time
            own_ev[stack[-1][2]] -= min(d, (stack[-1][0] - s) / 1e9)
        stack.append((e, line, k))
    names_of = [table.names[int(n)] for n in table.name[sel]]
    par = table.stat_int_at(TF_DATA_PARALLELISM, sel, default=0)
    tuned = np.zeros(len(sel), dtype=bool)
    if TF_DATA_AUTOTUNE in table.stat_str:
        idx, val = table.stat_str[TF_DATA_AUTOTUNE]
        on = np.asarray(idx)[np.asarray([str(v).lower() == "true" for v in val], dtype=bool)]
        tuned = isin(sel, on)
    dur = (table.end[sel] - table.start[sel]) / 1e9
    in_steady, n_steady = _in_steady_steps(table.start[sel], steps)
    total: dict[str, float] = {}
    own: dict[str, float] = {}
    count: dict[str, int] = {}
    step_own: dict[str, float] = {}
    step_calls: dict[str, int] = {}
    parallelism: dict[str, int] = {}
    autotune: dict[str, bool] = {}
    for k, name in enumerate(names_of):
        parallelism[name] = max(parallelism.get(name, 0), int(par[k]))
        autotune[name] = autotune.get(name, False) or bool(tuned[k])
        total[name] = total.get(name, 0.0) + float(dur[k])
        own[name] = own.get(name, 0.0) + float(own_ev[k])
        count[name] = count.get(name, 0) + 1
        if in_steady[k]:
            step_own[name] = step_own.get(name, 0.0) + float(own_ev[k])
            step_calls[name] = step_calls.get(name, 0) + 1
    names = sorted(total, key=lambda n: (-own[n], n))
    all_own = sum(max(v, 0.0) for v in own.values())
    per = (lambda v: v / n_steady) if n_steady else (lambda v: np.nan)
    return Columns({"stage": np.asarray(names, dtype=object),
                    "kind": np.asarray([n.rsplit("::", 1)[-1] for n in names], dtype=object),
                    "count": np.asarray([count[n] for n in names], dtype=np.int64),
                    "total_ms": np.asarray([total[n] for n in names], dtype=float),
                    "self_ms": np.asarray([max(own[n], 0.0) for n in names], dtype=float),
                    "share": np.asarray([max(own[n], 0.0) / all_own if all_own else np.nan
                                         for n in names], dtype=float),
                    "calls_per_step": np.asarray([per(step_calls.get(n, 0)) for n in names],
                                                 dtype=float),
                    "ms_per_step": np.asarray([per(max(step_own.get(n, 0.0), 0.0))
                                               for n in names], dtype=float),
                    "parallel_calls": np.asarray([parallelism[n] for n in names], dtype=np.int64),
                    "autotuned": np.asarray([autotune[n] for n in names], dtype=bool)})


def _in_steady_steps(starts: np.ndarray, steps: Columns | None) -> tuple[np.ndarray, int]:
    """Per event start (ps): whether it falls inside a steady step's [start, end) (steps are
    disjoint in time), and the number of steady steps."""
    if steps is None or steps.empty:
        return np.zeros(len(starts), dtype=bool), 0
    from traceinsight.model import steady_mask
    mask = steady_mask(steps)
    lo = np.asarray(steps["start_ps"])[mask]
    hi = np.asarray(steps["end_ps"])[mask]
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    j = np.searchsorted(lo, starts, side="right") - 1
    ok = j >= 0
    inside = np.zeros(len(starts), dtype=bool)
    inside[ok] = starts[ok] < hi[j[ok]]
    return inside, int(mask.sum())


def stage_table(paths) -> Columns:
    """``stage_table_of`` the events of these trace files."""
    from traceinsight.analysis.events import load_files
    return stage_table_of(load_files([Path(p) for p in paths]))


def costliest_work_stage(stages: Columns) -> dict | None:
    """The stage whose own work costs most, leaving out the root and the stages that only wait on
    another thread's buffer (Prefetch: its self time is the step waiting): the one to fix."""
    if stages.empty:
        return None
    best = None
    for i, (stage, kind) in enumerate(zip(stages["stage"], stages["kind"])):
        if stage == ITERATOR_ROOT or kind.startswith("Prefetch"):
            continue
        if best is None or stages["self_ms"][i] > stages["self_ms"][best]:
            best = i
    if best is None:
        return None
    return {k: stages[k][best].item() if hasattr(stages[k][best], "item") else stages[k][best]
            for k in STAGE_COLUMNS}


# What to change for the costliest stage, by its kind (the last part of the stage's name), as the
# stage is configured: a map that already runs in parallel is told what its parallelism cannot fix.
_PARALLEL_MAPS = ("ParallelMap", "MapAndBatch", "ParallelInterleave", "ParallelBatch")
_STAGE_FIX = (
    (("ParallelMap", "MapAndBatch"),
     "# the map already runs in parallel (num_parallel_calls): make its function cheaper, e.g.\n"
     "ds = ds.batch(32).map(parse_batch, num_parallel_calls=tf.data.AUTOTUNE)  # vectorized map\n"
     "ds = ds.cache()   # before the map's random parts, when it fits in memory: it runs once"),
    (("Map",),
     "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)   # the map runs in parallel"),
    (("ParallelInterleave",),
     "# the interleave already runs in parallel: read fewer, larger files, or .cache()"),
    (("TFRecord", "TextLine", "FixedLengthRecord", "FlatMap", "Interleave"),
     "ds = files.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)"),
    (("Generator", "FromGenerator", "PyFunc"),
     "# Python in the pipeline runs under the GIL: move it to tf ops, or precompute and .cache()"),
    (("Batch", "BatchV2", "PaddedBatch", "Shuffle", "TensorSlice", "FromTensor", "Range", "Zip"),
     "ds = ds.cache()   # when it fits in memory: the stages before it run once"),
)
PREFETCH_FIX = "ds = ds.prefetch(tf.data.AUTOTUNE)   # overlap the pipeline with the step"
# a map (fused with its batch, or a parallel map given one call) that runs one call at a time
SERIAL_MAP_FIX = ("# the map runs one call at a time (no num_parallel_calls): run it in parallel\n"
                  "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32)")


def stage_fix(kind: str, parallel: bool | None = None) -> str | None:
    """The fix for the costliest stage of this kind, as configured (a parallel map is not told
    to run in parallel; ``parallel``: ``is_parallel``'s answer for the stage, None: by its kind)."""
    if parallel is False and kind.startswith(("ParallelMap", "MapAndBatch")):
        return SERIAL_MAP_FIX
    for kinds, fix in _STAGE_FIX:
        if any(kind.startswith(k) for k in kinds):
            return fix
    return None


def is_parallel(kind: str, parallelism: int = 0, autotune: bool = False) -> bool:
    """The stage runs its work on several of tf.data's threads at once: as its events recorded it
    (a parallelism above 1, or an autotuned one), else, where they recorded none, as its kind
    implies (a num_parallel_calls stage). A map that ``map_and_batch_fusion`` fused into a
    ``MapAndBatch`` from a plain ``ds.map(f).batch(n)`` records parallelism 1: serial."""
    if parallelism > 0:
        return parallelism > 1 or autotune
    return kind.startswith(_PARALLEL_MAPS)


def has_prefetch(stages: Columns) -> bool:
    """The pipeline prefetches (a Prefetch stage anywhere in it)."""
    return not stages.empty and any(str(k).startswith("Prefetch") for k in stages["kind"])
