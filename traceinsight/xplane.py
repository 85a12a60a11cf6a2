"""The XSpace / XPlane protobuf schema, built at import time without TensorFlow.

TensorFlow ships a generated ``xplane_pb2`` but importing it imports all of TensorFlow (seconds),
and xprof ships none. The schema is small and public (tsl/profiler/protobuf/xplane.proto), so we
describe its messages here with protobuf's own descriptor API and let protobuf (upb backend) build
the classes. Field numbers must match the public schema; ``tests/test_xplane_schema.py`` checks
them against TensorFlow's generated module when TensorFlow is installed.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "traceinsight.xplane"  # our own package name: never collides with TF's in one process

_F = descriptor_pb2.FieldDescriptorProto

# (message, [(field name, number, type, label, message type or None, oneof index or None)], oneofs)
_SCALARS = {
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "double": _F.TYPE_DOUBLE,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "bool": _F.TYPE_BOOL,
    "uint32": _F.TYPE_UINT32,
}

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
    fdp = descriptor_pb2.FileDescriptorProto(name="traceinsight/xplane.proto", package=_PACKAGE,
                                             syntax="proto3")
    for msg_name, fields, oneofs in _MESSAGES:
        msg = fdp.message_type.add(name=msg_name)
        for oneof in oneofs:
            msg.oneof_decl.add(name=oneof)
        for name, number, ftype, label, oneof_index in fields:
            field = msg.field.add(name=name, number=number, json_name=name)
            field.label = _F.LABEL_REPEATED if label == "repeated" else _F.LABEL_OPTIONAL
            if ftype.startswith("map:"):
                _, key_type, value_type = ftype.split(":")
                entry_name = "".join(part.capitalize() for part in name.split("_")) + "Entry"
                entry = msg.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=_SCALARS[key_type],
                                label=_F.LABEL_OPTIONAL, json_name="key")
                entry.field.add(name="value", number=2, type=_F.TYPE_MESSAGE,
                                type_name=f".{_PACKAGE}.{value_type}", label=_F.LABEL_OPTIONAL,
                                json_name="value")
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{msg_name}.{entry_name}"
            elif ftype in _SCALARS:
                field.type = _SCALARS[ftype]
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{ftype}"
            if oneof_index is not None:
                field.oneof_index = oneof_index
    return fdp


_pool = descriptor_pool.DescriptorPool()
_classes = message_factory.GetMessages([_build_file()], pool=_pool)

XSpace = _classes[f"{_PACKAGE}.XSpace"]
XPlane = _classes[f"{_PACKAGE}.XPlane"]
XLine = _classes[f"{_PACKAGE}.XLine"]
XEvent = _classes[f"{_PACKAGE}.XEvent"]
XStat = _classes[f"{_PACKAGE}.XStat"]
XEventMetadata = _classes[f"{_PACKAGE}.XEventMetadata"]
XStatMetadata = _classes[f"{_PACKAGE}.XStatMetadata"]
ProfileOptions = _classes[f"{_PACKAGE}.ProfileOptions"]

TRACER_LEVELS = ("host_tracer_level", "device_tracer_level", "python_tracer_level")


def decode_profile_options(data: bytes) -> dict[str, int]:
    """The tracer levels a capture really used, from a serialized ProfileOptions (the ``Task
    Environment`` plane's ``profile_options`` stat). Raises google.protobuf DecodeError."""
    opts = ProfileOptions.FromString(bytes(data))
    return {name: int(getattr(opts, name)) for name in TRACER_LEVELS}

__all__ = ["XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata",
           "ProfileOptions", "decode_profile_options"]
