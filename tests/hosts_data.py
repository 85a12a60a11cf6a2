"""Multi-host logdirs built from synthetic XSpaces, with step walls and categories chosen by hand
(times in µs; one step = 1 µs of python, then the op under the eager fast path, then an input
conversion, then python to the step's end).

``three_hosts``: hosts w0, w1, w2, steps 1..5 (step markers with step_num), op 400 µs and dispatch
100 µs in every step; input 100 µs, except on w2, the straggler, 700 µs (200 in step 3); python is
the rest of the step:

    step        1     2     3     4     5     median
    w0 wall  1000  1010  1200   990  1000     1000
    w1 wall  1030  1020  1020  1010  1020     1020
    w2 wall  1600  1600  1100  1600  1650     1600
"""

from __future__ import annotations

import json
from pathlib import Path

from xspace_builder import Space, session_path

OP, DISPATCH = 400, 100
WALLS = {"w0": [1000, 1010, 1200, 990, 1000], "w1": [1030, 1020, 1020, 1010, 1020],
         "w2": [1600, 1600, 1100, 1600, 1650]}
INPUT = {"w0": [100] * 5, "w1": [100] * 5, "w2": [700, 700, 200, 700, 700]}


def host_space(steps: list[tuple[int, float, float]], marker: str = "train") -> Space:
    """One host's trace: ``steps`` = (step_num, wall µs, input µs); op OP and dispatch DISPATCH µs
    each step, python the rest."""
    sp = Space()
    sp.task_environment()
    main = sp.host().line("python")
    t = 0.0
    for num, wall, inp in steps:
        main.event(marker, t, wall, step_num=num, _r=1)
        main.event("TFE_Py_FastPathExecute_C", t + 1, OP + DISPATCH)
        main.event("KernelAndDeviceFunc::Run", t + 1 + DISPATCH / 2, OP)
        # a conversion: tf.constant around the _EagerConst op it runs (all of it input)
        main.event("tf.constant", t + 2 + OP + DISPATCH, inp)
        main.event("EagerLocalExecute: _EagerConst", t + 3 + OP + DISPATCH, inp - 2)
        t += wall + 50
    return sp


def write_hosts(logdir: Path, hosts: dict[str, list[tuple[int, float, float]]],
                session: str = "2026_01_01_00_00_00") -> Path:
    for host, steps in hosts.items():
        host_space(steps).write(session_path(logdir, session=session, host=host))
    return logdir


def three_hosts(logdir: Path) -> Path:
    return write_hosts(logdir, {h: [(i + 1, WALLS[h][i], INPUT[h][i]) for i in range(5)]
                                for h in WALLS})


def remote_run(run_path: Path, hosts: dict[str, list[tuple[int, float, float]]]) -> Path:
    """A ``capture --remote`` run folder (its layout and run.json as ``capture_remote`` writes
    them): one mode per worker address, every trace under one session folder name."""
    modes = {}
    for i, (host, steps) in enumerate(hosts.items()):
        address = f"{host}:{6000 + i}"
        folder = f"{host}-{6000 + i}"
        host_space(steps).write(run_path / folder / "host" / "plugins" / "profile" /
                                "2026_01_01_00_00_00" / f"{host}_{6000 + i}.xplane.pb")
        modes[address] = {"dir": folder, "status": "ok", "error": None, "notes": [],
                          "address": address, "host": f"{host}_{6000 + i}"}
    manifest = {"schema_version": 1, "workload": {"path": None, "name": "remote", "kind": "remote",
                                                  "doc": "remote capture"},
                "command": "traceinsight capture --remote ...", "environment": {}, "modes": modes}
    (run_path / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run_path
