"""What a bare trace records about where it was taken, for a report's environment section when
there is no run.json: the hosts (XProf names each file ``<host>.xplane.pb``), the devices (a plane
per device, with what the GPU tracer records about it), the tracer levels the profiler really
used and when the profile started (the ``Task Environment`` plane).

Only the planes' own stats are read (``events.plane_headers`` skips the event lines' bytes), never
the events. The keys are labels as the report shows them; versions of TensorFlow, Python and the
rest are not in a trace, and the section says so.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from traceinsight.analysis.names import (
    CLOCK_RATE,
    COMPUTE_CAP_MAJOR,
    COMPUTE_CAP_MINOR,
    CORE_COUNT,
    DEVICE_PLANE,
    MEMORY_SIZE,
    PROFILE_OPTIONS,
    PROFILE_START_TIME,
    TASK_ENVIRONMENT,
)

VERSIONS = "not recorded in a trace (TensorFlow, Python, CPU: see the run that made it)"


def _stats(plane) -> dict[str, Any]:
    from traceinsight.analysis.events import plane_stat_value
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    return {names.get(s.metadata_id, str(s.metadata_id)): plane_stat_value(s, names)
            for s in plane.stats}


def _number(value: Any) -> int | float | None:
    """A device stat as a number, or None: a trace may hold any type under any stat name."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _device(stats: dict[str, Any]) -> str:
    parts = []
    major, minor = _number(stats.get(COMPUTE_CAP_MAJOR)), _number(stats.get(COMPUTE_CAP_MINOR, 0))
    if major is not None:
        parts.append(f"compute capability {major}.{minor or 0}")
    if _number(stats.get(CORE_COUNT)):
        parts.append(f"{stats[CORE_COUNT]} cores")
    if _number(stats.get(MEMORY_SIZE)):
        parts.append(f"{stats[MEMORY_SIZE] / 2**30:.1f} GiB")
    if _number(stats.get(CLOCK_RATE)):
        parts.append(f"{stats[CLOCK_RATE] / 1000:.0f} MHz")
    return ", ".join(parts)


def trace_environment(files: Sequence[Path]) -> dict[str, Any]:
    """The environment a set of trace files records (files that cannot be read are skipped: the
    analysis reports them)."""
    from traceinsight.errors import TraceinsightError
    from traceinsight.xplane import decode_profile_options

    hosts: list[str] = []
    devices: dict[str, int] = {}          # "GPU (details)" -> count over files
    options: list[dict[str, int]] = []
    starts: list[int] = []
    for f in files:
        try:
            from traceinsight.analysis.events import plane_headers
            space = plane_headers(Path(f))
        except (TraceinsightError, OSError):
            continue
        name = Path(f).name
        hosts.append(name[: -len(".xplane.pb")] if name.endswith(".xplane.pb") else name)
        for plane in space:
            plane_name: str = getattr(plane, "name", "")
            if plane_name == TASK_ENVIRONMENT:
                stats = _stats(plane)
                raw = stats.get(PROFILE_OPTIONS)
                if isinstance(raw, (bytes, bytearray)):
                    try:
                        options.append(decode_profile_options(bytes(raw)))
                    except Exception:
                        pass
                if isinstance(stats.get(PROFILE_START_TIME), int):
                    starts.append(stats[PROFILE_START_TIME])
            elif plane_name.startswith(DEVICE_PLANE):
                kind = plane_name[len(DEVICE_PLANE):].rsplit(":", 1)[0]
                detail = _device(_stats(plane))
                key = f"{kind} ({detail})" if detail else kind
                devices[key] = devices.get(key, 0) + 1
    if not hosts:
        return {}
    names = sorted(set(hosts))
    # host names stay out of the markdown and HTML reports (pasted into public issues) under the
    # key they leave out; the JSON keeps them
    env: dict[str, Any] = {"hostname": names, "Hosts traced": len(names)}
    per = f" over {len(names)} hosts" if len(names) > 1 else ""
    env["Devices"] = [f"{n} × {d}{per}" for d, n in devices.items()] or ["none (host only)"]
    if options:
        same = all(o == options[0] for o in options)
        env["Profiler options"] = options[0] if same else "differ between the trace files"
    else:
        env["Profiler options"] = "not recorded in the trace"
    if starts:
        env["Profile started (UTC)"] = datetime.fromtimestamp(
            min(starts) / 1e9, tz=timezone.utc).isoformat(timespec="seconds")
    env["Versions"] = VERSIONS
    return env
