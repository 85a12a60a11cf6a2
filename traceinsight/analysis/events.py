"""XSpace files -> one columnar event table (numpy), names interned.

Speed matters (python-traced captures hold millions of events), so events are not turned into Python
objects one by one: protobuf (upb) parses the file with a schema in which ``XPlane.lines`` is a list
of raw byte strings (``traceinsight.xplane.XSpaceRaw``; planes, metadata and plane stats are
ordinary messages), and the C extension decodes each line's events and their stats in one pass into
numpy arrays (``native.decode_line``). String values are materialized only for the stat names the
analysis asks for (``WANTED_STATS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from traceinsight.analysis import native

from traceinsight.errors import TraceinsightError

# Stats the analysis reads. Others are skipped after their metadata id is decoded.
WANTED_STATS = frozenset({
    "step_num", "_r", "tf_function_call", "tracing_count", "eager_op", "is_func", "tf_op",
    "hlo_op", "hlo_module", "bytes_allocated", "peak_bytes_in_use", "group_id", "long_name",
})

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

    line: np.ndarray            # int32, index into lines
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

    def __len__(self) -> int:
        return len(self.start)

    def name_id(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            return -1

    def stat_int_column(self, stat: str, default: int = -1) -> np.ndarray:
        """A full-length int64 column of one stat (``default`` where an event lacks it)."""
        col = np.full(len(self), default, dtype=np.int64)
        if stat in self.stat_int:
            idx, val = self.stat_int[stat]
            col[idx] = val
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
    parts: list[tuple] = []  # per line: (line index, name ids, start, end, file index)
    names: list[str] = []
    name_ids: dict[str, int] = {}
    lines: list[LineInfo] = []
    planes: list[PlaneInfo] = []
    stat_int: dict[str, list] = {}
    stat_str: dict[str, list] = {}
    file_base_ns: list[int] = []
    offset = 0
    from traceinsight.xplane import XSpaceRaw

    for path in paths:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise TraceinsightError(f"{path}: cannot read ({e.strerror or e})") from None
        if not data:
            raise TraceinsightError(f"{path}: empty file, not an XSpace trace")
        try:
            space = XSpaceRaw.FromString(data)
        except (DecodeError, RuntimeError, ValueError) as e:
            raise TraceinsightError(f"{path}: not a readable XSpace trace (protobuf: {e})") from None
        del data
        if not len(space.planes):
            raise TraceinsightError(f"{path}: not an XSpace trace (no planes)")
        host = path.name[: -len(".xplane.pb")] if path.name.endswith(".xplane.pb") else path.stem
        try:
            heads = [[native.scan_line(raw) for raw in plane.lines] for plane in space.planes]
            # Times are kept relative to the earliest line timestamp, in ps: absolute nanosecond
            # timestamps (device planes carry them) times 1000 would overflow int64.
            base_ns = min((h[1] for plane in heads for h in plane if h[4]), default=0)
            file_base_ns.append(base_ns)
            for plane, plane_heads in zip(space.planes, heads):
                for part in _load_plane(plane, plane_heads, host, names, name_ids, lines, planes,
                                        stat_int, stat_str, offset, base_ns):
                    parts.append(part + (len(file_base_ns) - 1,))
                    offset += len(part[1])
        except ValueError as e:
            raise CorruptTrace(f"{path}: corrupt trace ({e})") from None
        del space
    if parts:
        global_base = min(file_base_ns)
        shift = [(b - global_base) * 1000 for b in file_base_ns]
        line = np.concatenate([np.full(len(p[1]), p[0], dtype=np.int32) for p in parts])
        name = np.concatenate([p[1] for p in parts])
        start = np.concatenate([p[2] + shift[p[4]] if shift[p[4]] else p[2] for p in parts])
        end = np.concatenate([p[3] + shift[p[4]] if shift[p[4]] else p[3] for p in parts])
    else:
        line = name = np.zeros(0, dtype=np.int32)
        start = end = np.zeros(0, dtype=np.int64)
    table = EventTable(line=line, name=name, start=start, end=end,
                       names=names, lines=lines, planes=planes, files=[str(p) for p in paths])
    for src, dst in ((stat_int, table.stat_int), (stat_str, table.stat_str)):
        for k, chunks in src.items():
            dst[k] = (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))
    return table


def _plane_stat_value(stat, stat_names: dict[int, str]):
    kind = stat.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(stat, kind)
    if kind == "ref_value":
        return stat_names.get(value, "")
    return value


# XStat value kinds as native.decode_line reports them (the value's field number)
_INT_KINDS = (3, 4)  # uint64_value, int64_value
_STR, _REF = 5, 7    # str_value, ref_value (a stat metadata id whose name is the string)


def _load_plane(plane, heads, host, names, name_ids, lines, planes, stat_int, stat_str, offset,
                base_ns):
    """Yield (line index, name ids, start ps, end ps) per line with events, each line sorted by
    (start, -end); stats go to stat_int / stat_str with table-wide event indices. ``heads``: each
    line's native.scan_line."""
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    pstats = {stat_names.get(s.metadata_id, str(s.metadata_id)): _plane_stat_value(s, stat_names)
              for s in plane.stats}
    plane_idx = len(planes)
    planes.append(PlaneInfo(host=host, name=plane.name, stats=pstats))
    if not len(plane.lines):
        return
    # metadata id -> global name id, as a lookup table the decoder indexes (TF numbers metadata
    # densely from 1); ids past LUT_MAX, or unknown, are looked up here afterwards
    meta_gid = {k: _intern(md.name or md.display_name or f"<event {k}>", names, name_ids)
                for k, md in plane.event_metadata.items()}
    lut = _lookup_table(meta_gid, np.int32, -1)
    wanted = {k: v for k, v in stat_names.items() if v in WANTED_STATS}
    wanted_lut = _lookup_table(dict.fromkeys(wanted, 1), np.uint8, 0)

    for raw, (lid, ts, name, display, n_ev) in zip(plane.lines, heads):
        li = len(lines)
        lines.append(LineInfo(plane=plane_idx, id=lid, name=name, display_name=display or name,
                              timestamp_ns=ts, n_events=n_ev))
        if not n_ev:
            continue
        d = native.decode_line(raw, (ts - base_ns) * 1000, n_ev, lut, wanted_lut)
        gid, start, end = d["name_id"], d["start"], d["end"]
        if (gid < 0).any():
            _name_rest(gid, d["metadata_id"], meta_gid, names, name_ids)
        inverse = None
        if not native.is_sorted(start, end):  # TF writes lines sorted; other writers may not
            order = np.lexsort((-end, start))
            inverse = np.empty_like(order)
            inverse[order] = np.arange(len(order))
            gid, start, end = gid[order], start[order], end[order]
        if len(d["stat_event"]):
            _collect_stats(raw, d, wanted, stat_names, inverse, offset, stat_int, stat_str)
        offset += n_ev
        yield li, gid, start, end


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
    for m in np.unique(mid[gid < 0]).tolist():
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
    for sid in np.unique(smid).tolist():
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
            text = np.array([raw[i:j].decode("utf-8", "replace")
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
