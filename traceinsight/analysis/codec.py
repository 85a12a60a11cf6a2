"""One JSON codec for the result's frozen dataclasses (``ModeResult``, ``Timing`` and what they
hold), driven by their fields' type hints: what the analysis cache stores and the analysis
processes of ``analysis.parallel`` send back. Plain JSON values only: nothing is unpickled or
evaluated, and a document that does not have the shape the hints say raises ``CodecError``.

Each hint has one encoding:

* ``str``, ``int``, ``bool``: themselves (a bool is never an int, an int never a bool);
* ``float``: a JSON number (Python's repr: every bit back), NaN and the infinities as the strings
  ``"nan"``, ``"inf"``, ``"-inf"``; an int read back is a float;
* an ``Enum``: its value;
* ``X | None``: null or X; ``tuple[X, ...]``: a list; ``dict[str, X]``: an object;
* ``Any`` / a bare ``dict``: JSON data as it is (numpy scalars as numbers, non-finite floats as
  null: free-form records such as the profiler options);
* ``np.ndarray``: a float64 array, its values as floats are;
* ``Columns`` (a table; the ``model.Table`` fields, ``model.TABLES``): column names, dtypes, row
  labels and values column by column (``table_to_json``);
* a dataclass: an object of its fields, each by its own hint. The fields not compared
  (``compare=False``: what a result is given at run time, not its data) are left out, and so are
  the ones a caller names (``skip``); a caller gives their values when decoding.

A field whose attribute is a descriptor (``model.Table``, ``model.FirstStep``) is encoded in the
form the object stores (``STORED_AS``), read from the instance's ``__dict__``: a table stays
``Columns`` (no DataFrame is built, pandas is never imported).

``schema(cls, skip)`` describes the whole tree of hints; a stored document records a digest of it
so that one written for other fields is stale, not damaged."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import math
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from traceinsight.columns import Columns, text
from traceinsight.model import FirstStep, Table

# Bump when the encoding of a hint changes (the schema digest covers the fields themselves).
CODEC_VERSION = 1

# the form a descriptor field is stored in, and so encoded
STORED_AS: dict[Any, Any] = {Table: Columns, FirstStep: dict[str, float] | None}


class CodecError(ValueError):
    """A JSON document that is not what the codec writes for this hint."""


Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


def encode(obj: Any, cls: type, skip: Iterable[str] = ()) -> dict:
    """``obj`` (an instance of the dataclass ``cls``) as a JSON object of its fields."""
    return _dataclass_codec(cls, frozenset(skip))[0](obj)


def decode(data: Any, cls: type, skip: Iterable[str] = (), **given: Any) -> Any:
    """The ``cls`` instance ``encode`` wrote as ``data``, with ``given`` for the skipped fields.
    Raises ``CodecError`` where ``data`` is not that."""
    return _guarded(cls.__name__, lambda: cls(**_dataclass_codec(cls, frozenset(skip), True)[1](data),
                                              **given))


def to_json(value: Any, hint: Any) -> Any:
    """Any value by its hint (``float``, ``np.ndarray``, ``tuple[str, ...]``, a dataclass ...)."""
    return _codec(hint)[0](value)


def from_json(data: Any, hint: Any) -> Any:
    """The value ``to_json`` wrote; ``CodecError`` where ``data`` is not that."""
    return _guarded(repr(hint), lambda: _codec(hint)[1](data))


def _guarded(what: str, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except CodecError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError,
            RecursionError, MemoryError) as e:
        raise CodecError(f"{what}: {type(e).__name__}: {e}") from None


def schema(cls: type, skip: Iterable[str] = ()) -> str:
    """A digest of ``cls``'s tree of fields and hints (and of this codec's version)."""
    text_ = f"{CODEC_VERSION}:{_describe(cls, frozenset(skip))}"
    return hashlib.sha256(text_.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ the hints

def _fields(cls: type, skip: frozenset[str]) -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, STORED_AS.get(hints[f.name], hints[f.name])) for f in dataclasses.fields(cls)
            if f.init and f.compare and f.name not in skip]


def _optional(hint: Any) -> Any | None:
    """X for ``X | None`` (or ``Optional[X]``), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(hint)) == 2:
            return args[0]
        raise TypeError(f"no codec for the union {hint!r}")
    return None


def _describe(hint: Any, skip: frozenset[str] = frozenset()) -> str:
    inner = _optional(hint)
    if inner is not None:
        return f"{_describe(inner)}?"
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return f"{hint.__qualname__}(" + ",".join(f"{n}:{_describe(h)}" for n, h in
                                                  _fields(hint, skip)) + ")"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"{hint.__qualname__}[" + ",".join(repr(m.value) for m in hint) + "]"
    origin = typing.get_origin(hint)
    if origin is not None:
        return f"{getattr(origin, '__qualname__', repr(origin))}[" + ",".join(
            "..." if a is Ellipsis else _describe(a) for a in typing.get_args(hint)) + "]"
    return getattr(hint, "__qualname__", repr(hint))


@functools.cache
def _codec(hint: Any) -> tuple[Encode, Decode]:
    inner = _optional(hint)
    if inner is not None:
        enc, dec = _codec(inner)
        return (lambda v: None if v is None else enc(v)), (lambda d: None if d is None else dec(d))
    if hint is Any:
        return _clean, _identity
    if hint is dict:
        return _clean, _object
    if hint is str:
        return _identity, _exact_type(str)
    if hint is bool:
        return bool, _exact_type(bool)
    if hint is int:
        return int, _exact_type(int)
    if hint is float:
        return _float_out, _float_in
    if hint is np.ndarray:
        return _floats_out, _floats_in
    if hint is Columns:
        return table_to_json, table_from_json
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return (lambda v: v.value), hint
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass_codec(hint, frozenset())
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        enc, dec = _codec(args[0])
        return (lambda v: [enc(x) for x in v]), (lambda d: tuple(dec(x) for x in _list(d)))
    if origin is dict and len(args) == 2 and args[0] is str:
        enc, dec = _codec(args[1])
        return (lambda v: {str(k): enc(x) for k, x in v.items()}), \
            (lambda d: {_exact_type(str)(k): dec(x) for k, x in _object(d).items()})
    raise TypeError(f"no codec for {hint!r}")


@functools.cache
def _dataclass_codec(cls: type, skip: frozenset[str], kwargs: bool = False
                     ) -> tuple[Encode, Decode]:
    """A dataclass's codec; ``kwargs``: its decoder gives the constructor's keyword arguments."""
    fields = [(name, *_codec(hint)) for name, hint in _fields(cls, skip)]

    def enc(obj: Any) -> dict:
        stored = obj.__dict__
        return {name: e(stored[name]) for name, e, _ in fields}

    def dec(data: Any) -> Any:
        data = _object(data)
        values = {name: d(data[name]) for name, _, d in fields}
        return values if kwargs else cls(**values)
    return enc, dec


# ------------------------------------------------------------------------------ the values

def _identity(v: Any) -> Any:
    return v


def _exact_type(kind: type) -> Decode:
    def dec(d: Any) -> Any:
        if type(d) is not kind:
            raise CodecError(f"expected {kind.__name__}, got {type(d).__name__}")
        return d
    return dec


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _float_out(v: Any) -> Any:
    v = float(v)
    return v if math.isfinite(v) else repr(v)


def _float_in(d: Any) -> float:
    if type(d) is float or type(d) is int:
        return float(d)
    if isinstance(d, str) and d in _NON_FINITE:
        return _NON_FINITE[d]
    raise CodecError(f"expected a number, got {type(d).__name__}")


def _floats_out(a: np.ndarray) -> list:
    """A float array as JSON values that read back to the same bits."""
    values = np.asarray(a, dtype=float).tolist()
    if np.isfinite(a).all():
        return values
    return [v if math.isfinite(v) else repr(v) for v in values]


_NUMBERS = frozenset({float, int})
# what a text column's cells may be (JSON's scalars: a bool is an int): checked by type at once,
# each cell by isinstance only where another type is there
_TEXT_CELLS = frozenset({str, int, float, bool, type(None)})


def _floats_in(d: Any) -> np.ndarray:
    d = _list(d)
    if _NUMBERS.issuperset(map(type, d)):    # numbers only (never a bool): read at once
        return np.array(d, dtype=float)
    return np.array([_float_in(v) for v in d], dtype=float)


def _list(d: Any) -> list:
    if type(d) is not list:
        raise CodecError(f"expected a list, got {type(d).__name__}")
    return d


def _object(d: Any) -> dict:
    if type(d) is not dict:
        raise CodecError(f"expected an object, got {type(d).__name__}")
    return d


def _clean(o: Any) -> Any:
    """Free-form data as plain JSON values: numpy scalars and arrays as numbers and lists, tuples
    as lists, non-finite floats as null."""
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating, float)):
        return None if not math.isfinite(float(o)) else float(o)
    if isinstance(o, np.ndarray):
        return _clean(o.tolist())
    return o


# ------------------------------------------------------------------------------ tables

_DTYPES = {"f": "float64", "i": "int64", "u": "int64", "b": "bool"}


def table_to_json(t: Columns) -> dict:
    """Column names, dtypes ("float64", "int64", "bool" or "object"), row labels and the values
    column by column, as plain JSON values; floats keep every bit (Python's repr), NaN is null
    and the infinities "inf" and "-inf"."""
    names = t.columns
    dtypes = [_DTYPES.get(t[c].dtype.kind, "object") for c in names]
    return {"columns": names, "dtypes": dtypes,
            "index": None if t.index is None else _clean(t.index),
            "values": [_float_cells(t[c]) if d == "float64" else _clean(t[c].tolist())
                       for c, d in zip(names, dtypes)]}


def _float_cells(a: np.ndarray) -> list:
    """A float column's values: numbers (every bit), NaN as null, the infinities as "inf" and
    "-inf"."""
    values = a.tolist()
    if np.isfinite(a).all():
        return values
    return [v if math.isfinite(v) else None if v != v else repr(v) for v in values]


def table_from_json(d: Any) -> Columns:
    d = _object(d)
    names = _list(d["columns"])
    if not all(isinstance(c, str) for c in names):
        raise CodecError("a column name is not text")
    cols: dict[str, np.ndarray] = {}
    for name, dtype, values in zip(names, _list(d["dtypes"]), _list(d["values"]), strict=True):
        if dtype == "float64":
            values = _list(values)
            cols[name] = np.array(values if _NUMBERS.issuperset(map(type, values)) else
                                  [math.nan if v is None else _NON_FINITE[v] if isinstance(v, str)
                                   else v for v in values], dtype=float)
        elif dtype in ("int64", "bool"):
            cols[name] = np.array(values, dtype=dtype)
        elif dtype == "object":
            if not _TEXT_CELLS.issuperset(map(type, values)) and \
                    not all(v is None or isinstance(v, (str, int, float)) for v in values):
                raise CodecError("a text column holds a list or an object")
            cols[name] = text(values)
        else:
            raise CodecError(f"unknown column dtype {dtype!r}")
    return Columns(cols, index=d.get("index"))
