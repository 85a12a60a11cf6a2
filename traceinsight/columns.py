"""The analysis's tables in a light column form: named numpy columns of one length, optionally with
row labels.

The analysis computes every table into ``Columns`` with numpy only, and everything inside the
package reads them in this form, so that ``traceinsight analyze`` (which prints from them) never
imports pandas. The Python API gives the same tables as pandas DataFrames: ``to_pandas()`` builds a
new one on every call (importing pandas only then), so a caller that changes its DataFrame changes
nothing else; a module that needs pandas' grouping builds one the same way, and says why.

String columns are numpy object arrays of ``str`` (pandas makes them its ``str`` dtype); an empty
table made by ``Columns.no_rows(names)`` has object columns, like ``pd.DataFrame(columns=names)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def text(values: Sequence[Any]) -> np.ndarray:
    """A string column: an object array (never numpy's fixed-width ``<U``)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


class Columns:
    """Named columns of equal length (``index``: row labels, default 0..n-1), or rows kept as
    dicts (``from_records``: mixed rows whose DataFrame pandas should infer, e.g. the summary).

    Read-only by convention: the analysis builds a new one rather than changing one in place, and
    readers never write into the arrays ``[name]`` gives."""

    __slots__ = ("_data", "_names", "_rows", "index")

    def __init__(self, data: Mapping[str, Any] | None = None, index: Sequence[Any] | None = None):
        self._data: dict[str, np.ndarray] = {}
        for k, v in (data or {}).items():
            a = np.asarray(v)
            self._data[k] = text(a.tolist()) if a.dtype.kind == "U" else a
        self._names = list(self._data)
        self._rows: list[dict[str, Any]] | None = None
        self.index = list(index) if index is not None else None
        lengths = {len(a) for a in self._data.values()} | ({len(self.index)} if self.index is not None else set())
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")

    @classmethod
    def no_rows(cls, names: Sequence[str]) -> Columns:
        """No rows: object columns, as ``pd.DataFrame(columns=names)``."""
        return cls({n: np.empty(0, dtype=object) for n in names})

    @classmethod
    def from_records(cls, rows: list[dict[str, Any]], names: Sequence[str]) -> Columns:
        """Rows of mixed values (None for a missing figure); the DataFrame is
        ``pd.DataFrame(rows, columns=names)``, its dtypes inferred by pandas."""
        out = cls()
        out._names = list(names)
        out._rows = [dict(r) for r in rows]
        return out

    @classmethod
    def from_pandas(cls, df: pd.DataFrame) -> Columns:
        """The columns of a DataFrame (tables made by hand in tests, or by pandas code), copied:
        the DataFrame can change afterwards without changing these."""
        import pandas as pd

        index = None if isinstance(df.index, pd.RangeIndex) and df.index.start == 0 \
            and df.index.step == 1 else df.index.tolist()
        return cls({str(c): df[c].to_numpy(dtype=object if df[c].dtype.kind not in "biuf" else None,
                                           copy=True)
                    for c in df.columns}, index=index)

    # ---- reading ----------------------------------------------------------------------------

    @property
    def columns(self) -> list[str]:
        return list(self._names)

    def __len__(self) -> int:
        if self._rows is not None:
            return len(self._rows)
        if self._data:
            return len(next(iter(self._data.values())))
        return len(self.index) if self.index is not None else 0

    @property
    def empty(self) -> bool:
        """No rows or no columns (as ``DataFrame.empty``)."""
        return len(self) == 0 or not self._names

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> np.ndarray:
        if self._rows is not None and name not in self._data:
            if name not in self._names:
                raise KeyError(name)
            self._data[name] = np.array([r.get(name) for r in self._rows], dtype=object)
        return self._data[name]

    def records(self, n: int | None = None) -> list[dict[str, Any]]:
        """The first ``n`` rows (all by default) as dicts of Python values."""
        if self._rows is not None:
            return [{k: r.get(k) for k in self._names} for r in self._rows[:n]]
        cols = [self._data[k][:n].tolist() for k in self._names]
        return [dict(zip(self._names, vals)) for vals in zip(*cols)]

    def row(self, label: Any) -> dict[str, Any]:
        """The row whose index label is ``label`` (KeyError when none)."""
        if self.index is None or label not in self.index:
            raise KeyError(label)
        i = self.index.index(label)
        return {k: self._data[k][i:i + 1].tolist()[0] for k in self._names}

    def take(self, rows: np.ndarray) -> Columns:
        """The rows at these positions (or where a boolean mask is True), in that order."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.nonzero(rows)[0]
        if self._rows is not None:
            return Columns.from_records([self._rows[i] for i in rows.tolist()], self._names)
        index = None if self.index is None else [self.index[i] for i in rows.tolist()]
        return Columns({k: v[rows] for k, v in self._data.items()}, index=index)

    def head(self, n: int) -> Columns:
        return self.take(np.arange(min(max(n, 0), len(self))))

    def to_pandas(self) -> pd.DataFrame:
        """A new DataFrame of these columns, its data copied (pandas is imported here, not
        before): what the Python API returns, so the caller owns it."""
        import pandas as pd

        if self._rows is not None:
            return pd.DataFrame(self._rows, columns=self._names)
        if not self._names and self.index is None:
            return pd.DataFrame()
        return pd.DataFrame({k: self._data[k] for k in self._names}, index=self.index, copy=True)

    def __repr__(self) -> str:
        return f"Columns({len(self)} rows: {', '.join(self._names)})"

    def __eq__(self, other: object) -> bool:
        """The same table: the same column names in order, the same row labels and the same values
        (NaN equal to NaN, as a figure that is not there is the same on both sides)."""
        if not isinstance(other, Columns):
            return NotImplemented
        if self._names != other._names or self.index != other.index or len(self) != len(other):
            return False
        return all(same_value(self[k], other[k]) for k in self._names)

    __hash__ = None  # type: ignore[assignment]   # a table's values are not frozen by Python


def same_value(a: Any, b: Any) -> bool:
    """Value equality for the analysis's data: arrays element by element and tables column by
    column, mappings and sequences item by item, NaN equal to NaN (an absent figure is the same
    on both sides); anything else by ``==``."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return False
        if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
            return bool(np.array_equal(x, y, equal_nan=x.dtype.kind == "f" or y.dtype.kind == "f"))
        return all(same_value(u, v) for u, v in zip(x.ravel().tolist(), y.ravel().tolist()))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_value, a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):     # a type whose == is not a truth value
        return False


def fields_repr(obj: Any) -> str:
    """``__repr__`` of a frozen dataclass of the result that holds tables: its shown fields as
    stored (a table as ``Columns(n rows: ...)``, never a DataFrame built to be printed)."""
    from dataclasses import fields
    shown = ", ".join(f"{f.name}={obj.__dict__[f.name]!r}" for f in fields(obj) if f.repr)
    return f"{type(obj).__name__}({shown})"


def fields_equal(a: Any, b: Any) -> bool:
    """``__eq__`` of a frozen dataclass of the result that holds arrays or tables (``Timing``,
    ``ModeResult``, ``Comparison``): its compared fields, as stored, by ``same_value``."""
    if type(a) is not type(b):
        return NotImplemented
    from dataclasses import fields
    return all(same_value(a.__dict__[f.name], b.__dict__[f.name]) for f in fields(a) if f.compare)


class Table:
    """A table field of a frozen dataclass (``ModeResult``'s, ``compare.Comparison``'s): stored in
    one form, ``Columns``, read publicly as a DataFrame.

    Set it to ``Columns`` (what the analysis computes) or to a DataFrame (tables made by hand):
    a DataFrame is converted once, here, and its data copied, so the object never shares a table
    with the caller; None (left out) is an empty table, with the columns ``names`` when given.
    Read (``mode.steps``), it is a new DataFrame built from the columns on every read (pandas is
    imported then, not before): the reader may change it, the object stays as it was. Code
    inside the package reads the columns, ``ModeResult.table(name)``."""

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return None      # the dataclass default: no table
        return obj.__dict__[self.name].to_pandas()

    def __set__(self, obj: Any, value: Any) -> None:
        if value is None:
            value = Columns.no_rows(self.names) if self.names else Columns()
        elif not isinstance(value, Columns):
            value = Columns.from_pandas(value)      # a DataFrame (only pandas code makes one)
        obj.__dict__[self.name] = value
