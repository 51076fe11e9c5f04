"""The functional quantization ops (the quantization family, `burn.backend.ops.quantization`):
float to int with scales and zero points, back, and the dynamic int8 Linear product. Each checks
its operands and calls one backend op; `burn.quantization` builds quantized tensors and modules
on them.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.from_data([0.5, -1.0, 0.26])  # doctest: +SKIP
    >>> q = F.quantize_into_int(x, Tensor.from_data([0.25]), None, -127, 127, "int8")  # doctest: +SKIP
    >>> q.tolist(), F.dequantize(q, Tensor.from_data([0.25]), None).tolist()  # doctest: +SKIP
    ([2, -4, 1], [0.5, -1.0, 0.25])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.foundations.kind import Float, Int
from burn.tensor._base import wrap
from burn.tensor._errors import broadcasts_to, expect_same
from burn.tensor.module._args import (
    dims,
    float_operand,
    input_of_rank,
    int_arg,
    out_sizes,
    unwrap,
)
from burn.tensor.module._padding import ConvPadding, conv_padding, pad_input

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = [
    "dequantize",
    "dequantized_linear",
    "quantize_into_int",
    "quantized_linear",
    "static_quantized_conv2d",
    "static_quantized_linear",
]


def _check_bias(op: str, x: Tensor, bias: Tensor | None, n: int) -> None:
    """A bias, when given, is a float ``[n]`` tensor on `x`'s backend and device."""
    if bias is not None:
        expect_same(op, x, bias, Float, "bias")
        if bias.shape != (n,):
            raise ShapeError(f"{op}: bias must have shape [{n}], got {list(bias.shape)}")


def _broadcasts(op: str, shape: tuple[int, ...], other: tuple[int, ...], what: str) -> None:
    if not broadcasts_to(other, shape):
        raise ShapeError(f"{op}: {what} of shape {list(other)} does not broadcast to {list(shape)}")


def quantize_into_int(
    tensor: Tensor, scales: Tensor, zero_points: Tensor | None, qmin: int, qmax: int,
    dtype: DType | str,
) -> Tensor:
    """``clamp(round_half_even(tensor / scales) + zero_points, qmin, qmax)`` as an Int tensor
    of `dtype`; `scales` (Float) and `zero_points` (Int, None for 0) broadcast to `tensor`."""
    op = "quantize_into_int"
    float_operand(op, tensor, "tensor")
    expect_same(op, tensor, scales, Float, "scales")
    _broadcasts(op, tensor.shape, scales.shape, "scales")
    if zero_points is not None:
        expect_same(op, tensor, zero_points, Int, "zero_points")
        _broadcasts(op, tensor.shape, zero_points.shape, "zero_points")
    target = DType.from_any(dtype)
    if not target.is_int:
        raise ValueError(f"{op}: dtype must be an int type, got {target}")
    if qmin > qmax:
        raise ValueError(f"{op}: qmin {qmin} is above qmax {qmax}")
    zp = None if zero_points is None else zero_points._p
    out = tensor._b.quantize_into_int(tensor._p, scales._p, zp, int(qmin), int(qmax), target)
    return wrap(out, tensor._b, Int)


def dequantize(
    values: Tensor, scales: Tensor, zero_points: Tensor | None, dtype: DType | str | None = None
) -> Tensor:
    """``(values - zero_points) * scales`` as a Float tensor of `dtype` (default: the scales'
    dtype); `scales` (Float) and `zero_points` (Int, None for 0) broadcast to the Int `values`."""
    op = "dequantize"
    if values._k is not Int:
        raise TypeError(f"{op}: values must be an Int tensor, got kind {values._k.name}")
    expect_same(op, values, scales, Float, "scales")
    _broadcasts(op, values.shape, scales.shape, "scales")
    if zero_points is not None:
        expect_same(op, values, zero_points, Int, "zero_points")
        _broadcasts(op, values.shape, zero_points.shape, "zero_points")
    target = scales.dtype if dtype is None else DType.from_any(dtype)
    if not target.is_float:
        raise ValueError(f"{op}: dtype must be a float type, got {target}")
    zp = None if zero_points is None else zero_points._p
    return wrap(values._b.dequantize(values._p, scales._p, zp, target), values._b, Float)


def quantized_linear(x: Tensor, weight: Tensor, weight_scales: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ dequantize(weight).T + bias`` with `x` quantized per row to int8 at run time and
    int32 sums (`burn.backend.ops.quantization.QuantizationOps.quantized_linear`).

    Args:
        x: Float ``[..., k]``.
        weight: Int (int8) ``[n, k]``, symmetric: values in [-127, 127].
        weight_scales: Float ``[n]`` (one per output row) or ``[1]``.
        bias: Float ``[n]`` or None.
    """
    op = "quantized_linear"
    float_operand(op, x, "x")
    expect_same(op, x, weight, Int, "weight")
    expect_same(op, x, weight_scales, Float, "weight_scales")
    if len(weight.shape) != 2 or not x.shape or x.shape[-1] != weight.shape[1]:
        raise ShapeError(f"{op}: x {list(x.shape)} and weight [n, k] {list(weight.shape)} do not multiply")
    n = weight.shape[0]
    if weight_scales.shape not in ((n,), (1,)):
        raise ShapeError(f"{op}: weight_scales must have shape [{n}] or [1], got {list(weight_scales.shape)}")
    _check_bias(op, x, bias, n)
    out = x._b.quantized_linear(x._p, weight._p, weight_scales._p, None if bias is None else bias._p)
    return wrap(out, x._b, Float)


_STORED_VALUES = ("int8", "int4", "uint4")


def dequantized_linear(
    x: Tensor,
    values: Tensor,
    scales: Tensor,
    zero_points: Tensor | None = None,
    value: str = "int8",
    bias: Tensor | None = None,
) -> Tensor:
    """``x @ dequantize(weight).T + bias`` for a weight-only quantized ``[n, k]`` weight, in x's
    float dtype, without the backend having to dequantize the whole weight first
    (`burn.backend.ops.quantization.QuantizationOps.dequantized_linear`).

    Args:
        x: Float ``[..., k]``.
        values: the stored weight: int8 ``[n, kp]`` (`value` ``"int8"``) or uint8 ``[n, kp / 2]``
            of packed 4-bit values (``"int4"``, ``"uint4"``), rows padded to ``kp >= k``.
        scales: Float ``[1]`` (per tensor), ``[n, 1]`` (per output row) or ``[n, blocks, 1]``
            (per block of ``kp / blocks`` values of each row).
        zero_points: Int, shaped as `scales` (affine), or None (symmetric).
        value: ``"int8"``, ``"int4"`` or ``"uint4"``.
        bias: Float ``[n]`` or None.

    Example:
        >>> import burn
        >>> from burn import Tensor
        >>> B = burn.backend("ndarray")
        >>> w = Tensor.from_data([[2, -4]], backend=B, dtype="int8")
        >>> x = Tensor.from_data([[1.0, 1.0]], backend=B)
        >>> dequantized_linear(x, w, Tensor.from_data([0.5], backend=B)).tolist()
        [[-1.0]]
    """
    op = "dequantized_linear"
    float_operand(op, x, "x")
    expect_same(op, x, values, Int, "values")
    expect_same(op, x, scales, Float, "scales")
    if value not in _STORED_VALUES:
        raise ValueError(f"{op}: value must be 'int8', 'int4' or 'uint4', got {value!r}")
    if len(values.shape) != 2 or not x.shape:
        raise ShapeError(
            f"{op}: x {list(x.shape)} and values [n, stored] {list(values.shape)} do not multiply"
        )
    n, stored = values.shape
    padded = stored * (1 if value == "int8" else 2)
    k = x.shape[-1]
    if k > padded:
        raise ShapeError(f"{op}: x has {k} features, the weight rows only {padded}")
    blocked = len(scales.shape) == 3 and scales.shape[0] == n and scales.shape[2] == 1
    if not (scales.shape in ((1,), (n, 1)) or (blocked and padded % scales.shape[1] == 0)):
        raise ShapeError(
            f"{op}: scales must have shape [1], [{n}, 1] or [{n}, blocks, 1] with blocks dividing "
            f"{padded}, got {list(scales.shape)}"
        )
    if zero_points is not None:
        expect_same(op, x, zero_points, Int, "zero_points")
        if zero_points.shape != scales.shape:
            raise ShapeError(
                f"{op}: zero_points must have the scales' shape {list(scales.shape)}, "
                f"got {list(zero_points.shape)}"
            )
    _check_bias(op, x, bias, n)
    zp = None if zero_points is None else zero_points._p
    out = x._b.dequantized_linear(x._p, values._p, scales._p, zp, value, None if bias is None else bias._p)
    return wrap(out, x._b, Float)


def _static_operands(
    op: str,
    x: Tensor,
    weight: Tensor,
    weight_scales: Tensor,
    input_scale: Tensor,
    input_zero_point: Tensor,
    bias: Tensor | None,
    rank: int,
) -> None:
    float_operand(op, x, "x")
    expect_same(op, x, weight, Int, "weight")
    expect_same(op, x, weight_scales, Float, "weight_scales")
    expect_same(op, x, input_scale, Float, "input_scale")
    expect_same(op, x, input_zero_point, Int, "input_zero_point")
    if len(weight.shape) != rank:
        raise ShapeError(f"{op}: weight must have rank {rank}, got shape {list(weight.shape)}")
    n = weight.shape[0]
    if weight_scales.shape not in ((n,), (1,)):
        raise ShapeError(f"{op}: weight_scales must have shape [{n}] or [1], got {list(weight_scales.shape)}")
    if input_scale.shape != (1,) or input_zero_point.shape != (1,):
        raise ShapeError(
            f"{op}: input_scale and input_zero_point must have shape [1], got "
            f"{list(input_scale.shape)} and {list(input_zero_point.shape)}"
        )
    _check_bias(op, x, bias, n)


def static_quantized_linear(
    x: Tensor,
    weight: Tensor,
    weight_scales: Tensor,
    input_scale: Tensor,
    input_zero_point: Tensor,
    bias: Tensor | None = None,
) -> Tensor:
    """``x @ dequantize(weight).T + bias`` with `x` quantized by calibrated parameters (static
    quantization, `burn.quantization.calibrate`) and int32 sums where the backend has a kernel
    (`burn.backend.ops.quantization.QuantizationOps.static_quantized_linear`).

    Args:
        x: Float ``[..., k]``, quantized as ``clamp(round(x / input_scale) + input_zero_point,
            -127, 127)``.
        weight: Int (int8) ``[n, k]``, symmetric: values in [-127, 127].
        weight_scales: Float ``[n]`` (one per output row) or ``[1]``.
        input_scale: Float ``[1]``.
        input_zero_point: Int ``[1]``, in [-127, 127].
        bias: Float ``[n]`` or None.

    Example:
        >>> import burn
        >>> from burn import Tensor
        >>> B = burn.backend("ndarray")
        >>> w = Tensor.from_data([[2, -4]], backend=B, dtype="int8")
        >>> x = Tensor.from_data([[1.0, 0.5]], backend=B)
        >>> s, zp = Tensor.from_data([0.5], backend=B), Tensor.from_data([0], backend=B, dtype="int8")
        >>> static_quantized_linear(x, w, Tensor.from_data([0.25], backend=B), s, zp).tolist()
        [[0.0]]
    """
    op = "static_quantized_linear"
    _static_operands(op, x, weight, weight_scales, input_scale, input_zero_point, bias, 2)
    if not x.shape or x.shape[-1] != weight.shape[1]:
        raise ShapeError(f"{op}: x {list(x.shape)} and weight [n, k] {list(weight.shape)} do not multiply")
    zp, b = input_zero_point._p, None if bias is None else bias._p
    out = x._b.static_quantized_linear(x._p, weight._p, weight_scales._p, input_scale._p, zp, b)
    return wrap(out, x._b, Float)


def static_quantized_conv2d(
    x: Tensor,
    weight: Tensor,
    weight_scales: Tensor,
    input_scale: Tensor,
    input_zero_point: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: ConvPadding = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """`conv2d` of `x` quantized by calibrated parameters with an int8 weight (static
    quantization), int32 sums where the backend has a kernel
    (`burn.backend.ops.quantization.QuantizationOps.static_quantized_conv2d`).

    Args:
        x: Float ``[N, C_in, H, W]``, quantized as in `static_quantized_linear`.
        weight: Int (int8) ``[C_out, C_in / groups, KH, KW]``, symmetric.
        weight_scales: Float ``[C_out]`` or ``[1]``.
        input_scale, input_zero_point: Float ``[1]`` and Int ``[1]``.
        bias: Float ``[C_out]`` or None.
        stride, padding, dilation, groups: as `burn.tensor.module.conv2d` (asymmetric padding
            is padded explicitly with zeros, which quantize to the zero point).

    Raises:
        ShapeError: mismatched channels, groups, scales or an empty output.
    """
    op = "static_quantized_conv2d"
    input_of_rank(op, x, 4, "[N, C_in, H, W]")
    _static_operands(op, x, weight, weight_scales, input_scale, input_zero_point, bias, 4)
    s, d = dims(op, "stride", stride, 2, 1), dims(op, "dilation", dilation, 2, 1)
    p, before, after = conv_padding(op, padding, 2)
    g = int_arg(op, "groups", groups, 1)
    c_out, c_per_group, kh, kw = weight.shape
    c_in = x.shape[1]
    if c_in % g or c_out % g or c_per_group * g != c_in:
        raise ShapeError(
            f"{op}: weight {list(weight.shape)} with groups={g} does not fit the input {list(x.shape)}"
        )
    x = pad_input(x, before, after)
    out_sizes(op, tuple(x.shape[2:]), (kh, kw), s, p, d)
    b = x._b
    operands = (x._p, weight._p, weight_scales._p, input_scale._p, input_zero_point._p)
    pairs = [(v[0], v[1]) for v in (s, p, d)]
    out = b.static_quantized_conv2d(*operands, unwrap(bias), pairs[0], pairs[1], pairs[2], g)
    return wrap(out, b, Float)
