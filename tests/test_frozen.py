"""``@frozen`` gives the classes ``@dataclass(frozen=True)`` gives: checked against dataclasses' own
generated methods (a twin of each class made by ``dataclasses.make_dataclass``) on every frozen
object of an analysed run, and on small classes for each rule the decorator follows."""

from __future__ import annotations

import dataclasses
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
