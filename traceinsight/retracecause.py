"""Why a tf.function was traced more than once, as data.

The analysis writes a cause into the retrace table (``ModeResult.retraces``, column ``cause``, as
the member's value: the table stays plain strings, in its cache JSON and in every report); the
findings read it back with ``RetraceCause.of`` and decide on the members, never on the text of the
``changes`` column, which is for people. It sits below ``model`` so that neither side imports the
other for it.
"""

from __future__ import annotations

from enum import Enum


class RetraceCause(str, Enum):
    NONE = ""                                   # traced at most once
    SHAPES = "shapes"                           # the capture's log: input shapes changed
    PYTHON_VALUES = "python values"             # the capture's log: new Python values as arguments
    SHAPES_AND_PYTHON_VALUES = "shapes and python values"
    NEW_FUNCTION = "new function object"        # tracing_count stays 1: a tf.function per call
    # tracing_count climbed: one tf.function retraced; the trace does not say which argument
    ARGUMENTS_CHANGED = "arguments changed"
    UNKNOWN = "unknown"                         # traced again, nothing recorded says why
    # the row of graphs built outside any tf.function call (e.g. tf.data functions)
    GRAPH_BUILDS = "graph builds"

    @classmethod
    def of(cls, value: object) -> RetraceCause:
        """The cause a table cell holds; a value this version does not write (a hand-made or
        older table) is UNKNOWN: the findings then say the cause is not recorded."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN
