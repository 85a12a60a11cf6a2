"""The small real runs of each supported TensorFlow version, committed under tests/data/versions/
(made by tools/make_tf_envs.py through ``capture --python``): they load, analyse and hold what each
version's traces hold. Figures are whatever that machine measured; nothing here pins them, and
nothing depends on the CPU's kernel names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder
from traceinsight.model import CATEGORIES

VERSIONS = Path(__file__).parent / "data" / "versions"
RUNS = sorted(p for p in VERSIONS.iterdir() if (p / "run.json").is_file())
EXPECTED = {  # capture name -> modes (tools/make_tf_envs.py CAPTURES)
    "fn": ["eager", "function", "xla", "v1-session"],
    "keras": ["fit", "xla"],
    "tf1": ["tf1:predict_on_batch", "tf1:fit"],
}


def test_every_supported_old_version_is_there():
    names = {p.name for p in RUNS}
    for version in ("2.12.1", "2.15.1", "2.16.2"):
        for capture in EXPECTED:
            assert f"tf-{version}-{capture}" in names


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_version_run_loads_and_analyses(run):
    _, version, capture = run.name.split("-", 2)
    manifest = runfolder.read_manifest(run)
    env = manifest["environment"]
    assert env["tensorflow"] == version
    major_keras = int(env["keras"].split(".")[0])
    keras2 = tuple(int(p) for p in version.split(".")[:2]) <= (2, 15)   # TF 2.12 - 2.15: Keras 2
    assert major_keras == (2 if keras2 else 3)
    assert list(manifest["modes"]) == EXPECTED[capture]
    loaded = traceinsight.load(run, use_cache=False)
    for name, entry in manifest["modes"].items():
        assert entry["status"] == "ok", (name, entry["error"])
        mode = loaded.modes[name]
        assert mode.ok
        timings = runfolder.read_json(run / entry["dir"] / runfolder.TIMINGS)
        steps = mode.steps
        assert len(steps) > 0
        # categories sum to each step's wall
        np.testing.assert_allclose(steps[list(CATEGORIES)].sum(axis=1).to_numpy(),
                                   steps["wall_ms"].to_numpy(), rtol=0.01)
        # the trace's step walls are the workload's own perf_counter times of the same steps
        host = timings["traced"]["host"]
        by_num = dict(zip(host["step_nums"], host["steps_s"]))
        if timings.get("first_step_traced"):          # the first step, timed on its own
            by_num[timings["first_step_num"]] = timings["first_step_s"]
        assert set(steps["step_num"]) <= set(by_num)
        np.testing.assert_allclose(steps["wall_ms"].to_numpy(),
                                   [by_num[n] * 1e3 for n in steps["step_num"]], atol=0.5)
        # TF 2.12 - 2.16 record no profile_options: the levels are unverified, and said so
        po = entry["profile_options"]["host"]
        assert po["ok"] is None and po["recorded"] is None and po["unverified"]
        # Keras 2 for the tf1: modes: 2.12 - 2.15's own keras, tf_keras on 2.16
        if name.startswith("tf1:"):
            assert entry["details"]["keras_module"] == ("keras" if keras2 else "tf_keras")
