"""Build synthetic XSpace traces in tests, with times in microseconds so answers are hand-computable."""

from __future__ import annotations

from pathlib import Path

from traceinsight.xplane import XSpace

US = 1_000_000  # picoseconds per microsecond


class Line:
    def __init__(self, plane: "Plane", proto):
        self.plane = plane
        self.proto = proto

    def event(self, name: str, start_us: float, dur_us: float, **stats) -> "Line":
        ev = self.proto.events.add(metadata_id=self.plane.meta(name),
                                   offset_ps=int(round(start_us * US)),
                                   duration_ps=int(round(dur_us * US)))
        for key, value in stats.items():
            self.plane.set_stat(ev.stats.add(), key, value)
        return self


class Plane:
    def __init__(self, proto):
        self.proto = proto
        self._meta: dict[str, int] = {}
        self._stat: dict[str, int] = {}

    def meta(self, name: str) -> int:
        if name not in self._meta:
            i = len(self._meta) + 1
            self._meta[name] = i
            self.proto.event_metadata[i].id = i
            self.proto.event_metadata[i].name = name
        return self._meta[name]

    def stat_id(self, name: str) -> int:
        if name not in self._stat:
            i = len(self._stat) + 1
            self._stat[name] = i
            self.proto.stat_metadata[i].id = i
            self.proto.stat_metadata[i].name = name
        return self._stat[name]

    def set_stat(self, stat, key: str, value) -> None:
        stat.metadata_id = self.stat_id(key)
        if isinstance(value, bool) or isinstance(value, int):
            stat.int64_value = int(value)
        elif isinstance(value, float):
            stat.double_value = value
        elif isinstance(value, bytes):
            stat.bytes_value = value
        elif isinstance(value, tuple) and value and value[0] == "ref":
            stat.ref_value = self.stat_id(value[1])  # string held as a stat metadata name
        else:
            stat.str_value = str(value)

    def line(self, name: str, line_id: int | None = None, timestamp_ns: int = 0) -> Line:
        lp = self.proto.lines.add(id=line_id if line_id is not None else len(self.proto.lines) + 1,
                                  name=name, display_name=name, timestamp_ns=timestamp_ns)
        return Line(self, lp)

    def stat(self, key: str, value) -> "Plane":
        self.set_stat(self.proto.stats.add(), key, value)
        return self


class Space:
    def __init__(self):
        self.proto = XSpace()

    def plane(self, name: str) -> Plane:
        return Plane(self.proto.planes.add(id=len(self.proto.planes), name=name))

    def host(self) -> Plane:
        return self.plane("/host:CPU")

    def task_environment(self, host_level=3, python_level=0, device_level=1) -> Plane:
        opts = bytes([0x10, host_level, 0x18, device_level])
        if python_level:
            opts += bytes([0x20, python_level])
        return self.plane("Task Environment").stat("profile_options", opts)

    def bytes(self) -> bytes:
        return self.proto.SerializeToString()

    def write(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes())
        return path


def session_path(logdir: Path, run: str = "", session: str = "2026_01_01_00_00_00",
                 host: str = "localhost") -> Path:
    base = Path(logdir) / run if run else Path(logdir)
    return base / "plugins" / "profile" / session / f"{host}.xplane.pb"
