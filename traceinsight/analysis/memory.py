"""What a trace records of memory, per step: TensorFlow's allocator events.

At host tracer level 3 TensorFlow's allocators write a zero-length ``MemoryAllocation`` /
``MemoryDeallocation`` event for each buffer they hand out or take back. Their stats are the
allocator's state after it: ``bytes_allocated`` is the bytes in use (not the buffer's size),
``peak_bytes_in_use`` the allocator's peak since it was made; ``requested_bytes`` is the size
asked for. Per step: how many allocations and deallocations, the bytes asked for, the most bytes
in use at any allocation of the step (the step's own peak), and the allocator's running peak. A
trace without these events (a lower tracer level, JAX, a device-only trace) has no memory table:
"not recorded", never zero.

The process's own peak resident memory while the mode was timed untraced comes from the capture
(``Timing.memory``); this is the allocator's view, of the traced steps.
"""

from __future__ import annotations

import numpy as np

from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import (
    BYTES_ALLOCATED,
    MEMORY_ALLOCATION,
    MEMORY_DEALLOCATION,
    PEAK_BYTES_IN_USE,
    REQUESTED_BYTES,
    STEP_NUM,
)
from traceinsight.columns import Columns

ALLOCATION = MEMORY_ALLOCATION
DEALLOCATION = MEMORY_DEALLOCATION
IN_USE = BYTES_ALLOCATED          # the allocator's bytes in use after the event
PEAK = PEAK_BYTES_IN_USE          # the allocator's peak since it was made
REQUESTED = REQUESTED_BYTES       # the size asked for
MEMORY_COLUMNS = (STEP_NUM, "allocations", "deallocations", REQUESTED_BYTES,
                  "peak_in_use_bytes", "allocator_peak_bytes")


def memory_table(table: EventTable, steps: Columns) -> Columns:
    """One row per step of ``steps``: step_num, allocations, deallocations (the events that start
    in the step), requested_bytes (the allocations' sizes summed; NaN where the trace records no
    size), peak_in_use_bytes (the most bytes in use at an allocation of the step),
    allocator_peak_bytes (the highest allocator peak an event of the step carries); NaN where no
    event of the step carries the stat. Empty where the trace holds no allocation event or no
    step."""
    alloc_id, free_id = table.name_id(ALLOCATION), table.name_id(DEALLOCATION)
    if alloc_id < 0 or not len(steps):
        return Columns.no_rows(MEMORY_COLUMNS)
    start = np.asarray(steps["start_ps"], dtype=np.int64)
    end = np.asarray(steps["end_ps"], dtype=np.int64)
    n = len(start)

    def step_of(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the events of ``idx`` inside a step, their step's row): steps are disjoint and
        sorted by start."""
        t = table.start[idx]
        row = np.searchsorted(start, t, side="right") - 1
        ok = (row >= 0) & (t < end[np.maximum(row, 0)])
        return idx[ok], row[ok]

    allocs, a_row = step_of(np.flatnonzero(table.name == alloc_id))
    _, f_row = step_of(np.flatnonzero(table.name == free_id) if free_id >= 0
                       else np.zeros(0, dtype=np.int64))

    def per_step_max(stat: str) -> np.ndarray:
        out = np.full(n, np.nan)
        if stat in table.stat_int:
            v = table.stat_int_column(stat, -1)[allocs].astype(float)
            good = v >= 0
            np.fmax.at(out, a_row[good], v[good])
        return out

    requested = np.full(n, np.nan)
    if REQUESTED in table.stat_int:
        size = table.stat_int_column(REQUESTED, -1)[allocs]
        good = size >= 0
        requested = np.bincount(a_row[good], weights=size[good].astype(float), minlength=n)
    return Columns({STEP_NUM: np.asarray(steps[STEP_NUM], dtype=np.int64),
                    "allocations": np.bincount(a_row, minlength=n).astype(np.int64),
                    "deallocations": np.bincount(f_row, minlength=n).astype(np.int64),
                    REQUESTED_BYTES: requested, "peak_in_use_bytes": per_step_max(IN_USE),
                    "allocator_peak_bytes": per_step_max(PEAK)})
