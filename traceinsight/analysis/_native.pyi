"""Type stub of the C extension (_native.c): its kernels take and return numpy arrays; see
traceinsight/analysis/native.py for their Python-side signatures and documentation."""

from typing import Any

def __getattr__(name: str) -> Any: ...
