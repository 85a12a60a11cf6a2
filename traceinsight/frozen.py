"""``@frozen``: ``@dataclass(frozen=True)`` at less start-up cost, the same class to every reader.

Python before 3.13 compiles each method a dataclass generates from source text when the class is
defined (``exec``, six per frozen class); traceinsight's data is dozens of small frozen classes,
which made defining them a noticeable share of a small ``analyze``'s start-up. ``@frozen``
lets ``dataclasses.dataclass`` generate what depends on the class's own fields (``__init__``, and
the frozen ``__setattr__`` / ``__delattr__``), and gives ``__repr__``, ``__eq__`` and ``__hash__``
as three functions shared by every such class, which read the fields each compares from a tuple
the decorator stores on the class. They give what dataclasses' own give: the repr
``Name(field=value!r, ...)`` over the fields with ``repr=True`` (``...`` where an object's repr
reaches itself again), equality only with an instance of the very same class over the fields with
``compare=True`` (``NotImplemented`` otherwise), and the hash of the tuple of the fields that hash
(``hash=True``, or ``compare=True`` where ``hash`` is unset); with ``eq=False`` the class keeps
identity's ``__eq__`` / ``__hash__``. A method the class body defines itself is kept, as
dataclasses keeps it. ``dataclasses.fields``, ``replace`` and ``asdict`` see a dataclass.
"""

from __future__ import annotations

import dataclasses
import reprlib
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_kwargs):
        return lambda f: f

T = TypeVar("T")


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The tuple of these attributes of an object (a tuple for one name or none, too)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


@reprlib.recursive_repr()
def _repr(self) -> str:
    get, names = type(self).__frozen_repr__
    return f"{type(self).__qualname__}(" + \
        ", ".join(f"{n}={v!r}" for n, v in zip(names, get(self))) + ")"


def _eq(self, other):
    if other.__class__ is self.__class__:
        key = type(self).__frozen_compare__
        return key(self) == key(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(type(self).__frozen_hash__(self))


def _apply(cls: Any, eq: bool) -> Any:
    own = cls.__dict__
    # as dataclasses decides: a __hash__ of the body's own, not the None that Python sets where
    # the body defines __eq__ alone
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    define_repr, define_eq = "__repr__" not in own, eq and "__eq__" not in own
    cls = dataclasses.dataclass(frozen=True, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cls)       # (InitVars and ClassVars are no fields)
    if define_repr:
        names = tuple(f.name for f in fields if f.repr)
        cls.__frozen_repr__ = (_getter(names), names)
        cls.__repr__ = _repr
    if eq:
        cls.__frozen_compare__ = _getter(tuple(f.name for f in fields if f.compare))
        if define_eq:
            cls.__eq__ = _eq
        if not explicit_hash:
            cls.__frozen_hash__ = _getter(tuple(
                f.name for f in fields if (f.compare if f.hash is None else f.hash)))
            cls.__hash__ = _hash
    return cls


@overload
def frozen(cls: type[T], /) -> type[T]: ...
@overload
def frozen(*, eq: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: type[T] | None = None, /, *, eq: bool = True) -> Any:
    """``@frozen`` / ``@frozen(eq=False)``: ``@dataclass(frozen=True)`` /
    ``@dataclass(frozen=True, eq=False)``, their repr, equality and hash shared (see the module)."""
    if cls is None:
        return lambda c: _apply(c, eq)
    return _apply(cls, eq)
