"""traceinsight.capture.compat: each version difference picks the right side, checked with stand-in
modules shaped like each TensorFlow's (the real ones are exercised by the captures on 2.15 and 2.21)."""

from __future__ import annotations

import sys
import types

import pytest

from traceinsight.capture import compat


def _fake_tf(monkeypatch, traceme_enabled=None, trace_enabled=False):
    traceme = types.ModuleType("_pywrap_traceme")
    if traceme_enabled is not None:                      # TF 2.21+
        traceme.traceme_enabled = traceme_enabled
    trace = types.ModuleType("trace")
    trace.enabled = trace_enabled                        # TF 2.15 - 2.20
    internal = types.ModuleType("internal")
    internal._pywrap_traceme = traceme
    profiler = types.ModuleType("profiler")
    profiler.internal, profiler.trace = internal, trace
    for name, mod in {"tensorflow": types.ModuleType("tensorflow"),
                      "tensorflow.python": types.ModuleType("python"),
                      "tensorflow.python.profiler": profiler,
                      "tensorflow.python.profiler.internal": internal,
                      "tensorflow.python.profiler.internal._pywrap_traceme": traceme,
                      "tensorflow.python.profiler.trace": trace}.items():
        monkeypatch.setitem(sys.modules, name, mod)
    sys.modules["tensorflow.python"].profiler = profiler
    return trace


def test_traceme_enabled_on_2_21_is_the_wrapped_function(monkeypatch):
    def fn():
        return True
    _fake_tf(monkeypatch, traceme_enabled=fn)
    assert compat.traceme_enabled() is fn


def test_traceme_enabled_before_2_21_reads_the_module_variable_each_time(monkeypatch):
    trace = _fake_tf(monkeypatch)
    enabled = compat.traceme_enabled()
    assert enabled() is False
    trace.enabled = True            # the profiler session sets it while it records
    assert enabled() is True


@pytest.mark.parametrize("version,records", [("2.15.1", False), ("2.16.2", False), ("2.18.1", False), ("2.20.0", False),
                                             ("2.21.0", True), ("2.22.0rc0", True), ("nightly", None)])
def test_which_versions_record_profile_options(version, records):
    assert compat.records_profile_options(version) is records


def test_supported_range():
    assert [compat.supported(v) for v in ("2.11.1", "2.12.1", "2.18.1", "2.21.0", "2.22.0", None)] == \
        [False, True, True, True, False, False]


def test_install_hints_name_the_right_distribution():
    missing, broken_old, broken_new = (compat.install_hint(), compat.install_hint("2.16.2"),
                                       compat.install_hint("2.21.0"))
    assert "traceinsight-tf[cpu]" in missing and "--python" in missing
    assert "numpy<2" in broken_old and "pip check" in broken_old
    assert "numpy<2" not in broken_new
    for hint in (missing, broken_old, broken_new):
        assert "traceinsight[" not in hint         # another project: it would replace TensorFlow


def test_tf_keras_install_line_matches_the_tensorflow():
    from traceinsight.capture import modes
    assert modes.tf_keras_install("2.16.2") == 'pip install --no-deps "tf-keras==2.16.*"'
    assert modes.tf_keras_install(None) == modes.TF_KERAS_INSTALL
    with pytest.raises(ValueError, match=r'tf-keras==2\.18\.\*'):
        modes.check("keras", "tf1:fit", True, legacy_keras=False, tf_version="2.18.1")
