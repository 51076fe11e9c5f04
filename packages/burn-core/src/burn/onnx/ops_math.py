"""Elementwise, logic and reduction ops (ONNX semantics on burn tensors, NumPy on the host)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn import activation as act
from burn.foundations.kind import Bool, Float, Int
from burn.onnx.errors import OnnxError
from burn.onnx.graph import onnx_dtype
from burn.onnx.narrow_dtypes import cast_narrow, is_narrow, widen
from burn.onnx.ops import register, register_host
from burn.onnx.runtime import (
    Ctx,
    align,
    attr_or_input,
    broadcast_all,
    ints,
    is_host_scalar,
    is_tensor,
    kind_of_numpy,
    norm_axis,
    scalar,
)
from burn.tensor._base import TensorBase

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value
    from burn.tensor.tensor import Tensor


# -- unary ------------------------------------------------------------------------------------------
def _unary(
    names: str,
    fn: Callable[[Node, Tensor], Tensor],
    host: Callable[..., Any] | None = None,
    note: str = "",
    category: str = "math",
) -> None:
    def run(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
        return [fn(node, ctx.tensor(inputs[0]))]

    hostfn = None if host is None else (lambda node, inputs: [np.asarray(host(node, inputs[0]))])
    register(names, category, note, hostfn)(run)


def _erf_np(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x


@register("Identity", "math", host=lambda node, inputs: [inputs[0]], sequences=True)
def _identity(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [inputs[0]]  # a tensor, a sequence or an optional: passed on as it is


def _on_host(value: Value) -> np.ndarray:
    return np.asarray(value.to_numpy()) if is_tensor(value) else np.asarray(value)


def _dropout_off(node: Node, inputs: Sequence[Any]) -> None:
    """Refuse training-mode dropout (random: no run could match another runtime's)."""
    training = inputs[2] if len(inputs) > 2 else None
    ratio = inputs[1] if len(inputs) > 1 else None
    if training is not None and bool(scalar(_on_host(training))):
        if ratio is None or float(scalar(_on_host(ratio))) != 0.0:
            raise OnnxError(
                f"node {node.name!r} (Dropout): training_mode is true: random dropout is not supported "
                "(burn.onnx runs graphs for inference; use burn.nn.Dropout to train)"
            )


def _dropout_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    _dropout_off(node, inputs)
    x = np.asarray(inputs[0])
    return [x, np.ones(x.shape, np.bool_)][: max(1, len(node.outputs))]


@register("Dropout", "math", "inference only: the input passes through, the mask is all true", _dropout_host)
def _dropout(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    _dropout_off(node, inputs)
    x = ctx.tensor(inputs[0])
    if len(node.outputs) < 2:
        return [x]
    return [x, x.equal(x).bool_or(x.not_equal(x))]  # the mask: all true (NaN included)
_unary("Neg", lambda n, x: x.neg(), lambda n, x: -x)
_unary("Abs", lambda n, x: x.abs(), lambda n, x: np.abs(x))
_unary("Sign", lambda n, x: x.sign(), lambda n, x: np.sign(x))
_unary("Relu", lambda n, x: act.relu(x), lambda n, x: np.maximum(x, 0).astype(x.dtype))
_unary("Sigmoid", lambda n, x: act.sigmoid(x))
_unary("Tanh", lambda n, x: x.tanh())
_unary("Exp", lambda n, x: x.exp())
_unary("Log", lambda n, x: x.log())
_unary("Sqrt", lambda n, x: x.sqrt(), lambda n, x: np.sqrt(x))
_unary("Reciprocal", lambda n, x: x.recip(), lambda n, x: (1 / x).astype(x.dtype))
_unary("Floor", lambda n, x: x.floor(), lambda n, x: np.floor(x))
_unary("Ceil", lambda n, x: x.ceil(), lambda n, x: np.ceil(x))
_unary("Round", lambda n, x: x.round(), lambda n, x: np.round(x))
_unary("Erf", lambda n, x: x.erf(), lambda n, x: _erf_np(x))
_unary("Sin", lambda n, x: x.sin())
_unary("Cos", lambda n, x: x.cos())
_unary("Tan", lambda n, x: x.tan())
_unary("Asin", lambda n, x: x.asin())
_unary("Acos", lambda n, x: x.acos())
_unary("Atan", lambda n, x: x.atan())
_unary("Sinh", lambda n, x: x.sinh())
_unary("Asinh", lambda n, x: x.asinh(), lambda n, x: np.arcsinh(x))
_unary("Acosh", lambda n, x: x.acosh(), lambda n, x: np.arccosh(x))
_unary("Atanh", lambda n, x: x.atanh(), lambda n, x: np.arctanh(x))
_unary("Cosh", lambda n, x: x.cosh())
_unary("Softplus", lambda n, x: act.softplus(x))
_unary("Softsign", lambda n, x: act.softsign(x))
_unary("Mish", lambda n, x: act.mish(x))
_unary("HardSwish", lambda n, x: act.hard_swish(x))
_unary("Elu", lambda n, x: act.elu(x, n.attr("alpha", 1.0)))
_unary("Celu", lambda n, x: act.celu(x, n.attr("alpha", 1.0)))
_unary("LeakyRelu", lambda n, x: act.leaky_relu(x, n.attr("alpha", 0.01)))
_unary("ThresholdedRelu", lambda n, x: act.thresholded_relu(x, n.attr("alpha", 1.0)))
_unary("HardSigmoid", lambda n, x: act.hard_sigmoid(x, n.attr("alpha", 0.2), n.attr("beta", 0.5)))
_unary(
    "Selu",
    lambda n, x: (
        act.elu(x, n.attr("alpha", 1.67326319217681884765625)) * n.attr("gamma", 1.05070102214813232421875)
    ),
)
_unary("Gelu", lambda n, x: act.gelu(x, "tanh" if n.attr("approximate", "none") == "tanh" else "none"))
_unary("Swish", lambda n, x: x * act.sigmoid(x * n.attr("alpha", 1.0)))
_unary("Shrink", lambda n, x: _shrink(x, n.attr("lambd", 0.5), n.attr("bias", 0.0)))
_unary("IsNaN", lambda n, x: x.is_nan(), category="logic")
_unary("IsInf", lambda n, x: _is_inf(n, x), category="logic")
_unary("Not", lambda n, x: x.bool_not(), lambda n, x: np.logical_not(x), category="logic")


def _is_inf(node: Node, x: Tensor) -> Tensor:
    pos, neg = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    if pos and neg:
        return x.is_inf()
    if pos:
        return x.equal(math.inf)
    return x.equal(-math.inf) if neg else x.is_inf().bool_and(x.is_nan())


def _shrink(x: Tensor, lambd: float, bias: float) -> Tensor:
    # x + bias below -lambd, x - bias above lambd, 0 between (in x's own kind)
    low, high = x.lower(-lambd), x.greater(lambd)
    zero = x.zeros_like()
    return zero.mask_where(low, x + bias).mask_where(high, x - bias)


@register("SwiGLU", "math")
def _swiglu(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    a, b = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    if tuple(a.shape) != tuple(b.shape):
        raise OnnxError(
            f"node {node.name!r} (SwiGLU): A and B must have one shape (no broadcasting), got "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    return [a * act.sigmoid(a * node.attr("alpha", 1.0)) * b]


@register("Softmax", "math")
def _softmax(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [act.softmax(x, node.attr("axis", -1))]


@register("LogSoftmax", "math")
def _log_softmax(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [act.log_softmax(x, node.attr("axis", -1))]


@register("PRelu", "math")
def _prelu(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    slope = inputs[1]
    if is_host_scalar(slope, len(x.shape)):
        return [act.leaky_relu(x, float(scalar(slope)))]
    x, s = align(x, ctx.tensor(slope))
    return [x.clamp_min(0.0) + x.clamp_max(0.0) * s]


@register(
    "Clip",
    "math",
    host=lambda node, inputs: [
        np.clip(
            inputs[0],
            inputs[1] if len(inputs) > 1 and inputs[1] is not None else None,
            inputs[2] if len(inputs) > 2 and inputs[2] is not None else None,
        )
    ],
)
def _clip(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    bounds = [ctx.host(v) if v is not None else None for v in (*inputs[1:3], None, None)[:2]]
    lo = None if bounds[0] is None else scalar(bounds[0])
    hi = None if bounds[1] is None else scalar(bounds[1])
    if lo is None and hi is None:
        return [x]
    if lo is not None and hi is not None and lo > hi:
        lo = hi  # ONNX: with min > max every value becomes max
    return [x.clamp(lo, hi)]


# -- binary -----------------------------------------------------------------------------------------
def _binary_tensors(ctx: Ctx, a: Value, b: Value) -> tuple[Tensor, Tensor]:
    kind = a.kind if is_tensor(a) else b.kind if is_tensor(b) else None
    return align(ctx.tensor(a, kind), ctx.tensor(b, kind))


def _binary(
    name: str,
    method: str,
    host: Callable[[np.ndarray, np.ndarray], np.ndarray],
    category: str = "math",
    scalar_ok: bool = True,
    note: str = "",
) -> None:
    def run(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
        a, b = inputs[0], inputs[1]
        # Two tensors of one kind and rank (most binary nodes of a model): nothing to convert
        # or align, so the op is called at once, as the general path below would call it.
        if isinstance(a, TensorBase) and isinstance(b, TensorBase) and a._k is b._k and a.dims == b.dims:
            return [getattr(a, method)(b)]
        if scalar_ok and is_tensor(a) and a.kind is not Bool and is_host_scalar(b, len(a.shape)):
            return [getattr(a, method)(scalar(b))]
        x, y = _binary_tensors(ctx, a, b)
        return [getattr(x, method)(y)]

    register(name, category, note, lambda node, inputs: [np.asarray(host(inputs[0], inputs[1]))])(run)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.result_type(a, b), np.integer):
        q = a // b
        return (q + ((a % b != 0) & ((a < 0) ^ (b < 0)))).astype(np.result_type(a, b))
    return (a / b).astype(np.result_type(a, b))


def _same(
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda a, b: np.asarray(fn(a, b)).astype(np.result_type(a, b))


_binary("Add", "add", _same(np.add))
_binary("Sub", "sub", _same(np.subtract))
_binary("Mul", "mul", _same(np.multiply))
_binary("Equal", "equal", np.equal, "logic")
_binary("Less", "lower", np.less, "logic")
_binary("LessOrEqual", "lower_equal", np.less_equal, "logic")
_binary("Greater", "greater", np.greater, "logic")
_binary("GreaterOrEqual", "greater_equal", np.greater_equal, "logic")
_binary("And", "bool_and", np.logical_and, "logic", scalar_ok=False)
_binary("Or", "bool_or", np.logical_or, "logic", scalar_ok=False)
_binary("Xor", "bool_xor", np.logical_xor, "logic", scalar_ok=False)
# Exact on any integer element type: the bits of the operands are kept in burn's Int dtype.
_binary("BitwiseAnd", "bitwise_and", np.bitwise_and)
_binary("BitwiseOr", "bitwise_or", np.bitwise_or)
_binary("BitwiseXor", "bitwise_xor", np.bitwise_xor)


def _int_type(node: Node, index: int) -> np.dtype[Any]:
    """The integer element type of input `index` (int64 when the graph does not say)."""
    dtype = node.input_dtype(index)
    return dtype if dtype is not None and dtype.kind in "iu" else np.dtype(np.int64)


def _wrap_to(t: Tensor, dtype: np.dtype[Any]) -> Tensor:
    """The int64 tensor `t` wrapped to the values of the narrower integer type `dtype` (as
    arithmetic in that type would leave them): burn holds every ONNX integer in int64."""
    bits = dtype.itemsize * 8
    if bits >= 64:
        return t
    mask = (1 << bits) - 1
    if dtype.kind == "u":
        return t.bitwise_and_scalar(mask)
    half = 1 << (bits - 1)
    return (t + half).bitwise_and_scalar(mask) - half


def _bitshift_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    a, b = np.broadcast_arrays(*inputs[:2])
    bits = a.dtype.itemsize * 8
    valid = (b >= 0) & (b < bits)
    if node.attr("direction") == "LEFT":
        wide = np.left_shift(a.astype(np.uint64), np.where(valid, b, 0).astype(np.uint64))
        return [np.where(valid, wide.astype(a.dtype), 0).astype(a.dtype)]
    if a.dtype.kind == "i":  # by bits - 1: the sign alone (-1 or 0), ONNX's result out of range
        return [np.right_shift(a, np.where(valid, b, bits - 1)).astype(a.dtype)]
    return [np.where(valid, np.right_shift(a, np.where(valid, b, 0)), 0).astype(a.dtype)]


@register("BitShift", "math", "shift amounts outside [0, bits) give 0 (-1 for right shifts of negatives)",
          host=_bitshift_host)
def _bitshift(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise OnnxError(
            f"node {node.name!r} (BitShift): direction must be 'LEFT' or 'RIGHT', got {direction!r}"
        )
    dtype = _int_type(node, 0)
    bits = dtype.itemsize * 8
    x, amount = broadcast_all(list(_binary_tensors(ctx, inputs[0], inputs[1])))
    valid = amount.greater_equal(0).bool_and(amount.lower(bits))
    if direction == "LEFT":
        shifted = _wrap_to(x.bitwise_left_shift(amount.mask_fill(valid.bool_not(), 0)), dtype)
        return [shifted.mask_fill(valid.bool_not(), 0)]
    # Shifting right by bits - 1 leaves only the sign: -1 for negatives, 0 otherwise (ONNX's
    # result for an amount out of range); unsigned values are never negative here.
    return [x.bitwise_right_shift(amount.mask_fill(valid.bool_not(), bits - 1))]


@register("BitwiseNot", "math", host=lambda node, inputs: [np.invert(inputs[0])])
def _bitwise_not(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [_wrap_to(ctx.tensor(inputs[0], Int).bitwise_not(), _int_type(node, 0))]


@register_host("BitCast", "math", "runs on the host (the bits are read back)")
def _bitcast(node: Node, inputs: Sequence[Any]) -> list[Any]:
    # The input in its declared element type (burn holds it widened), its bytes read as `to`.
    source = node.input_dtype(0)
    target = onnx_dtype(node.attr("to"))
    x = np.asarray(inputs[0])
    if source is None or source.itemsize != target.itemsize or is_narrow(source) or is_narrow(target):
        what = source.name if source is not None else "an input of unknown type"
        raise OnnxError(
            f"node {node.name!r} (BitCast): cannot reinterpret {what} as {target.name} "
            "(both need a known element type of the same size)"
        )
    return [np.array(x, dtype=source, order="C").view(target)]  # (rank 0 stays rank 0)


@register("Div", "math", host=lambda node, inputs: [_trunc_div(inputs[0], inputs[1])])
def _div(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    a, b = inputs[0], inputs[1]
    if is_tensor(a) and a.kind is Float and is_host_scalar(b, len(a.shape)):
        return [a.div(float(scalar(b)))]
    x, y = _binary_tensors(ctx, a, b)
    q = x.div(y)
    if x.kind is Int:  # burn's Int division floors; ONNX's truncates toward zero
        r = x - q * y
        fix = r.not_equal(0).bool_and(x.lower(0).bool_xor(y.lower(0)))
        q = q + fix.int()
    return [q]


@register("Pow", "math", host=lambda node, inputs: [np.power(inputs[0], inputs[1]).astype(inputs[0].dtype)])
def _pow(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    a, b = inputs[0], inputs[1]
    x = ctx.tensor(a)
    if x.kind is Int:
        return [_int_pow(ctx, node, x, b)]
    if is_host_scalar(b, len(x.shape)):
        e = float(scalar(b))
        return [x.square() if e == 2.0 else x.powf_scalar(e)]
    x, y = align(x, ctx.tensor(b, Float))
    return [x.powf(y)]


def _int_pow(ctx: Ctx, node: Node, x: Tensor, b: Value) -> Tensor:
    """An integer base's power (ONNX keeps the base's type). Integer exponents: exact, by
    squaring (int64 products wrap as ONNX's do); float exponents: in float64 where the backend
    has it, truncated toward zero as ONNX's cast back."""
    from burn.foundations.dtype import DType

    e = ctx.tensor(b)
    x, e = broadcast_all(list(align(x, e)))
    if e.kind is Float:
        wide = DType.F64 if ctx.backend.capabilities.supports(DType.F64) else ctx.float_dtype
        return x.float().cast(wide).powf(e.cast(wide)).int()
    exps = Ctx.host(e)
    if exps.size and exps.min() < 0:
        raise OnnxError(
            f"node {node.name!r} (Pow): an integer base with a negative integer exponent is not an integer"
        )
    out = x.ones_like()
    base = x
    for bit in range(int(exps.max()).bit_length() if exps.size else 0):
        take = e.bitwise_right_shift_scalar(bit).bitwise_and_scalar(1).equal(1)
        out = out.mask_where(take, out * base)
        base = base * base
    return out


def _int_fmod(x: Tensor, y: Tensor) -> Tensor:
    """C's fmod on integers: the remainder takes the dividend's sign (burn's `remainder` takes
    the divisor's)."""
    r = x.remainder(y)
    fix = r.not_equal(0).bool_and(r.lower(0).bool_xor(x.lower(0)))
    return r.mask_where(fix, r - y)


@register(
    "Mod",
    "math",
    host=lambda node, inputs: [np.fmod(*inputs[:2]) if node.attr("fmod", 0) else np.mod(*inputs[:2])],
)
def _mod(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x, y = _binary_tensors(ctx, inputs[0], inputs[1])
    if not node.attr("fmod", 0):
        return [x.remainder(y)]
    return [_int_fmod(x, y) if x.kind is Int else x.fmod(y)]


def _variadic(name: str, method: str, host: Callable[..., np.ndarray], mean: bool = False) -> None:
    def run(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
        values = [v for v in inputs if v is not None]
        kind = next((v.kind for v in values if is_tensor(v)), None)
        out = ctx.tensor(values[0], kind)
        for v in values[1:]:
            out, t = align(out, ctx.tensor(v, kind))
            out = getattr(out, method)(t)
        return [out / len(values) if mean else out]

    def host_fn(node: Node, inputs: Sequence[Any]) -> list[Any]:
        values = [v for v in inputs if v is not None]
        out = values[0]
        for v in values[1:]:
            out = host(out, v)
        return [np.asarray(out / len(values) if mean else out).astype(values[0].dtype)]

    register(name, "math", "", host_fn)(run)


_variadic("Sum", "add", np.add)
_variadic("Mean", "add", np.add, mean=True)
_variadic("Max", "max_pair", np.maximum)
_variadic("Min", "min_pair", np.minimum)


# -- selection and casts ----------------------------------------------------------------------------
@register("Where", "logic", host=lambda node, inputs: [np.where(*inputs[:3])])
def _where(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    cond, x, y = inputs[0], inputs[1], inputs[2]
    kind = x.kind if is_tensor(x) else y.kind if is_tensor(y) else kind_of_numpy(np.asarray(x))
    c = ctx.tensor(cond, Bool)
    if is_tensor(y) and is_host_scalar(x, len(y.shape)) and len(c.shape) <= len(y.shape):
        y, c = broadcast_all(list(align(y, c)))
        return [y.mask_fill(c, scalar(x))]
    if is_tensor(x) and is_host_scalar(y, len(x.shape)) and len(c.shape) <= len(x.shape):
        x, c = broadcast_all(list(align(x, c)))
        return [x.mask_fill(c.bool_not(), scalar(y))]
    tx, ty = ctx.tensor(x, kind), ctx.tensor(y, kind)
    rank = max(len(c.shape), len(tx.shape), len(ty.shape))
    c, tx, ty = (t.reshape((1,) * (rank - len(t.shape)) + tuple(t.shape)) for t in (c, tx, ty))
    c, tx, ty = broadcast_all([c, tx, ty])
    return [ty.mask_where(c, tx)]


# NumPy's own element types (and bfloat16), which it casts to as ONNX does.
_CASTABLE = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bfloat16".split()
)


def _cast_target(node: Node, dtype: np.dtype[Any]) -> np.dtype[Any]:
    """`dtype`, or an `OnnxError` for an element type neither NumPy nor `narrow_dtypes` casts
    to as ONNX does (strings...)."""
    if dtype.name not in _CASTABLE and not is_narrow(dtype):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): casting to {dtype.name} is not supported")
    return dtype


def _cast_value(ctx: Ctx | None, node: Node, value: Value, dtype: np.dtype[Any]) -> Value:
    """`value` cast to `dtype`: a narrow type (float8, int4...) on the host, rounded and
    saturated as ONNX's ``saturate`` / ``round_mode`` say; the others as a tensor of the
    matching kind (or on the host, without `ctx`)."""
    dtype = _cast_target(node, dtype)
    if is_narrow(dtype):
        saturate = bool(node.attr("saturate", 1))
        return cast_narrow(Ctx.host(value), dtype, saturate, node.attr("round_mode", "up"))
    if ctx is None:
        array = np.asarray(value)
        return (widen(array) if is_narrow(array.dtype) else array).astype(dtype)
    return ctx.tensor(value, kind_of_numpy(np.empty(0, dtype)))


@register(
    "Cast",
    "math",
    "float targets become the model's float dtype (see the guide); float8, float4, int4, int2 "
    "targets are host arrays (ml_dtypes)",
    host=lambda node, inputs: [_cast_value(None, node, inputs[0], onnx_dtype(node.attr("to")))],
)
def _cast(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    return [_cast_value(ctx, node, inputs[0], onnx_dtype(node.attr("to")))]


@register(
    "CastLike",
    "math",
    host=lambda node, inputs: [_cast_value(None, node, inputs[0], np.asarray(inputs[1]).dtype)],
)
def _cast_like(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    other = inputs[1]
    if is_tensor(other):  # only its kind matters: floats follow the run's float dtype
        return [ctx.tensor(inputs[0], other.kind)]
    return [_cast_value(ctx, node, inputs[0], np.asarray(other).dtype)]


# -- reductions -------------------------------------------------------------------------------------
def _reduce_axes(node: Node, inputs: Sequence[Value], rank: int) -> list[int] | None:
    axes = attr_or_input(node, inputs, 1, "axes")
    if not axes:
        return None if not node.attr("noop_with_empty_axes", 0) else []
    return sorted({norm_axis(a, rank, node) for a in axes})


_REDUCERS: dict[str, Callable[[Tensor, list[int]], Tensor]] = {
    "ReduceSum": lambda x, d: x.sum_dims(d),
    "ReduceMean": lambda x, d: x.mean_dims(d),
    "ReduceMax": lambda x, d: x.max_dims(d),
    "ReduceMin": lambda x, d: x.min_dims(d),
    "ReduceProd": lambda x, d: x.prod_dims(d),
    "ReduceSumSquare": lambda x, d: x.square().sum_dims(d),
    "ReduceL1": lambda x, d: x.abs().sum_dims(d),
    "ReduceL2": lambda x, d: x.square().sum_dims(d).sqrt(),
    "ReduceLogSumExp": lambda x, d: _logsumexp(x, d),
    "ReduceLogSum": lambda x, d: x.sum_dims(d).log(),
}
_HOST_REDUCERS: dict[str, Callable[..., Any]] = {
    "ReduceSum": np.sum,
    "ReduceMean": np.mean,
    "ReduceMax": np.max,
    "ReduceMin": np.min,
    "ReduceProd": np.prod,
}


def _logsumexp(x: Tensor, dims: list[int]) -> Tensor:
    m = x.max_dims(dims).detach()
    return (x - m).exp().sum_dims(dims).log() + m


# What a reduction over no elements gives (ONNX: the reduction's identity).
_EMPTY_VALUE = {
    "ReduceSum": 0.0, "ReduceSumSquare": 0.0, "ReduceL1": 0.0, "ReduceL2": 0.0, "ReduceProd": 1.0,
    "ReduceMean": math.nan, "ReduceMax": -math.inf, "ReduceMin": math.inf, "ReduceLogSumExp": -math.inf,
    "ReduceLogSum": -math.inf,
}


def _empty_value(node: Node, is_float: bool) -> float:
    value = _EMPTY_VALUE[node.op_type]
    if not is_float and not math.isfinite(value):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): reducing an integer tensor over an empty axis "
            "(ONNX gives the type's extreme value) is not supported"
        )
    return value


def _reduce(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    from burn.tensor.tensor import Tensor

    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    axes = _reduce_axes(node, inputs, rank)
    if axes == []:
        return [x]
    dims = list(range(rank)) if axes is None else axes
    if x.kind is Bool and node.op_type in ("ReduceMax", "ReduceMin"):
        # any / all: reduced as 0/1 integers; over no elements, max is false and min true
        ints_ = x.int()
        if any(x.shape[d] == 0 for d in dims):
            shape = [1 if i in dims else n for i, n in enumerate(x.shape)]
            out = Tensor.full(shape, node.op_type == "ReduceMin", x.device, kind=Bool, backend=x.backend)
        else:
            out = _REDUCERS[node.op_type](ints_, dims).bool()
    elif any(x.shape[d] == 0 for d in dims) and x.kind is not Bool:
        value = _empty_value(node, x.kind is Float)
        shape = [1 if i in dims else n for i, n in enumerate(x.shape)]
        fill = value if x.kind is Float else int(value)
        out = Tensor.full(shape, fill, x.device, dtype=x.dtype, kind=x.kind, backend=x.backend)
    else:
        out = _REDUCERS[node.op_type](x, dims) if dims else x
    if not node.attr("keepdims", 1):
        out = out.squeeze_dims(dims) if len(dims) < rank else out.reshape(())
    return [out]


def _reduce_host(node: Node, inputs: Sequence[Any]) -> list[Any]:
    x = np.asarray(inputs[0])
    axes = _reduce_axes(node, inputs, x.ndim)
    if axes == []:
        return [x]
    fn = _HOST_REDUCERS[node.op_type]
    dims = range(x.ndim) if axes is None else axes
    if any(x.shape[d] == 0 for d in dims):
        shape = [1 if i in dims else n for i, n in enumerate(x.shape)]
        out = np.full(shape, _empty_value(node, x.dtype.kind == "f"), x.dtype)
        kept = [n for i, n in enumerate(x.shape) if i not in dims]
        return [out if node.attr("keepdims", 1) else out.reshape(kept)]
    return [
        np.asarray(
            fn(x, axis=None if axes is None else tuple(axes), keepdims=bool(node.attr("keepdims", 1)))
        ).astype(x.dtype)
    ]


for _name in _REDUCERS:
    register(_name, "reduce", host=_reduce_host if _name in _HOST_REDUCERS else None)(_reduce)


@register(["ArgMax", "ArgMin"], "reduce")
def _arg(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", 0), len(x.shape), node)
    last = node.attr("select_last_index", 0)
    src = x.flip([d]) if last else x
    out = src.argmax(d) if node.op_type == "ArgMax" else src.argmin(d)
    if last:
        out = out.neg() + (x.shape[d] - 1)
    if not node.attr("keepdims", 1):
        out = out.squeeze(d)
    return [out]


@register("CumSum", "reduce")
def _cumsum(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(ints(inputs[1])[0], len(x.shape), node)
    reverse = node.attr("reverse", 0)
    src = x.flip([d]) if reverse else x
    out = src.cumsum(d)
    if node.attr("exclusive", 0):
        out = out - src
    return [out.flip([d]) if reverse else out]


@register("CumProd", "reduce")
def _cumprod(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    rank = len(x.shape)
    d = norm_axis(ints(inputs[1])[0], rank, node)
    reverse = node.attr("reverse", 0)
    src = x.flip([d]) if reverse else x
    if node.attr("exclusive", 0):
        # Shift by one along d with a leading 1 (dividing by the input would fail on zeros).
        src = src.pad([0, 0] * (rank - 1 - d) + [1, 0], 1).narrow(d, 0, x.shape[d])
    out = src.cumprod(d)
    return [out.flip([d]) if reverse else out]


@register("Hardmax", "math")
def _hardmax(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", -1), len(x.shape), node)
    # The first maximum along d is 1, all else 0: compare each position with the argmax.
    position = x.ones_like().int().cumsum(d) - 1
    return [position.equal(x.argmax(d)).float().cast(x.dtype)]


@register("TopK", "reduce")
def _topk(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    d = norm_axis(node.attr("axis", -1), len(x.shape), node)
    k = ints(inputs[1])[0]
    if not 0 <= k <= x.shape[d]:
        raise OnnxError(f"node {node.name!r} (TopK): k={k} is out of range for axis {d} of size {x.shape[d]}")
    # A stable sort keeps equal values in index order: ONNX's tie rule (the lower index first).
    values, indices = x.sort_with_indices(d, descending=bool(node.attr("largest", 1)))
    return [values.narrow(d, 0, k), indices.narrow(d, 0, k)]


@register_host("Det", "math", "runs on the host (NumPy's LU factorization): no gradient")
def _det(node: Node, inputs: Sequence[Any]) -> list[Any]:
    x = np.asarray(inputs[0])
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.dtype.kind != "f":
        raise OnnxError(
            f"node {node.name!r} (Det): takes float [*, M, M] matrices, got {x.dtype.name}{list(x.shape)}"
        )
    precision = np.float64 if x.dtype == np.float64 else np.float32
    wide: np.ndarray[Any, np.dtype[np.floating[Any]]] = x.astype(precision)
    return [np.linalg.det(wide).astype(x.dtype)]
