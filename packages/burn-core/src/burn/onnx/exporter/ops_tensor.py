"""ONNX writers of the float, int and bool contract ops (`burn.backend.ops.float`, ``int``,
``bool``): element-wise math, comparisons, casts, reductions, matmul, layout and creation.

Every writer reads its call as the contract declares it (``float_sum_dim(tensor, dim)`` keeps the
reduced dim; full reductions give ``(1,)``; ``float_mask_fill(tensor, mask, value)`` puts
`value` where `mask` is true...) and writes standard ONNX nodes of opset 17.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ir import CallIR, TensorIR
from burn.foundations.dtype import DType
from burn.onnx.exporter.graph import INT64_MAX, DimExpr, ExportError, Graph, onnx_dtype, onnx_module
from burn.onnx.exporter.table import exporter

KINDS = ("float", "int", "bool")


def _each(*stems: str, kinds: tuple[str, ...] = ("float", "int")) -> list[str]:
    return [f"{k}_{s}" for k in kinds for s in stems]


def _in(g: Graph, call: CallIR, i: int = 0) -> str:
    return g.name(call.args[i])


def _t(call: CallIR, i: int = 0) -> TensorIR:
    t = call.args[i]
    assert isinstance(t, TensorIR)
    return t


# -- element-wise ------------------------------------------------------------------------------
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "powf": "Pow", "matmul": "MatMul"}
_UNARY = {
    "neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "tanh": "Tanh",
    "sin": "Sin", "cos": "Cos", "tan": "Tan", "erf": "Erf", "floor": "Floor", "ceil": "Ceil",
    "round": "Round", "recip": "Reciprocal", "sign": "Sign", "detach": "Identity",
    "sinh": "Sinh", "cosh": "Cosh", "asin": "Asin", "acos": "Acos", "atan": "Atan",
    "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
}
_COMPARE = {
    "equal": "Equal", "greater": "Greater", "greater_equal": "GreaterOrEqual", "lower": "Less",
    "lower_equal": "LessOrEqual",
}


def _binary(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        return [g.node(onnx_op, [_in(g, call, 0), _in(g, call, 1)])]

    return write


def _scalar_rhs(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        x = _t(call)
        return [g.node(onnx_op, [g.name(x), g.scalar(call.args[1], x.dtype)])]

    return write


def _unary(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        return [g.node(onnx_op, [_in(g, call)])]

    return write


for _stem, _op in _BINARY.items():
    kinds = ("float",) if _stem == "powf" else ("float", "int")
    exporter(*_each(_stem, kinds=kinds))(_binary(_op))
    if _stem not in ("matmul",):
        exporter(*_each(f"{_stem}_scalar", kinds=kinds))(_scalar_rhs(_op))
exporter("float_div")(_binary("Div"))
exporter("float_div_scalar")(_scalar_rhs("Div"))
for _stem, _op in _UNARY.items():
    exporter(*(_each(_stem, kinds=("float",)) + ([f"int_{_stem}"] if _stem in ("neg", "abs") else [])))(
        _unary(_op)
    )
for _stem, _op in _COMPARE.items():
    exporter(*_each(_stem) + (["bool_equal"] if _stem == "equal" else []))(_binary(_op))
    exporter(*_each(f"{_stem}_elem"))(_scalar_rhs(_op))
exporter("bool_and")(_binary("And"))
exporter("bool_or")(_binary("Or"))
exporter("bool_xor")(_binary("Xor"))
exporter("bool_not")(_unary("Not"))
exporter("float_is_nan")(_unary("IsNaN"))
exporter("float_is_inf")(_unary("IsInf"))


@exporter(*_each("not_equal"), "bool_not_equal")
def _not_equal(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Not", [g.node("Equal", [_in(g, call, 0), _in(g, call, 1)])])]


@exporter(*_each("not_equal_elem"))
def _not_equal_elem(g: Graph, call: CallIR) -> list[str]:
    x = _t(call)
    return [g.node("Not", [g.node("Equal", [g.name(x), g.scalar(call.args[1], x.dtype)])])]


@exporter("float_log1p")
def _log1p(g: Graph, call: CallIR) -> list[str]:
    x = _t(call)
    return [g.node("Log", [g.node("Add", [g.name(x), g.scalar(1.0, x.dtype)])])]


@exporter(*_each("clamp"))
def _clamp(g: Graph, call: CallIR) -> list[str]:
    x = _t(call)
    return [g.node("Clip", [g.name(x), g.scalar(call.args[1], x.dtype), g.scalar(call.args[2], x.dtype)])]


exporter(*_each("clamp_min"))(_scalar_rhs("Max"))
exporter(*_each("clamp_max"))(_scalar_rhs("Min"))


@exporter("float_mask_fill", "int_mask_fill")
def _mask_fill(g: Graph, call: CallIR) -> list[str]:
    x = _t(call)
    return [g.node("Where", [_in(g, call, 1), g.scalar(call.args[2], x.dtype), g.name(x)])]


@exporter("float_mask_where", "int_mask_where", "bool_mask_where")
def _mask_where(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Where", [_in(g, call, 1), _in(g, call, 2), _in(g, call, 0)])]


# -- casts -----------------------------------------------------------------------------------
@exporter("float_cast", "int_cast", "float_into_int", "int_into_float", "bool_into_int", "bool_into_float")
def _cast(g: Graph, call: CallIR) -> list[str]:
    out = call.outputs[0]
    assert out is not None
    return [g.node("Cast", [_in(g, call)], to=onnx_dtype(out.dtype))]


# -- reductions --------------------------------------------------------------------------------
_REDUCE = {
    "sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd",
}


def _reduce_dim(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        return [g.reduce(onnx_op, _in(g, call), [int(call.args[1])], 1)]

    return write


def _reduce_all(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        flat = g.reduce(onnx_op, _in(g, call), None, 0)
        return [g.node("Reshape", [flat, g.const(np.array([1], np.int64))])]

    return write


for _stem, _op in _REDUCE.items():
    # an int mean rounds as the contract says, which ReduceMean on ints does not promise: floats only
    _kinds = ("float",) if _stem == "mean" else ("float", "int")
    exporter(*_each(f"{_stem}_dim", kinds=_kinds))(_reduce_dim(_op))
    exporter(*_each(_stem, kinds=_kinds))(_reduce_all(_op))


def _arg(onnx_op: str) -> Any:
    def write(g: Graph, call: CallIR) -> list[str]:
        out = call.outputs[0]
        assert out is not None
        idx = g.node(onnx_op, [_in(g, call)], axis=int(call.args[1]), keepdims=1)
        if out.dtype is not DType.I64:
            idx = g.node("Cast", [idx], to=onnx_dtype(out.dtype))
        return [idx]

    return write


exporter(*_each("argmax"))(_arg("ArgMax"))
exporter(*_each("argmin"))(_arg("ArgMin"))


@exporter(*_each("cumsum"))
def _cumsum(g: Graph, call: CallIR) -> list[str]:
    return [g.node("CumSum", [_in(g, call), g.const(np.array(int(call.args[1]), np.int64))])]


# -- layout ------------------------------------------------------------------------------------
@exporter(*_each("reshape", kinds=KINDS))
def _reshape(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Reshape", [_in(g, call), g.ints(call.args[1])])]


@exporter(*_each("expand", kinds=KINDS))
def _expand(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Expand", [_in(g, call), g.ints(call.args[1])])]


@exporter(*_each("permute", kinds=KINDS))
def _permute(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Transpose", [_in(g, call)], perm=[int(a) for a in call.args[1]])]


@exporter(*_each("swap_dims", kinds=KINDS))
def _swap_dims(g: Graph, call: CallIR) -> list[str]:
    perm = list(range(len(_t(call).shape)))
    a, b = int(call.args[1]), int(call.args[2])
    perm[a], perm[b] = perm[b], perm[a]
    return [g.node("Transpose", [_in(g, call)], perm=perm)]


@exporter(*_each("flip", kinds=KINDS))
def _flip(g: Graph, call: CallIR) -> list[str]:
    axes = [int(a) for a in call.args[1]]
    if not axes:
        return [g.node("Identity", [_in(g, call)])]
    n = len(axes)
    return [g.node("Slice", [
        _in(g, call), g.ints([-1] * n), g.ints([-INT64_MAX] * n), g.ints(axes), g.ints([-1] * n),
    ])]


@exporter(*_each("slice", kinds=KINDS))
def _slice(g: Graph, call: CallIR) -> list[str]:
    x = _t(call)
    shape = g.shape(x)
    starts, ends, axes, steps = [], [], [], []
    for axis, s in enumerate(call.args[1]):
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        stop = shape[axis] if s.stop is None else s.stop
        if start == 0 and step == 1 and stop == shape[axis]:
            continue  # the whole axis, whatever its size at run time
        if isinstance(step, DimExpr) or step == 0:
            raise ExportError(f"{call.op}: step {step} of axis {axis} cannot be exported")
        if step < 0 and s.stop is None:
            stop = -INT64_MAX  # down to and including element 0
        starts.append(start)
        ends.append(stop)
        axes.append(axis)
        steps.append(step)
    if not axes:
        return [g.node("Identity", [g.name(x)])]
    return [g.node("Slice", [g.name(x), g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])]


@exporter(*_each("cat", kinds=KINDS))
def _cat(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Concat", [g.name(t) for t in call.args[0]], axis=int(call.args[1]))]


@exporter(*_each("select", kinds=KINDS))
def _select(g: Graph, call: CallIR) -> list[str]:
    return [g.node("Gather", [_in(g, call, 0), _in(g, call, 2)], axis=int(call.args[1]))]


@exporter(*_each("gather", kinds=KINDS))
def _gather(g: Graph, call: CallIR) -> list[str]:
    return [g.node("GatherElements", [_in(g, call, 1), _in(g, call, 2)], axis=int(call.args[0]))]


@exporter(*_each("repeat_dim", kinds=KINDS))
def _repeat_dim(g: Graph, call: CallIR) -> list[str]:
    reps = [1] * len(_t(call).shape)
    reps[int(call.args[1])] = int(call.args[2])
    return [g.node("Tile", [_in(g, call), g.ints(reps)])]


# -- creation ----------------------------------------------------------------------------------
@exporter("float_from_data", "int_from_data", "bool_from_data")
def _from_data(g: Graph, call: CallIR) -> list[str]:
    return [g.const(np.asarray(call.args[0]), "data")]


def _filled(g: Graph, shape: Any, value: Any, dtype: DType) -> str:
    np_dtype = bool if dtype is DType.BOOL else np.dtype(dtype.numpy)
    if not any(isinstance(d, DimExpr) for d in shape):
        return g.const(np.full(tuple(shape), value, dtype=np_dtype), "full")
    fill = onnx_module().numpy_helper.from_array(np.array([value], dtype=np_dtype))
    return str(g.node("ConstantOfShape", [g.ints(shape)], value=fill))


@exporter("float_full", "int_full")
def _full(g: Graph, call: CallIR) -> list[str]:
    return [_filled(g, call.args[0], call.args[1], call.args[3])]


@exporter("bool_full")
def _bool_full(g: Graph, call: CallIR) -> list[str]:
    return [_filled(g, call.args[0], bool(call.args[1]), DType.BOOL)]


@exporter("float_zeros", "int_zeros", "float_ones", "int_ones")
def _zeros_ones(g: Graph, call: CallIR) -> list[str]:
    return [_filled(g, call.args[0], 1 if call.op.endswith("ones") else 0, call.args[2])]


@exporter("bool_zeros", "bool_ones")
def _bool_zeros_ones(g: Graph, call: CallIR) -> list[str]:
    return [_filled(g, call.args[0], call.op.endswith("ones"), DType.BOOL)]


@exporter("int_arange")
def _arange(g: Graph, call: CallIR) -> list[str]:
    start, end, step, _device, dtype = call.args[:5]
    if not any(isinstance(v, DimExpr) for v in (start, end, step)):
        return [g.const(np.arange(start, end, step, dtype=np.dtype(dtype.numpy)), "arange")]
    out = g.node("Range", [g.int_scalar(start), g.int_scalar(end), g.int_scalar(step)])
    if dtype is not DType.I64:
        out = g.node("Cast", [out], to=onnx_dtype(dtype))
    return [out]
