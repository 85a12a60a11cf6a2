"""The C kernels (traceinsight.analysis.native) against brute-force definitions, on random events:
nesting, the timeline, window sums, owned time, subtree sums, outermost recursive calls and
the nearest marked event above."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceinsight.analysis import native


def disjoint_windows(windows) -> tuple[np.ndarray, np.ndarray]:
    """The (start, end) windows in start order, each one overlapping an earlier kept one
    dropped: disjoint windows, as steps are (starts, ends)."""
    steps: list[tuple[int, int]] = []
    for a, b in sorted(windows):
        if not steps or a >= steps[-1][1]:
            steps.append((a, b))
    return (np.array([a for a, _ in steps], dtype=np.int64),
            np.array([b for _, b in steps], dtype=np.int64))


@st.composite
def nested_lines(draw, max_lines=3):
    """Events of a few thread lines, properly nested (touching and equal spans allowed), sorted by
    (line, start, -end) like the event table: (line, start, end, name)."""
    rows = []
    for line in range(draw(st.integers(1, max_lines))):
        def children(lo, hi, depth):
            t = lo
            for _ in range(draw(st.integers(0, 3 if depth < 4 else 0))):
                if t >= hi:
                    break
                s = draw(st.integers(t, hi))
                e = draw(st.integers(s, hi))
                if e == s:
                    continue
                rows.append((line, s, e, draw(st.integers(0, 3))))  # noqa: B023 (called in the loop)
                children(s, e, depth + 1)
                t = draw(st.integers(e, hi))
        children(0, 1000, 0)
    rows.sort(key=lambda r: (r[0], r[1], -r[2]))
    line, start, end, name = (np.array(c, dtype=np.int64) for c in zip(*rows)) if rows else \
        (np.zeros(0, np.int64),) * 4
    return line.astype(np.int32), start, end, name.astype(np.int32)


def brute_parent(line, start, end):
    """The innermost earlier event of the same line that contains each event."""
    parent = np.full(len(start), -1)
    for i in range(len(start)):
        for j in range(i - 1, -1, -1):
            if line[j] == line[i] and start[j] <= start[i] and end[i] <= end[j]:
                parent[i] = j
                break
    return parent


def nest_all(line, start, end, frames=None):
    n = len(start)
    frames = np.zeros(n, bool) if frames is None else frames
    return native.nest(start, end, line, np.ones(n, bool), frames)


@settings(max_examples=150, deadline=None)
@given(nested_lines())
def test_nest_finds_the_innermost_container(ev):
    line, start, end, _ = ev
    parent, depth, crosser = nest_all(line, start, end)
    assert not crosser.any()
    np.testing.assert_array_equal(parent, brute_parent(line, start, end))
    for narrow in (np.int8, np.int16):     # the line column read in its own width
        np.testing.assert_array_equal(nest_all(line.astype(narrow), start, end)[0], parent)
    want_depth = [0 if p < 0 else None for p in parent]
    for i, p in enumerate(parent):
        want_depth[i] = 0 if p < 0 else want_depth[p] + 1
    np.testing.assert_array_equal(depth, want_depth)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 30), st.booleans()), max_size=30))
def test_nest_keeps_crossing_events_out_and_the_rest_nested(spans):
    """Any events at all: whatever is not a crosser nests properly, and a frame crossing a TraceMe
    is the one kept out."""
    rows = sorted(((s, s + d, fr) for s, d, fr in spans), key=lambda r: (r[0], -r[1]))
    start = np.array([r[0] for r in rows], dtype=np.int64)
    end = np.array([r[1] for r in rows], dtype=np.int64)
    frame = np.array([r[2] for r in rows], dtype=bool)
    line = np.zeros(len(rows), dtype=np.int32)
    parent, _, crosser = nest_all(line, start, end, frame)
    kept = np.nonzero(~crosser)[0]
    for a in kept:  # no two kept events partly overlap
        for b in kept:
            if start[a] < start[b] < end[a]:
                assert end[b] <= end[a], (a, b)
    # each kept event's parent is its innermost kept container
    bp = brute_parent(line[kept], start[kept], end[kept])
    np.testing.assert_array_equal(parent[kept], np.where(bp >= 0, kept[np.maximum(bp, 0)], -1))
    assert (parent[crosser] == -1).all()
    # the frames told by name (name i is event i's), the lines in a narrower column: the same
    by_name = native.nest(start, end, line.astype(np.int16), np.ones(len(rows), bool), frame,
                          np.arange(len(rows)))
    for got, want in zip(by_name, nest_all(line, start, end, frame)):
        np.testing.assert_array_equal(got, want)


def test_a_frame_crossing_a_traceme_is_kept_out_not_the_traceme():
    # frame [0, 10), TraceMe [5, 20) opened inside it (``with Trace``), frame [12, 30) closes it
    start = np.array([0, 5, 12], dtype=np.int64)
    end = np.array([10, 20, 30], dtype=np.int64)
    frame = np.array([True, False, True])
    parent, depth, crosser = nest_all(np.zeros(3, np.int32), start, end, frame)
    assert crosser.tolist() == [True, False, True]
    assert parent.tolist() == [-1, -1, -1]


@settings(max_examples=150, deadline=None)
@given(nested_lines(max_lines=1), st.lists(st.integers(-5, 1005), min_size=1, max_size=20))
def test_timeline_owner_is_the_innermost_open_event(ev, probes):
    line, start, end, _ = ev
    """The boundaries' instants strictly increase, and each segment's owner (the event a
    boundary starts, or the parent of the one it ends) is the innermost open event there."""
    parent, depth, _ = nest_all(line, start, end)
    cat = np.arange(len(start)) % 5
    tl = native.timeline(start, end, np.arange(len(start)), cat, 9, parent)
    t, owner, seg_cat = tl.times(), tl.owners(), tl.cat
    assert (np.diff(t) > 0).all() and len(seg_cat) == max(len(t) - 1, 0) == len(owner)
    # the same events given as the rows of positive length not outside: the same timeline
    outside = np.zeros(len(start), dtype=bool)
    by_rows = native.timeline(start, end, None, cat, 9, parent, outside=outside,
                              n_events=len(start))
    np.testing.assert_array_equal(by_rows.ref, tl.ref)
    np.testing.assert_array_equal(by_rows.cat, tl.cat)
    for x in probes:
        open_ = [i for i in range(len(start)) if start[i] <= x < end[i]]
        want = max(open_, key=lambda i: depth[i]) if open_ else -1
        k = np.searchsorted(t, x, side="right") - 1
        assert k == tl.search(np.array([x]), "right")[0] - 1
        got = owner[k] if 0 <= k < len(t) - 1 else -1
        assert got == want, (x, got, want)
        if got >= 0:
            assert seg_cat[k] == cat[got]
        elif 0 <= k < len(t) - 1:
            assert seg_cat[k] == 9


@settings(max_examples=150, deadline=None)
@given(nested_lines(max_lines=1), st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 400)),
                                           max_size=8))
def test_window_sums_and_owned_time_clip_every_segment(ev, windows):
    line, start, end, _ = ev
    if not len(start):
        return
    cat = np.arange(len(start)) % 3
    parent, _, _ = nest_all(line, start, end)
    whole = native.timeline(start, end, np.arange(len(start)), cat, 3, parent)
    t0 = np.array([w[0] for w in windows], dtype=np.int64)
    t1 = t0 + np.array([w[1] for w in windows], dtype=np.int64)
    # cut at the windows' starts too (synthetic boundaries: the sums are the same)
    for tl in (whole, whole.cut(t0)):
        check_sums_clip_every_segment(tl, t0, t1, len(start))


def check_sums_clip_every_segment(tl, t0, t1, n):
    bounds, owner, seg_cat = tl.times(), tl.owners(), tl.cat
    got = native.window_sums(tl, t0, t1, 4)
    clip = np.clip(np.minimum(bounds[1:][None, :], t1[:, None])
                   - np.maximum(bounds[:-1][None, :], t0[:, None]), 0, None)
    for c in range(4):
        np.testing.assert_array_equal(got[:, c], clip[:, seg_cat == c].sum(axis=1))
    # owned time: disjoint windows (the steps), per owning event
    ws, we = disjoint_windows(zip(t0.tolist(), t1.tolist()))
    for c in range(3):
        got = native.owned_time(tl, ws, we, c, n)
        clip = np.clip(np.minimum(bounds[1:][None, :], we[:, None])
                       - np.maximum(bounds[:-1][None, :], ws[:, None]), 0, None).sum(axis=0)
        want = np.zeros(n, dtype=np.int64)
        for j in np.nonzero((seg_cat == c) & (owner >= 0))[0]:
            want[owner[j]] += clip[j]
        np.testing.assert_array_equal(got, want)
        # by group: each event's owned time summed into its group's (-1: into none)
        group = (np.arange(n) % 4 - 1).astype(np.int32)
        by = native.owned_time(tl, ws, we, c, 3, group=group)
        np.testing.assert_array_equal(by, [want[group == g].sum() for g in range(3)])


@settings(max_examples=200, deadline=None)
@given(nested_lines(max_lines=1), st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 400)),
                                           max_size=4))
def test_frame_sums_count_self_and_outermost_inclusive_time(ev, windows):
    line, start, end, name = ev
    parent, _, _ = nest_all(line, start, end)
    n = len(start)
    own = (np.arange(n) * 7 + 3) % 11
    is_frame_name = np.array([True, True, False, True])  # name 2 is a TraceMe
    ws, we = disjoint_windows((a, a + d) for a, d in windows)
    calls, self_t, incl = native.frame_sums(parent, name, start, np.ones(n, bool), is_frame_name,
                                            0, n, ws, we, own)
    ancestors = []
    for i in range(n):
        chain, p = [], parent[i]
        while p >= 0:
            chain.append(p)
            p = parent[p]
        ancestors.append(chain)
    counted = [bool(is_frame_name[name[i]]) and any(a <= start[i] < b for a, b in zip(ws, we))
               for i in range(n)]
    want = np.zeros((3, 4), dtype=np.int64)
    for i in range(n):
        if not counted[i]:
            continue
        want[0, name[i]] += 1
        want[1, name[i]] += own[i]
        if not any(counted[a] and name[a] == name[i] for a in ancestors[i]):
            want[2, name[i]] += own[i] + sum(own[j] for j in range(n) if i in ancestors[j])
    np.testing.assert_array_equal(np.stack([calls, self_t, incl]), want)
    # consumed in place (the analysis's call: no copy of the column), the same sums
    spent = own.astype(np.int64)
    got = native.frame_sums(parent, name, start, np.ones(n, bool), is_frame_name, 0, n, ws, we,
                            spent, consume_own=True)
    np.testing.assert_array_equal(np.stack(got), want)


@st.composite
def xspaces(draw):
    """A serialized XSpace: a plane or two of lines whose events carry stats (ints, refs and
    strings, some holding bytes an event's field would start with), the lines' own fields before
    and after the events; a few events with metadata ids the plane does not name."""
    from traceinsight.xplane import XSpace
    space = XSpace()
    for p in range(draw(st.integers(1, 2))):
        plane = space.planes.add(name=f"/host:CPU{p}")
        for k in range(1, 6):
            plane.event_metadata[k].id = k
            plane.event_metadata[k].name = f"e{k}"
        for k, name in enumerate(("step_num", "eager_op", "tf_function_call", "other"), 1):
            plane.stat_metadata[k].id = k
            plane.stat_metadata[k].name = name
        for i in range(draw(st.integers(1, 3))):
            line = plane.lines.add(id=draw(st.integers(0, 99)), name=f"t{i}",
                                   timestamp_ns=draw(st.integers(0, 10**6)))
            for _ in range(draw(st.integers(0, 60))):
                ev = line.events.add(metadata_id=draw(st.integers(1, 7)),
                                     offset_ps=draw(st.integers(0, 10**6)),
                                     duration_ps=draw(st.integers(0, 10**4)))
                for _ in range(draw(st.integers(0, 3))):
                    s = ev.stats.add(metadata_id=draw(st.integers(1, 4)))
                    kind = draw(st.integers(0, 2))
                    if kind == 0:
                        s.int64_value = draw(st.integers(-5, 5))
                    elif kind == 1:
                        s.ref_value = draw(st.integers(1, 4))
                    else:       # a tag of an event's field, a length, a metadata id...
                        s.str_value = draw(st.text(alphabet='"\x08\x10\x01\x02ab\xe9',
                                                   max_size=12))
            line.display_name = draw(st.sampled_from(["", "shown"]))
    return space.SerializeToString()


def _decode_cut(path, job_bytes: int, threads: int):
    """The event table of ``path``, its lines cut into jobs of about ``job_bytes`` decoded on
    ``threads`` threads; and how the jobs' guesses fared: (jobs that guessed where their first
    field starts, those walked again from the known field, lines walked again whole)."""
    from traceinsight.analysis import events
    fared = [0, 0, 0]
    scan = native.scan_jobs

    def counted(data, jobs, n):
        failed = scan(data, jobs, n)
        if len(jobs) == 1 and n == 1:
            fared[2] += 1
        else:
            fared[0] += int((jobs[:, native.J_X] > jobs[:, native.J_LB]).sum())
            fared[1] += int(jobs[:, native.J_AGAIN].sum())
        return failed
    with pytest.MonkeyPatch.context() as mp, events.decode_threads(threads):
        mp.setattr(events, "JOB_MIN_BYTES", job_bytes)
        mp.setattr(events, "JOBS_PER_THREAD", 1 << 20)
        mp.setattr(events, "PARALLEL_MIN_BYTES", 0)
        mp.setattr(native, "scan_jobs", counted)
        return events.load_files([path]), fared


def _same_tables(a, b) -> None:
    for col in ("line", "name", "start", "end"):
        x, y = getattr(a, col), getattr(b, col)
        assert x.dtype == y.dtype and np.array_equal(x, y), col
    assert a.names == b.names and a.lines == b.lines and a.planes == b.planes
    for kind in ("stat_int", "stat_str"):
        x, y = getattr(a, kind), getattr(b, kind)
        assert list(x) == list(y), kind
        for k in x:
            assert np.array_equal(x[k][0], y[k][0]) and x[k][1].tolist() == y[k][1].tolist(), k


@settings(max_examples=80, deadline=None)
@given(xspaces(), st.integers(1, 40), st.integers(2, 5))
def test_decoding_lines_cut_into_jobs_on_threads_is_one_walk(data, job_bytes, threads):
    """A file whose lines are cut into jobs of a few bytes, each guessing where its first field
    starts (in a stat, in a string that looks like an event...), decoded on threads: the table of
    one thread walking each line whole."""
    import tempfile
    from pathlib import Path

    from traceinsight.analysis import events
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.xplane.pb"
        path.write_bytes(data)
        with events.decode_threads(1):
            one = events.load_files([path])
        cut, _ = _decode_cut(path, job_bytes, threads)
    _same_tables(one, cut)


def test_every_committed_trace_decodes_the_same_on_threads():
    """The event table of every committed trace, its lines cut into jobs decoded on threads, is
    the table one thread decodes (the goldens are made from the latter's). Once jobs are longer
    than a few events, their guesses of where a field starts are almost all met: no line is
    walked again whole, and hardly a job from the known field (a guess in a string that parses
    as events)."""
    from pathlib import Path

    from traceinsight.analysis import events
    traces = sorted((Path(__file__).parent / "data").rglob("*.xplane.pb"))
    assert len(traces) > 20
    guessed = again = whole = 0
    for path in traces:
        with events.decode_threads(1):
            one = events.load_files([path])
        for job_bytes in (7, 4096):
            cut, fared = _decode_cut(path, job_bytes, 3)
            _same_tables(one, cut)
            if job_bytes > 7:
                guessed, again, whole = guessed + fared[0], again + fared[1], whole + fared[2]
    assert guessed > 1000 and whole == 0 and again <= guessed // 500, (guessed, again, whole)


def test_a_string_that_looks_like_events_decodes_the_same_on_threads(tmp_path):
    """A line whose events carry long strings made of what an event's bytes look like: jobs
    starting inside a string guess wrong, walk the string as events, and are walked again from
    the field the job before ended at; the table is one thread's."""
    from traceinsight.analysis import events
    from traceinsight.xplane import XSpace
    space = XSpace()
    plane = space.planes.add(name="/host:CPU")
    plane.event_metadata[1].name = "e"
    plane.stat_metadata[1].name = "eager_op"
    line = plane.lines.add(name="python", timestamp_ns=1)
    fake = bytes([0x22, 0x06, 0x08, 0x01, 0x10, 0x02, 0x18, 0x03])     # an event, 8 bytes
    for i in range(40):
        ev = line.events.add(metadata_id=1, offset_ps=1000 * i, duration_ps=10)
        ev.stats.add(metadata_id=1, bytes_value=fake * (500 + 37 * i))
        ev.stats.add(metadata_id=1, str_value=(fake * 3).decode("latin-1") * (i % 3))
    path = tmp_path / "fake.xplane.pb"
    path.write_bytes(space.SerializeToString())
    with events.decode_threads(1):
        one = events.load_files([path])
    for job_bytes in (100, 1000, 4096):
        cut, fared = _decode_cut(path, job_bytes, 3)
        _same_tables(one, cut)
        assert fared[1] > 0 and fared[2] == 0       # walked again from the known field


def test_a_damaged_trace_fails_alike_on_threads(tmp_path):
    """Bytes of a committed trace flipped here and there: decoded on threads, the same table or
    the same one-line error as one thread."""
    from pathlib import Path

    from traceinsight.errors import TraceinsightError
    src = Path(__file__).parent / "data" / "runs" / "retracing" / "function" / "host"
    good = next(src.rglob("*.xplane.pb")).read_bytes()
    rng = np.random.default_rng(5)
    outcomes = set()
    for k in range(40):
        data = bytearray(good)
        for pos in rng.integers(len(data) // 4, len(data), 1 + k % 4):
            data[pos] = int(rng.integers(256))
        path = tmp_path / f"t{k}.xplane.pb"
        path.write_bytes(bytes(data))
        results = []
        for job_bytes, threads in ((1 << 40, 1), (64, 3), (5, 2)):
            try:
                t = _decode_cut(path, job_bytes, threads)[0]
                results.append(("ok", t.start.tobytes(), t.end.tobytes(), t.name.tobytes(),
                                tuple(t.names)))
            except TraceinsightError as e:
                results.append(("error", str(e)))
        assert results[0] == results[1] == results[2], k
        outcomes.add(results[0][0])
    assert outcomes == {"ok", "error"}      # the damage hits both ways


def test_a_file_read_in_parts_on_threads_is_its_bytes(tmp_path):
    data = np.random.default_rng(1).integers(0, 256, (5 << 20) + 3, dtype=np.uint8).tobytes()
    path = tmp_path / "f"
    path.write_bytes(data)
    for threads in (1, 2, 3, 8):
        buf = np.empty(len(data) + 10, np.uint8)      # a file shorter than the buffer: its length
        with open(path, "rb") as f:
            got = native.pread_into(f.fileno(), buf, threads)
        assert got == len(data) and buf[:got].tobytes() == data


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64), st.lists(st.tuples(st.integers(0, 64), st.integers(0, 64)),
                                        max_size=30))
def test_utf8_strings_are_str_of_the_spans(data, spans):
    spans = [(min(a, b, len(data)), min(max(a, b), len(data))) for a, b in spans]
    b = np.array([s for s, _ in spans], dtype=np.int64)
    e = np.array([t for _, t in spans], dtype=np.int64)
    got = native.utf8_strings(data, b, e)
    assert got.dtype == object and got.tolist() == [str(data[s:t], "utf-8", "replace")
                                                    for s, t in spans]
    if len(spans) > 1 and spans[0] == spans[1]:
        assert got[0] is got[1]       # a repeated value is held once
    with pytest.raises(ValueError):
        native.utf8_strings(data, np.array([0]), np.array([len(data) + 1]))


def brute_nearest_marked(mask, parent, e):
    """The event itself if marked, else its parent's answer; -1 past the root (or a parent at or
    after its child, as the kernels read one)."""
    while e >= 0 and not mask[e]:
        e = parent[e] if 0 <= parent[e] < e else -1
    return e


@settings(max_examples=300, deadline=None)
@given(nested_lines(), st.data())
def test_nearest_marked_and_at_walk_up_the_parents(ev, data):
    """Both kernels agree with a walk up the parents: the table-long pass, the one for some
    events, and the latter's fallback to the former once the walks exceed their step budget."""
    line, start, end, _ = ev
    parent, _, _ = nest_all(line, start, end)
    n = len(start)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    want = np.array([brute_nearest_marked(mask, parent, e) for e in range(n)], dtype=np.int32)
    np.testing.assert_array_equal(native.nearest_marked(mask, parent), want)
    events = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=20)) if n else [],
                      dtype=np.int64)
    np.testing.assert_array_equal(native.nearest_marked_at(mask, parent, events), want[events])
    # a step budget of 0: done only where every event is marked itself
    out = np.empty(len(events), dtype=np.int32)
    within = native._native.nearest_marked_at(parent.astype(np.int32), mask.view(np.uint8),
                                              events.astype(np.int32), out, 0)
    assert within == all(mask[e] for e in events.tolist())
    # an unmarked event asked for more times than the table has rows: past the budget, the
    # table-long pass answers
    unmarked = np.flatnonzero(~mask)
    if len(unmarked):
        many = np.full(2 * n + 1100, unmarked[-1], dtype=np.int64)
        np.testing.assert_array_equal(native.nearest_marked_at(mask, parent, many), want[many])
    # the mask per name id, each event's name given: as the walk of the per-event mask it makes
    # (its fallback too)
    names = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int32)
    name_mask = np.array(data.draw(st.lists(st.booleans(), min_size=4, max_size=4)), dtype=bool)
    want = np.array([brute_nearest_marked(name_mask[names], parent, e) for e in range(n)],
                    dtype=np.int32)
    np.testing.assert_array_equal(native.nearest_marked_at(name_mask, parent, events, name=names),
                                  want[events])
    unmarked = np.flatnonzero(~name_mask[names])
    if len(unmarked):
        many = np.full(2 * n + 1100, unmarked[-1], dtype=np.int64)
        np.testing.assert_array_equal(native.nearest_marked_at(name_mask, parent, many,
                                                               name=names), want[many])


def brute_landing(start, end, line, parent, outside, cat, bounds, seg_cat, ws, we, kind, python):
    """Per the definition (traceinsight.analysis.overhead): each counted event's landing
    category, one event at a time."""
    counts = np.zeros(7, dtype=np.int64)
    for i in range(len(start)):
        k = kind[line[i]]
        if not k or (k == 1 and outside[i]):
            continue
        w = [j for j in range(len(ws)) if ws[j] <= start[i]]     # the last window to start
        if not w or start[i] >= we[w[-1]]:
            continue
        if k == 1 and parent[i] >= 0:
            land = cat[parent[i]]
        elif k == 1 and end[i] > start[i]:
            land = python
        else:
            seg = [j for j in range(len(bounds)) if bounds[j] <= start[i]]
            land = seg_cat[seg[-1]] if seg and seg[-1] < len(seg_cat) else python
        counts[land] += 1
    return counts


@settings(max_examples=200, deadline=None)
@given(nested_lines(), st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 400)),
                                max_size=5), st.data())
def test_landing_counts_count_each_event_where_its_cost_lands(ev, windows, data):
    """The main thread's events (line 0) land in their parent's category (python for a root of
    positive length, the instant's for one of zero length), another thread's (line 1) in the main
    thread's category at its start; line 2 counts nowhere, nor events outside the windows or,
    on the main thread, kept out of the nesting. The line column read in its own width."""
    line, start, end, _ = ev
    n = len(start)
    # zero-length events too (no parent), and some events kept out
    end = np.where(np.arange(n) % 5 == 4, start, end)
    parent, _, _ = native.nest(start, end, line, end > start, np.zeros(n, bool))
    outside = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    cat = (np.arange(n) % 6).astype(np.int8)
    main = np.flatnonzero((line == 0) & (end > start))
    whole = native.timeline(start, end, main, cat, 5, parent)
    ws = np.sort(np.array([w[0] for w in windows], dtype=np.int64))
    we = ws + np.array([w[1] for w in windows], dtype=np.int64)
    kind = np.array([1, 2, 0], dtype=np.uint8)
    # cut at the windows' ends too (synthetic boundaries, each its segment's category)
    for tl in (whole, whole.cut(we)):
        want = brute_landing(start, end, line, parent, outside, cat, tl.times(), tl.cat, ws, we,
                             kind, 5)
        for dtype in (np.int16, np.int32, np.int64):
            got = native.landing_counts(start, end, line.astype(dtype), parent, outside, cat, tl,
                                        ws, we, kind, 5, 7)
            np.testing.assert_array_equal(got, want)


@settings(max_examples=300, deadline=None)
@given(nested_lines(max_lines=1), st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 400)),
                                           max_size=4), st.data())
def test_frame_sweep_is_frame_sums_over_owned_time_and_the_issuers_sums(ev, windows, data):
    """The sweep's sums against its twins: ``frame_sums`` over ``owned_time``'s python time, and
    per issuer (a marked name with calls; each event's nearest issuer at or above it, walked up
    the parents) the owned time of two categories under it, the op calls below it by kind, and
    whether an issuer event in a window has no issuer above or a caller's. Some events of zero
    length, some kept out of the nesting."""
    line, start, end, name = ev
    n = len(start)
    end = np.where(np.arange(n) % 7 == 6, start, end)
    draw = data.draw
    outside = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    include = (end > start) & ~outside
    parent, _, _ = native.nest(start, end, line, include, np.zeros(n, bool))
    cat = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int8)
    tl = native.timeline(start, end, np.flatnonzero(include), cat, 3, parent)
    # by rows (those of positive length not outside: the included ones), the same timeline
    by_rows = native.timeline(start, end, None, cat, 3, parent, outside=outside,
                              rows=slice(0, n), n_events=int(include.sum()))
    np.testing.assert_array_equal(by_rows.ref, tl.ref)
    np.testing.assert_array_equal(by_rows.cat, tl.cat)
    if include.any():      # no room for the rows' boundaries: refused, nothing written past it
        with pytest.raises(IndexError):
            native.timeline(start, end, None, cat, 3, parent, outside=outside, n_events=0)
    ws, we = disjoint_windows((a, a + d) for a, d in windows)
    # cut at the windows' edges (synthetic boundaries, owned as the segments they split): the
    # same sums
    if draw(st.booleans()):
        tl = tl.cut(np.concatenate([ws, we]))
    is_frame = np.array([True, True, False, True])
    marked = np.array(draw(st.lists(st.booleans(), min_size=4, max_size=4)))
    caller = np.array(draw(st.lists(st.booleans(), min_size=4, max_size=4)))
    op_kind = np.array(draw(st.lists(st.integers(-1, 2), min_size=4, max_size=4)), dtype=np.int8)
    got = native.frame_sweep(parent, name, start, end, outside, 0, n, tl, ws, we, is_frame, 3,
                             marked, caller, op_kind, 1, 2)
    assert got is not None
    own = native.owned_time(tl, ws, we, 3, n)
    want = native.frame_sums(parent, name, start, include, is_frame, 0, n, ws, we, own)
    for k, w in zip(("calls", "self", "inclusive"), want):
        np.testing.assert_array_equal(got[k], w)
    issuer_name = marked & (want[0] > 0)
    issuer = np.array([brute_nearest_marked(issuer_name[name], parent, e) for e in range(n)])
    in_win = np.array([any(a <= s < b for a, b in zip(ws, we)) for s in start.tolist()], dtype=bool)
    for k, c in (("time_a", 1), ("time_b", 2)):
        by_event = native.owned_time(tl, ws, we, c, n)
        by_name = np.zeros(4, dtype=np.int64)
        for e in np.flatnonzero(issuer >= 0):
            by_name[name[issuer[e]]] += by_event[e]
        np.testing.assert_array_equal(got[k], by_name)
    ops = np.zeros((4, 3), dtype=np.int64)
    entry = np.zeros(4, dtype=bool)
    for e in range(n):
        if outside[e] or not in_win[e]:
            continue
        up = issuer[parent[e]] if parent[e] >= 0 else -1
        if op_kind[name[e]] >= 0 and up >= 0:
            ops[name[up], 0] += 1
            if op_kind[name[e]] > 0:
                ops[name[up], op_kind[name[e]]] += 1
        if issuer_name[name[e]] and (up < 0 or caller[name[up]]):
            entry[name[e]] = True
    np.testing.assert_array_equal(got["ops"], ops)
    np.testing.assert_array_equal(got["entry"], entry)


def test_frame_sweep_refuses_a_timeline_that_is_not_the_nestings():
    """A segment owned by an event that is not the innermost open one: None (the caller then
    sums from the per-event columns)."""
    start, end = np.array([0, 2], dtype=np.int64), np.array([10, 5], dtype=np.int64)
    parent = np.array([-1, 0], dtype=np.int32)
    names = np.zeros(2, dtype=np.int32)
    # event 0's start, a synthetic boundary at 3 owned by event 0, event 0's end; but event 1
    # is open over 2-5: it owns that time
    bad = native.Timeline(ref=np.array([0, native.SYN, ~0], np.int32), cat=np.full(2, 3, np.int8),
                          start=start, end=end, parent=parent, syn_t=np.array([3]),
                          syn_owner=np.array([0], np.int32))
    args = (np.array([True]), 3, np.array([True]), np.array([False]), np.array([-1], np.int8), 1, 2)
    assert native.frame_sweep(parent, names, start, end, np.zeros(2, bool), 0, 2, bad,
                              np.array([0]), np.array([10]), *args) is None
    good = native.Timeline(ref=np.array([0, 1, ~1, ~0], np.int32), cat=np.full(3, 3, np.int8),
                           start=start, end=end, parent=parent)
    np.testing.assert_array_equal(good.times(), [0, 2, 5, 10])
    np.testing.assert_array_equal(good.owners(), [0, 1, 0])
    good_sums = native.frame_sweep(parent, names, start, end, np.zeros(2, bool), 0, 2, good,
                                   np.array([0]), np.array([10]), *args)
    assert good_sums is not None and good_sums["inclusive"].tolist() == [10]


def test_a_timeline_reference_out_of_range_is_refused():
    """A boundary that names no event, or no synthetic instant: IndexError from every kernel
    that reads the timeline (and its search), nothing read past the columns."""
    start, end = np.array([0, 2], dtype=np.int64), np.array([10, 5], dtype=np.int64)
    parent = np.array([-1, 0], dtype=np.int32)
    w0, w1 = np.array([0]), np.array([10])
    for ref in ([0, 2, ~0], [0, ~2, ~0], [0, native.SYN, ~0], [0, native.END - 1, ~0]):
        tl = native.Timeline(ref=np.array(ref, np.int32), cat=np.zeros(2, np.int8), start=start,
                             end=end, parent=parent)
        with pytest.raises(IndexError):
            native.window_sums(tl, w0, w1, 4)
        with pytest.raises(IndexError):
            native.owned_time(tl, w0, w1, 0, 2)
        with pytest.raises(IndexError):
            native.landing_counts(start, end, np.zeros(2, np.int16), parent, np.zeros(2, bool),
                                  np.zeros(2, np.int8), tl, w0, w1, np.array([2], np.uint8), 5, 7)
        with pytest.raises(IndexError):
            tl.search(np.array([5]))


@settings(max_examples=200, deadline=None)
@given(nested_lines(max_lines=1), st.lists(st.integers(-5, 1005), max_size=12),
       st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 300)), max_size=4))
def test_a_cut_timeline_is_the_timeline_split_at_the_cuts(ev, cuts, windows):
    """``Timeline.cut`` against the instants and owners made by hand: the cuts strictly inside
    the timeline and not boundaries already become boundaries, each new segment its split
    one's owner and category; ``search`` (the C kernel) is numpy's searchsorted of the instants;
    ``within`` the segments inside the windows."""
    line, start, end, _ = ev
    parent, _, _ = nest_all(line, start, end)
    cat = (np.arange(len(start)) % 4).astype(np.int8)
    tl = native.timeline(start, end, np.arange(len(start)), cat, 5, parent)
    cut = tl.cut(np.array(cuts, dtype=np.int64))
    t, owner = tl.times(), tl.owners()
    inside = [c for c in sorted(set(cuts)) if len(t) and t[0] < c < t[-1] and c not in set(t)]
    want_t = np.sort(np.concatenate([t, np.array(inside, dtype=np.int64)]))
    np.testing.assert_array_equal(cut.times(), want_t)
    src = np.searchsorted(t, want_t[:-1], side="right") - 1
    np.testing.assert_array_equal(cut.owners(), owner[src])
    np.testing.assert_array_equal(cut.cat, tl.cat[src])
    # in no order, and the extremes
    big = np.iinfo(np.int64)
    x = np.array(cuts + [-100, 2000, big.min, big.max] + cuts[::-1], dtype=np.int64)
    for side in ("left", "right"):
        np.testing.assert_array_equal(cut.search(x, side), np.searchsorted(want_t, x, side=side))
    ws, we = disjoint_windows((a, a + d) for a, d in windows)
    want = [j for j in range(len(cut)) if any(a <= want_t[j] and want_t[j + 1] <= b
                                              for a, b in zip(ws, we))]
    np.testing.assert_array_equal(cut.within(ws, we), want)
    seg, win = cut.within_windows(ws, we)
    np.testing.assert_array_equal(seg, want)
    assert all(ws[w] <= want_t[j] and want_t[j + 1] <= we[w] for j, w in zip(seg, win))


@settings(max_examples=200, deadline=None)
@given(nested_lines(), st.lists(st.booleans(), min_size=4, max_size=4))
def test_has_child_marks_the_parents_of_marked_names(ev, child_name):
    """Against counting each event's children: of a marked name, of positive length too where
    the times are given."""
    line, start, end, name = ev
    n = len(start)
    end = np.where(np.arange(n) % 4 == 3, start, end)
    parent, _, _ = native.nest(start, end, line, np.ones(n, bool), np.zeros(n, bool))
    child_name = np.array(child_name)
    for timed in (False, True):
        want = np.zeros(n, dtype=bool)
        for i in range(n):
            if parent[i] >= 0 and child_name[name[i]] and (not timed or end[i] > start[i]):
                want[parent[i]] = True
        got = native.has_child(parent, name, child_name, *((start, end) if timed else ()))
        np.testing.assert_array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-128, 127), min_size=1, max_size=40), st.data())
def test_lookup_is_numpys_indexing(table, data):
    """``table[index]`` for every index width; a one-byte index read by its byte (int8 codes
    through a 256-entry table); an index outside the table refused."""
    table = np.array(table, dtype=np.int8)
    index = np.array(data.draw(st.lists(st.integers(0, len(table) - 1), max_size=30)),
                     dtype=np.int64)
    for dtype in (np.int16, np.int32, np.int64, np.uint8):
        np.testing.assert_array_equal(native.lookup(table, index.astype(dtype)), table[index])
    bools = table > 0
    assert native.lookup(bools, index.astype(np.int32)).dtype == bool
    np.testing.assert_array_equal(native.lookup(bools, index.astype(np.int32)), bools[index])
    codes = index.astype(np.int8) - 3           # negative codes: their bytes index 253..255
    full = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(native.lookup(full, codes), codes.view(np.uint8))
    with pytest.raises(IndexError):
        native.lookup(table, np.array([len(table)], dtype=np.int32))
    with pytest.raises(IndexError):
        native.lookup(table, np.array([-1], dtype=np.int32))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 3), st.booleans()), max_size=40),
       st.data())
def test_spans_in_are_the_rows_of_positive_length_not_outside(rows, data):
    start = np.array([r[0] for r in rows], dtype=np.int64)
    end = start + np.array([r[1] for r in rows], dtype=np.int64)
    outside = np.array([r[2] for r in rows], dtype=bool)
    lo = data.draw(st.integers(0, len(rows)))
    hi = data.draw(st.integers(lo, len(rows)))
    got = native.spans_in(start, end, outside, slice(lo, hi))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, lo + np.flatnonzero(((end > start) & ~outside)[lo:hi]))


def test_the_kernels_take_an_empty_table():
    """No events at all (a trace whose lines are empty): empty answers, no error."""
    z, zi, zb, z8 = (np.zeros(0, dtype) for dtype in (np.int64, np.int32, bool, np.int8))
    parent, depth, crosser = native.nest(z, z, np.zeros(0, np.int16), zb, np.zeros(1, bool), zi)
    assert len(parent) == len(depth) == len(crosser) == 0
    assert not len(native.has_child(zi, zi, np.zeros(1, bool)))
    assert not len(native.lookup(np.zeros(1, np.int8), zi))
    assert not len(native.spans_in(z, z, zb, slice(0, 0)))
    tl = native.timeline(z, z, None, z8, 5, zi, outside=zb, n_events=0)
    assert not len(tl) and not len(tl.ref) and not len(tl.times())
    assert not len(tl.cut(np.array([1]))) and tl.search(np.array([1])).tolist() == [0]
    assert not native.landing_counts(z, z, np.zeros(0, np.int16), zi, zb, z8, tl, z, z,
                                     np.zeros(1, np.uint8), 5, 7).any()
    swept = native.frame_sweep(zi, zi, z, z, zb, 0, 0, tl, z, z, np.zeros(1, bool), 5,
                               np.zeros(1, bool), np.zeros(1, bool), np.full(1, -1, np.int8), 1,
                               2)
    assert swept is not None and not swept["calls"].any()


@settings(max_examples=200, deadline=None)
@given(nested_lines(), st.data())
def test_inherit_against_its_rule_and_in_place(ev, data):
    """Each event's category along the nesting, one event at a time (parents first): its own where
    it holds it at least as strongly as its parent hands one down, else the inherited one, else
    python for a frame and other for the rest. Written over the caller's columns (``consume``):
    the same categories; with the two strengths one column, too. No depth column: the same
    parents and crossers."""
    line, start, end, _ = ev
    n = len(start)
    parent, depth, crosser = nest_all(line, start, end)
    no_depth = native.nest(start, end, line, np.ones(n, bool), np.zeros(n, bool), depth=False)
    assert no_depth[1] is None
    np.testing.assert_array_equal(no_depth[0], parent)
    np.testing.assert_array_equal(no_depth[2], crosser)
    draw = data.draw
    own = np.array(draw(st.lists(st.integers(-2, 3), min_size=n, max_size=n)), dtype=np.int8)
    own_s = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int8)
    pass_s = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int8)
    pyframe, python, other, n_cat = -2, 4, 5, 6
    want = np.zeros(n, dtype=np.int8)
    passed = np.zeros(n, dtype=np.int8)
    for i in range(n):
        p = parent[i]
        inh_s = passed[p] if p >= 0 else 0
        inh_c = want[p] if inh_s > 0 else n_cat
        if own[i] >= 0 and own_s[i] >= inh_s:
            res, rp = own[i], pass_s[i]
        else:
            res, rp = inh_c, inh_s
        if res == n_cat:
            res, rp = (python if own[i] == pyframe else other), 0
        want[i], passed[i] = res, rp
    kw = {"n_cat": n_cat, "pyframe": pyframe, "python": python, "other": other}
    np.testing.assert_array_equal(native.inherit(parent, own, own_s, pass_s, **kw), want)
    mine, mine_pass = own.copy(), pass_s.copy()
    got = native.inherit(parent, mine, own_s, mine_pass, consume=True, **kw)
    assert got is mine
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mine_pass, passed)
    # one column for both strengths (an event hands down as strongly as it holds)
    shared = own_s.copy()
    np.testing.assert_array_equal(native.inherit(parent, own.copy(), shared, shared, consume=True,
                                                 **kw),
                                  native.inherit(parent, own, own_s, own_s, **kw))
