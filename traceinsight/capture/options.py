"""What a saved trace says the profiler really used (TF 2.21 can silently ignore requested options).

The ``Task Environment`` plane of an XSpace carries a stat ``profile_options``: a serialized
``tensorflow.ProfileOptions`` (public schema, tsl/profiler/protobuf/profiler_options.proto), decoded
by ``traceinsight.xplane.decode_profile_options``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceinsight.analysis.names import PROFILE_OPTIONS, TASK_ENVIRONMENT
from traceinsight.xplane import decode_profile_options

__all__ = ["decode_profile_options", "recorded_options", "check"]


def recorded_options(xplane_path: str | Path) -> dict[str, int] | None:
    """Tracer levels stored in a saved ``.xplane.pb``; None when the trace does not record them."""
    from traceinsight.xplane import XSpace

    space = XSpace()
    space.ParseFromString(Path(xplane_path).read_bytes())
    for plane in space.planes:
        if plane.name != TASK_ENVIRONMENT:
            continue
        for stat in plane.stats:
            if plane.stat_metadata[stat.metadata_id].name == PROFILE_OPTIONS:
                kind = stat.WhichOneof("value")
                raw = stat.bytes_value if kind == "bytes_value" else stat.str_value.encode("latin-1")
                return decode_profile_options(raw)
    return None


def check(requested: dict[str, int], xplane_path: str | Path | None,
          tf_version: str | None = None) -> dict[str, Any]:
    """``{"requested", "recorded", "ok", "trace"}``: ok only when every requested level was recorded;
    ok None when the trace cannot tell (TF 2.15 / 2.16 record no ``profile_options``)."""
    if xplane_path is None:
        return {"requested": requested, "recorded": None, "ok": False, "trace": None,
                "problem": "no trace file was saved"}
    try:
        recorded = recorded_options(xplane_path)
    except Exception as e:  # a truncated or foreign file: say so, do not crash the capture
        return {"requested": requested, "recorded": None, "ok": False, "trace": str(xplane_path),
                "problem": f"cannot read the trace ({type(e).__name__}: {e})"}
    if recorded is None and tf_version is not None:
        from traceinsight.capture.compat import records_profile_options
        if records_profile_options(tf_version) is False:
            return {"requested": requested, "recorded": None, "ok": None, "trace": str(xplane_path),
                    "unverified": f"TensorFlow {tf_version} records no profile_options in its traces: "
                                  "the tracer levels used cannot be checked"}
    if recorded is None:
        return {"requested": requested, "recorded": None, "ok": False, "trace": str(xplane_path),
                "problem": "the trace records no profile_options"}
    wrong = {k: (v, recorded.get(k)) for k, v in requested.items() if recorded.get(k) != v}
    result: dict[str, Any] = {"requested": requested, "recorded": recorded, "ok": not wrong,
                              "trace": str(xplane_path)}
    if wrong:
        result["problem"] = "; ".join(f"{k} asked {a}, recorded {b}" for k, (a, b) in wrong.items())
    return result
