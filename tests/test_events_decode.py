"""The C decoder of events (native.scan_jobs / decode_jobs) must agree with protobuf's own parse, field for
field."""

from __future__ import annotations

import os

import numpy as np
import pytest

from traceinsight.analysis.events import load_files
from traceinsight.xplane import XPlane, XSpace

from xspace_builder import Space


def reference(data: bytes):
    """(line name, name, start_ps, end_ps) for every event, and stats, via protobuf objects."""
    space = XSpace.FromString(data)
    events, stats = [], []
    # the table's clock starts at the earliest timestamp of a line holding events
    base = min((ln.timestamp_ns for pl in space.planes for ln in pl.lines if len(ln.events)),
               default=0)
    for plane in space.planes:
        snames = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                md = plane.event_metadata.get(ev.metadata_id)
                name = md.name if md is not None else f"<unknown event metadata {ev.metadata_id}>"
                start = (line.timestamp_ns - base) * 1000 + ev.offset_ps
                events.append((line.name, name, start, start + ev.duration_ps))
                for st in ev.stats:
                    kind = st.WhichOneof("value")
                    val = getattr(st, kind) if kind else None
                    if kind == "ref_value":
                        val = snames.get(val, "")
                    stats.append((start, name, snames.get(st.metadata_id), kind, val))
    return sorted(events), stats


def table_events(t):
    return sorted((t.lines[ln].name, t.names[n], int(s), int(e))
                  for ln, n, s, e in zip(t.line, t.name, t.start, t.end))


def random_space(seed: int) -> Space:
    rng = np.random.default_rng(seed)
    sp = Space()
    for p in range(2):
        plane = sp.plane(f"/host:CPU{p}")
        for li in range(3):
            # absolute nanosecond timestamps, as device planes carry them
            line = plane.line(f"t{li}", timestamp_ns=int(1.7e18 + rng.integers(0, 10**12)))
            for _ in range(int(rng.integers(0, 60))):
                name = f"ev{int(rng.integers(0, 7))}"
                start = float(rng.choice([0, rng.uniform(0, 1e6), rng.uniform(0, 1e9)]))
                dur = float(rng.choice([0, rng.uniform(0, 1000), rng.uniform(0, 1e7)]))
                stats = {}
                if rng.random() < 0.4:
                    stats["step_num"] = int(rng.integers(-2**62, 2**62))
                if rng.random() < 0.3:
                    stats["eager_op"] = "Op" + "x" * int(rng.integers(0, 300))
                if rng.random() < 0.2:
                    stats["tf_function_call"] = ("ref", "traced-nonXla")
                if rng.random() < 0.2:
                    stats["unwanted_stat"] = float(rng.random())
                line.event(name, start, dur, **stats)
    return sp


@pytest.mark.parametrize("seed", range(8))
def test_decoder_matches_protobuf(tmp_path, seed):
    data = random_space(seed).bytes()
    path = tmp_path / "r.xplane.pb"
    path.write_bytes(data)
    t = load_files([path])
    ref_events, ref_stats = reference(data)
    assert table_events(t) == ref_events
    # wanted stats: ints and strings (str and ref values) come through exactly
    want = sorted((s, n, v) for s, n, k, kind, v in ref_stats if k == "step_num")
    idx, val = t.stat_int.get("step_num", (np.zeros(0, int), np.zeros(0, int)))
    got = sorted((int(t.start[i]), t.names[t.name[i]], int(v)) for i, v in zip(idx, val))
    assert got == want
    for key in ("eager_op", "tf_function_call"):
        want = sorted((s, n, v) for s, n, k, kind, v in ref_stats if k == key)
        idx, val = t.stat_str.get(key, (np.zeros(0, int), np.zeros(0, object)))
        got = sorted((int(t.start[i]), t.names[t.name[i]], v) for i, v in zip(idx, val))
        assert got == want
    assert "unwanted_stat" not in t.stat_int and "unwanted_stat" not in t.stat_str


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len_field(number: int, body: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(body)) + body


def test_fields_in_another_order_and_unknown_fields(tmp_path):
    plane = XPlane(name="/host:CPU")
    plane.event_metadata[1].name = "a"
    # duration (3), then metadata id (1), an unknown fixed32 field (9), then offset (2)
    odd = (b"\x18" + _varint(5000) + b"\x08\x01" + b"\x4d\x00\x00\x00\x00"
           + b"\x10" + _varint(7000))
    canonical = b"\x08\x01\x10" + _varint(1) + b"\x18" + _varint(2)
    # the line's events before its name and timestamp, and an unknown length-delimited field (12)
    line = (_len_field(4, odd) + _len_field(12, b"xyz") + _len_field(4, canonical)
            + _len_field(2, b"python") + b"\x18\x02")
    # the plane's lines before its metadata, and an unknown field (9) in the space
    data = _len_field(1, _len_field(3, line) + plane.SerializeToString()) + b"\x48\x05"
    path = tmp_path / "o.xplane.pb"
    path.write_bytes(data)
    t = load_files([path])
    assert sorted(zip(t.start.tolist(), t.end.tolist())) == [(1, 3), (7000, 12000)]
    assert table_events(t) == reference(data)[0]


def test_unknown_metadata_id_is_named_not_dropped(tmp_path):
    sp = Space()
    line = sp.host().line("python")
    line.event("known", 0, 1)
    line.proto.events.add(metadata_id=999, offset_ps=5, duration_ps=1)
    t = load_files([sp.write(tmp_path / "u.xplane.pb")])
    assert "<unknown event metadata 999>" in t.names


def test_lines_written_out_of_order_are_sorted_and_keep_their_stats(tmp_path):
    from traceinsight.analysis import native
    sp = Space()
    line = sp.host().line("python")
    line.event("late", 500, 10, step_num=2)
    line.event("early", 100, 10, step_num=1)
    line.event("outer", 100, 50)
    t = load_files([sp.write(tmp_path / "o.xplane.pb")])
    assert [t.names[n] for n in t.name] == ["outer", "early", "late"]
    assert native.is_sorted(t.start, t.end)
    idx, val = t.stat_int["step_num"]
    assert {t.names[t.name[i]]: int(v) for i, v in zip(idx, val)} == {"early": 1, "late": 2}


def test_plane_headers_match_open_planes(tmp_path):
    """``plane_headers`` (planes without their lines, read with seeks: what trace_env needs) gives
    the planes ``open_planes`` parses, and refuses what it refuses, with the same message."""
    from pathlib import Path

    from traceinsight.analysis.events import open_planes, plane_headers
    from traceinsight.errors import TraceinsightError

    def both(path):
        out = []
        for fn in (lambda p: [pl for pl, _ in open_planes(p)], plane_headers):
            try:
                out.append([pl.SerializeToString() for pl in fn(path)])
            except TraceinsightError as e:
                out.append(str(e))
        return out

    committed = sorted((Path(__file__).parent / "data").rglob("*.xplane.pb"))
    assert committed
    for path in committed[:12]:
        a, b = both(path)
        assert a == b and isinstance(a, list)
    # the lines before the metadata, unknown fields, an empty and a truncated file
    plane = XPlane(name="/host:CPU")
    plane.event_metadata[1].name = "a"
    data = (_len_field(1, _len_field(3, _len_field(2, b"l")) + plane.SerializeToString())
            + b"\x48\x05" + b"\x51" + bytes(8) + _len_field(4, b"host"))
    for i, body in enumerate((data, data[:-3], data[:7], data[:1], b"", b"\x4f")):
        path = tmp_path / f"h{i}.xplane.pb"
        path.write_bytes(body)
        a, b = both(path)
        assert a == b, (i, a, b)


def test_stat_int_at_and_flag_agree_with_the_full_column():
    """The narrow look-ups give what the table-long column gives, an event holding the stat twice
    included (its last value)."""
    from traceinsight.analysis.events import EventTable

    rng = np.random.default_rng(3)
    n = 50
    z64, z32 = np.zeros(n, np.int64), np.zeros(n, np.int32)
    t = EventTable(line=z32, name=z32, start=z64, end=z64, names=["a"], lines=[], planes=[])
    idx = rng.integers(0, n, 40)              # repeats: an event with the stat twice
    val = rng.integers(-5, 5, 40)
    t.stat_int["s"] = (idx, val)
    full = t.stat_int_column("s", -7)
    rows = rng.permutation(n)[:30]
    np.testing.assert_array_equal(t.stat_int_at("s", rows, -7), full[rows])
    np.testing.assert_array_equal(t.stat_int_at("absent", rows), np.full(30, -1))
    np.testing.assert_array_equal(t.stat_int_flag("s", lambda v: v >= 0), full >= 0)
    assert not t.stat_int_flag("absent", lambda v: v >= 0).any()
    t.stat_int["e"] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    np.testing.assert_array_equal(t.stat_int_at("e", rows), np.full(30, -1))


def test_the_line_column_is_int16_while_the_lines_fit(tmp_path):
    from traceinsight.analysis.events import _line_dtype
    assert _line_dtype(3) is np.int16 and _line_dtype(32766) is np.int16
    assert _line_dtype(32767) is np.int32 and _line_dtype(1 << 20) is np.int32
    path = tmp_path / "r.xplane.pb"
    path.write_bytes(random_space(0).bytes())
    t = load_files([path])
    assert t.line.dtype == np.int16
    assert np.concatenate([t.line, np.zeros(1, np.int32)]).dtype == np.int32


def test_names_are_interned_plane_by_plane_unknown_ids_included(tmp_path):
    """Each plane's event metadata, then the ids its events use without metadata (line by line),
    then the next plane's: the name ids do not depend on how the lines were decoded."""
    sp = Space()
    for p, (known, unknown) in enumerate((("a", 99), ("b", 98))):
        line = sp.plane(f"/host:CPU{p}").line("python")
        line.event(known, 0, 1)
        line.proto.events.add(metadata_id=unknown, offset_ps=5, duration_ps=1)
    t = load_files([sp.write(tmp_path / "u.xplane.pb")])
    assert t.names == ["a", "<unknown event metadata 99>", "b", "<unknown event metadata 98>"]
    assert [t.names[n] for n in t.name] == t.names


def test_stats_come_stat_by_stat_in_the_lines_order_however_many_kinds(tmp_path):
    """A stat's values are listed by its metadata id, then ints before strings before refs, each
    in the line's order: as much where a line's stats fall into more groups than the decoder
    groups itself (here 70 metadata ids, all named step_num) as where they do not."""
    from traceinsight.xplane import XSpace
    for n_ids in (3, 70):
        space = XSpace()
        plane = space.planes.add(name="/host:CPU")
        plane.event_metadata[1].name = "e"
        for k in range(1, n_ids + 1):
            plane.stat_metadata[k].name = "step_num"
        plane.stat_metadata[n_ids + 1].name = "eager_op"
        line = plane.lines.add(name="python")
        want: dict[str, list] = {"step_num": [], "eager_op": []}
        for i in range(5):
            ev = line.events.add(metadata_id=1, offset_ps=10 * i, duration_ps=5)
            for k in range(n_ids, 0, -1):      # ids written in descending order
                ev.stats.add(metadata_id=k, int64_value=100 * k + i)
            ev.stats.add(metadata_id=n_ids + 1, str_value=f"op{i}")
            ev.stats.add(metadata_id=n_ids + 1, ref_value=1)
        want["step_num"] = [(i, 100 * k + i) for k in range(1, n_ids + 1) for i in range(5)]
        want["eager_op"] = [(i, f"op{i}") for i in range(5)] + [(i, "step_num") for i in range(5)]
        path = tmp_path / f"s{n_ids}.xplane.pb"
        path.write_bytes(space.SerializeToString())
        t = load_files([path])
        idx, val = t.stat_int["step_num"]
        assert list(zip(idx.tolist(), val.tolist())) == want["step_num"]
        idx, val = t.stat_str["eager_op"]
        assert list(zip(idx.tolist(), val.tolist())) == want["eager_op"]


def test_decode_threads_follow_the_cgroup_cpu_quota(tmp_path, monkeypatch):
    from traceinsight.analysis import events
    (tmp_path / "proc").write_text("0::/job\n")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "cpu.max").write_text("150000 100000\n")
    assert events._cgroup_cpus(str(tmp_path), str(tmp_path / "proc")) == 2   # 1.5 CPUs
    (tmp_path / "job" / "cpu.max").write_text("max 100000\n")
    assert events._cgroup_cpus(str(tmp_path), str(tmp_path / "proc")) is None
    (tmp_path / "proc").write_text("3:cpu,cpuacct:/job\n")      # cgroup v1
    v1 = tmp_path / "cpu,cpuacct" / "job"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("300000\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    assert events._cgroup_cpus(str(tmp_path), str(tmp_path / "proc")) == 3
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    assert events._cgroup_cpus(str(tmp_path), str(tmp_path / "proc")) is None
    assert events._cgroup_cpus(str(tmp_path), str(tmp_path / "absent")) is None
    # the count: the affinity's cores, within the quota and MAX_DECODE_THREADS; decode_threads
    # overrides it
    monkeypatch.setattr(events, "_cgroup_cpus", lambda: 1)
    assert events._decode_threads() == 1
    monkeypatch.setattr(events, "_cgroup_cpus", lambda: None)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert events._decode_threads() == min(cores or 1, events.MAX_DECODE_THREADS)
    with events.decode_threads(5):
        assert events._decode_threads() == 5
