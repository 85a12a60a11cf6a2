"""The HLO protos a jax.profiler trace keeps in its ``/host:metadata`` plane: each HLO
instruction's framework op name, read with just enough of XLA's public schema (no XLA, no JAX).
The device analysis (kernels -> framework ops) and the JAX analysis both read them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from traceinsight.analysis.names import HLO_MODULE, HLO_PROTO, HOST_METADATA


def _hlo_file():
    """Just enough of XLA's public HloProto schema (xla/service/hlo.proto, xla_data.proto) to read
    each instruction's framework op name: HloProto.hlo_module (1) -> HloModuleProto.computations
    (3) -> HloComputationProto.instructions (2) -> HloInstructionProto.name (1), .metadata (7) ->
    OpMetadata.op_name (2). ``_HLO_SERIALIZED`` is it, serialized."""
    from google.protobuf import descriptor_pb2
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="traceinsight_hlo.proto", package="traceinsight.hlo",
                                            syntax="proto3")

    def msg(name, fields):
        m = fd.message_type.add(name=name)
        for fname, num, ftype, rep, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype,
                            label=F.LABEL_REPEATED if rep else F.LABEL_OPTIONAL)
            if tname:
                f.type_name = f".traceinsight.hlo.{tname}"

    msg("OpMetadata", [("op_type", 1, F.TYPE_STRING, False, None),
                       ("op_name", 2, F.TYPE_STRING, False, None)])
    msg("Instr", [("name", 1, F.TYPE_STRING, False, None),
                  ("opcode", 2, F.TYPE_STRING, False, None),
                  ("metadata", 7, F.TYPE_MESSAGE, False, "OpMetadata")])
    msg("Computation", [("name", 1, F.TYPE_STRING, False, None),
                        ("instructions", 2, F.TYPE_MESSAGE, True, "Instr")])
    msg("Module", [("name", 1, F.TYPE_STRING, False, None),
                   ("computations", 3, F.TYPE_MESSAGE, True, "Computation")])
    msg("Hlo", [(HLO_MODULE, 1, F.TYPE_MESSAGE, False, "Module")])
    return fd


# ``_hlo_file().SerializeToString()``: the classes are built from it, as protoc's generated
# modules are, without importing descriptor_pb2 and building the schema message by message
# (start-up time); tests/test_xplane_schema.py checks it is exactly the schema ``_hlo_file`` writes
_HLO_SERIALIZED = (
    b'\n\x16traceinsight_hlo.proto\x12\x10traceinsight.hlo".\n\nOpMetadata\x12\x0f\n\x07op_type'
    b'\x18\x01 \x01(\t\x12\x0f\n\x07op_name\x18\x02 \x01(\t"U\n\x05Instr\x12\x0c\n\x04name\x18\x01'
    b" \x01(\t\x12\x0e\n\x06opcode\x18\x02 \x01(\t\x12.\n\x08metadata\x18\x07 \x01(\x0b2\x1c.trace"
    b'insight.hlo.OpMetadata"J\n\x0bComputation\x12\x0c\n\x04name\x18\x01 \x01(\t\x12-\n\x0cinstru'
    b'ctions\x18\x02 \x03(\x0b2\x17.traceinsight.hlo.Instr"K\n\x06Module\x12\x0c\n\x04name\x18\x01'
    b' \x01(\t\x123\n\x0ccomputations\x18\x03 \x03(\x0b2\x1d.traceinsight.hlo.Computation"3\n\x03H'
    b"lo\x12,\n\nhlo_module\x18\x01 \x01(\x0b2\x18.traceinsight.hlo.Moduleb\x06proto3")


def _hlo_classes():
    from traceinsight.xplane import message_classes
    return message_classes(_HLO_SERIALIZED)["Hlo"]


_HLO_CACHE: dict[tuple[str, ...], dict[tuple[str, str], str]] = {}


def hlo_op_names(files) -> dict[tuple[str, str], str]:
    """Cached ``read_hlo_op_names`` (the device analysis asks once per table)."""
    key = tuple(map(str, files))
    if key not in _HLO_CACHE:
        _HLO_CACHE.clear()
        _HLO_CACHE[key] = read_hlo_op_names(files)
    return _HLO_CACHE[key]


# Parsing a whole XSpace (its HLO protos are in plane metadata the event table does not keep)
# peaks at about this multiple of the file's size, on top of the event table already read: the
# memory pre-check before the event table (``events.MEMORY_PER_TRACE_BYTE``) does not cover it.
PARSE_PER_TRACE_BYTE = 6


def _check_memory(path: Path) -> None:
    from traceinsight.analysis.events import available_memory
    from traceinsight.errors import TraceinsightError
    try:
        size = path.stat().st_size
    except OSError:
        return     # unreadable: skipped below
    avail = available_memory()
    if avail is not None and size * PARSE_PER_TRACE_BYTE > avail:
        raise TraceinsightError(f"{path}: reading its HLO protos would need about "
                                f"{size * PARSE_PER_TRACE_BYTE >> 20:,} MiB more, beyond the "
                                f"{avail >> 20:,} MiB of memory available: not read")


def planes(files) -> Iterator:
    """Every plane of the files' XSpaces, whole (with the metadata the event table does not keep);
    a file that does not parse is skipped (the event table's own read has said so)."""
    from google.protobuf.message import DecodeError

    from traceinsight.xplane import XSpace
    for f in files:
        _check_memory(Path(f))
        space = XSpace()
        try:
            space.ParseFromString(Path(f).read_bytes())
        except (DecodeError, OSError):
            continue
        yield from space.planes


def read_hlo_op_names(files) -> dict[tuple[str, str], str]:
    """(module name, HLO instruction) -> the framework op name XLA recorded for it (its
    metadata's op_name), from the HLO protos a jax.profiler trace keeps in its ``/host:metadata``
    plane; empty when the trace has none."""
    from google.protobuf.message import DecodeError
    out: dict[tuple[str, str], str] = {}
    Hlo = None
    for plane in planes(files):
        if plane.name != HOST_METADATA:
            continue
        proto_id = next((k for k, v in plane.stat_metadata.items() if v.name == HLO_PROTO), None)
        if proto_id is None:
            continue
        Hlo = Hlo or _hlo_classes()
        for em in plane.event_metadata.values():
            for st in em.stats:
                if st.metadata_id != proto_id or not st.bytes_value:
                    continue
                h = Hlo()
                try:
                    h.ParseFromString(st.bytes_value)
                except DecodeError:
                    continue
                module = h.hlo_module.name
                for comp in h.hlo_module.computations:
                    for ins in comp.instructions:
                        out.setdefault((module, ins.name), ins.metadata.op_name)
    return out
