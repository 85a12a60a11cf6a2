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

from traceinsight.columns import Columns

STAGE_COLUMNS = ["stage", "kind", "count", "total_ms", "self_ms", "share"]
PREFIX = "Iterator::"


def stage_table_of(table) -> Columns:
    """Per stage (``Iterator::*`` event name), over the whole trace: kind (the last part of the
    name: Prefetch, ParallelMapV2, BatchV2, TensorSlice...), count, total_ms, self_ms and share (of
    all stages' self time), largest self time first."""
    ids = [i for i, n in enumerate(table.names) if n.startswith(PREFIX)]
    if not ids:
        return Columns.no_rows(STAGE_COLUMNS)
    sel = np.flatnonzero(np.isin(table.name, np.asarray(ids, dtype=table.name.dtype)))
    total: dict[str, float] = {}
    own: dict[str, float] = {}
    count: dict[str, int] = {}
    stack: list[tuple[int, int, str]] = []   # (end, line, name) of the open stage events
    for i in sel:   # in (line, start, -end) order: a parent comes before what it holds
        line, s, e = int(table.line[i]), int(table.start[i]), int(table.end[i])
        name = table.names[int(table.name[i])]
        while stack and (stack[-1][1] != line or stack[-1][0] <= s):
            stack.pop()
        d = (e - s) / 1e9
        total[name] = total.get(name, 0.0) + d
        own[name] = own.get(name, 0.0) + d
        count[name] = count.get(name, 0) + 1
        if stack:   # nested in a stage on the same thread: not the parent's own time
            parent = stack[-1][2]
            own[parent] -= min(d, (stack[-1][0] - s) / 1e9)
        stack.append((e, line, name))
    names = sorted(total, key=lambda n: (-own[n], n))
    all_own = sum(max(v, 0.0) for v in own.values())
    return Columns({"stage": np.asarray(names, dtype=object),
                    "kind": np.asarray([n.rsplit("::", 1)[-1] for n in names], dtype=object),
                    "count": np.asarray([count[n] for n in names], dtype=np.int64),
                    "total_ms": np.asarray([total[n] for n in names], dtype=float),
                    "self_ms": np.asarray([max(own[n], 0.0) for n in names], dtype=float),
                    "share": np.asarray([max(own[n], 0.0) / all_own if all_own else np.nan
                                         for n in names], dtype=float)})


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
        if stage == "Iterator::Root" or kind.startswith("Prefetch"):
            continue
        if best is None or stages["self_ms"][i] > stages["self_ms"][best]:
            best = i
    if best is None:
        return None
    return {k: stages[k][best].item() if hasattr(stages[k][best], "item") else stages[k][best]
            for k in STAGE_COLUMNS}


# What to change for the costliest stage, by its kind (the last part of the stage's name).
_STAGE_FIX = (
    (("Map", "ParallelMap", "MapAndBatch"),
     "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)   # the map runs in parallel"),
    (("TFRecord", "TextLine", "FixedLengthRecord", "FlatMap", "Interleave", "ParallelInterleave"),
     "ds = files.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)"),
    (("Generator", "FromGenerator", "PyFunc"),
     "# Python in the pipeline runs under the GIL: move it to tf ops, or precompute and .cache()"),
    (("Batch", "BatchV2", "PaddedBatch", "Shuffle", "TensorSlice", "FromTensor", "Range", "Zip"),
     "ds = ds.cache()   # when it fits in memory: the stages before it run once"),
)


def stage_fix(kind: str) -> str | None:
    for kinds, fix in _STAGE_FIX:
        if any(kind.startswith(k) for k in kinds):
            return fix
    return None


def mode_stages(trace_paths) -> Columns:
    """The stage table of a mode's host trace (its python-tracer pass left out: the same pipeline
    under a heavier profiler); an empty table when the files cannot be read any more."""
    from traceinsight.errors import TraceinsightError

    paths = [p for p in trace_paths if "/python/" not in str(p).replace("\\", "/")]
    if not paths:
        return Columns.no_rows(STAGE_COLUMNS)
    try:
        return stage_table(paths)
    except (TraceinsightError, OSError):
        return Columns.no_rows(STAGE_COLUMNS)
