"""``@frozen`` gives the classes ``@dataclass(frozen=True)`` gives: checked against dataclasses' own
generated methods: the repr, equality and hash on every frozen object of an analysed run (a twin
of its class made by ``dataclasses.make_dataclass``), the ``__init__`` (signature, docstring,
defaults, factories, InitVars, ``__post_init__``, keyword-only fields) on the same class body
decorated both ways, and each rule the decorator follows on small classes."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from pathlib import Path

import pytest

from traceinsight import frozen as frozen_module
from traceinsight.frozen import frozen

TRACE = Path(__file__).parent / "data" / "runs" / "retracing" / "function" / "host"


def _twin(cls: type, eq: bool) -> type:
    """The class as ``@dataclass(frozen=True, eq=eq)`` makes it, from the same fields."""
    specs = [(f.name, f.type, dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash,
                                                 init=f.init))
             for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__qualname__, specs, frozen=True, eq=eq)


def _copy(obj, twin: type):
    out = object.__new__(twin)
    for f in dataclasses.fields(obj):
        object.__setattr__(out, f.name, getattr(obj, f.name))
    return out


def _frozen_objects(root) -> dict[type, list]:
    """Every ``@frozen`` object reachable from ``root`` by fields, tuples and mappings."""
    found: dict[type, list] = {}
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            if hasattr(type(obj), "__frozen_repr__") or hasattr(type(obj), "__frozen_compare__"):
                found.setdefault(type(obj), []).append(obj)
            todo += [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        elif isinstance(obj, (tuple, list, set, frozenset)):
            todo += list(obj)
        elif isinstance(obj, Mapping):
            todo += [*obj.keys(), *obj.values()]
    return found


def _hash(obj):
    try:
        return hash(obj)
    except TypeError as e:      # an unhashable field: both raise
        return type(e)


def test_an_analysed_runs_objects_repr_compare_and_hash_as_dataclasses_would():
    from traceinsight.analysis.load import load
    run = load(TRACE)
    found = _frozen_objects(run)
    for obj in run.figures.findings:        # (the figures are no field of the run)
        found.setdefault(type(obj), []).append(obj)
    assert len(found) >= 5, sorted(c.__name__ for c in found)
    for cls, objs in found.items():
        twin = _twin(cls, eq=hasattr(cls, "__frozen_compare__"))
        objs = objs[:20]
        twins = [_copy(o, twin) for o in objs]
        for o, t in zip(objs, twins):
            if cls.__repr__ is frozen_module._repr:     # (a repr of the class's own is kept)
                assert repr(o) == repr(t), cls
            if cls.__hash__ is frozen_module._hash:
                assert _hash(o) == _hash(t), cls
        if cls.__eq__ is frozen_module._eq:
            for i, (a, ta) in enumerate(zip(objs, twins)):
                for b, tb in zip(objs[i:], twins[i:]):
                    assert (a == b) == (ta == tb), cls


@frozen
class _Point:
    x: int
    y: int = 0
    note: str = dataclasses.field(default="", compare=False)
    secret: str = dataclasses.field(default="", repr=False)


@frozen
class _Point3(_Point):
    z: int = 0


@frozen(eq=False)
class _Handle:
    name: str


@frozen
class _OwnEq:
    a: int

    def __eq__(self, other):
        return isinstance(other, _OwnEq)


@frozen
class _OwnHash:
    a: int

    def __hash__(self):
        return 7


@frozen
class _Box:
    items: list


def test_repr_equality_and_hash_follow_the_fields_options():
    p = _Point(1, 2, note="n", secret="s")
    assert repr(p) == "_Point(x=1, y=2, note='n')"
    assert p == _Point(1, 2, note="other", secret="s")        # note: compare=False
    assert p != _Point(1, 2, secret="other")
    assert hash(p) == hash((1, 2, "s")) == hash(_Point(1, 2, note="x", secret="s"))
    assert p.__eq__(_Point3(1, 2, secret="s")) is NotImplemented   # not the very same class
    assert p != (1, 2, "s")
    assert repr(_Point3(1, z=3)) == "_Point3(x=1, y=0, note='', z=3)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3
    assert dataclasses.replace(p, x=5) == _Point(5, 2, secret="s")
    assert [f.name for f in dataclasses.fields(_Point3)] == ["x", "y", "note", "secret", "z"]


def test_eq_false_keeps_identity_and_a_body_keeps_its_own_methods():
    a, b = _Handle("h"), _Handle("h")
    assert a != b and a == a and hash(a) == object.__hash__(a)
    assert _OwnEq(1) == _OwnEq(2) and hash(_OwnEq(1)) == hash((1,))
    assert hash(_OwnHash(1)) == 7


def test_a_repr_that_reaches_itself_again_is_cut_short():
    box = _Box([])
    box.items.append(box)
    assert repr(box) == "_Box(items=[...])"


def _pair(body: str) -> tuple[type, type]:
    """The same class body under ``@frozen`` and under ``@dataclass(frozen=True)``, each in a
    module of its own (string annotations are read in their module)."""
    import sys
    import types
    made = []
    for decorator in ("frozen", "dataclass(frozen=True)"):
        module = types.ModuleType("frozen_twin")
        sys.modules["frozen_twin"] = module
        try:
            exec("from __future__ import annotations\n"
                 "from dataclasses import InitVar, dataclass, field\n"
                 "from traceinsight.frozen import frozen\n"
                 f"@{decorator}\nclass A:\n{body}", module.__dict__)
        finally:
            del sys.modules["frozen_twin"]
        made.append(module.__dict__["A"])
    return made[0], made[1]


# class bodies, and the arguments an instance is made with
BODIES = {
    "plain": ("    a: int\n    b: str = 'x'\n", (1,), {}),
    "factories": ("    a: int\n    items: list = field(default_factory=list)\n"
                  "    hidden: dict = field(default_factory=dict, init=False)\n"
                  "    fixed: int = field(default=3, init=False)\n", (1,), {}),
    "post_init": ("    a: int\n    scale: InitVar[int] = 2\n    b: int = field(init=False, default=0)\n"
                  "    def __post_init__(self, scale):\n"
                  "        object.__setattr__(self, 'b', self.a * scale)\n", (3,), {"scale": 5}),
    "keywords": ("    a: int\n    b: int = field(default=1, kw_only=True)\n    c: int = 2\n",
                 (1,), {"b": 4}),
    "self_field": ("    self: int\n    other: int = 0\n", (1,), {"other": 2}),
    "documented": ('    """Said here."""\n    a: int = 0\n', (), {}),
    "empty": ("    pass\n", (), {}),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_init_its_signature_and_the_docstring_are_dataclasses(name):
    body, args, kwargs = BODIES[name]
    ours, theirs = _pair(body)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__doc__ == theirs.__doc__
    assert ours.__match_args__ == theirs.__match_args__
    assert ours.__init__.__qualname__ == theirs.__init__.__qualname__ == "A.__init__"
    a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
    assert repr(a) == repr(b) and vars(a) == vars(b)
    with pytest.raises(TypeError):
        ours(*args, **kwargs, unknown=1)
    if name == "factories":        # a new object from the factory for each instance
        assert a.items is not ours(1).items and ours(1, [5]).items == [5]


def test_what_dataclasses_refuses_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        _pair("    a: int = 0\n    b: int\n")
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        _pair("    a: int\n    def __setattr__(self, name, value):\n        pass\n")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'x'"):
        del _Point(1).x
