"""Every row of the rule table, tested on a name it is meant for."""

from __future__ import annotations

import re

import pytest

from traceinsight.analysis import rules
from traceinsight.analysis.steps import STEP_MARKER

EXAMPLES = {  # regex rules: a name each must match
    rules.GRAPH_OP_PATTERN: "functional_1/conv1d_1/convolution:_MklNativeFusedConv2D",
    r"^__inference_.*:__inference_": "__inference_f_72:__inference_f_72",
    r"^[A-Z][A-Za-z0-9]*Pass$": "LowerTensorsPass",
    r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:autotun)": "gemm-autotuner",
    r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:algorithm.?picker)": "GemmAlgorithmPicker::Run",
    r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:llvm)": "OptimizeLlvmIr",
    r"^(?!.*/)(?!.*[^:]:\w+$).*(?i:ptx)": "CompileToPtx",
}


def example(kind: str, pattern: str) -> str:
    if kind == "exact":
        return pattern
    if kind == "prefix":
        return pattern + "Something"
    if kind == "set":
        return sorted(rules.NAME_SETS[pattern])[0]
    return EXAMPLES[pattern]


@pytest.mark.parametrize("kind,pattern,category,why", rules.RULES,
                         ids=[r[1] for r in rules.RULES])
def test_each_rule(kind, pattern, category, why):
    assert why, "every rule says why"
    name = example(kind, pattern)
    expected = rules.IGNORE if category == "ignore" else rules.CAT[category]
    assert rules.own_category(name) == expected


def test_special_names():
    assert rules.own_category("$layer.py:872 __call__") == rules.PYFRAME
    # step markers are recognized with their step_num stat (attribute.step_markers), not by name
    assert STEP_MARKER.match("train") and STEP_MARKER.match("test_step_3")
    assert STEP_MARKER.match("TraceContext") and STEP_MARKER.match("Profiled batch")
    assert not STEP_MARKER.match("train/inner")  # XProf ignores markers with "/"
    assert rules.own_category("BasicCPUAllocator::Alloc") == rules.UNKNOWN  # not a graph op
    assert rules.own_category("my_python_function") == rules.UNKNOWN
    # EagerCopyToDevice copies only when a device is there
    assert rules.own_category("EagerCopyToDevice") == rules.DISPATCH
    assert rules.own_category("EagerCopyToDevice", has_device_plane=True) == rules.INPUT
    assert rules.function_call_category("traced-xla") == rules.TRACING
    assert rules.function_call_category("notTraced-nonXla") == rules.DISPATCH


def test_xla_compile_names_are_compile_and_graph_ops_are_not():
    # every name of the XLA pass list (collected from real XLA CPU compilations) is compile
    for name in rules.NAME_SETS["XLA_PASS_NAMES"]:
        assert rules.own_category(name) == rules.COMPILE, name
    for name in ("ThunkEmitter::EmitEntryComputation", "mlir::detail::OpToOpPassAdaptor",
                 "float-normalization-bf16", "gemm-autotuner", "OptimizeLlvmIr"):
        assert rules.own_category(name) == rules.COMPILE, name
    # graph ops whose scope happens to hold a family word stay ops
    assert rules.own_category("model/llvm_like/MatMul:MatMul") == rules.OP
    assert rules.own_category("autotune_scope/conv:Conv2D") == rules.OP
    assert rules.PASS_SHAPE.match("while-loop-simplifier")
    assert rules.PASS_SHAPE.match("simplification after layout assignment")
    assert not rules.PASS_SHAPE.match("step") and not rules.PASS_SHAPE.match("Conv2D")


def test_op_names():
    assert rules.op_of_name("EagerLocalExecute: Conv2D") == ("Conv2D", "Conv2D")
    assert rules.op_of_name("EagerLocalExecute: __inference_f_7") == ("__inference_f_7", "tf.function")
    assert rules.op_of_name("a/b/c:MatMul") == ("a/b/c", "MatMul")
    assert rules.op_of_name("KernelAndDeviceFunc::Run") is None
    assert rules.op_of_name("$x.py:1 f") is None
    assert rules.hlo_type("convolution.1") == "convolution"
    assert rules.hlo_type("broadcast_add_fusion") == "fusion"


def test_priorities_are_ordered_as_documented():
    p = rules.INHERIT_PRIORITY
    assert p[rules.COMPILE] > p[rules.INPUT] > p[rules.OP] > p[rules.TRACING] > p[rules.DISPATCH] > 0
    assert p[rules.PYTHON] == p[rules.OTHER] == 0
    assert rules.GRAPH_BUILDING_PRIORITY > max(p.values())
    assert re.match(rules.XLA_LAUNCH, "__inference_f_1:__inference_f_1")
