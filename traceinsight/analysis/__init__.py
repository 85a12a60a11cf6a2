"""Trace loading and attribution: XSpace -> event table -> per-mode results (traceinsight.model)."""
