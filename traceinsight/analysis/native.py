"""Typed entry points of the C extension ``_native`` (traceinsight/analysis/_native_decode.c,
_native_kernels.c): the loops that visit every event in order. Inputs are converted to, and outputs allocated with, the dtypes the C
code expects (decode_jobs writes into the table columns its caller passes)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from traceinsight.errors import TraceinsightError

try:
    from traceinsight.analysis import _native
except ImportError as e:  # a source checkout used without installing it
    raise TraceinsightError(
        "traceinsight's C extension is not built (pip install -e . builds it; it needs a C "
        f"compiler): {e}") from None

_I64 = np.int64


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=_I64)


def _u8(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == np.bool_ and a.flags.c_contiguous:
        return a.view(np.uint8)   # the same bytes: no copy of a table-long mask
    return np.ascontiguousarray(a, dtype=np.uint8)


def _i32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int32)


def _i8(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int8)


def _int_column(a: np.ndarray) -> np.ndarray:
    """An integer column in its own width (1, 2, 4 or 8 bytes): no copy of a narrow one."""
    a = np.asarray(a)
    if a.dtype.kind == "i" and a.dtype.itemsize in (1, 2, 4, 8):
        return np.ascontiguousarray(a)
    return _i64(a)


def split_space(data) -> list[tuple[bytes, list[tuple[int, int]]]]:
    """An XSpace's planes: each as (the plane serialized without its lines, [(offset, length) of
    each serialized XLine in ``data``]). ValueError when malformed."""
    return _native.split_space(data)


# A job of scan_jobs / decode_jobs: one row of an int64 array of J_FIELDS fields (their meaning:
# _native_decode.c, where the same names are listed in the same order)
(J_LB, J_LE, J_X, J_Y, J_P, J_Q, J_N, J_STATUS, J_ID, J_TS, J_NB, J_NE, J_DB, J_DE, J_SEEN, J_ROW,
 J_BASE, J_LINE, J_LUT, J_NLUT, J_WANT, J_NWANT, J_SORTED, J_S0, J_E0, J_S1, J_E1, J_AGAIN,
 J_FIELDS) = range(29)


def scan_jobs(data, jobs: np.ndarray, threads: int) -> list[tuple[int, str]]:
    """Walk each job's span of its line (``jobs``, int64 rows of J_FIELDS, filled in place: where
    its fields start and stop, its event count, the line's own fields met) on ``threads``
    threads; a job starting inside its line guesses where a field starts, for the caller to
    check (see _native_decode.c). Returns (job, why) for each job whose walk failed."""
    return _native.scan_jobs(data, jobs, threads)


def decode_jobs(data, jobs: np.ndarray, lut: np.ndarray, wanted: np.ndarray, start: np.ndarray,
                end: np.ndarray, name_id: np.ndarray, line: np.ndarray, threads: int
                ) -> tuple[list[tuple[int, str]], dict[str, np.ndarray], np.ndarray]:
    """Decode the scanned jobs' events into the table's columns (int64 start / end in ps, int32
    name id, int16 or int32 line index) on ``threads`` threads. Returns (job, why) for each job
    that failed; every job's wanted stats, one job's after another's: the event row, metadata
    id, kind (the XStat value's field number: 2 double bits, 3 uint64, 4 int64, 5 str, 6 bytes,
    7 ref; 0 none), value, the byte span of str / bytes values in ``data``; the events the lookup
    table does not name (rows, metadata ids); the stats' groups (keys: metadata id * 4 + class,
    0 integer, 1 str, 2 ref, sorted; sizes), each group a run of a job's stats in the order
    decoded, the other kinds dropped; and each job's counts of these (stats, unnamed events,
    groups: -1 where its stats were left as decoded, not grouped)."""
    errors, cols = _native.decode_jobs(data, jobs, np.ascontiguousarray(lut, dtype=np.int32),
                                       _u8(wanted), start, end, name_id, line, threads)
    keys = ("stat_event", "stat_metadata_id", "stat_kind", "stat_value", "stat_begin",
            "stat_end", "miss_row", "miss_mid", "group_key", "group_count")
    out = {key: np.frombuffer(raw, dtype=np.uint8 if key == "stat_kind" else _I64)
           for key, raw in zip(keys, cols)}
    return errors, out, np.frombuffer(cols[-1], dtype=_I64).reshape(-1, 3)


def pread_into(fd: int, buf: np.ndarray, threads: int) -> int:
    """Read the open file ``fd`` from offset 0 into ``buf`` (its length), in parts read at once
    by ``threads`` threads; the length of the prefix read (shorter where the file shrank).
    OSError as a read raises it."""
    return _native.pread_into(fd, buf, threads)


def utf8_strings(data, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The byte spans [begin, end) of ``data`` as str (UTF-8, errors replaced, as
    ``str(data[b:e], "utf-8", "replace")``), an object array; equal spans share one object."""
    out = np.empty(len(begin), dtype=object)
    out[:] = _native.utf8_strings(data, _i64(begin), _i64(end))
    return out


def is_sorted(start: np.ndarray, end: np.ndarray) -> bool:
    """Sorted by (start, -end)?"""
    return _native.is_sorted(_i64(start), _i64(end))


def nest(start, end, line, include, is_frame, name=None, *, depth: bool = True
         ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(parent, depth, crosser) of the included events; see nest() in _native_kernels.c. Parent and
    depth are int32 (an XSpace holds far fewer than 2^31 events: protobuf's 2 GiB limit); depth
    None where not asked for (``depth=False``: no table-long column made). ``is_frame``: per
    event, or per name id where ``name`` (each event's) is given: no table-long column of it.
    ``line`` is read in its own width."""
    n = len(start)
    parent = np.empty(n, dtype=np.int32)
    dep = np.empty(n if depth else 0, dtype=np.int32)
    crosser = np.empty(n, dtype=np.uint8)
    line = _int_column(line)
    names = np.zeros(0, dtype=np.int32) if name is None else _i32(name)
    if not n:      # (the kernel tells the frames by name from a name column that is not empty)
        is_frame, names = np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int32)
    _native.nest(_i64(start), _i64(end), line, line.dtype.itemsize, _u8(include), _u8(is_frame),
                 names, parent, dep, crosser)
    return parent, dep if depth else None, crosser.view(bool)


def inherit(parent, own, own_strength, pass_strength, *, n_cat: int, pyframe: int, python: int,
            other: int, consume: bool = False) -> np.ndarray:
    """Effective category per event (int8; ``own`` and the strengths are int8 too); see inherit()
    in _native_kernels.c. ``consume``: the categories are written over ``own`` (returned) and
    the strengths handed down over ``pass_strength`` (both int8 arrays, writable, of the caller's,
    which drops them): no table-long column made."""
    if consume:
        for a in (own, pass_strength):
            if a.dtype != np.int8 or not a.flags.c_contiguous or not a.flags.writeable:
                raise ValueError("inherit: consume needs writable int8 columns")
        _native.inherit(_i32(parent), own, _i8(own_strength), pass_strength, own, n_cat, pyframe,
                        python, other, pass_strength)
        return own
    cat = np.empty(len(parent), dtype=np.int8)
    _native.inherit(_i32(parent), _i8(own), _i8(own_strength), _i8(pass_strength), cat,
                    n_cat, pyframe, python, other)
    return cat


def mark_ancestors(flag: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """``flag`` with every ancestor of a flagged event flagged too."""
    out = _u8(flag).copy()
    _native.mark_ancestors(_i32(parent), out)
    return out.view(bool)


def has_child(parent: np.ndarray, name: np.ndarray, child_name: np.ndarray,
              start: np.ndarray | None = None, end: np.ndarray | None = None) -> np.ndarray:
    """Per event (bool): it is the parent of an event whose name ``child_name`` marks (per name
    id), of positive length where ``start`` and ``end`` are given; see has_child() in
    _native_kernels.c (no per-event count of children: one byte an event)."""
    out = np.empty(len(parent), dtype=np.uint8)
    none = np.zeros(0, dtype=_I64)
    _native.has_child(_i32(parent), _i32(name), _u8(child_name),
                      none if start is None else _i64(start), none if end is None else _i64(end),
                      out)
    return out.view(bool)


def lookup(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]`` for a table of one-byte values (int8, uint8, bool: the result has its
    dtype) and an integer index of any width (a one-byte index read unsigned: ``int8`` codes look
    up a 256-entry table by their bytes): no intp copy of the index, as numpy makes of one of
    another width. IndexError outside the table."""
    table = np.ascontiguousarray(table)
    if table.dtype.itemsize != 1:
        raise TypeError("lookup: a table of one-byte values")
    index = np.asarray(index)
    index = index.view(np.uint8) if index.dtype.itemsize == 1 else _int_column(index)
    out = np.empty(len(index), dtype=table.dtype)
    _native.lookup(table.view(np.uint8), np.ascontiguousarray(index), index.dtype.itemsize,
                   out.view(np.uint8))
    return out


def spans_in(start: np.ndarray, end: np.ndarray, outside: np.ndarray, rows: slice,
             room: np.ndarray | None = None) -> np.ndarray:
    """The rows of ``rows`` (a run of the table) of positive length and not ``outside``, int32,
    in order; see spans_in() in _native_kernels.c (no table-long mask, nor an int64 index).
    ``room``: an int32 array to write them into (as long as the rows or longer), a view of which
    is returned."""
    lo, hi = rows.start, rows.stop
    if room is not None:
        if room.dtype != np.int32 or len(room) < hi - lo or not room.flags.c_contiguous:
            raise ValueError("spans_in: room for the rows expected (int32, contiguous)")
        k = _native.spans_in(_i64(start), _i64(end), _u8(outside), lo, hi, room)
        return room[:k]
    out = np.empty(hi - lo, dtype=np.int32)
    k = _native.spans_in(_i64(start), _i64(end), _u8(outside), lo, hi, out)
    # a copy where most rows were left out: not the whole run's room held for a few
    return out[:k] if 2 * k >= len(out) else out[:k].copy()


def nearest_marked(mask: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """For each event, the nearest event at or above it (along parents) in ``mask``; -1 for none
    (int32)."""
    out = np.empty(len(parent), dtype=np.int32)
    _native.nearest_marked(_i32(parent), _u8(mask), out)
    return out


def nearest_marked_at(mask: np.ndarray, parent: np.ndarray, events: np.ndarray,
                      name: np.ndarray | None = None) -> np.ndarray:
    """``nearest_marked(mask, parent)[events]`` (int32), without its table-long column: each event's
    parents are walked up. Where the walks would take more steps than a pass over the whole table
    (events far below their marked ancestors), the table-long pass is made instead. With ``name``
    (each event's name id): ``mask`` is per name id (``nearest_marked_at(mask[name], ...)``), and
    no per-event mask is made but for that pass."""
    events = _i32(events)
    out = np.empty(len(events), dtype=np.int32)
    if not len(events):
        return out
    parent, mask = _i32(parent), _u8(mask)
    extra = () if name is None else (_i32(name),)
    if not _native.nearest_marked_at(parent, mask, events, out, 2 * len(parent) + 1024, *extra):
        return nearest_marked(mask if name is None else lookup(mask, name), parent)[events]
    return out


# A timeline boundary's reference (Timeline.ref, int32): r >= 0 the start of event r, END <= r < 0
# the end of event ~r, r < END the synthetic instant syn_t[r - SYN] (see tline in _native_kernels.c)
END = -(1 << 30)
SYN = -(1 << 31)


@dataclass(eq=False)
class Timeline:
    """One thread's exclusive timeline: its boundaries, as references to the events whose edges
    they are (``ref``, int32: 4 bytes a boundary, the instants are the event table's own), and the
    category of each segment between two (``cat``, int8); segment j is [bound j, bound j + 1).
    The time after a boundary is owned by the event it starts, or by the parent of the event it
    ends (-1: none, a gap: the timeline's events nest as ``parent`` says). Cuts made after the
    sweep (``cut``) are synthetic boundaries: their instants and owners in ``syn_t`` and
    ``syn_owner``. ``start``, ``end`` and ``parent`` are the table's columns, shared."""
    ref: np.ndarray
    cat: np.ndarray
    start: np.ndarray
    end: np.ndarray
    parent: np.ndarray
    syn_t: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=_I64))
    syn_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))

    def __len__(self) -> int:
        """The number of segments."""
        return len(self.cat)

    def _args(self) -> tuple:
        return (np.ascontiguousarray(self.ref, dtype=np.int32), _i64(self.start), _i64(self.end),
                _i32(self.parent), _i64(self.syn_t), _i32(self.syn_owner))

    def times(self, idx=None) -> np.ndarray:
        """The instants of the boundaries ``idx`` (all where None), int64."""
        r = self.ref if idx is None else self.ref[idx]
        r = np.asarray(r, dtype=np.int32)
        out = np.empty(r.shape, dtype=_I64)
        s = r >= 0
        out[s] = self.start[r[s]]
        e = (r < 0) & (r >= END)
        out[e] = self.end[~r[e]]
        y = r < END
        out[y] = self.syn_t[r[y].astype(_I64) - SYN]
        return out

    def owners(self, idx=None) -> np.ndarray:
        """The owners of the segments ``idx`` (all where None), int32, -1 for none."""
        r = self.ref[:-1] if idx is None else self.ref[idx]
        r = np.asarray(r, dtype=np.int32)
        out = r.copy()
        e = (r < 0) & (r >= END)
        out[e] = self.parent[~r[e]]
        y = r < END
        out[y] = self.syn_owner[r[y].astype(_I64) - SYN]
        return out

    def of_category(self, category: int) -> np.ndarray:
        """The segments of one category, in order (int64): found a block of segments at a time,
        with no mask as long as the timeline."""
        step = 1 << 20
        parts = [k + np.flatnonzero(self.cat[k:k + step] == category)
                 for k in range(0, len(self.cat), step)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=_I64)

    def search(self, x, side: str = "left") -> np.ndarray:
        """``np.searchsorted(self.times(), x, side)`` (int64) without the instants' array; see
        timeline_search() in _native_kernels.c."""
        if side not in ("left", "right"):
            raise ValueError(f"search: side 'left' or 'right', not {side!r}")
        x = np.asarray(x, dtype=_I64)
        out = np.empty(x.shape, dtype=_I64)
        _native.timeline_search(*self._args(), np.ascontiguousarray(x).reshape(-1),
                                side == "right", out.reshape(-1))
        return out

    def cut(self, at) -> Timeline:
        """This timeline with a boundary at each instant of ``at`` strictly inside it and not
        one already: synthetic, each owned by the owner of the segment it splits, whose category
        the new segment keeps. A new Timeline (self where nothing is cut)."""
        if len(self.ref) < 2:
            return self
        at = np.unique(np.asarray(at, dtype=_I64))
        first, last = self.times(np.array([0, len(self.ref) - 1]))
        at = at[(at > first) & (at < last)]
        pos = self.search(at, "left")
        new = self.times(pos) != at
        at, pos = at[new], pos[new]
        if not len(at):
            return self
        k0 = len(self.syn_t)
        if k0 + len(at) > END - SYN:
            raise OverflowError("timeline: more than 2^30 synthetic boundaries")
        codes = (SYN + np.arange(k0, k0 + len(at), dtype=_I64)).astype(np.int32)
        return replace(self, ref=np.insert(self.ref, pos, codes),
                       cat=np.insert(self.cat, pos, self.cat[pos - 1]),
                       syn_t=np.concatenate([self.syn_t, at]),
                       syn_owner=np.concatenate([self.syn_owner,
                                                 self.owners(pos - 1)]).astype(np.int32))

    def within(self, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """The segments inside one of the windows [t0, t1) (their edges boundaries of this
        timeline, see ``cut``), in order, int64."""
        return self.within_windows(t0, t1)[0]

    def within_windows(self, t0: np.ndarray, t1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``within``'s segments, the window each lies in), both int64."""
        lo = self.search(t0, "left")
        hi = np.minimum(self.search(t1, "right") - 1, len(self))
        n = np.maximum(hi - lo, 0)
        total = int(n.sum())
        if not total:
            return np.zeros(0, dtype=_I64), np.zeros(0, dtype=_I64)
        return (np.repeat(lo - np.cumsum(n) + n, n) + np.arange(total, dtype=_I64),
                np.repeat(np.arange(len(n), dtype=_I64), n))


def timeline(start, end, events, cat, python: int, parent: np.ndarray, *,
             outside: np.ndarray | None = None, rows: slice | None = None, n_events: int = 0,
             room: np.ndarray | None = None) -> Timeline:
    """The timeline of properly nested ``events`` (table order, int32), ``cat`` the events'
    categories, ``parent`` their nesting (as ``nest`` makes it: the parent of each is the innermost
    of them open when it starts); see timeline() in _native_kernels.c. With ``outside`` (per event)
    and ``rows`` (a run of the table) instead of ``events`` (None): the rows of positive length not
    outside, ``n_events`` of them, with no list of them made. ``room``: the int32 array to write
    the boundaries into (``timeline_room``; the timeline's ``ref`` is a view of it), made by the
    caller beforehand."""
    if outside is None:
        events = _i32(events)
        n_events = len(events)
    ref = room if room is not None else timeline_room(n_events)
    if ref.dtype != np.int32 or len(ref) < 2 * n_events or not ref.flags.c_contiguous:
        raise ValueError("timeline: room for two boundaries an event expected (int32)")
    seg_cat = np.empty(len(ref), dtype=np.int8)
    if outside is None:
        k = _native.timeline(_i64(start), _i64(end), events, _i8(cat), python, ref, seg_cat)
    else:
        rows = rows if rows is not None else slice(0, len(start))
        k = _native.timeline(_i64(start), _i64(end), np.zeros(0, dtype=np.int32), _i8(cat),
                             python, ref, seg_cat, _u8(outside), rows.start, rows.stop)
    # the category of the time after the last boundary (nothing: python) is no segment's
    return Timeline(ref=ref[:k], cat=seg_cat[:max(k - 1, 0)], start=start, end=end,
                    parent=parent)


def timeline_room(n_events: int) -> np.ndarray:
    """Room for the boundaries of the timeline of ``n_events`` events (``timeline``): two an
    event, int32."""
    return np.empty(2 * n_events, dtype=np.int32)


def owned_time(tl: Timeline, t0, t1, category: int, n_events: int,
               group: np.ndarray | None = None) -> np.ndarray:
    """Per event (n_events), the time (ps) of the timeline segments of ``category`` it owns inside
    the windows [t0, t1), clipped to them. With ``group`` (per event, -1: in none), per group
    instead (``n_events`` groups): the summed time of the events of each."""
    out = np.zeros(n_events, dtype=_I64)
    extra = () if group is None else (_i32(group),)
    _native.owned_time(*tl._args(), _i8(tl.cat), _i64(t0), _i64(t1), int(category), out, *extra)
    return out


def frame_sums(parent, name, start, nested, is_frame_name, lo: int, hi: int, t0, t1, own, *,
               consume_own: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per name id: (calls, own time, inclusive time of outermost calls) of the python-tracer frames
    among rows [lo, hi) (one thread) that start in the windows; see frame_sums() in _native_kernels.c.
    ``consume_own``: ``own`` (int64) is overwritten (with subtree sums) instead of copied, for a
    caller that drops it after: a table-long copy less."""
    n_names = len(is_frame_name)
    calls, self_t, incl = (np.zeros(n_names, dtype=_I64) for _ in range(3))
    own = _i64(own)
    if not consume_own or not own.flags.writeable:
        own = own.copy()
    _native.frame_sums(_i32(parent), np.ascontiguousarray(name, dtype=np.int32), _i64(start),
                       _u8(nested), _u8(is_frame_name), lo, hi, _i64(t0), _i64(t1), own,
                       calls, self_t, incl)
    return calls, self_t, incl


def window_sums(tl: Timeline, t0: np.ndarray, t1: np.ndarray, n_cat: int) -> np.ndarray:
    """(len(t0), n_cat) time of each category's timeline segments inside each window [t0, t1)."""
    out = np.zeros((len(t0), n_cat), dtype=_I64)
    _native.window_sums(*tl._args(), _i8(tl.cat), _i64(t0), _i64(t1), out)
    return out


def landing_counts(start, end, line, parent, outside, cat, tl: Timeline, t0, t1,
                   line_kind: np.ndarray, python: int, n_cat: int) -> np.ndarray:
    """The host's events counted by the category their recording cost lands in (int64, one per
    category): the main thread's (``line_kind`` 1 by line) and another host thread's (2) events
    that start in the windows; see landing_counts() in _native_kernels.c."""
    counts = np.zeros(n_cat, dtype=_I64)
    line = _int_column(line)
    _native.landing_counts(_i64(start), _i64(end), line, line.dtype.itemsize, _i32(parent),
                           _u8(outside), _i8(cat), *tl._args(), _i8(tl.cat), _i64(t0),
                           _i64(t1), _u8(line_kind), int(python), counts)
    return counts


def frame_sweep(parent, name, start, end, outside, lo: int, hi: int, tl: Timeline, t0, t1,
                is_frame_name, python: int, issuer_name, caller_name, op_kind,
                cat_a: int, cat_b: int) -> dict[str, np.ndarray] | None:
    """``frame_sums`` of one thread's python-tracer frames over the python time the events own
    (``owned_time``), in one sweep of its rows [lo, hi) and its timeline (windows [t0, t1) sorted
    and disjoint), with no per-event column; and per issuer name (``issuer_name`` marks the
    candidates; an issuer has calls): the time of categories ``cat_a`` / ``cat_b`` owned under
    it, the op calls whose parent's issuer it is by ``op_kind`` (-1: no op, 1 and 2 counted
    apart), and whether it is an entry (the issuer above it is none or a ``caller_name``). See
    frame_sweep() in _native_kernels.c. None where the timeline is not the nesting's: the per-event
    columns then give the same sums."""
    n_names = len(is_frame_name)
    out: dict[str, np.ndarray] = {k: np.zeros(n_names, dtype=_I64) for k in (
        "calls", "self", "inclusive", "time_a", "time_b")}
    ops = np.zeros((n_names, 3), dtype=_I64)
    entry = np.zeros(n_names, dtype=np.uint8)
    if not _native.frame_sweep(
            _i32(parent), np.ascontiguousarray(name, dtype=np.int32), _i64(start), _i64(end),
            _u8(outside), lo, hi, *tl._args(), _i8(tl.cat), _i64(t0), _i64(t1), _u8(is_frame_name),
            int(python), out["calls"], out["self"], out["inclusive"], _u8(issuer_name),
            _u8(caller_name), _i8(op_kind), int(cat_a), int(cat_b), out["time_a"],
            out["time_b"], ops, entry):
        return None
    out["ops"] = ops
    out["entry"] = entry.view(bool)
    return out
