"""The XSpace / XPlane protobuf schema, built at import time without TensorFlow.

TensorFlow ships a generated ``xplane_pb2`` but importing it imports all of TensorFlow (seconds),
and xprof ships none. The schema is small and public (tsl/profiler/protobuf/xplane.proto), so we
describe its messages here with protobuf's own descriptor API and let protobuf (upb backend) build
the classes. Field numbers must match the public schema; ``tests/test_xplane_schema.py`` checks
them against TensorFlow's generated module when TensorFlow is installed.

The classes are built at import from the schema already serialized (``_SERIALIZED``), as protoc's
generated modules are: building it message by message needs ``descriptor_pb2``, a large module,
on every start (start-up time). ``_build_file`` is the schema as written; the test checks that
``_SERIALIZED`` is exactly it serialized (``python -m traceinsight.xplane`` prints it again).

Under protobuf's upb backend (every protobuf this package admits, unless
``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION`` picks another) the pool and the classes are upb's own,
made as ``descriptor_pool.DescriptorPool`` and ``message_factory.GetMessageClass`` make them under
upb: those two modules import the pure-Python implementation (``python_message``, ``text_format``
and more, which upb never runs) on every start (start-up time). Any other backend goes through
them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.protobuf import message
from google.protobuf.internal import api_implementation

if TYPE_CHECKING:
    from google.protobuf import descriptor_pb2

_PACKAGE = "traceinsight.xplane"  # our own package name: never collides with TF's in one process

# (message, [(field name, number, type, label, message type or None, oneof index or None)], oneofs)

_MESSAGES: list[tuple[str, list[tuple], list[str]]] = [
    ("XSpace", [
        ("planes", 1, "XPlane", "repeated", None),
        ("errors", 2, "string", "repeated", None),
        ("warnings", 3, "string", "repeated", None),
        ("hostnames", 4, "string", "repeated", None),
    ], []),
    ("XPlane", [
        ("id", 1, "int64", "optional", None),
        ("name", 2, "string", "optional", None),
        ("lines", 3, "XLine", "repeated", None),
        ("event_metadata", 4, "map:int64:XEventMetadata", "repeated", None),
        ("stat_metadata", 5, "map:int64:XStatMetadata", "repeated", None),
        ("stats", 6, "XStat", "repeated", None),
    ], []),
    ("XLine", [
        ("id", 1, "int64", "optional", None),
        ("display_id", 10, "int64", "optional", None),
        ("name", 2, "string", "optional", None),
        ("display_name", 11, "string", "optional", None),
        ("timestamp_ns", 3, "int64", "optional", None),
        ("duration_ps", 9, "int64", "optional", None),
        ("events", 4, "XEvent", "repeated", None),
    ], []),
    ("XEvent", [
        ("metadata_id", 1, "int64", "optional", None),
        ("offset_ps", 2, "int64", "optional", 0),
        ("num_occurrences", 5, "int64", "optional", 0),
        ("duration_ps", 3, "int64", "optional", None),
        ("stats", 4, "XStat", "repeated", None),
    ], ["data"]),
    ("XStat", [
        ("metadata_id", 1, "int64", "optional", None),
        ("double_value", 2, "double", "optional", 0),
        ("uint64_value", 3, "uint64", "optional", 0),
        ("int64_value", 4, "int64", "optional", 0),
        ("str_value", 5, "string", "optional", 0),
        ("bytes_value", 6, "bytes", "optional", 0),
        ("ref_value", 7, "uint64", "optional", 0),
    ], ["value"]),
    ("XEventMetadata", [
        ("id", 1, "int64", "optional", None),
        ("name", 2, "string", "optional", None),
        ("display_name", 4, "string", "optional", None),
        ("metadata", 3, "bytes", "optional", None),
        ("stats", 5, "XStat", "repeated", None),
        ("child_id", 6, "int64", "repeated", None),
    ], []),
    # tsl/profiler/protobuf/profiler_options.proto: what a capture really used (the Task
    # Environment plane's ``profile_options`` stat holds one, serialized)
    ("ProfileOptions", [
        ("include_dataset_ops", 1, "bool", "optional", None),
        ("host_tracer_level", 2, "uint32", "optional", None),
        ("device_tracer_level", 3, "uint32", "optional", None),
        ("python_tracer_level", 4, "uint32", "optional", None),
        ("version", 5, "uint32", "optional", None),
        ("duration_ms", 9, "uint64", "optional", None),
    ], []),
    ("XStatMetadata", [
        ("id", 1, "int64", "optional", None),
        ("name", 2, "string", "optional", None),
        ("description", 3, "string", "optional", None),
    ], []),
]


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    """The schema above as a FileDescriptorProto (``_SERIALIZED`` is it, serialized)."""
    from google.protobuf import descriptor_pb2
    fld = descriptor_pb2.FieldDescriptorProto
    scalars = {"int64": fld.TYPE_INT64, "uint64": fld.TYPE_UINT64, "double": fld.TYPE_DOUBLE,
               "string": fld.TYPE_STRING, "bytes": fld.TYPE_BYTES, "bool": fld.TYPE_BOOL,
               "uint32": fld.TYPE_UINT32}
    fdp = descriptor_pb2.FileDescriptorProto(name="traceinsight/xplane.proto", package=_PACKAGE,
                                             syntax="proto3")
    for msg_name, fields, oneofs in _MESSAGES:
        msg = fdp.message_type.add(name=msg_name)
        for oneof in oneofs:
            msg.oneof_decl.add(name=oneof)
        for name, number, ftype, label, oneof_index in fields:
            field = msg.field.add(name=name, number=number, json_name=name)
            field.label = fld.LABEL_REPEATED if label == "repeated" else fld.LABEL_OPTIONAL
            if ftype.startswith("map:"):
                _, key_type, value_type = ftype.split(":")
                entry_name = "".join(part.capitalize() for part in name.split("_")) + "Entry"
                entry = msg.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=scalars[key_type],
                                label=fld.LABEL_OPTIONAL, json_name="key")
                entry.field.add(name="value", number=2, type=fld.TYPE_MESSAGE,
                                type_name=f".{_PACKAGE}.{value_type}", label=fld.LABEL_OPTIONAL,
                                json_name="value")
                field.type = fld.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{msg_name}.{entry_name}"
            elif ftype in scalars:
                field.type = scalars[ftype]
            else:
                field.type = fld.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{ftype}"
            if oneof_index is not None:
                field.oneof_index = oneof_index
    return fdp


# ``_build_file().SerializeToString()``
_SERIALIZED = (
    b'\n\x19traceinsight/xplane.proto\x12\x13traceinsight.xplane"\x8f\x01\n\x06XSpace\x123\n\x06pl'
    b"anes\x18\x01 \x03(\x0b2\x1b.traceinsight.xplane.XPlaneR\x06planes\x12\x16\n\x06errors\x18"
    b"\x02 \x03(\tR\x06errors\x12\x1a\n\x08warnings\x18\x03 \x03(\tR\x08warnings\x12\x1c\n\thostna"
    b'mes\x18\x04 \x03(\tR\thostnames"\x89\x04\n\x06XPlane\x12\x0e\n\x02id\x18\x01 \x01(\x03R\x02i'
    b"d\x12\x12\n\x04name\x18\x02 \x01(\tR\x04name\x120\n\x05lines\x18\x03 \x03(\x0b2\x1a.traceins"
    b"ight.xplane.XLineR\x05lines\x12V\n\x0eevent_metadata\x18\x04 \x03(\x0b2..traceinsight.xplane"
    b".XPlane.EventMetadataEntryR\x0eevent_metadata\x12S\n\rstat_metadata\x18\x05 \x03(\x0b2-.trac"
    b"einsight.xplane.XPlane.StatMetadataEntryR\rstat_metadata\x120\n\x05stats\x18\x06 \x03(\x0b2"
    b"\x1a.traceinsight.xplane.XStatR\x05stats\x1ae\n\x12EventMetadataEntry\x12\x10\n\x03key\x18"
    b"\x01 \x01(\x03R\x03key\x129\n\x05value\x18\x02 \x01(\x0b2#.traceinsight.xplane.XEventMetadat"
    b"aR\x05value:\x028\x01\x1ac\n\x11StatMetadataEntry\x12\x10\n\x03key\x18\x01 \x01(\x03R\x03key"
    b'\x128\n\x05value\x18\x02 \x01(\x0b2".traceinsight.xplane.XStatMetadataR\x05value:\x028\x01"'
    b"\xea\x01\n\x05XLine\x12\x0e\n\x02id\x18\x01 \x01(\x03R\x02id\x12\x1e\n\ndisplay_id\x18\n "
    b'\x01(\x03R\ndisplay_id\x12\x12\n\x04name\x18\x02 \x01(\tR\x04name\x12"\n\x0cdisplay_name\x18'
    b'\x0b \x01(\tR\x0cdisplay_name\x12"\n\x0ctimestamp_ns\x18\x03 \x01(\x03R\x0ctimestamp_ns\x12 '
    b"\n\x0bduration_ps\x18\t \x01(\x03R\x0bduration_ps\x123\n\x06events\x18\x04 \x03(\x0b2\x1b.tr"
    b'aceinsight.xplane.XEventR\x06events"\xd2\x01\n\x06XEvent\x12 \n\x0bmetadata_id\x18\x01 \x01('
    b"\x03R\x0bmetadata_id\x12\x1e\n\toffset_ps\x18\x02 \x01(\x03H\x00R\toffset_ps\x12*\n\x0fnum_o"
    b"ccurrences\x18\x05 \x01(\x03H\x00R\x0fnum_occurrences\x12 \n\x0bduration_ps\x18\x03 \x01("
    b"\x03R\x0bduration_ps\x120\n\x05stats\x18\x04 \x03(\x0b2\x1a.traceinsight.xplane.XStatR\x05st"
    b'atsB\x06\n\x04data"\x86\x02\n\x05XStat\x12 \n\x0bmetadata_id\x18\x01 \x01(\x03R\x0bmetadata_'
    b"id\x12$\n\x0cdouble_value\x18\x02 \x01(\x01H\x00R\x0cdouble_value\x12$\n\x0cuint64_value\x18"
    b'\x03 \x01(\x04H\x00R\x0cuint64_value\x12"\n\x0bint64_value\x18\x04 \x01(\x03H\x00R\x0bint64_'
    b'value\x12\x1e\n\tstr_value\x18\x05 \x01(\tH\x00R\tstr_value\x12"\n\x0bbytes_value\x18\x06 '
    b"\x01(\x0cH\x00R\x0bbytes_value\x12\x1e\n\tref_value\x18\x07 \x01(\x04H\x00R\tref_valueB\x07"
    b'\n\x05value"\xc2\x01\n\x0eXEventMetadata\x12\x0e\n\x02id\x18\x01 \x01(\x03R\x02id\x12\x12\n'
    b'\x04name\x18\x02 \x01(\tR\x04name\x12"\n\x0cdisplay_name\x18\x04 \x01(\tR\x0cdisplay_name'
    b"\x12\x1a\n\x08metadata\x18\x03 \x01(\x0cR\x08metadata\x120\n\x05stats\x18\x05 \x03(\x0b2\x1a"
    b'.traceinsight.xplane.XStatR\x05stats\x12\x1a\n\x08child_id\x18\x06 \x03(\x03R\x08child_id"'
    b"\x90\x02\n\x0eProfileOptions\x120\n\x13include_dataset_ops\x18\x01 \x01(\x08R\x13include_dat"
    b"aset_ops\x12,\n\x11host_tracer_level\x18\x02 \x01(\rR\x11host_tracer_level\x120\n\x13device_"
    b"tracer_level\x18\x03 \x01(\rR\x13device_tracer_level\x120\n\x13python_tracer_level\x18\x04 "
    b"\x01(\rR\x13python_tracer_level\x12\x18\n\x07version\x18\x05 \x01(\rR\x07version\x12 \n\x0bd"
    b'uration_ms\x18\t \x01(\x04R\x0bduration_ms"U\n\rXStatMetadata\x12\x0e\n\x02id\x18\x01 \x01('
    b"\x03R\x02id\x12\x12\n\x04name\x18\x02 \x01(\tR\x04name\x12 \n\x0bdescription\x18\x03 \x01(\t"
    b"R\x0bdescriptionb\x06proto3"
)


def message_classes(serialized: bytes) -> dict[str, Any]:
    """The message classes of a schema serialized as a FileDescriptorProto, by name (its
    top-level messages), in a pool of their own: what ``descriptor_pool.DescriptorPool()`` and
    ``message_factory.GetMessageClass`` make of it. Under upb, made as those make them under upb
    (without importing them: see the module's docstring)."""
    if api_implementation.Type() == "upb":
        try:
            return _upb_classes(serialized)
        except (ImportError, AttributeError, TypeError):
            # upb's module is protobuf's private one: a release that names or shapes it
            # otherwise gets the public path below, slower to import but the same classes
            pass
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    file = pool.AddSerializedFile(serialized)
    return {name: message_factory.GetMessageClass(d)
            for name, d in file.message_types_by_name.items()}


def _upb_classes(serialized: bytes) -> dict[str, Any]:
    from google._upb import _message as upb  # type: ignore[import-untyped]
    file = upb.DescriptorPool().AddSerializedFile(serialized)
    made: dict[str, Any] = {}

    def make(descriptor) -> Any:
        # GetMessageClass under upb: the class from upb's metaclass (the subclass of it that
        # GetMessageClass uses only names its "DESCRIPTOR" key), then the classes of the messages
        # its fields hold (a map's entries too), each made once; the schemas here declare no
        # extensions, the rest of what GetMessageClass does
        cls = made.get(descriptor.full_name)
        if cls is None:
            cls = made[descriptor.full_name] = upb.MessageMeta(
                descriptor.name, (message.Message,), {"DESCRIPTOR": descriptor, "__module__": None})
            for field in descriptor.fields:
                if field.message_type is not None:
                    make(field.message_type)
        return cls
    return {name: make(d) for name, d in file.message_types_by_name.items()}


_CLASSES = message_classes(_SERIALIZED)

XSpace = _CLASSES["XSpace"]
XPlane = _CLASSES["XPlane"]
XLine = _CLASSES["XLine"]
XEvent = _CLASSES["XEvent"]
XStat = _CLASSES["XStat"]
XEventMetadata = _CLASSES["XEventMetadata"]
XStatMetadata = _CLASSES["XStatMetadata"]
ProfileOptions = _CLASSES["ProfileOptions"]

TRACER_LEVELS = ("host_tracer_level", "device_tracer_level", "python_tracer_level")


def decode_profile_options(data: bytes) -> dict[str, int]:
    """The tracer levels a capture really used, from a serialized ProfileOptions (the ``Task
    Environment`` plane's ``profile_options`` stat). Raises google.protobuf DecodeError."""
    opts = ProfileOptions.FromString(bytes(data))
    return {name: int(getattr(opts, name)) for name in TRACER_LEVELS}

__all__ = ["XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata",
           "ProfileOptions", "decode_profile_options"]


if __name__ == "__main__":      # the schema serialized again, for ``_SERIALIZED`` after a change
    print(repr(_build_file().SerializeToString()))
