"""The project's own error type. ``cli.main`` is the only place that turns it into an exit status."""


class TraceinsightError(Exception):
    """A problem the user can fix (bad input, missing file, ...): shown as one line, exit status 2."""

    exit_status = 2


class WriteError(TraceinsightError):
    """A file could not be written (a full disk, a read-only folder): one line, exit status 1."""

    exit_status = 1
