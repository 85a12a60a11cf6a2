"""Op families: the same kind of work, whatever the mode calls it.

An eager op (``Conv2D``), the graph op type of a tf.function (``_MklNativeFusedConv2D`` on
``functional_1/conv1d_1/convolution``) and the HLO ops of an XLA executable (``convolution.3``, a
``convolution_add_fusion``) are one family, ``convolution``: comparing modes by family says which
kind of work costs the difference, where comparing by op name says only "0 slower, 0 faster".

The host trace records HLO ops by name only (TF 2.21 CPU: stats ``hlo_op`` and ``hlo_module``, no
HLO category), so a fusion's family comes from its name: XLA names a fusion after its constituent
opcodes (``add_maximum_fusion``), and HLO instructions lowered from a TF op keep that op's node name
(``MatMul_98.2``). A fusion holding a convolution or a dot is that family (the heavy constituent);
one of elementwise opcodes only is ``elementwise``; ``ynn_fusion`` (a dot or convolution handed to the
YNNPACK library) is a library fusion; one whose name says nothing (``fusion.12``) is
``fusion (unnamed)``.

tf.function calls are matched across renames: ``__inference_step_503`` and ``__inference_step_8``
are the same function ``step`` traced in two processes.
"""

from __future__ import annotations

import re

from traceinsight.analysis.names import INFERENCE, ITERATOR_GET_NEXT

CONVOLUTION = "convolution"
DEPTHWISE = "depthwise convolution"
MATMUL = "matmul"
ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
NORMALIZATION = "normalization"
DATA_MOVEMENT = "data movement"
VARIABLES = "variables and arguments"
CONSTANTS = "constants"
TF_DATA = "tf.data"
OPTIMIZER = "optimizer update"
CONTROL_FLOW = "control flow"
UNNAMED_FUSION = "fusion (unnamed)"
# XLA CPU (TF 2.21) hands dots / convolutions (with their fused elementwise ops) to the YNNPACK
# library as ``ynn_fusion``: the name does not say which, so it is a family of its own
LIBRARY_FUSION = "library fusion (ynn: dot or convolution)"

# TF op types (after the oneDNN / fused prefixes are removed) and HLO opcodes, by family
_EXACT: dict[str, str] = {}
for _fam, _names in {
    CONVOLUTION: "Conv1D Conv2D Conv3D Conv Conv2DV2 Conv2DBackpropInput Conv2DBackpropFilter "
                 "Conv3DBackpropInputV2 Conv3DBackpropFilterV2 convolution QuantizedConv2D",
    DEPTHWISE: "DepthwiseConv2dNative DepthwiseConv2dNativeBackpropInput "
               "DepthwiseConv2dNativeBackpropFilter DepthwiseConv2D",
    MATMUL: "MatMul BatchMatMul BatchMatMulV2 BatchMatMulV3 Einsum dot SparseMatMul",
    ELEMENTWISE: "Relu Relu6 Elu Selu LeakyRelu Sigmoid Tanh Softplus Softsign Gelu BiasAdd Add AddV2 "
                 "AddN Sub Mul RealDiv Div DivNoNan FloorDiv FloorMod Maximum Minimum Exp Log Log1p "
                 "Sqrt Rsqrt Square SquaredDifference Neg Abs Pow Cast Select SelectV2 Equal Greater "
                 "GreaterEqual Less LessEqual LogicalAnd LogicalOr LogicalNot ClipByValue Sign Erf "
                 "ReluGrad Relu6Grad SigmoidGrad TanhGrad EluGrad BiasAddGrad Reciprocal Floor Ceil "
                 "Round OnesLike ZerosLike Fill Softmax LogSoftmax "
                 "add subtract multiply divide maximum minimum exponential log sqrt rsqrt negate abs "
                 "power convert select compare and or not tanh logistic clamp sign erf",
    REDUCTION: "Mean Sum Max Min Prod All Any ArgMax ArgMin reduce reduce-window",
    NORMALIZATION: "FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3 FusedBatchNormGradV3 "
                   "LayerNorm batch-norm-training batch-norm-inference",
    DATA_MOVEMENT: "Reshape Squeeze ExpandDims Transpose ConcatV2 Concat Pack Unpack Split SplitV "
                   "Slice StridedSlice StridedSliceGrad Pad PadV2 GatherV2 Gather GatherNd "
                   "ScatterNd Tile Identity IdentityN BroadcastTo Shape Size Rank Range "
                   "TensorScatterUpdate ResizeBilinear ResizeNearestNeighbor MaxPool AvgPool "
                   "MaxPoolGrad AvgPoolGrad "
                   "bitcast copy broadcast reshape transpose concatenate slice dynamic-slice "
                   "dynamic-update-slice pad gather scatter iota tuple get-tuple-element stack "
                   "strided_slice",
    VARIABLES: "ReadVariableOp AssignVariableOp AssignAddVariableOp AssignSubVariableOp VarHandleOp "
               "_Arg _Retval _Recv _Send parameter",
    CONSTANTS: "Const _EagerConst HostConst constant",
    CONTROL_FLOW: "While StatelessWhile If StatelessIf Case PartitionedCall "
                  "StatefulPartitionedCall NoOp while conditional call",
}.items():
    for _n in _names.split():
        _EXACT[_n] = _fam

# JAX primitives: a jax.profiler trace's framework ops (``jit(f)/dot_general``, type ``dot_general``)
for _fam, _names in {
    CONVOLUTION: "conv_general_dilated",
    MATMUL: "dot_general",
    REDUCTION: "reduce_sum reduce_max reduce_min reduce_prod argmax argmin",
    DATA_MOVEMENT: "broadcast_in_dim squeeze expand_dims dynamic_slice dynamic_update_slice",
    ELEMENTWISE: "mul sub div max min exp sin cos integer_pow convert_element_type select_n add_any",
}.items():
    for _n in _names.split():
        _EXACT.setdefault(_n, _fam)

_ELEMENTWISE_HLO = {n for n, f in _EXACT.items() if f == ELEMENTWISE and n.islower()}
# oneDNN / fused variants name the same op: _MklNativeFusedConv2D, _MklMatMul, _FusedConv2D
_PREFIX = re.compile(r"^(_MklNativeFused|_MklNative|_MklFused|_Mkl|_Fused|Fused(?=Conv|MatMul|Pad))")
_NUMBERED = re.compile(r"(\.\d+)+$")
_FUNCTION_ID = re.compile(r"_\d+$")


def function_name(op: str) -> str:
    """``__inference_step_503`` -> ``step`` (the name the user gave the function)."""
    name = op[len(INFERENCE):] if op.startswith(INFERENCE) else op
    return _FUNCTION_ID.sub("", name)


_GPU_FUSION_KINDS = frozenset({"loop", "input", "output"})


def _fusion_family(name: str) -> str:
    base = _NUMBERED.sub("", name)
    parts = [p for p in base.replace("-", "_").split("_") if p and p != "fusion"]
    # XLA GPU names a fusion after its kind first (``loop_convert_fusion``, ``input_reduce_fusion``)
    if len(parts) > 1 and parts[0] in _GPU_FUSION_KINDS:
        parts = parts[1:]
    low = base.lower()
    if "depthwise" in low:
        return DEPTHWISE
    if "convolution" in parts:
        return CONVOLUTION
    if "dot" in parts:
        return MATMUL
    if "reduce" in parts:
        return REDUCTION
    moves = [p for p in parts if _EXACT.get(p) == DATA_MOVEMENT]
    known = [p for p in parts if p in _ELEMENTWISE_HLO or p in moves]
    if parts and len(moves) == len(parts):
        return DATA_MOVEMENT
    if parts and len(known) == len(parts):
        return ELEMENTWISE
    if parts and parts[0] in ("ynn", "xnn"):
        return LIBRARY_FUSION
    return UNNAMED_FUSION


def family(op: str, op_type: str) -> str:
    """The family of one row of an ops table (``op``, ``type`` as in ``ModeResult.ops``)."""
    if op_type == "tf.function":
        return f"tf.function {function_name(op)}"
    if op_type == "(runtime)":
        return "(runtime)"
    if op_type in ("memcpy", "device kernel"):
        return op_type
    name = _NUMBERED.sub("", op)
    if name.startswith("wrapped_") and name != "wrapped_":
        # XLA CPU / GPU wrap a lone op in a fusion of its own: ``wrapped_broadcast``
        inner = name[len("wrapped_"):]
        return family(inner, inner)
    if op_type == "fusion" or name.endswith("fusion") or "_fusion_" in name:
        return _fusion_family(op)
    # XProf's type of an op without a framework op (JAX: XLA's own ``copy.1``) says nothing: the
    # HLO name does
    t = _PREFIX.sub("", op_type if op_type not in ("", "Unknown") else name)
    if t in _EXACT:
        return _EXACT[t]
    # HLO instructions lowered from a TF op keep its node name: MatMul_98.2 (type MatMul_98)
    base = _FUNCTION_ID.sub("", _NUMBERED.sub("", t))
    if base in _EXACT:
        return _EXACT[base]
    if "depthwise" in op.lower():
        return DEPTHWISE
    if t.endswith("Dataset") or t in (ITERATOR_GET_NEXT, "MakeIterator", "AnonymousIteratorV3",
                                      "IteratorGetNextSync", "OptionalGetValue"):
        return TF_DATA
    if t.startswith("ResourceApply") or t.startswith("ApplyAdam") or t.startswith("ResourceSparseApply"):
        return OPTIMIZER
    return t
