"""`QuantizedTensor`: a float tensor stored as integers with float32 scales (and zero points),
made by `quantize_tensor` and turned back into floats by `dequantize`.

Storage: int8 values in the tensor's own shape; int4 and uint4 values packed two to a byte along
the last dim (uint8 ``[..., last / 2]``: the value at the even index in the low 4 bits, int4 as a
4-bit two's complement). A last dim that is not a whole number of blocks (or, 4-bit, of pairs)
is stored padded with zeros, which change no scale; `QuantizedTensor.shape` is the tensor's own.
Scales keep the dims they cover as 1, so they broadcast against the values: ``[1]`` per tensor,
``[1, .., C, .., 1]`` per channel, ``[..., last / block, 1]`` per block, the values then seen as
``[..., last / block, block]``. The formulas are in `burn.backend.ops.quantization`, the ranges
and scale rules in `burn.quantization.scheme`.
"""

from __future__ import annotations

from dataclasses import dataclass

from burn.foundations.dtype import DType
from burn.quantization.scheme import QuantScheme
from burn.tensor import module as F
from burn.tensor.tensor import Tensor


@dataclass(frozen=True)
class QuantizedTensor:
    """A quantized tensor: its stored integers, scales, zero points, scheme and logical shape.

    Attributes:
        values: Int tensor, int8 of `shape`, or uint8 ``[..., shape[-1] // 2]`` (4-bit values).
        scales: float32 tensor broadcasting to the (unpacked) values, see the module docstring.
        zero_points: Int tensor shaped as `scales` (affine), or None (symmetric).
        scheme: the `QuantScheme` it was made with.
        shape: the shape of the float tensor it stands for.

    Example:
        >>> import burn
        >>> x = burn.Tensor.from_data([[0.5, -1.0], [0.25, 2.0]], backend=burn.backend("ndarray"))
        >>> q = quantize_tensor(x, QuantScheme("int8", "channel"))
        >>> q.values.tolist(), q.dequantize().tolist()
        ([[64, -127], [16, 127]], [[0.5039370059967041, -1.0], [0.25196850299835205, 2.0]])
    """

    values: Tensor
    scales: Tensor
    zero_points: Tensor | None
    scheme: QuantScheme
    shape: tuple[int, ...]

    def dequantize(self, dtype: DType | str = DType.F32) -> Tensor:
        """The float tensor the integers stand for, ``(q - zero_point) * scale``, in `dtype`."""
        values = (
            unpack(self.values, signed=self.scheme.value == "int4") if self.scheme.packed else self.values
        )
        out = dequantize_unpacked(values, self.scales, self.zero_points, self.scheme, dtype)
        size = self.shape[-1]
        return out if out.shape[-1] == size else out.narrow(-1, 0, size)  # the padding's zeros

    def select_rows(self, indices: Tensor) -> QuantizedTensor:
        """The rows `indices` (an Int tensor of any shape) of a quantized ``[rows, ...]`` table,
        still quantized: ``[*indices.shape, ...]``. Scales follow their rows, so the level must
        be per tensor, per channel of axis 0, or per block."""
        scheme = self.scheme
        if scheme.level == "channel" and scheme.axis % len(self.shape) != 0:
            raise ValueError(f"select_rows: scales per channel of axis {scheme.axis} do not follow rows")
        flat = indices.reshape((-1,))
        out_shape = (*indices.shape, *self.shape[1:])
        per_row = scheme.level != "tensor"

        def rows(t: Tensor | None) -> Tensor | None:
            if t is None or not per_row:
                return t
            picked = t.select(0, flat)
            return picked.reshape((*indices.shape, *picked.shape[1:]))

        values = self.values.select(0, flat)
        values = values.reshape((*indices.shape, *values.shape[1:]))
        scales = rows(self.scales)
        assert scales is not None
        return QuantizedTensor(values, scales, rows(self.zero_points), scheme, out_shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the stored values, scales and zero points."""
        total = _count(self.values.shape) * self.values.dtype.itemsize + _count(self.scales.shape) * 4
        if self.zero_points is not None:
            total += _count(self.zero_points.shape) * self.zero_points.dtype.itemsize
        return total


def int_dtype(tensor: Tensor, preferred: DType) -> DType:
    """`preferred` where `tensor`'s backend declares it, else the backend's int dtype: a backend
    without 8-bit ints stores the same integers wider (and its files are larger)."""
    backend = tensor.backend
    return preferred if backend.capabilities.supports(preferred) else backend.int_dtype


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _blocked(shape: tuple[int, ...], block: int) -> tuple[int, ...]:
    return (*shape[:-1], shape[-1] // block, block)


def pack(values: Tensor) -> Tensor:
    """4-bit values (Int, in [-8, 15], last dim even) packed two to a uint8 byte along the last
    dim: the even index in the low 4 bits (the backend's int dtype where it has no uint8)."""
    shape = values.shape
    pairs = values.cast(int_dtype(values, DType.I32)).reshape((*shape[:-1], shape[-1] // 2, 2))
    low = pairs.narrow(-1, 0, 1).bitwise_and_scalar(15)
    high = pairs.narrow(-1, 1, 1).bitwise_and_scalar(15).bitwise_left_shift_scalar(4)
    return low.bitwise_or(high).reshape((*shape[:-1], shape[-1] // 2)).cast(int_dtype(values, DType.U8))


def unpack(packed: Tensor, *, signed: bool) -> Tensor:
    """The inverse of `pack`: int32 ``[..., 2 * last]`` (or the backend's int dtype where it has
    no int32), 4-bit two's complement when `signed`."""
    wide = packed.cast(int_dtype(packed, DType.I32))
    low = wide.bitwise_and_scalar(15)
    high = wide.bitwise_right_shift_scalar(4)
    if signed:  # a nibble >= 8 is negative: subtract 16 (bit 3 shifted to bit 4)
        low = low - low.bitwise_right_shift_scalar(3).bitwise_left_shift_scalar(4)
        high = high - high.bitwise_right_shift_scalar(3).bitwise_left_shift_scalar(4)
    shape = packed.shape
    return Tensor.stack([low, high], -1).reshape((*shape[:-1], shape[-1] * 2))


def quantize_tensor(tensor: Tensor, scheme: QuantScheme | str) -> QuantizedTensor:
    """Quantize a Float tensor with `scheme` (a `QuantScheme` or a name of `QuantScheme.parse`).

    Raises:
        ValueError: NaN or infinite values, or a channel axis out of range.
    """
    scheme = QuantScheme.parse(scheme)
    shape = tuple(tensor.shape)
    values, scales, zero_points = quantize_unpacked(padded(tensor, scheme), scheme)
    return QuantizedTensor(pack(values) if scheme.packed else values, scales, zero_points, scheme, shape)


def padded(tensor: Tensor, scheme: QuantScheme) -> Tensor:
    """`tensor` with zeros appended to its last dim up to a whole number of blocks (block level)
    or of pairs (4-bit values). Zeros change no scale or zero point: every range holds 0."""
    if not tensor.shape:
        return tensor
    size = tensor.shape[-1]
    unit = scheme.block_size if scheme.level == "block" else 2 if scheme.packed else 1
    extra = -size % unit
    if not extra:
        return tensor
    zeros = Tensor.zeros((*tensor.shape[:-1], extra), tensor.device, dtype=tensor.dtype)
    return Tensor.cat([tensor, zeros], -1)


def quantize_unpacked(tensor: Tensor, scheme: QuantScheme) -> tuple[Tensor, Tensor, Tensor | None]:
    """The integers (int8, or int32 holding 4-bit values; not packed), scales and zero points
    of `tensor` under `scheme`, laid out as in `QuantizedTensor` (see `quantize_tensor`)."""
    shape = tuple(tensor.shape)
    if tensor.kind.name != "Float":
        raise TypeError(f"quantize: expected a Float tensor, got kind {tensor.kind.name}")
    if not shape:
        raise ValueError("quantize: a rank-0 tensor has no dim to quantize; reshape it to [1]")
    if scheme.level == "block" and shape[-1] % scheme.block_size:
        raise ValueError(
            f"quantize: blocks of {scheme.block_size} do not divide the last dim of shape {list(shape)}"
        )
    if scheme.level == "channel" and not -len(shape) <= scheme.axis < len(shape):
        raise ValueError(f"quantize: channel axis {scheme.axis} is out of range for shape {list(shape)}")
    if not bool(tensor.is_finite().all().item()):
        raise ValueError(f"quantize: the tensor of shape {list(shape)} has NaN or infinite values")
    x = tensor.cast(DType.F32)
    if scheme.level == "block":
        x = x.reshape(_blocked(shape, scheme.block_size))
    dims = _reduced_dims(len(x.shape), scheme)
    qmin, qmax = scheme.range()
    zero_points = None
    if scheme.mode == "symmetric":
        amax = x.abs().max_dims(dims) if dims else x.abs()
        scales = amax / float(qmax)
    else:
        lo = (x.min_dims(dims) if dims else x).clamp_max(0.0)
        hi = (x.max_dims(dims) if dims else x).clamp_min(0.0)
        scales = (hi - lo) / float(qmax - qmin)
    scales = scales.mask_fill(scales.equal_elem(0.0), 1.0)
    if scheme.mode == "affine":
        zp = (float(qmin) - (lo / scales).round()).clamp(float(qmin), float(qmax))
        zero_points = zp.int().cast(int_dtype(x, scheme.zero_point_dtype))
    store = int_dtype(x, DType.I8 if scheme.value == "int8" else DType.I32)
    values = F.quantize_into_int(x, scales, zero_points, qmin, qmax, store).reshape(shape)
    if scheme.level == "tensor":
        scales = scales.reshape((1,))
        zero_points = None if zero_points is None else zero_points.reshape((1,))
    return values, scales, zero_points


def dequantize_unpacked(
    values: Tensor,
    scales: Tensor,
    zero_points: Tensor | None,
    scheme: QuantScheme,
    dtype: DType | str = DType.F32,
) -> Tensor:
    """The inverse of `quantize_unpacked`: floats of `dtype` in the values' shape."""
    shape = tuple(values.shape)
    if scheme.level == "block":
        values = values.reshape(_blocked(shape, scheme.block_size))
    return F.dequantize(values, scales, zero_points, dtype).reshape(shape)


def _reduced_dims(rank: int, scheme: QuantScheme) -> list[int]:
    """The dims one scale is shared over, for a tensor (block level: already blocked) of `rank`."""
    if scheme.level == "tensor":
        return list(range(rank))
    if scheme.level == "channel":
        return [d for d in range(rank) if d != scheme.axis % rank]
    return [rank - 1]


def dequantize(q: QuantizedTensor, dtype: DType | str = DType.F32) -> Tensor:
    """``q.dequantize(dtype)``: the float tensor a `QuantizedTensor` stands for."""
    return q.dequantize(dtype)
