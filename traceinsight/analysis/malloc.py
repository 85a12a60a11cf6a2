"""glibc's malloc, tuned while traces are analysed: freed memory is kept for the next allocation.

By default glibc maps every allocation above a threshold (128 KiB, raised at run time up to 32 MiB)
with its own mmap and unmaps it when freed; the analysis allocates and frees arrays of one element
per event (tens of MB each) over and over, so every one of them is faulted in afresh, page by page:
on large traces a sizeable share of the analysis's CPU, more on a process's first host (before the
threshold has risen), which every parallel worker pays (``tools/bench_parallel.py`` measures it).
``kept_memory()`` raises the thresholds so that freed memory stays in the heap for the next array,
and at the end gives the free memory back (``malloc_trim``) and sets thresholds near those glibc
reaches by itself once it has freed a large array (mmap above 32 MiB, trim above 64 MiB). Peak
memory is unchanged but for a little heap fragmentation (the same arrays are alive at once).
Elsewhere than glibc (musl, macOS, Windows), or where the user tuned malloc (``GLIBC_TUNABLES``,
``MALLOC_*_``), it does nothing.

The tuning is process-wide and glibc has no way to read a parameter back, so the previous values
could not be restored: it is only done in processes the tool owns. ``allow()`` opts a process in;
the command line (``traceinsight.cli.main``) and the analysis's worker processes call it. In any
other process (a notebook or script calling ``traceinsight.load``) ``kept_memory()`` leaves malloc
alone: the library changes nothing in its caller's process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3     # mallopt's parameters
_KEEP = {_M_MMAP_THRESHOLD: 1 << 30, _M_TRIM_THRESHOLD: (1 << 31) - 1, _M_TOP_PAD: 16 << 20}
# after: glibc's own ceiling for the mmap threshold (32 MiB), its trim threshold twice that, and
# the default top pad
_AFTER = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 64 << 20, _M_TOP_PAD: 128 << 10}

_lock = threading.Lock()
_depth = 0
_allowed = False


def allow(value: bool = True) -> None:
    """Let ``kept_memory()`` tune this process's malloc (for processes the tool owns: the CLI and
    the analysis's workers)."""
    global _allowed
    _allowed = value


def _tuned_at_start() -> bool:
    """Whether this process started with malloc tunables (glibc reads them then only; Dask, for
    one, sets ``MALLOC_TRIM_THRESHOLD_`` in ``os.environ`` later, for its own workers)."""
    try:
        with open("/proc/self/environ", "rb") as f:
            names = [v.split(b"=", 1)[0] for v in f.read().split(b"\0")]
    except OSError:
        names = [k.encode() for k in os.environ]
    return any(k == b"GLIBC_TUNABLES" or (k.startswith(b"MALLOC_") and k.endswith(b"_"))
               for k in names)


def _glibc():
    if not sys.platform.startswith("linux") or _tuned_at_start():
        return None
    try:
        import ctypes  # here: a process that analyses nothing (a cached run) never loads it
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):      # musl & co.
            return None
        return libc
    except (OSError, AttributeError):
        return None


def _set(libc, params: dict[int, int]) -> None:
    import ctypes
    for param, value in params.items():
        libc.mallopt(ctypes.c_int(param), ctypes.c_int(value))


def numpy_hugepages(enabled: bool) -> bool | None:
    """Whether numpy asks the kernel for transparent huge pages for its large arrays
    (``madvise(MADV_HUGEPAGE)``), set; returns the previous setting, None where this numpy has
    no such switch (a private function of numpy's, present since 1.20)."""
    import importlib
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):   # numpy 2, numpy 1
        try:
            switch = importlib.import_module(module)._set_madvise_hugepage
        except (ImportError, AttributeError):
            continue
        return bool(switch(enabled))
    return None


_hugepages_before: bool | None = None


@contextlib.contextmanager
def kept_memory() -> Iterator[None]:
    """Within: freed memory stays in the process for the next allocation, and numpy's arrays
    go without transparent huge pages (nests; threads share the setting, the last one out gives
    the memory back and numpy's setting). Only where ``allow()`` was called."""
    global _depth
    libc = _glibc() if _allowed else None
    if libc is None:
        yield
        return
    global _hugepages_before
    with _lock:
        _depth += 1
        if _depth == 1:
            _set(libc, _KEEP)
            # no huge pages for the analysis's arrays (the trace's buffer asks for them itself,
            # events._read): on a VM that backs its memory lazily (Firecracker, with DAMON
            # reclaim), a huge page is fresh memory whose first touch costs several times its
            # 512 small pages recycled from the process's and the machine's free lists
            # (tools/bench_vs_xprof_rs.py's 150 MB trace: 0.6 s more system time)
            _hugepages_before = numpy_hugepages(False)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _hugepages_before is not None:
                    numpy_hugepages(_hugepages_before)
                _set(libc, _AFTER)
                import ctypes
                libc.malloc_trim(ctypes.c_size_t(0))
