"""A Keras TensorBoard-callback trace captured here and now (not only the committed one): the
'Profiled batch' steps the analysis finds against each batch timed with perf_counter between Keras'
batch hooks in the same process (tools/make_foreign_traces.py keras_tb)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import traceinsight

pytestmark = pytest.mark.capture
ROOT = Path(__file__).resolve().parents[1]


def test_keras_callback_batches_match_their_perf_counter_times(tmp_path):
    # find, not import: TensorFlow must stay out of this process (test_tui checks that)
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed")
    env = dict(os.environ, TRACEINSIGHT_FOREIGN_OUT=str(tmp_path), TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "make_foreign_traces.py"), "keras_tb"],
                         capture_output=True, text=True, env=env, timeout=300, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("keras_tb: perf_counter"))
    clock = {int(k): v for k, v in json.loads(line.split(": ", 2)[2]).items()}
    run = traceinsight.load(tmp_path / "keras_tb", use_cache=False)
    (m,) = run.modes.values()
    assert "'Profiled batch'" in m.step_rule
    assert m.steps["step_num"].tolist() == [1, 2, 3, 4]        # profile_batch=(2, 5), 1-based
    for num, wall, last in zip(m.steps["step_num"], m.steps["wall_ms"],
                               [False, False, False, True]):
        if last:
            # the hook's clock of the last profiled batch also covers the callback stopping the
            # profiler, after the batch's marker has closed
            assert wall <= clock[num] + 0.1
        else:
            assert wall == pytest.approx(clock[num], rel=0.10, abs=0.1), (num, wall, clock)
