"""XSpace files -> one columnar event table (numpy), names interned.

Speed matters (python-traced captures hold millions of events), so events are not turned into Python
objects one by one: the C extension splits each plane of the file into its lines
(left in place) and the rest (name, metadata, plane stats), which protobuf (upb) parses with the
public schema (``traceinsight.xplane.XPlane``); the C extension then decodes each line's events and
their stats in one pass, straight into the table's numpy columns (``native.decode_line``). String
values are materialized only for the stat names the analysis asks for (``WANTED_STATS``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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
    TF_FUNCTION_CALL,
    TF_OP,
    TRACING_COUNT,
)
from traceinsight.errors import TraceinsightError
from traceinsight.resample import unique

if TYPE_CHECKING:
    from concurrent.futures import Executor

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
})

# A line of at least this many events is decoded in runs, one thread each (below, threads cost
# more than they save); at most this many threads.
SPLIT_MIN_EVENTS = 1 << 15
MAX_DECODE_THREADS = 8
_threads: int | None = None     # decode_threads(); None: every usable core


def _decode_pool(threads: int) -> Executor:
    """The threads that decode one trace's large lines at once (imported here: a small trace,
    decoded on one thread, never loads concurrent.futures and the logging it brings)."""
    from concurrent.futures import ThreadPoolExecutor
    return ThreadPoolExecutor(threads, thread_name_prefix="traceinsight-decode")


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
    if _threads is not None:
        return max(1, _threads)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DECODE_THREADS))


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
    for path in paths:
        path = Path(path)
        space = open_planes(path)
        host = path.name[: -len(".xplane.pb")] if path.name.endswith(".xplane.pb") else path.stem
        # a plane named twice in one XSpace is one device (or host) written twice: read once, so
        # its events are not counted twice (XProf, too, takes a plane by its name)
        seen: set[str] = set()
        kept = []
        for plane, raws in space:
            name = str(getattr(plane, "name", ""))
            if name in seen:
                duplicates.append(name)
                continue
            seen.add(name)
            kept.append((plane, raws))
        space = kept
        first_line = len(lines)      # this file's lines, and its rows from 0, follow
        try:
            heads = [[native.scan_line(raw) for raw in raws] for _, raws in space]
            # Times are kept relative to the earliest line timestamp, in ps: absolute nanosecond
            # timestamps (device planes carry them) times 1000 would overflow int64.
            base_ns = min((h[1] for plane in heads for h in plane if h[4]), default=None)
            _check_span([h[1] for plane in heads for h in plane if h[4]], path)
            n = sum(h[4] for plane in heads for h in plane)
            cols: dict[str, np.ndarray] = {
                "line": np.empty(n, dtype=_line_dtype(len(lines) + sum(map(len, heads)))),
                "name": np.empty(n, dtype=np.int32),
                "start": np.empty(n, dtype=np.int64), "end": np.empty(n, dtype=np.int64)}
            pos = 0
            threads = _decode_threads()
            big = max((h[4] for plane in heads for h in plane), default=0) >= SPLIT_MIN_EVENTS
            with _decode_pool(threads) if threads > 1 and big else contextlib.nullcontext() \
                    as pool:
                for (plane, raws), plane_heads in zip(space, heads):
                    pos = _load_plane(plane, raws, plane_heads, host, names, name_ids, lines,
                                      planes, stat_int, stat_str, cols, pos, offset, base_ns or 0,
                                      pool, threads)
            # an event before its line's timestamp (a negative offset): refused, as a negative
            # duration is (no trace TF or JAX writes has one). Each line's rows are sorted by
            # start: its first row holds its earliest event
            row = 0
            for li in lines[first_line:]:
                if li.n_events and cols["start"][row] < (li.timestamp_ns - (base_ns or 0)) * 1000:
                    raise ValueError("negative event offset")
                row += li.n_events
        except ValueError as e:
            raise CorruptTrace(f"{path}: corrupt trace ({e})") from None
        del space
        offset += n
        per_file.append((cols, base_ns))
    bases = [b for _, b in per_file if b is not None]
    _check_span(bases, "these traces' hosts")
    for file_cols, b in per_file:  # one clock for all hosts
        if b is not None and b != min(bases):
            file_cols["start"] += (b - min(bases)) * 1000
            file_cols["end"] += (b - min(bases)) * 1000
    if len(per_file) == 1:
        cols = per_file[0][0]
    else:
        cols = {k: np.concatenate([c[k] for c, _ in per_file]) if per_file else
                np.zeros(0, dtype=np.int32 if k in ("line", "name") else np.int64)
                for k in ("line", "name", "start", "end")}
    table = EventTable(line=cols["line"], name=cols["name"], start=cols["start"], end=cols["end"],
                       names=names, lines=lines, planes=planes, files=[str(p) for p in paths],
                       zero_ns=min(bases) if bases else None, duplicate_planes=duplicates)
    for src, dst in ((stat_int, table.stat_int), (stat_str, table.stat_str)):
        for k, chunks in src.items():
            dst[k] = (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))
    return table


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
    try:
        with open(proc, encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == "":
            files = ("memory.max", "memory.current")
            base = root
        elif "memory" in controllers.split(","):
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes")
            base = os.path.join(root, "memory")
        else:
            continue
        # the cgroup's own folder; in a container (a cgroup namespace) the root is the cgroup
        for folder in (os.path.join(base, rel.lstrip("/")), base):
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
    views of the serialized XLines in the file's bytes, which the C decoder reads in place). The
    file is read, not memory-mapped: a mapped file truncated while it is read would crash the
    process (SIGBUS) instead of raising."""
    from traceinsight.xplane import XPlane
    check_trace_size(path)
    try:
        view = _read(path)
    except OSError as e:
        raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
    if not len(view):
        raise TraceinsightError(f"{path}: empty file, not an XSpace trace")
    try:
        space = [(XPlane.FromString(meta), [view[o:o + n] for o, n in spans])
                 for meta, spans in native.split_space(view)]
    except (DecodeError, RuntimeError, ValueError) as e:
        raise TraceinsightError(f"{path}: not a readable XSpace trace ({e})") from None
    if not space:
        raise TraceinsightError(f"{path}: not an XSpace trace (no planes)")
    return space


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


def _read(path: Path) -> memoryview:
    """The file's bytes, read into a numpy buffer: numpy asks for transparent huge pages for
    large arrays, so a large trace costs a page fault per huge page instead of one per page (a
    process's first trace pays a fault for every page it touches). The bytes there now: a file
    that shrinks while it is read gives its shorter content (then found corrupt), one that grows
    is cut."""
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
        view, got = memoryview(buf.data), 0
        while got < len(buf):
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
    return view[:got]


def plane_stat_value(stat, stat_names: dict[int, str]):
    kind = stat.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(stat, kind)
    if kind == "ref_value":
        return stat_names.get(value, "")
    return value


# XStat value kinds as native.decode_line reports them (the value's field number)
_INT_KINDS = (3, 4)  # uint64_value, int64_value
_STR, _BYTES, _REF = 5, 6, 7    # str_value, bytes_value, ref_value (a stat metadata id whose
#                                name is the string)


def _load_plane(plane, raws, heads, host, names, name_ids, lines, planes, stat_int, stat_str, cols, pos,
                offset, base_ns, pool: Executor | None = None, threads: int = 1) -> int:
    """Decode a plane's lines into ``cols`` (the file's table columns) from row ``pos`` on, each
    line sorted by (start, -end); stats go to stat_int / stat_str with table-wide event indices
    (``offset``: the file's first row in the table). ``heads``: each line's native.scan_line.
    ``pool``: ``threads`` threads that decode a large line's runs at once. Returns the next free
    row."""
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    pstats = {stat_names.get(s.metadata_id, str(s.metadata_id)): plane_stat_value(s, stat_names)
              for s in plane.stats}
    plane_idx = len(planes)
    planes.append(PlaneInfo(host=host, name=plane.name, stats=pstats))
    # metadata id -> global name id, as a lookup table the decoder indexes (TF numbers metadata
    # densely from 1); ids past LUT_MAX, or unknown, are looked up here afterwards
    meta_gid = {k: _intern(md.name or md.display_name or f"<event {k}>", names, name_ids)
                for k, md in plane.event_metadata.items()}
    lut = _lookup_table(meta_gid, np.int32, -1)
    wanted = {k: v for k, v in stat_names.items() if v in WANTED_STATS}
    wanted_lut = _lookup_table(dict.fromkeys(wanted, 1), np.uint8, 0)
    mid = np.empty(max((h[4] for h in heads), default=0), dtype=np.int64)

    for group in thread_lines(heads):
        lid, _, name, display, _ = heads[group[-1]]
        ts = min(heads[i][1] for i in group)
        n_ev = sum(heads[i][4] for i in group)
        li = len(lines)
        lines.append(LineInfo(plane=plane_idx, id=lid, name=name, display_name=display or name,
                              timestamp_ns=ts, n_events=n_ev))
        if not n_ev:
            continue
        rows = slice(pos, pos + n_ev)
        gid, start, end = cols["name"][rows], cols["start"][rows], cols["end"][rows]
        cols["line"][rows] = li
        parts, at = [], 0       # each written line of the thread: its rows' first, its stats
        for i in group:
            k = heads[i][4]
            part = slice(at, at + k)
            parts.append((i, at, _decode(raws[i], (heads[i][1] - base_ns) * 1000, lut, wanted_lut,
                                         start[part], end[part], gid[part], mid[:k], pool,
                                         threads)))
            if (gid[part] < 0).any():
                _name_rest(gid[part], mid[:k], meta_gid, names, name_ids)
            at += k
        inverse = None
        if not native.is_sorted(start, end):  # TF writes lines sorted; other writers may not
            order = np.lexsort((-end, start))
            inverse = np.empty_like(order)
            inverse[order] = np.arange(len(order))
            gid[:], start[:], end[:] = gid[order], start[order], end[order]
        for i, first, stats in parts:
            if len(stats["stat_event"]):
                part_inverse = (inverse[first:] if inverse is not None
                                else np.arange(first, n_ev) if first else None)
                _collect_stats(raws[i], stats, wanted, stat_names, part_inverse, offset + pos,
                               stat_int, stat_str)
        pos += n_ev
    return pos


def thread_lines(heads) -> list[list[int]]:
    """A plane's lines (native.scan_line heads), grouped by the thread they record: each group
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


def _decode(raw, base_ps, lut, wanted_lut, start, end, gid, mid, pool: Executor | None,
            threads: int) -> dict[str, np.ndarray]:
    """``native.decode_line`` of one line; a line of ``SPLIT_MIN_EVENTS`` or more, given a pool,
    in runs of whole events (``native.split_line``), one thread each, each writing its rows of
    the columns; the runs' stats joined in order, their event indices and byte spans made the
    line's again: the result of one ``decode_line`` of the whole line."""
    if pool is None or len(start) < SPLIT_MIN_EVENTS:
        return native.decode_line(raw, base_ps, lut, wanted_lut, start, end, gid, mid)
    runs = native.split_line(raw, threads, len(start))
    lut = np.ascontiguousarray(lut, dtype=np.int32)
    wanted_lut = np.ascontiguousarray(wanted_lut, dtype=np.uint8)
    jobs = [pool.submit(native.decode_line, raw[b:e], base_ps, lut, wanted_lut, start[i:i + n],
                        end[i:i + n], gid[i:i + n], mid[i:i + n]) for b, e, i, n in runs]
    parts = [j.result() for j in jobs]
    out = {k: np.concatenate([d[k] for d in parts]) for k in parts[0]}
    # each run's event indices and byte spans (str / bytes values) are its own: the line's
    first = np.repeat([i for _, _, i, _ in runs], [len(d["stat_event"]) for d in parts])
    begin = np.repeat([b for b, _, _, _ in runs], [len(d["stat_event"]) for d in parts])
    out["stat_event"] += first
    spans = (out["stat_kind"] == _STR) | (out["stat_kind"] == _BYTES)
    out["stat_begin"][spans] += begin[spans]
    out["stat_end"][spans] += begin[spans]
    return out


LUT_MAX = 1 << 22  # metadata ids beyond this are looked up in Python (no trace seen uses them)


def _lookup_table(mapping: dict[int, int], dtype, missing) -> np.ndarray:
    """A dense array id -> value for the ids in [0, LUT_MAX)."""
    ids = [k for k in mapping if 0 <= k < LUT_MAX]
    lut = np.full(max(ids, default=-1) + 1, missing, dtype=dtype)
    for k in ids:
        lut[k] = mapping[k]
    return lut


def _name_rest(gid, mid, meta_gid, names, name_ids) -> None:
    """Name ids of the events the lookup table did not cover: large metadata ids, and ids with no
    metadata (named so, not dropped)."""
    for m in unique(mid[gid < 0]).tolist():
        g = meta_gid.get(m)
        if g is None:
            g = _intern(f"<unknown event metadata {m}>", names, name_ids)
        gid[(gid < 0) & (mid == m)] = g


def _collect_stats(raw, d, wanted, stat_names, inverse, offset, stat_int, stat_str):
    """The wanted stats of one decoded line, with table-wide event indices."""
    smid, kind = d["stat_metadata_id"], d["stat_kind"]
    ev = d["stat_event"]
    ev = (inverse[ev] if inverse is not None else ev) + offset
    val, b, e = d["stat_value"], d["stat_begin"], d["stat_end"]
    for sid in unique(smid).tolist():
        sname = wanted[sid]
        this = smid == sid
        k = kind[this]
        ints = this.copy()
        ints[this] = (k == _INT_KINDS[0]) | (k == _INT_KINDS[1])
        if ints.any():
            stat_int.setdefault(sname, []).append((ev[ints], val[ints]))
        strs = this.copy()
        strs[this] = k == _STR
        if strs.any():
            text = np.array([str(raw[i:j], "utf-8", "replace")
                             for i, j in zip(b[strs].tolist(), e[strs].tolist())], dtype=object)
            stat_str.setdefault(sname, []).append((ev[strs], text))
        refs = this.copy()
        refs[this] = k == _REF
        if refs.any():
            text = np.array([stat_names.get(r, "") for r in val[refs].tolist()], dtype=object)
            stat_str.setdefault(sname, []).append((ev[refs], text))


def _intern(name: str, names: list[str], name_ids: dict[str, int]) -> int:
    gid = name_ids.get(name)
    if gid is None:
        gid = name_ids[name] = len(names)
        names.append(name)
    return gid
