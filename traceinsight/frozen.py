"""``@frozen``: ``@dataclass(frozen=True)`` at less start-up cost, the same class to every reader.

Python before 3.13 compiles each method a dataclass generates from source text when the class is
defined (``exec``, six per frozen class); traceinsight's data is dozens of small frozen classes,
which made defining them a noticeable share of a small ``analyze``'s start-up. ``@frozen`` has
``dataclasses.dataclass`` record the fields (``fields``, ``replace``, ``asdict`` see a dataclass)
and generate no method; it compiles ``__init__`` alone, from the text dataclasses writes for a
frozen class (the same parameters, defaults, factories, InitVars and ``__post_init__`` call, the
fields set with ``object.__setattr__``), and gives the rest without compiling anything: the frozen
``__setattr__`` / ``__delattr__`` as closures over the class and its field names (dataclasses'
test: raise ``FrozenInstanceError`` for any name on the class itself, for a field's name on a
subclass), and ``__repr__``, ``__eq__`` and ``__hash__`` as three functions shared by every such
class, which read the fields each uses from a tuple the decorator stores on the class. They give
what dataclasses' own give: the repr
``Name(field=value!r, ...)`` over the fields with ``repr=True`` (``...`` where an object's repr
reaches itself again), equality only with an instance of the very same class over the fields with
``compare=True`` (``NotImplemented`` otherwise), and the hash of the tuple of the fields that hash
(``hash=True``, or ``compare=True`` where ``hash`` is unset); with ``eq=False`` the class keeps
identity's ``__eq__`` / ``__hash__``. A method the class body defines itself is kept, as
dataclasses keeps it (a ``__setattr__`` / ``__delattr__`` is refused, as dataclasses refuses it).
What differs is only the record: ``__dataclass_params__`` says the methods were not dataclasses'
(``init``, ``repr``, ``eq`` and ``frozen`` False), so a plain ``@dataclass(frozen=True)`` cannot
subclass a ``@frozen`` class: subclass it with ``@frozen``.
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
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


class _Factory:
    """The default a parameter with a default factory shows (dataclasses' marker reads alike)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _is_initvar(f: dataclasses.Field) -> bool:
    t = f.type      # an object, or the annotation's text (``from __future__ import annotations``)
    return isinstance(t, dataclasses.InitVar) or t is dataclasses.InitVar or \
        (isinstance(t, str) and t.removeprefix("dataclasses.").startswith("InitVar"))


def _init(cls: Any, fields: tuple[dataclasses.Field, ...]) -> Callable:
    """``__init__`` of a frozen dataclass, as dataclasses writes it (one ``exec``)."""
    names = {f.name for f in fields}
    # the fields and the InitVars, in the class's order (a ClassVar is neither)
    every = [f for f in cls.__dataclass_fields__.values() if f.name in names or _is_initvar(f)]
    missing = dataclasses.MISSING
    seen_default = False
    for f in every:
        if f.init and not f.kw_only:
            if f.default is not missing or f.default_factory is not missing:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
    self_name = "__dataclass_self__" if "self" in cls.__dataclass_fields__ else "self"
    local: dict[str, Any] = {f"_type_{f.name}": f.type for f in every}
    local.update({"_HAS_DEFAULT_FACTORY": _FACTORY, "__dataclass_builtins_object__": object,
                  "_return_type": None})
    body = []
    for f in every:
        dflt = f"_dflt_{f.name}"
        if f.default_factory is not missing:
            local[dflt] = f.default_factory
            value = f"{dflt}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}" if f.init \
                else f"{dflt}()"
        elif f.init:
            if f.default is not missing:
                local[dflt] = f.default
            value = f.name
        else:
            continue        # the class attribute holds its default
        if f.name in names:
            body.append(f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__("
                    + ",".join(f.name for f in every if f.name not in names) + ")")

    def param(f: dataclasses.Field) -> str:
        if f.default is not missing:
            return f"{f.name}:_type_{f.name}=_dflt_{f.name}"
        if f.default_factory is not missing:
            return f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY"
        return f"{f.name}:_type_{f.name}"

    params = [param(f) for f in every if f.init and not f.kw_only]
    keywords = [param(f) for f in every if f.init and f.kw_only]
    params += ["*", *keywords] if keywords else []
    lines = "\n".join(f"  {b}" for b in body or ["pass"])
    text = (f"def __create_fn__({', '.join(local)}):\n"
            f" def __init__({','.join([self_name, *params])})->_return_type:\n{lines}\n"
            " return __init__")
    module = sys.modules.get(cls.__module__)
    ns: dict[str, Any] = {}
    # (dont_inherit: not this module's ``from __future__ import annotations``, which would make
    # the annotations the names of the variables that hold them)
    code = compile(text, "<string>", "exec", dont_inherit=True)
    exec(code, module.__dict__ if module else {}, ns)    # noqa: S102 - dataclasses' own way
    init = ns["__create_fn__"](**local)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _frozen_methods(cls: Any, names: tuple[str, ...]) -> tuple[Callable, Callable]:
    """The frozen ``__setattr__`` and ``__delattr__`` dataclasses gives ``cls``."""
    frozen_error = dataclasses.FrozenInstanceError

    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __setattr__, __delattr__


def _apply(cls: Any, eq: bool) -> Any:
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in own:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    # as dataclasses decides: a __hash__ of the body's own, not the None that Python sets where
    # the body defines __eq__ alone
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    define_init, define_repr, define_eq = \
        "__init__" not in own, "__repr__" not in own, eq and "__eq__" not in own
    documented = bool(own.get("__doc__"))
    if not documented:      # (a placeholder: dataclasses would take the signature before __init__)
        cls.__doc__ = "-"
    # the fields recorded, no method generated (nothing compiled)
    cls = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cls)       # (InitVars and ClassVars are no fields)
    if define_init:
        cls.__init__ = _init(cls, fields)
    if not documented:      # dataclasses' docstring: the signature, which needs the __init__
        import inspect
        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    cls.__setattr__, cls.__delattr__ = _frozen_methods(cls, tuple(f.name for f in fields))
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
