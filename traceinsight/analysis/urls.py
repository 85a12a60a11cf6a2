"""Logdirs on object storage (``gs://``, ``s3://``, ``memory://``, any fsspec URL), read through
fsspec as TensorBoard reads them: the traces are found by one listing of the URL (the layout
``runfolder.find_xplanes`` reads: ``<run>/plugins/profile/<session>/<host>.xplane.pb``, within
``MAX_TRACE_DEPTH`` folders), copied into a temporary folder, analysed there like a local logdir
(same mode names), and the copies deleted; each mode's ``trace_paths`` and the run's source are
the URLs (``analysis.load``). On a Dask cluster (``analysis.parallel.analyze_with_dask``) each
worker copies the one trace it analyses. A ``file://`` URL is a local path. fsspec comes with
Dask (the ``cluster`` extra); a bucket's own protocol needs its package (gcsfs, s3fs), as in
TensorBoard."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from traceinsight.errors import TraceinsightError

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
# More objects than this under the URL: not a logdir (as runfolder.MAX_FOLDERS for folders)
MAX_OBJECTS = 200_000


def is_url(path: Any) -> bool:
    """A URL with a scheme (``gs://bucket/logdir``); ``file://`` ones are local paths."""
    return isinstance(path, str) and bool(_SCHEME.match(path)) and not path.startswith("file://")


def local_path(path: Any) -> Any:
    """``file:///a/b`` -> ``Path("/a/b")``; anything else as it is."""
    if isinstance(path, str) and path.startswith("file://"):
        return Path(path[len("file://"):])
    return path


def _fs(url: str):
    try:
        from fsspec.core import url_to_fs  # type: ignore[import-untyped]
    except ImportError:
        raise TraceinsightError(f"{url}: reading a URL needs fsspec: pip install "
                                "'traceinsight-tf[cluster]'") from None
    try:
        return url_to_fs(url)
    except (ImportError, ValueError) as e:    # an unknown protocol, or its package missing
        raise TraceinsightError(f"{url}: cannot be read ({_line(e)})") from None


def _line(e: BaseException) -> str:
    from traceinsight.present import safe
    text = str(e).strip().splitlines()
    return safe(text[0] if text else type(e).__name__, 200)


def unstrip(url: str, path: str) -> str:
    """A path of ``url``'s file system as a URL again (``bucket/a`` -> ``gs://bucket/a``)."""
    fs, _ = _fs(url)
    return fs.unstrip_protocol(path)


def _is_trace(parts: tuple[str, ...], root_kind: str) -> bool:
    """Whether a file at ``parts`` (relative to the URL) is a trace ``find_xplanes`` would read."""
    from traceinsight.runfolder import MAX_TRACE_DEPTH
    if not parts or not parts[-1].endswith(".xplane.pb"):
        return False
    folders = parts[:-1]
    if len(folders) > MAX_TRACE_DEPTH or any(p.startswith(".") or ".xplane.pb_" in p
                                            for p in folders):
        return False
    # the folders the layout allows below a plugins/ folder: profile/<session>/ and no deeper
    below = {"session": 0, "profile": 1, "plugins": 2}.get(root_kind)
    if below is not None:
        return len(folders) == below and (below < 2 or folders[0] == "profile")
    if "plugins" in folders:
        i = folders.index("plugins")
        return len(folders) == i + 3 and folders[i + 1] == "profile"
    return True


def find_traces(url: str) -> tuple[str, list[str], bool]:
    """(the URL's root as fsspec names it (the folder of a trace named by the URL), the traces'
    paths under it, sorted; whether the URL named one trace)."""
    from traceinsight.runfolder import MAX_TRACE_DEPTH
    fs, root = _fs(url)
    root = root.rstrip("/")
    try:
        if fs.isfile(root):
            return (str(PurePosixPath(root).parent),
                    [root] if root.endswith(".xplane.pb") else [], True)
        listed = fs.find(root, maxdepth=MAX_TRACE_DEPTH + 1)
    except (OSError, ValueError) as e:
        raise TraceinsightError(f"{url}: cannot be listed ({_line(e)})") from None
    if len(listed) > MAX_OBJECTS:
        raise TraceinsightError(f"{url}: more than {MAX_OBJECTS:,} objects: point at a "
                                "TensorBoard logdir or a profile session")
    r = PurePosixPath(root)
    kind = "plugins" if r.name == "plugins" else "profile" if \
        (r.name, r.parent.name) == ("profile", "plugins") else "session" if \
        (r.parent.name, r.parent.parent.name) == ("profile", "plugins") else ""
    found = [p for p in listed if _is_trace(PurePosixPath(p).relative_to(r).parts, kind)]
    return root, sorted(found), False


def fetch(url: str, path: str, root: str, into: Path) -> Path:
    """Copy the trace at ``path`` (under ``root``, in ``url``'s file system) to the same relative
    place under the local folder ``into``; refused before copying when larger than an XSpace can
    be."""
    from traceinsight.analysis.events import MAX_TRACE_BYTES
    fs, _ = _fs(url)
    rel = PurePosixPath(path).relative_to(PurePosixPath(root))
    local = into.joinpath(*rel.parts)
    try:
        size = fs.size(path)
        if size is not None and size > MAX_TRACE_BYTES:
            raise TraceinsightError(f"{fs.unstrip_protocol(path)}: {size:,} bytes, larger than an "
                                    "XSpace can be (protobuf's 2 GiB limit): not read")
        local.parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(path, str(local))
    except (OSError, ValueError) as e:
        raise TraceinsightError(f"{fs.unstrip_protocol(path)}: cannot be read ({_line(e)})") \
            from None
    return local


def with_urls(mode, where: dict[str, str]):
    """A mode analysed from copies, told with the URLs: its trace paths, and the copies' paths
    in its error and notes (a temporary folder, gone once it is analysed)."""
    def told(text):
        if isinstance(text, str):
            for local, url in where.items():
                text = text.replace(local, url)
        return text
    return mode.replace(trace_paths=tuple(where.get(t, t) for t in mode.trace_paths),
                        error=told(mode.error), notes=tuple(told(n) for n in mode.notes))
