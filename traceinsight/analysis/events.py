"""XSpace files -> one columnar event table (numpy), names interned.

Speed matters (python-traced captures hold millions of events), so events are not turned into Python
objects one by one: protobuf (upb) parses the file with a schema in which ``XLine.events`` is a list of
raw byte strings (``traceinsight.xplane.XSpaceRaw``), and the fields of all events of a line are then
decoded together with numpy, one protobuf field at a time. Stats are decoded the same way; string
values are materialized only for the stat names the analysis asks for (``WANTED_STATS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from traceinsight.errors import TraceinsightError

# Stats the analysis reads. Others are skipped after their metadata id is decoded.
WANTED_STATS = frozenset({
    "step_num", "_r", "tf_function_call", "tracing_count", "eager_op", "is_func", "tf_op",
    "hlo_op", "hlo_module", "bytes_allocated", "peak_bytes_in_use", "group_id", "long_name",
})

_U64 = np.uint64


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
# vectorized protobuf wire decoding

def _at(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Bytes at positions; positions past the end (corrupt lengths) read the zero padding."""
    return buf[np.minimum(pos, len(buf) - 1)]


def _varint(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the varint starting at each position. ``buf`` must end with zero padding.
    Returns (values as uint64, encoded lengths)."""
    b = _at(buf, pos)
    val = (b & 0x7F).astype(_U64)
    length = np.ones(len(pos), dtype=np.int64)
    cont = b >= 0x80
    if not cont.any():  # the common case for ids, tags and lengths
        return val, length
    idx = np.nonzero(cont)[0]
    cur = pos[idx]
    acc = val[idx]
    for k in range(1, 10):
        b = _at(buf, cur + k)
        acc |= (b & 0x7F).astype(_U64) << _U64(7 * k)
        done = b < 0x80
        if done.all():
            val[idx] = acc
            length[idx] = k + 1
            return val, length
        if done.any():
            val[idx[done]] = acc[done]
            length[idx[done]] = k + 1
            keep = ~done
            idx, cur, acc = idx[keep], cur[keep], acc[keep]
    raise CorruptTrace("a varint longer than 10 bytes")


def _walk_fields(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, varint_fields: tuple,
                 len_fields: tuple, fixed64_fields: tuple = ()):
    """Decode the top-level fields of many messages laid out in ``buf``.

    Returns (varint values: {field: uint64 array (0 where absent)}, presence: {field: bool array},
    length-delimited occurrences: {field: (message index, body start, body end)}, fixed64 values).
    """
    n = len(starts)
    values = {f: np.zeros(n, dtype=_U64) for f in varint_fields}
    present = {f: np.zeros(n, dtype=bool) for f in varint_fields + fixed64_fields}
    fixed = {f: np.zeros(n, dtype=_U64) for f in fixed64_fields}
    lens: dict[int, list] = {f: [] for f in len_fields}
    idx = np.nonzero(starts < ends)[0]
    pos = starts[idx].astype(np.int64)
    while idx.size:
        tag, tl = _varint(buf, pos)
        fnum = tag >> _U64(3)
        wt = tag & _U64(7)
        pos = pos + tl
        m0 = wt == 0
        if m0.any():
            v, vl = _varint(buf, pos[m0])
            f0 = fnum[m0]
            for f in varint_fields:
                sel = f0 == f
                if sel.any():
                    tgt = idx[m0][sel]
                    values[f][tgt] = v[sel]
                    present[f][tgt] = True
            pos[m0] += vl
        m2 = wt == 2
        if m2.any():
            length, ll = _varint(buf, pos[m2])
            body = pos[m2] + ll
            body_end = body + length.astype(np.int64)
            f2 = fnum[m2]
            for f in len_fields:
                sel = f2 == f
                if sel.any():
                    lens[f].append((idx[m2][sel], body[sel], body_end[sel]))
            pos[m2] = body_end
        m1 = wt == 1
        if m1.any():
            f1 = fnum[m1]
            p1 = pos[m1]
            for f in fixed64_fields:
                sel = f1 == f
                if sel.any():
                    raw = np.stack([_at(buf, p1[sel] + k).astype(_U64) << _U64(8 * k)
                                    for k in range(8)])
                    fixed[f][idx[m1][sel]] = np.bitwise_or.reduce(raw, axis=0)
                    present[f][idx[m1][sel]] = True
            pos[m1] += 8
        m5 = wt == 5
        pos[m5] += 4
        if (~(m0 | m1 | m2 | m5)).any():
            raise CorruptTrace("an unsupported protobuf wire type")
        over = pos > ends[idx]
        if over.any():
            raise CorruptTrace("a field runs past the end of its event")
        more = pos < ends[idx]
        idx = idx[more]
        pos = pos[more]
    out = {}
    for f, parts in lens.items():
        if parts:
            out[f] = tuple(np.concatenate(p) for p in zip(*parts))
        else:
            empty = np.zeros(0, dtype=np.int64)
            out[f] = (empty, empty, empty)
    return values, present, out, fixed


def _decode_events(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """XEvent fields of many events: (metadata_id, offset_ps, duration_ps, stats occurrences).

    Fast path for the layout protobuf writes (fields in number order: 1 metadata_id, 2 offset_ps,
    3 duration_ps, 4 stats..., 5 num_occurrences; zero scalars omitted). Events laid out any other
    way are decoded by the generic field walker.
    """
    n = len(starts)
    out = {f: np.zeros(n, dtype=_U64) for f in (1, 2, 3, 5)}
    pos = starts.copy()
    for fnum in (1, 2, 3):
        live = pos < ends
        has = live & (_at(buf, pos) == (fnum << 3))
        idx = np.nonzero(has)[0]
        if idx.size:
            v, vl = _varint(buf, pos[idx] + 1)
            out[fnum][idx] = v
            pos[idx] += 1 + vl
    stat_parts = []
    idx = np.nonzero((pos < ends) & (_at(buf, pos) == 0x22))[0]
    while idx.size:
        p = pos[idx] + 1
        length, ll = _varint(buf, p)
        body = p + ll
        body_end = body + length.astype(np.int64)
        stat_parts.append((idx, body, body_end))
        pos[idx] = body_end
        idx = idx[(body_end < ends[idx]) & (_at(buf, body_end) == 0x22)]
    idx = np.nonzero((pos < ends) & (_at(buf, pos) == 0x28))[0]
    if idx.size:
        v, vl = _varint(buf, pos[idx] + 1)
        out[5][idx] = v
        pos[idx] += 1 + vl
    if (pos > ends).any():
        raise CorruptTrace("a field runs past the end of its event")
    odd = np.nonzero(pos != ends)[0]
    if odd.size:  # another layout (or a corrupt event): decode those with the generic walker
        values, _, ld, _ = _walk_fields(buf, starts[odd], ends[odd], (1, 2, 3, 5), (4,))
        for f in out:
            out[f][odd] = values[f]
        keep = [(i[~np.isin(i, odd)], b[~np.isin(i, odd)], e[~np.isin(i, odd)])
                for i, b, e in stat_parts]
        g_idx, g_b, g_e = ld[4]
        stat_parts = keep + [(odd[g_idx], g_b, g_e)]
    if stat_parts:
        stats = tuple(np.concatenate(c) for c in zip(*stat_parts))
    else:
        empty = np.zeros(0, dtype=np.int64)
        stats = (empty, empty, empty)
    return out, stats


def _signed(u: np.ndarray) -> np.ndarray:
    return u.view(np.int64)


# --------------------------------------------------------------------------------------------

# Events decoded per batch: bounds the memory of the Python byte strings of one batch.
CHUNK_EVENTS = 1 << 18


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
        # Times are kept relative to the earliest line timestamp, in ps: absolute nanosecond
        # timestamps (device planes carry them) times 1000 would overflow int64.
        base_ns = min((ln.timestamp_ns for pl in space.planes for ln in pl.lines if len(ln.events)),
                      default=0)
        file_base_ns.append(base_ns)
        for plane in space.planes:
            try:
                for part in _load_plane(plane, host, names, name_ids, lines, planes, stat_int,
                                        stat_str, offset, base_ns):
                    parts.append(part + (len(file_base_ns) - 1,))
                    offset += len(part[1])
            except CorruptTrace as e:
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


def _load_plane(plane, host, names, name_ids, lines, planes, stat_int, stat_str, offset, base_ns):
    """Yield (line index, name ids, start ps, end ps) per line with events, each line sorted by
    (start, -end); stats go to stat_int / stat_str with table-wide event indices."""
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    pstats = {stat_names.get(s.metadata_id, str(s.metadata_id)): _plane_stat_value(s, stat_names)
              for s in plane.stats}
    plane_idx = len(planes)
    planes.append(PlaneInfo(host=host, name=plane.name, stats=pstats))
    if not len(plane.lines):
        return
    # metadata id -> global name id
    meta_keys = np.fromiter(plane.event_metadata.keys(), dtype=np.int64)
    meta_keys.sort()
    meta_gid = np.empty(len(meta_keys), dtype=np.int32)
    for i, k in enumerate(meta_keys.tolist()):
        md = plane.event_metadata[k]
        meta_gid[i] = _intern(md.name or md.display_name or f"<event {k}>", names, name_ids)
    wanted = {k: v for k, v in stat_names.items() if v in WANTED_STATS}

    for line in plane.lines:
        n_ev = len(line.events)
        li = len(lines)
        lines.append(LineInfo(plane=plane_idx, id=line.id, name=line.name,
                              display_name=line.display_name or line.name,
                              timestamp_ns=line.timestamp_ns, n_events=n_ev))
        if not n_ev:
            continue
        line_base = (line.timestamp_ns - base_ns) * 1000
        gids, starts, ends = [], [], []
        line_int: dict[str, list] = {}
        line_str: dict[str, list] = {}
        for lo in range(0, n_ev, CHUNK_EVENTS):
            evs = line.events[lo:lo + CHUNK_EVENTS]
            g, s0, e0 = _decode_chunk(evs, meta_keys, meta_gid, names, name_ids, wanted,
                                      stat_names, lo, line_int, line_str)
            del evs
            gids.append(g)
            starts.append(s0 + line_base)
            ends.append(e0 + line_base)
        gid = np.concatenate(gids)
        start = np.concatenate(starts)
        end = np.concatenate(ends)
        order = np.lexsort((-end, start))
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        for src, dst in ((line_int, stat_int), (line_str, stat_str)):
            for k, chunks in src.items():
                for ev, val in chunks:
                    dst.setdefault(k, []).append((inverse[ev] + offset, val))
        offset += n_ev
        yield li, gid[order], start[order], end[order]


def _intern(name: str, names: list[str], name_ids: dict[str, int]) -> int:
    gid = name_ids.get(name)
    if gid is None:
        gid = name_ids[name] = len(names)
        names.append(name)
    return gid


def _decode_chunk(evs, meta_keys, meta_gid, names, name_ids, wanted, stat_names, lo,
                  out_int, out_str):
    """Decode a batch of serialized XEvents: (name ids, offset ps, end ps); wanted stats are
    appended to out_int / out_str with line-local event indices."""
    raw = b"".join(evs)
    lens = np.fromiter(map(len, evs), dtype=np.int64, count=len(evs))
    buf = np.frombuffer(raw + b"\0" * 16, dtype=np.uint8)  # padding: see _at
    ends = np.cumsum(lens)
    starts = ends - lens
    values, (s_ev, s_beg, s_end) = _decode_events(buf, starts, ends)
    mid = _signed(values[1])
    off = _signed(values[2])
    dur = _signed(values[3])
    if (dur < 0).any():
        raise CorruptTrace("negative event duration")
    pos = np.searchsorted(meta_keys, mid)
    pos_c = np.minimum(pos, max(len(meta_keys) - 1, 0))
    known = (pos < len(meta_keys)) & (meta_keys[pos_c] == mid) if len(meta_keys) else \
        np.zeros(len(mid), dtype=bool)
    gid = np.empty(len(mid), dtype=np.int32)
    gid[known] = meta_gid[pos_c[known]]
    if (~known).any():
        for m in np.unique(mid[~known]).tolist():
            gid[(~known) & (mid == m)] = _intern(f"<unknown event metadata {m}>", names, name_ids)
    if len(s_ev) and wanted:
        _decode_stats(buf, raw, s_ev + lo, s_beg, s_end, wanted, stat_names, out_int, out_str)
    return gid, off, off + dur


def _decode_stats(buf, raw, s_ev, s_beg, s_end, wanted, stat_names, out_int, out_str):
    sv, spresent, sld, _ = _walk_fields(buf, s_beg, s_end, (1, 3, 4, 7), (5, 6), (2,))
    smid = _signed(sv[1])
    s_idx, s_b, s_e = sld[5]
    for sid, sname in wanted.items():
        sel = smid == sid
        if not sel.any():
            continue
        ev_of = s_ev[sel]
        for f in (4, 3):  # int64 / uint64 values
            has = spresent[f][sel]
            if has.any():
                out_int.setdefault(sname, []).append((ev_of[has], _signed(sv[f][sel][has])))
        # strings: str_value, and ref_value (a stat metadata id whose name is the string)
        if len(s_idx):
            m = sel[s_idx]
            if m.any():
                strs = np.array([raw[b:e].decode("utf-8", "replace")
                                 for b, e in zip(s_b[m].tolist(), s_e[m].tolist())], dtype=object)
                out_str.setdefault(sname, []).append((s_ev[s_idx[m]], strs))
        has_ref = spresent[7][sel]
        if has_ref.any():
            refs = _signed(sv[7][sel][has_ref]).tolist()
            out_str.setdefault(sname, []).append(
                (ev_of[has_ref], np.array([stat_names.get(r, "") for r in refs], dtype=object)))
