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
