"""Our XSpace schema (built without TensorFlow) must agree with TensorFlow's generated module."""

from __future__ import annotations

import pytest

from traceinsight import xplane


def _repeated(f) -> bool:
    # protobuf >= 6 dropped FieldDescriptor.label in favour of is_repeated
    return f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED


def fields(descriptor):
    return {f.name: (f.number, f.type, _repeated(f), f.message_type.name if f.message_type else None)
            for f in descriptor.fields}


def test_importing_the_schema_does_not_import_tensorflow():
    import subprocess
    import sys
    code = "import sys, traceinsight.xplane, traceinsight.analysis.load; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_serialized_schema_is_the_schema_written():
    """The classes are built from ``_SERIALIZED``: it must be the schema as written, exactly."""
    assert xplane._SERIALIZED == xplane._build_file().SerializeToString()


def test_the_serialized_hlo_schema_is_the_schema_written():
    from traceinsight.analysis import hlo_protos
    assert hlo_protos._HLO_SERIALIZED == hlo_protos._hlo_file().SerializeToString()
    hlo = hlo_protos._hlo_classes()
    module = hlo().hlo_module
    module.computations.add().instructions.add(name="i").metadata.op_name = "model/dense"
    read = hlo.FromString(hlo(hlo_module=module).SerializeToString())
    assert read.hlo_module.computations[0].instructions[0].metadata.op_name == "model/dense"


def test_schema_matches_tensorflow_xplane_pb2():
    pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.xplane_pb2")
    for name in ("XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata"):
        ours = fields(getattr(xplane, name).DESCRIPTOR)
        theirs = fields(getattr(pb2, name).DESCRIPTOR)
        for field_name, spec in ours.items():
            their = theirs[field_name]
            # map entries are named alike; compare number, type and label
            assert spec[:3] == their[:3], (name, field_name)


def test_split_space_gives_planes_without_lines_and_the_lines_in_place():
    from traceinsight.analysis import native
    space = xplane.XSpace(hostnames=["h"])
    for name in ("/host:CPU", "/device:GPU:0"):
        plane = space.planes.add(name=name)
        plane.event_metadata[1].name = "a"
        for t in ("python", "tf_Compute"):
            plane.lines.add(name=t).events.add(metadata_id=1, offset_ps=5, duration_ps=7)
    data = space.SerializeToString()
    split = native.split_space(data)
    assert len(split) == 2
    for (meta, spans), plane in zip(split, space.planes):
        rest = xplane.XPlane.FromString(meta)
        assert rest.name == plane.name and not len(rest.lines)
        assert rest.event_metadata[1].name == "a"
        lines = [xplane.XLine.FromString(data[o:o + n]) for o, n in spans]
        assert lines == list(plane.lines)


def test_profile_options_match_tensorflow():
    pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.profiler_options_pb2")
    ours = fields(xplane.ProfileOptions.DESCRIPTOR)
    theirs = fields(pb2.ProfileOptions.DESCRIPTOR)
    for field_name, spec in ours.items():
        assert spec[:3] == theirs[field_name][:3], field_name
    msg = pb2.ProfileOptions(host_tracer_level=3, device_tracer_level=1, python_tracer_level=1,
                             duration_ms=1500, repository_path="/tmp/x")
    assert xplane.decode_profile_options(msg.SerializeToString()) == {
        "host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}


def test_the_classes_read_a_trace_alike_under_either_backend():
    """Under upb the classes are made by upb's own metaclass (no pure-Python implementation
    imported); under the pure-Python backend by ``message_factory``. Both read a committed trace
    to the same message, and under upb nothing of the Python implementation is imported."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    trace = next(p for p in sorted((Path(__file__).parent / "data" / "runs" / "conv1d").rglob(
        "*.xplane.pb")) if "/host/" in p.as_posix())
    code = ("import hashlib, sys; from traceinsight import xplane; "
            "s = xplane.XSpace.FromString(open(sys.argv[1], 'rb').read()); "
            "p = s.planes[0]; m = next(iter(p.event_metadata.values())); "
            # (each backend serializes a map in its own order: the fields, maps by key)
            "stat = lambda t: (t.metadata_id, t.WhichOneof('value'), "
            "getattr(t, t.WhichOneof('value') or 'ref_value')); "
            "dump = repr([(q.id, q.name, [(k, v.name, v.display_name, v.metadata, "
            "[stat(t) for t in v.stats], list(v.child_id)) for k, v in sorted(q.event_metadata.items())], "
            "[(k, v.name, v.description) for k, v in sorted(q.stat_metadata.items())], "
            "[stat(t) for t in q.stats], [(line.id, line.display_id, line.name, line.timestamp_ns, "
            "line.duration_ps, [(e.metadata_id, e.WhichOneof('data'), e.offset_ps, "
            "e.num_occurrences, e.duration_ps, [stat(t) for t in e.stats]) for e in line.events]) "
            "for line in q.lines]) for q in s.planes]); "
            "print(hashlib.sha256(dump.encode()).hexdigest(), "
            "sum(len(line.events) for q in s.planes for line in q.lines), "
            "type(m) is xplane.XEventMetadata, type(p) is xplane.XPlane, "
            "type(p.lines[0].events[0].stats.add()) is xplane.XStat, "
            "sorted(m for m in ('google.protobuf.descriptor_pool', "
            "'google.protobuf.internal.python_message', 'google.protobuf.text_format') "
            "if m in sys.modules))")
    out = {}
    for impl in ("upb", "python"):
        env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=impl)
        r = subprocess.run([sys.executable, "-c", code, str(trace)], capture_output=True,
                           text=True, env=env, check=True)
        out[impl] = r.stdout.split(" ", 5)
    digest, events, *same_classes, python_modules = out["upb"]
    assert int(events) > 1000 and same_classes == ["True"] * 3
    assert python_modules.strip() == "[]"
    assert out["python"][:5] == out["upb"][:5]
    assert "python_message" in out["python"][5]


def test_a_protobuf_without_upbs_private_module_gets_the_public_path(monkeypatch):
    """upb's module is protobuf's private one: where a release lacks it (or shapes it otherwise)
    the classes come from ``message_factory``, and read the same bytes to the same message."""
    from traceinsight import xplane

    def missing(serialized):
        raise ImportError("no google._upb here")
    monkeypatch.setattr(xplane, "_upb_classes", missing)
    classes = xplane.message_classes(xplane._SERIALIZED)
    space = xplane.XSpace(hostnames=["h"])
    space.planes.add(id=3, name="/host:CPU").lines.add(id=1, name="t").events.add(
        metadata_id=2, offset_ps=5, duration_ps=7)
    again = classes["XSpace"].FromString(space.SerializeToString())
    assert again.SerializeToString() == space.SerializeToString()
    assert again.planes[0].lines[0].events[0].duration_ps == 7
    assert set(classes) >= {"XSpace", "XPlane", "XLine", "XEvent", "XStat", "ProfileOptions"}
