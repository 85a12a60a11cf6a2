"""XSpace files -> one columnar event table (numpy), names interned.

Speed matters (python-traced captures hold millions of events), so events are not turned into Python
objects one by one: the C extension splits each plane of the file into its lines
(left in place) and the rest (name, metadata, plane stats), which protobuf (upb) parses with the
public schema (``traceinsight.xplane.XPlane``); the C extension then walks the lines
(``native.scan_jobs``: their own fields, their event counts) and decodes their events and stats,
straight into the table's numpy columns (``native.decode_jobs``), each pass on every usable core:
the file's lines are cut into jobs that threads take in turn, the GIL released. String values
are materialized only for the stat names the analysis asks for (``WANTED_STATS``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from traceinsight.analysis import native
from traceinsight.analysis.names import (
    ANNOTATION,
    BYTES_ALLOCATED,
    CORRELATION_ID,
    DEVICE_DURATION_PS,
    EAGER_OP,
    GROUP_ID,
    HLO_CATEGORY,
    HLO_MODULE,
    HLO_OP,
    IS_FUNC,
    LEVEL_0,
    LONG_NAME,
    NAME_STAT,
    PEAK_BYTES_IN_USE,
    R_STAT,
    REQUESTED_BYTES,
    STEP_NAME,
    STEP_NUM,
    TF_DATA_AUTOTUNE,
    TF_DATA_PARALLELISM,
    TF_FUNCTION_CALL,
    TF_OP,
    TRACING_COUNT,
)
from traceinsight.errors import TraceinsightError
from traceinsight.resample import unique

# Stats the analysis reads. Others are skipped after their metadata id is decoded.
WANTED_STATS = frozenset({
    STEP_NUM, R_STAT, TF_FUNCTION_CALL, TRACING_COUNT, EAGER_OP, IS_FUNC, TF_OP,
    HLO_OP, HLO_MODULE, HLO_CATEGORY, BYTES_ALLOCATED, PEAK_BYTES_IN_USE, GROUP_ID, LONG_NAME,
    REQUESTED_BYTES,
    # device side: a kernel's TF op (annotation stack), XProf's derived step lines
    LEVEL_0, ANNOTATION, STEP_NAME,
    # JAX: a kernel's framework op (the primitive's name stack, ``jit(f)/dot_general``); a TPU
    # op's duration on the device's own clock
    NAME_STAT, DEVICE_DURATION_PS,
    # a kernel and the host-side launch that made it (CUPTI)
    CORRELATION_ID,
    # how a tf.data stage runs (its parallelism, autotuned or not)
    TF_DATA_PARALLELISM, TF_DATA_AUTOTUNE,
})

# One file's lines are decoded in jobs that threads take in turn (native.scan_jobs /
# decode_jobs): a line is cut into jobs of at least JOB_MIN_BYTES, about JOBS_PER_THREAD a
# thread (more jobs than threads: a thread the machine slows takes fewer); a file's lines of
# less than PARALLEL_MIN_BYTES in all are read on one thread (threads cost more than they save).
JOB_MIN_BYTES = 1 << 18
JOBS_PER_THREAD = 8
PARALLEL_MIN_BYTES = 1 << 20
MAX_DECODE_THREADS = 64
_threads: int | None = None     # decode_threads(); None: every usable core


@contextlib.contextmanager
def decode_threads(n: int | None) -> Iterator[None]:
    """Within: lines are decoded by at most ``n`` threads (None: every usable core, at most
    ``MAX_DECODE_THREADS``). ``analysis.parallel`` sets 1 while processes analyse hosts at once:
    they take the cores already."""
    global _threads
    before, _threads = _threads, n
    try:
        yield
    finally:
        _threads = before


def _decode_threads() -> int:
    """decode_threads's count, else the cores this process may run on (its CPU affinity, and
    its cgroup's CPU quota: a container given 2 CPUs of a 64-core host gets 2 threads)."""
    if _threads is not None:
        return max(1, _threads)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    return max(1, min(cores, quota or cores, MAX_DECODE_THREADS))


def _cgroup_folders(controller: str, root: str, proc: str) -> Iterator[tuple[bool, list[str]]]:
    """For each of this process's cgroups that holds ``controller`` (``/proc/self/cgroup``): whether
    it is cgroup v2, and the folders to read its files from, in order: the cgroup's own folder,
    then the hierarchy's root (in a container, a cgroup namespace, the root is the cgroup)."""
    try:
        with open(proc, encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == "":
            bases, v2 = [root], True
        elif controller in controllers.split(","):
            bases, v2 = [os.path.join(root, controllers), os.path.join(root, controller)], False
        else:
            continue
        yield v2, [folder for base in dict.fromkeys(bases)
                   for folder in (os.path.join(base, rel.lstrip("/")), base)]


def _cgroup_cpus(root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> int | None:
    """The CPUs this process's cgroup may use, rounded up: cpu.max's quota over its period (v2),
    or v1's cpu.cfs_quota_us over cpu.cfs_period_us; None without a quota."""
    for v2, folders in _cgroup_folders("cpu", root, proc):
        for folder in folders:
            try:
                if v2:
                    with open(os.path.join(folder, "cpu.max"), encoding="ascii") as f:
                        quota, period = f.read().split()[:2]
                else:
                    with open(os.path.join(folder, "cpu.cfs_quota_us"), encoding="ascii") as f:
                        quota = f.read().strip()
                    with open(os.path.join(folder, "cpu.cfs_period_us"), encoding="ascii") as f:
                        period = f.read().strip()
                q, t = (None if quota == "max" else int(quota)), int(period)
            except (OSError, ValueError):
                continue
            return -(-q // t) if q is not None and q > 0 and t > 0 else None
    return None


class CorruptTrace(TraceinsightError):
    pass


@dataclass
class PlaneInfo:
    host: str                   # the file's host (file name without .xplane.pb)
    name: str                   # e.g. "/host:CPU", "/device:GPU:0", "Task Environment"
    stats: dict[str, object]    # plane-level stats (ints, floats, str, bytes)


@dataclass
class LineInfo:
    plane: int                  # index into EventTable.planes
    id: int
    name: str
    display_name: str
    timestamp_ns: int
    n_events: int


@dataclass
class EventTable:
    """All events of one or more XSpace files, sorted by (line, start, -end).

    Columns are numpy arrays of equal length. ``name`` indexes ``names`` (interned across planes).
    Times are picoseconds on the trace's clock (line timestamp + event offset).
    """

    line: np.ndarray            # int16 (int32 past 32767 lines), index into lines
    name: np.ndarray            # int32, index into names
    start: np.ndarray           # int64 ps
    end: np.ndarray             # int64 ps
    names: list[str]
    lines: list[LineInfo]
    planes: list[PlaneInfo]
    # stat name -> (event indices, values); ints as int64, strings as object arrays
    stat_int: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    stat_str: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    zero_ns: int | None = None  # the trace clock's time 0 as a line timestamp (ns), if any line
    duplicate_planes: list[str] = field(default_factory=list)   # read once, not twice

    def __len__(self) -> int:
        return len(self.start)

    def name_id(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            return -1

    def line_rows(self, line: int) -> slice:
        """The rows of one line (the table is sorted by line: they are one run)."""
        lo, hi = np.searchsorted(self.line, np.array([line, line + 1], dtype=self.line.dtype))
        return slice(int(lo), int(hi))

    def stat_int_column(self, stat: str, default: int = -1) -> np.ndarray:
        """A full-length int64 column of one stat (``default`` where an event lacks it)."""
        col = np.full(len(self), default, dtype=np.int64)
        if stat in self.stat_int:
            idx, val = self.stat_int[stat]
            col[idx] = val
        return col

    def stat_int_at(self, stat: str, rows: np.ndarray, default: int = -1) -> np.ndarray:
        """``stat_int_column(stat, default)[rows]`` without the table-long column: an event with
        the stat twice has its last value, as there."""
        out = np.full(len(rows), default, dtype=np.int64)
        if stat in self.stat_int and len(rows):
            idx, val = self.stat_int[stat]
            order = np.argsort(idx, kind="stable")
            idx, val = idx[order], val[order]
            last = np.r_[idx[1:] != idx[:-1], True] if len(idx) else np.zeros(0, dtype=bool)
            idx, val = idx[last], val[last]
            pos = np.minimum(np.searchsorted(idx, rows), max(len(idx) - 1, 0))
            hit = (idx[pos] == rows) if len(idx) else np.zeros(len(rows), dtype=bool)
            out[hit] = val[pos[hit]]
        return out

    def stat_int_flag(self, stat: str, test) -> np.ndarray:
        """A full-length bool column: ``test(value)`` of the stat where an event has it (its last
        value, as ``stat_int_column``), False elsewhere; one byte an event, not eight."""
        col = np.zeros(len(self), dtype=bool)
        if stat in self.stat_int:
            idx, val = self.stat_int[stat]
            col[idx] = test(val)
        return col

    def stat_str_column(self, stat: str) -> np.ndarray:
        """A full-length object column of one string stat (None where an event lacks it)."""
        col = np.full(len(self), None, dtype=object)
        if stat in self.stat_str:
            idx, val = self.stat_str[stat]
            col[idx] = val
        return col


# --------------------------------------------------------------------------------------------

def load_files(paths: list[Path]) -> EventTable:
    """Parse XSpace files into one event table. Each file is one host."""
    names: list[str] = []
    name_ids: dict[str, int] = {}
    lines: list[LineInfo] = []
    planes: list[PlaneInfo] = []
    stat_int: dict[str, list] = {}
    stat_str: dict[str, list] = {}
    per_file: list[tuple[dict[str, np.ndarray], int | None]] = []  # (columns, base_ns)
    duplicates: list[str] = []
    offset = 0
    threads = _decode_threads()
    for path in paths:
        path = Path(path)
        cols, base_ns = _load_file(path, names, name_ids, lines, planes, stat_int, stat_str,
                                   duplicates, offset, threads)
        offset += len(cols["start"])
        per_file.append((cols, base_ns))
    bases = [b for _, b in per_file if b is not None]
    _check_span(bases, "these traces' hosts")
    for file_cols, b in per_file:  # one clock for all hosts
        if b is not None and b != min(bases):
            file_cols["start"] += (b - min(bases)) * 1000
            file_cols["end"] += (b - min(bases)) * 1000
    if len(per_file) == 1:
        cols = per_file[0][0]
    else:   # one column at a time, the files' own freed as it is made: the peak is one table
        #     and one column of it more, not two tables
        cols = {}
        for k in ("start", "end", "name", "line"):
            parts = [c.pop(k) for c, _ in per_file]
            cols[k] = np.concatenate(parts) if parts else \
                np.zeros(0, dtype=np.int32 if k in ("line", "name") else np.int64)
            del parts
    table = EventTable(line=cols["line"], name=cols["name"], start=cols["start"], end=cols["end"],
                       names=names, lines=lines, planes=planes, files=[str(p) for p in paths],
                       zero_ns=min(bases) if bases else None, duplicate_planes=duplicates)
    for src, dst in ((stat_int, table.stat_int), (stat_str, table.stat_str)):
        for k, chunks in src.items():
            dst[k] = (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))
    return table


def _load_file(path: Path, names, name_ids, lines, planes, stat_int, stat_str, duplicates,
               offset: int, threads: int) -> tuple[dict[str, np.ndarray], int | None]:
    """One XSpace file's events as the table's columns (its rows from 0; ``offset``: its first
    row in the whole table, for the stats' event indices) and its earliest line timestamp (ns,
    None without events); its lines, planes, names and stats join the lists given. The file's
    lines are walked (native.scan_jobs), then decoded straight into the columns
    (native.decode_jobs), each pass on ``threads`` threads over the whole file."""
    host = path.name[: -len(".xplane.pb")] if path.name.endswith(".xplane.pb") else path.stem
    view, space = _split(path, threads)
    # a plane named twice in one XSpace is one device (or host) written twice: read once, so
    # its events are not counted twice (XProf, too, takes a plane by its name)
    seen: set[str] = set()
    kept = []
    for plane, spans in space:
        name = str(getattr(plane, "name", ""))
        if name in seen:
            duplicates.append(name)
            continue
        seen.add(name)
        kept.append((plane, spans))
    try:
        spans = [sp for _, plane_spans in kept for sp in plane_spans]
        parallel = threads > 1 and sum(n for _, n in spans) >= PARALLEL_MIN_BYTES
        threads = threads if parallel else 1
        jobs, first_job = _scan(view, spans, threads)
        heads_all = [_head(view, jobs[first_job[i]:first_job[i + 1]]) for i in range(len(spans))]
        # Times are kept relative to the earliest line timestamp, in ps: absolute nanosecond
        # timestamps (device planes carry them) times 1000 would overflow int64.
        stamps = [h[1] for h in heads_all if h[4]]
        base_ns = min(stamps, default=None)
        _check_span(stamps, path)
        n = sum(h[4] for h in heads_all)
        cols: dict[str, np.ndarray] = {
            "line": np.empty(n, dtype=_line_dtype(len(lines) + len(heads_all))),
            "name": np.empty(n, dtype=np.int32),
            "start": np.empty(n, dtype=np.int64), "end": np.empty(n, dtype=np.int64)}
        file_planes: list[_Plane] = []
        luts: list[np.ndarray] = []
        wanted_luts: list[np.ndarray] = []
        pos, at, n0, lut_at, wanted_at = 0, 0, len(names), 0, 0
        for plane, plane_spans in kept:
            heads = heads_all[at:at + len(plane_spans)]
            fp = _plane(plane, heads, at, host, names, name_ids, lines, planes)
            # the planes' lookup tables, one after another in one array each
            plane_jobs = slice(first_job[at], first_job[at + len(plane_spans)])
            jobs[plane_jobs, native.J_LUT] = lut_at
            jobs[plane_jobs, native.J_NLUT] = len(fp.lut)
            jobs[plane_jobs, native.J_WANT] = wanted_at
            jobs[plane_jobs, native.J_NWANT] = len(fp.wanted_lut)
            luts.append(fp.lut)
            wanted_luts.append(fp.wanted_lut)
            lut_at += len(fp.lut)
            wanted_at += len(fp.wanted_lut)
            for li, group in fp.groups:
                first = pos
                for i in group:
                    k = slice(first_job[i], first_job[i + 1])
                    jobs[k, native.J_ROW] = pos + np.cumsum(jobs[k, native.J_N]) - jobs[k, native.J_N]
                    jobs[k, native.J_BASE] = (heads_all[i][1] - (base_ns or 0)) * 1000
                    jobs[k, native.J_LINE] = li
                    pos += heads_all[i][4]
                fp.rows.append((first, pos))
            file_planes.append(fp)
            at += len(plane_spans)
        errors, st, counts = native.decode_jobs(
            view, jobs, np.concatenate(luts) if luts else np.zeros(0, np.int32),
            np.concatenate(wanted_luts) if wanted_luts else np.zeros(0, np.uint8),
            cols["start"], cols["end"], cols["name"], cols["line"], threads)
        if errors:
            raise ValueError(errors[0][1])
        # where each job's stats, unnamed events and stat groups begin in ``st``
        stat_at, miss_at, group_at = (np.concatenate(([0], np.cumsum(c))).tolist() for c in
                                      (counts[:, 0], counts[:, 1], np.maximum(counts[:, 2], 0)))
        n_groups = counts[:, 2].tolist()
        if miss_at[-1]:
            _name_unknown(file_planes, [(miss_at[first_job[i]], miss_at[first_job[i + 1]])
                                        for i in range(len(spans))], st, cols["name"], names,
                          name_ids, n0)
        unsorted = _unsorted_threads(jobs)
        for fp in file_planes:
            for (li, group), (first, stop) in zip(fp.groups, fp.rows):
                inverse = _sort_rows(cols, first, stop) if li in unsorted else None
                # an event before its line's timestamp (a negative offset): refused, as a
                # negative duration is (no trace TF or JAX writes has one). Each line's rows are
                # sorted by start: its first row holds its earliest event
                if stop > first and \
                        cols["start"][first] < (lines[li].timestamp_ns - (base_ns or 0)) * 1000:
                    raise ValueError("negative event offset")
                for i in group:
                    ks = range(first_job[i], first_job[i + 1])
                    if stat_at[ks.stop] == stat_at[ks.start]:
                        continue
                    groups = None if any(n_groups[k] < 0 for k in ks) else \
                        [(stat_at[k], st["group_key"][group_at[k]:group_at[k + 1]],
                          st["group_count"][group_at[k]:group_at[k + 1]]) for k in ks]
                    _collect_stats(view, st, stat_at[ks.start], stat_at[ks.stop], groups,
                                   inverse, first, offset, fp.wanted, fp.stat_names, stat_int,
                                   stat_str)
    except ValueError as e:
        raise CorruptTrace(f"{path}: corrupt trace ({e})") from None
    return cols, base_ns


def _line_dtype(n_lines: int) -> type:
    """The line column's dtype for a table of ``n_lines`` lines: int16 where they fit (a trace has
    hundreds; two bytes an event less, held through the whole analysis), else int32. Files of
    both kinds concatenate to int32."""
    return np.int16 if n_lines < np.iinfo(np.int16).max else np.int32


# Line timestamps (ns) of one table within this span: times in ps relative to the earliest then
# stay within 2^61 ps, as the C decoder requires of every event time (its TIME_LIMIT).
_SPAN_NS = (1 << 61) // 1000 // 2


def _check_span(timestamps_ns: list[int], where) -> None:
    if timestamps_ns and max(timestamps_ns) - min(timestamps_ns) > _SPAN_NS:
        raise CorruptTrace(f"{where}: line timestamps {max(timestamps_ns) - min(timestamps_ns)} ns "
                           "apart (more than 13 days): not one trace")


# protobuf cannot parse a message of 2 GiB or more: no XSpace that large was written by TF.
MAX_TRACE_BYTES = (2 << 30) - 1
# Analysing a trace peaks at a multiple of its file's size, highest for python-traced host traces
# (the most events per byte of file), plus what tracemalloc does not see (the C decoder's stat
# buffers); this factor leaves room above that peak (``tools/bench_analyze.py`` prints the peak
# RSS of each trace it analyses, beside its size). A file whose analysis would not fit in the
# memory available now is refused before it is read.
MEMORY_PER_TRACE_BYTE = 6


def available_memory() -> int | None:
    """Bytes of memory this process can still take now, None if unknown: the least of the
    machine's MemAvailable, what the process's own limits leave (RLIMIT_AS / RLIMIT_DATA minus
    what it already maps) and what its cgroup leaves (memory.max minus memory.current): a
    process under ``prlimit --as`` or in a container gets MemoryError long before the machine
    runs out."""
    limits = [v for v in (_meminfo_available(), _rlimit_left(), _cgroup_left()) if v is not None]
    return min(limits) if limits else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _proc_status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rlimit_left() -> int | None:
    """What RLIMIT_AS (against the mapped size, VmSize) and RLIMIT_DATA (against VmData) leave."""
    try:
        import resource
    except ImportError:
        return None
    left = []
    for limit, used in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        try:
            soft = resource.getrlimit(limit)[0]
        except (ValueError, OSError):
            continue
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        left.append(max(0, soft - (_proc_status_kb(used) or 0)))
    return min(left) if left else None


def _cgroup_left(root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> int | None:
    """memory.max minus memory.current of this process's cgroup (v2), or of v1's memory
    controller (limit_in_bytes minus usage_in_bytes); None without a limit."""
    for v2, folders in _cgroup_folders("memory", root, proc):
        files = ("memory.max", "memory.current") if v2 else \
            ("memory.limit_in_bytes", "memory.usage_in_bytes")
        for folder in folders:
            try:
                with open(os.path.join(folder, files[0]), encoding="ascii") as f:
                    limit = f.read().strip()
                with open(os.path.join(folder, files[1]), encoding="ascii") as f:
                    used = int(f.read().strip())
            except (OSError, ValueError):
                continue
            if limit == "max" or not limit.isdigit() or int(limit) >= 1 << 60:
                break
            return max(0, int(limit) - used)
    return None


def check_trace_size(path: Path) -> None:
    """Refuse, before reading it, a trace file larger than an XSpace can be or than memory
    allows."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
    if size > MAX_TRACE_BYTES:
        raise TraceinsightError(f"{path}: {size:,} bytes, larger than an XSpace can be (protobuf's "
                                "2 GiB limit): not read")
    avail = available_memory()
    if avail is not None and size * MEMORY_PER_TRACE_BYTE > avail:
        raise TraceinsightError(f"{path}: {size:,} bytes would need about "
                                f"{size * MEMORY_PER_TRACE_BYTE >> 20:,} MiB to analyse, more than "
                                f"the {avail >> 20:,} MiB of memory available: not read")


def open_planes(path: Path) -> list[tuple[object, list[memoryview]]]:
    """The file's planes: each as (the XPlane without its lines, parsed by protobuf; its lines as
    views of the serialized XLines in the file's bytes)."""
    view, space = _split(path, 1)
    return [(plane, [view[o:o + n] for o, n in spans]) for plane, spans in space]


def _split(path: Path, threads: int) -> tuple[memoryview, list[tuple[object, list[tuple[int, int]]]]]:
    """The file's bytes, and its planes: each as (the XPlane without its lines, parsed by
    protobuf; where its serialized XLines lie in the bytes, (offset, length) each, for the C
    decoder to read in place). The file is read (on ``threads`` threads), not memory-mapped: a
    mapped file truncated while it is read would crash the process (SIGBUS) instead of
    raising."""
    from traceinsight.xplane import XPlane
    check_trace_size(path)
    try:
        view = _read(path, threads)
    except OSError as e:
        raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
    if not len(view):
        raise TraceinsightError(f"{path}: empty file, not an XSpace trace")
    try:
        space = [(XPlane.FromString(meta), spans) for meta, spans in native.split_space(view)]
    except (DecodeError, RuntimeError, ValueError) as e:
        raise TraceinsightError(f"{path}: not a readable XSpace trace ({e})") from None
    if not space:
        raise TraceinsightError(f"{path}: not an XSpace trace (no planes)")
    return view, space


def plane_headers(path: Path) -> list[object]:
    """The file's planes without their lines (what ``open_planes`` parses of each, no more): the
    file is walked field by field and every line's bytes are skipped (a seek), so what only the
    planes' names and stats need (``trace_env``) does not read a large trace again. The framing
    is checked as ``native.split_space`` checks it; TraceinsightError where it is malformed."""
    from traceinsight.runfolder import open_regular
    from traceinsight.xplane import XPlane
    check_trace_size(path)
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            metas = _walk_planes(f, size)
    except OSError as e:
        raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
    except ValueError as e:
        raise TraceinsightError(f"{path}: not a readable XSpace trace ({e})") from None
    if not size:
        raise TraceinsightError(f"{path}: empty file, not an XSpace trace")
    try:
        planes = [XPlane.FromString(meta) for meta in metas]
    except (DecodeError, RuntimeError, ValueError) as e:
        raise TraceinsightError(f"{path}: not a readable XSpace trace ({e})") from None
    if not planes:
        raise TraceinsightError(f"{path}: not an XSpace trace (no planes)")
    return planes


def _walk_planes(f, size: int) -> list[bytes]:
    """Each XSpace plane (field 1) of the open file ``f`` re-serialized without its lines (XPlane
    field 3), as ``native.split_space`` does in memory; ValueError where the framing is bad."""
    def varint(limit: int) -> int:
        v = 0
        for i in range(10):
            if f.tell() >= limit:
                raise ValueError("a varint runs past the end of its message")
            b = f.read(1)
            if not b:
                raise ValueError("a varint runs past the end of its message")
            v |= (b[0] & 0x7F) << (7 * i)
            if not b[0] & 0x80:
                return v
        raise ValueError("a varint longer than 10 bytes")

    def field(limit: int) -> tuple[int, int, int]:
        """(field number, wire type, length of a length-delimited body: 0 else), the position
        after the tag (and length)."""
        tag = varint(limit)
        wt = tag & 7
        if wt == 0:
            varint(limit)
            return tag >> 3, wt, 0
        width = {1: 8, 5: 4}.get(wt)
        if width is None and wt != 2:
            raise ValueError("an unsupported protobuf wire type")
        n = varint(limit) if wt == 2 else width
        assert n is not None
        if n > limit - f.tell():
            raise ValueError("a field runs past the end of its message")
        if wt != 2:
            f.seek(n, os.SEEK_CUR)
        return tag >> 3, wt, n if wt == 2 else 0

    planes = []
    while f.tell() < size:
        fnum, wt, n = field(size)
        if wt != 2 or fnum != 1:
            f.seek(n, os.SEEK_CUR)
            continue
        plane_end = f.tell() + n
        meta = bytearray()
        while f.tell() < plane_end:
            at = f.tell()
            fnum, wt, n = field(plane_end)
            if wt == 2 and fnum == 3:
                f.seek(n, os.SEEK_CUR)
                continue
            body = f.tell() + n
            f.seek(at)
            meta += f.read(body - at)     # the whole field, tag and all
        planes.append(bytes(meta))
    return planes


def _read(path: Path, threads: int = 1) -> memoryview:
    """The file's bytes, read into a numpy buffer by ``threads`` threads, each a part
    (native.pread_into): numpy asks for transparent huge pages for large arrays, so a large trace
    costs a page fault per huge page instead of one per page (a process's first trace pays a
    fault for every page it touches), and each thread takes the faults and the copy of its part.
    The bytes there now: a file that shrinks while it is read gives its shorter content (then
    found corrupt), one that grows is cut."""
    from traceinsight.analysis.malloc import numpy_hugepages
    from traceinsight.runfolder import open_regular
    with open_regular(path) as f:     # a FIFO or a device is refused, never waited on
        # huge pages for this buffer even where the analysis's arrays go without them
        # (malloc.kept_memory): read once from end to end, it gains the most by them
        before = numpy_hugepages(True)
        try:
            buf = np.empty(os.fstat(f.fileno()).st_size, dtype=np.uint8)
        finally:
            if before is not None:
                numpy_hugepages(before)
        got = native.pread_into(f.fileno(), buf, threads)
    return memoryview(buf.data)[:got]


def plane_stat_value(stat, stat_names: dict[int, str]):
    kind = stat.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(stat, kind)
    if kind == "ref_value":
        return stat_names.get(value, "")
    return value


# XStat value kinds as native.decode_jobs reports them (the value's field number)
_INT_KINDS = (3, 4)  # uint64_value, int64_value
_STR, _BYTES, _REF = 5, 6, 7    # str_value, bytes_value, ref_value (a stat metadata id whose
#                                name is the string)


def _scan(view, spans: list[tuple[int, int]], threads: int) -> tuple[np.ndarray, list[int]]:
    """The scanned jobs of the file's lines (``spans``: (offset, length) each; see
    native.scan_jobs), and where each line's jobs begin (line i: rows first[i]:first[i + 1]).
    A line of a large file is cut into jobs of JOB_MIN_BYTES or more; where the walk of a job
    that starts inside its line (from a guessed field) does not join the walk before it exactly,
    or fails, the line is walked again as one job, from its start: the outcome is always that of
    one walk of each whole line. ValueError: the first line whose walk fails."""
    total = sum(n for _, n in spans)
    block = max(JOB_MIN_BYTES, -(-total // (threads * JOBS_PER_THREAD))) if threads > 1 else 0
    cuts = [max(1, n // block) if block else 1 for _, n in spans]
    first = [0, *np.cumsum(cuts).tolist()]
    jobs = np.zeros((first[-1], native.J_FIELDS), dtype=np.int64)
    for i, ((o, n), k) in enumerate(zip(spans, cuts)):
        rows = slice(first[i], first[i + 1])
        jobs[rows, native.J_LB] = o
        jobs[rows, native.J_LE] = o + n
        jobs[rows, native.J_X] = [o + n * c // k for c in range(k)]
        jobs[rows, native.J_Y] = [o + n * (c + 1) // k for c in range(k)]
    failed = native.scan_jobs(view, jobs, threads)
    if len(jobs) == len(spans) and not failed:
        return jobs, first
    line_of = np.repeat(np.arange(len(spans)), cuts)
    bad = set(line_of[[k for k, _ in failed]].tolist())
    same = line_of[1:] == line_of[:-1]
    bad |= set(line_of[1:][same & (jobs[:-1, native.J_Q] != jobs[1:, native.J_P])].tolist())
    if not bad:
        return jobs, first
    parts, new_first = [], [0]
    for i, (o, n) in enumerate(spans):
        part = jobs[first[i]:first[i + 1]]
        if i in bad:        # walked again as one job, on this thread
            part = np.zeros((1, native.J_FIELDS), dtype=np.int64)
            part[0, [native.J_LB, native.J_X]] = o
            part[0, [native.J_LE, native.J_Y]] = o + n
            again = native.scan_jobs(view, part, 1)
            if again:
                raise ValueError(again[0][1])
        parts.append(part)
        new_first.append(new_first[-1] + len(part))
    return np.concatenate(parts), new_first


def _head(view, jobs: np.ndarray) -> tuple[int, int, str, str, int]:
    """A line's (id, timestamp_ns, name, display name, number of events) from its scanned jobs:
    of a field the line holds more than once, its last (as protobuf reads it)."""
    lid = ts = nb = ne = db = de = 0
    for j in jobs:
        seen = j[native.J_SEEN]
        if seen & 1:
            lid = int(j[native.J_ID])
        if seen & 2:
            ts = int(j[native.J_TS])
        if seen & 4:
            nb, ne = int(j[native.J_NB]), int(j[native.J_NE])
        if seen & 8:
            db, de = int(j[native.J_DB]), int(j[native.J_DE])
    return (lid, ts, str(view[nb:ne], "utf-8", "replace"), str(view[db:de], "utf-8", "replace"),
            int(jobs[:, native.J_N].sum()))


@dataclass
class _Plane:
    """A plane of the file being read: what decoding and naming its events need."""
    first: int                      # its first line among the file's
    stat_names: dict[int, str]
    wanted: dict[int, str]          # the stats the analysis reads: metadata id -> name
    meta_gid: dict[int, int]        # event metadata id -> name id
    names: list[str]                # its event metadata's names, in its order
    lut: np.ndarray                 # meta_gid as a dense array (int32, -1 missing)
    wanted_lut: np.ndarray          # wanted as a dense array (uint8)
    groups: list[tuple[int, list[int]]]     # (line index, the file's lines it joins)
    rows: list[tuple[int, int]] = field(default_factory=list)   # each group's rows


def _plane(plane, heads, first, host, names, name_ids, lines, planes) -> _Plane:
    """A plane's PlaneInfo and LineInfos appended, its event names interned. ``heads``: its
    lines' (id, timestamp_ns, name, display name, events), the file's from ``first`` on."""
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    pstats = {stat_names.get(s.metadata_id, str(s.metadata_id)): plane_stat_value(s, stat_names)
              for s in plane.stats}
    plane_idx = len(planes)
    planes.append(PlaneInfo(host=host, name=plane.name, stats=pstats))
    # metadata id -> global name id, as a lookup table the decoder indexes (TF numbers metadata
    # densely from 1); ids past LUT_MAX, or unknown, are looked up here afterwards
    md_names = [(k, md.name or md.display_name or f"<event {k}>")
                for k, md in plane.event_metadata.items()]
    meta_gid = {k: _intern(name, names, name_ids) for k, name in md_names}
    wanted = {k: v for k, v in stat_names.items() if v in WANTED_STATS}
    groups = []
    for group in thread_lines(heads):
        lid, _, name, display, _ = heads[group[-1]]
        groups.append((len(lines), [first + i for i in group]))
        lines.append(LineInfo(plane=plane_idx, id=lid, name=name, display_name=display or name,
                              timestamp_ns=min(heads[i][1] for i in group),
                              n_events=sum(heads[i][4] for i in group)))
    return _Plane(first=first, stat_names=stat_names, wanted=wanted, meta_gid=meta_gid,
                  names=[name for _, name in md_names], lut=_lookup_table(meta_gid, np.int32, -1),
                  wanted_lut=_lookup_table(dict.fromkeys(wanted, 1), np.uint8, 0), groups=groups)


def _name_unknown(file_planes: list[_Plane], line_misses: list[tuple[int, int]],
                  st: dict[str, np.ndarray], name_col: np.ndarray, names: list[str],
                  name_ids: dict[str, int], n0: int) -> None:
    """Name the events the lookup tables did not cover (large metadata ids, and ids with no
    metadata: named so, not dropped), and keep the names in the order of reading the file plane
    by plane, each plane's metadata then its unknown ids line by line (the planes' metadata were
    all interned before decoding): the same name ids however the file was decoded. ``n0``: the
    names before this file's; ``line_misses``: where each of the file's lines' unnamed events
    lie in ``st`` (decode_jobs's)."""
    new_names, new_ids = list(names[:n0]), {n: i for i, n in enumerate(names[:n0])}
    perm = np.arange(len(names), dtype=np.int32)
    fixes = []
    for fp in file_planes:
        for k, name in zip(fp.meta_gid, fp.names):
            fp.meta_gid[k] = _intern(name, new_names, new_ids)
        for _, group in fp.groups:
            for i in group:
                lo, hi = line_misses[i]
                rows, mids = st["miss_row"][lo:hi], st["miss_mid"][lo:hi]
                for m in unique(mids).tolist():
                    g = fp.meta_gid.get(m)
                    if g is None:
                        g = _intern(f"<unknown event metadata {m}>", new_names, new_ids)
                    fixes.append((rows[mids == m], g))
    for old, name in enumerate(names):
        perm[old] = new_ids[name]
    if not np.array_equal(perm, np.arange(len(names))):
        name_col[:] = perm[name_col]
    for rows, g in fixes:
        name_col[rows] = g
    names[:] = new_names
    name_ids.clear()
    name_ids.update(new_ids)


def _unsorted_threads(jobs: np.ndarray) -> set[int]:
    """The threads (line indices) whose rows are not sorted by (start, -end) (TF writes lines
    sorted; other writers may not): a job's own rows were checked as it decoded them; here, where
    one job's rows end and the next's of the same thread begin."""
    j = jobs[jobs[:, native.J_N] > 0]
    j = j[np.argsort(j[:, native.J_ROW], kind="stable")]
    li = j[:, native.J_LINE]
    s0, e0, s1, e1 = (j[1:, native.J_S0], j[1:, native.J_E0], j[:-1, native.J_S1],
                      j[:-1, native.J_E1])
    joined_bad = (li[1:] == li[:-1]) & ~((s0 > s1) | ((s0 == s1) & (e0 <= e1)))
    return set(li[j[:, native.J_SORTED] == 0].tolist()) | set(li[1:][joined_bad].tolist())


def _sort_rows(cols: dict[str, np.ndarray], first: int, stop: int) -> np.ndarray:
    """Sort a thread's rows [first, stop) by (start, -end); the inverse permutation (a row's new
    place, from ``first``)."""
    rows = slice(first, stop)
    start, end, gid = cols["start"][rows], cols["end"][rows], cols["name"][rows]
    order = np.lexsort((-end, start))
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    gid[:], start[:], end[:] = gid[order], start[order], end[order]
    return inverse


def thread_lines(heads) -> list[list[int]]:
    """A plane's lines ((id, timestamp_ns, name, display name, events) each), grouped by the thread they record: each group
    one line, in the order the plane writes them, except that TF 2.12's python tracer writes a
    thread's Python frames on a line of their own, unnamed, whose id is the thread's id read as
    a signed 32-bit int, while the thread's own line, named, has the unsigned id; left apart,
    the frames would stand on a thread with no steps. Such a line joins the named line whose id
    agrees with it modulo 2**32 (listed before it), and the two are read as one thread."""
    named = {h[0] % (1 << 32): i for i, h in enumerate(heads) if h[0] >= 0}
    joins: dict[int, list[int]] = {}
    for i, (lid, _, name, _, _) in enumerate(heads):
        j = named.get(lid % (1 << 32))
        if lid < 0 and not name and j is not None:
            joins.setdefault(j, []).append(i)
    joined = {i for extra in joins.values() for i in extra}
    return [joins.get(i, []) + [i] for i in range(len(heads)) if i not in joined]


LUT_MAX = 1 << 22  # metadata ids beyond this are looked up in Python (no trace seen uses them)


def _lookup_table(mapping: dict[int, int], dtype, missing) -> np.ndarray:
    """A dense array id -> value for the ids in [0, LUT_MAX)."""
    ids = [k for k in mapping if 0 <= k < LUT_MAX]
    lut = np.full(max(ids, default=-1) + 1, missing, dtype=dtype)
    for k in ids:
        lut[k] = mapping[k]
    return lut


_STAT_COLUMNS = ("stat_event", "stat_metadata_id", "stat_kind", "stat_value", "stat_begin",
                 "stat_end")


def _collect_stats(buf, st, lo, hi, groups, inverse, first, offset, wanted, stat_names, stat_int,
                   stat_str):
    """The wanted stats of one decoded line (``st[...][lo:hi]``, decode_jobs's), appended to
    ``stat_int`` / ``stat_str`` stat by stat (by metadata id), ints, then strings, then refs,
    each in the line's order; their events' rows made the table's (``inverse``: the line's
    thread's rows sorted from ``first``; ``offset``: the file's first row); str values' byte
    spans in ``buf``. ``groups``: each of the line's jobs' (first stat, group keys, group sizes),
    None where a job's stats were left as decoded (grouped here, alike)."""
    if groups is None:      # a job with too many kinds of stats
        d = {k: st[k][lo:hi] for k in _STAT_COLUMNS}
        smid, kind = d["stat_metadata_id"], d["stat_kind"]
        cls = np.select([(kind == _INT_KINDS[0]) | (kind == _INT_KINDS[1]), kind == _STR,
                         kind == _REF], [0, 1, 2], -1)
        keep = np.flatnonzero(cls >= 0)
        order = keep[np.argsort(smid[keep] * 4 + cls[keep], kind="stable")]
        st = {k: v[order] for k, v in d.items()}
        key = smid[order] * 4 + cls[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
        groups = [(0, key[starts], np.diff(np.r_[starts, len(key)]))]
    pieces: dict[int, list[tuple[int, int]]] = {}
    for at, keys, sizes in groups:
        for key, n in zip(keys.tolist(), sizes.tolist()):
            pieces.setdefault(key, []).append((at, at + n))
            at += n
    for key in sorted(pieces):
        sid, cls = divmod(key, 4)
        sname = wanted[sid]

        def column(name: str, pcs=pieces[key]) -> np.ndarray:
            return st[name][pcs[0][0]:pcs[0][1]] if len(pcs) == 1 else \
                np.concatenate([st[name][a:b] for a, b in pcs])
        ev = column("stat_event")
        ev = (inverse[ev - first] + first if inverse is not None else ev) + offset
        if cls == 0:
            stat_int.setdefault(sname, []).append((ev, column("stat_value")))
        elif cls == 1:
            text = native.utf8_strings(buf, column("stat_begin"), column("stat_end"))
            stat_str.setdefault(sname, []).append((ev, text))
        else:
            stat_str.setdefault(sname, []).append((ev, _ref_names(column("stat_value"),
                                                                  stat_names)))


def _ref_names(refs: np.ndarray, stat_names: dict[int, str]) -> np.ndarray:
    """Ref values' strings: the names of the stat metadata they refer to ("" for none), an
    object array (each name one object, as the metadata holds it)."""
    if len(refs) and 0 <= refs.min() and refs.max() < LUT_MAX:
        table = np.full(int(refs.max()) + 1, "", dtype=object)
        for k, name in stat_names.items():
            if 0 <= k < len(table):
                table[k] = name
        return table[refs]
    return np.array([stat_names.get(r, "") for r in refs.tolist()], dtype=object)


def _intern(name: str, names: list[str], name_ids: dict[str, int]) -> int:
    gid = name_ids.get(name)
    if gid is None:
        gid = name_ids[name] = len(names)
        names.append(name)
    return gid
