"""Spectral ops: ``DFT``, ``STFT`` and the window functions (``HannWindow``,
``HammingWindow``, ``BlackmanWindow``).

A ``DFT`` whose input does not require grad runs NumPy's FFT (pocketfft, O(L log L)) on the
host at the input's precision (complex64 for float32 and narrower, complex128 for float64), as
ONNX's reference implementation computes it. Where gradients must flow (an input that requires
grad), and for every ``STFT``, a transform of length ``L`` is two matrix products with the
cosine and sine tables of its angles (built on the host in float64, then computed in float64
where the backend has it): O(L^2) work, differentiable like any matmul. The two agree to the
float32 rounding of their sums (~1e-7 of the largest value). Complex values are ONNX's trailing
dim of 2 (real, imaginary); a trailing dim of 1 is a real signal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.foundations.kind import Float
from burn.onnx.errors import OnnxError
from burn.onnx.graph import onnx_dtype
from burn.onnx.ops import register, register_host
from burn.onnx.runtime import Ctx, ints, is_tensor, norm_axis

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value
    from burn.tensor.tensor import Tensor


def _opt(inputs: Sequence[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i and inputs[i] is not None else None


def _tables(ctx: Ctx, rows: int, cols: int, length: int) -> tuple[Tensor, Tensor]:
    """cos and sin of ``2 pi r c / length`` for r < rows, c < cols (rows x cols)."""
    angle = 2.0 * np.pi * np.outer(np.arange(rows), np.arange(cols)) / length
    return ctx.tensor(np.cos(angle)), ctx.tensor(np.sin(angle))


def _fit(t: Tensor, n: int) -> Tensor:
    """`t` truncated or zero-padded to `n` along its last dim."""
    size = t.shape[-1]
    if size > n:
        return t.narrow(-1, 0, n)
    if size < n:
        return t.pad([0, n - size], 0.0)
    return t


def _transform(
    ctx: Ctx, re: Tensor, im: Tensor | None, length: int, inverse: bool, onesided: bool
) -> tuple[Tensor, Tensor | None]:
    """The DFT of ``re + i im`` along the last dim (`length` points; `onesided`: the first
    ``length // 2 + 1`` bins forward, a real signal from those bins inverse). Returns the real
    and imaginary parts (None for the real output of a onesided inverse)."""
    if inverse and onesided:
        # A real signal from the bins 0..length/2: the others are their conjugates, so each
        # counts twice except bin 0 and (even lengths) bin length/2, whose sines vanish.
        bins = length // 2 + 1
        re = _fit(re, bins)
        weights = np.full((bins, 1), 2.0)
        weights[0] = 1.0
        if length % 2 == 0:
            weights[-1] = 1.0
        angle = 2.0 * np.pi * np.outer(np.arange(bins), np.arange(length)) / length
        cos = ctx.tensor(weights * np.cos(angle) / length)
        out = re.matmul(cos)
        if im is not None:
            out = out - _fit(im, bins).matmul(ctx.tensor(weights * np.sin(angle) / length))
        return out, None
    re = _fit(re, length)
    im = None if im is None else _fit(im, length)
    bins = length // 2 + 1 if onesided else length
    cos, sin = _tables(ctx, length, bins, length)  # [time, bin]
    if inverse:  # exp(+i angle) / length
        cos, sin = cos / length, sin / length
        out_re, out_im = re.matmul(cos), re.matmul(sin)
        if im is not None:
            out_re, out_im = out_re - im.matmul(sin), out_im + im.matmul(cos)
        return out_re, out_im
    out_re, out_im = re.matmul(cos), re.matmul(sin).neg()  # exp(-i angle)
    if im is not None:
        out_re, out_im = out_re + im.matmul(sin), out_im + im.matmul(cos)
    return out_re, out_im


def _wide(ctx: Ctx) -> Ctx:
    """A context computing in float64 where the backend has it: a transform sums L products
    per output, and float32 leaves ~1e-6 of noise on outputs that are exactly zero (ONNX's
    reference computes in float64)."""
    from burn.foundations.dtype import DType

    if ctx.float_dtype is DType.F64 or not ctx.backend.capabilities.supports(DType.F64):
        return ctx
    return Ctx(ctx.backend, ctx.device, DType.F64)


def _parts(node: Node, x: Tensor) -> tuple[Tensor, Tensor | None]:
    if len(x.shape) < 2 or x.shape[-1] not in (1, 2):
        raise OnnxError(
            f"node {node.name!r} ({node.op_type}): the input's last dim must be 1 (real) or 2 (complex), "
            f"got shape {list(x.shape)}"
        )
    re = x.narrow(-1, 0, 1).squeeze(-1)
    return re, (x.narrow(-1, 1, 1).squeeze(-1) if x.shape[-1] == 2 else None)


def _join(re: Tensor, im: Tensor | None) -> Tensor:
    from burn.tensor.tensor import Tensor

    return re.unsqueeze_dim(-1) if im is None else Tensor.stack([re, im], -1)


@register("DFT", "math", "NumPy's FFT on the host at the input's precision; O(n^2) matrix products "
          "where the input requires grad")
def _dft(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    out_ctx, ctx = ctx, _wide(ctx)
    x = ctx.tensor(inputs[0], Float).cast(ctx.float_dtype)
    rank = len(x.shape)
    length_in = _opt(inputs, 1)
    axis_in = _opt(inputs, 2)
    axis = ints(axis_in)[0] if axis_in is not None else node.attr("axis", 1)
    d = norm_axis(int(axis), rank, node)
    if d == rank - 1:
        raise OnnxError(f"node {node.name!r} (DFT): axis {axis} is the real/imaginary dim")
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    re, im = _parts(node, x)
    re = re.movedim(d, -1)
    im = None if im is None else im.movedim(d, -1)
    n = re.shape[-1]
    length = ints(length_in)[0] if length_in is not None else 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise OnnxError(f"node {node.name!r} (DFT): dft_length {length} must be positive")
    source = inputs[0]
    if not (is_tensor(source) and source.is_require_grad()):
        return [out_ctx.tensor(_fft_on_host(Ctx.host(source), d, length, inverse, onesided), Float)]
    out_re, out_im = _transform(ctx, re, im, length, inverse, onesided)
    out_re = out_re.movedim(-1, d)
    out_im = None if out_im is None else out_im.movedim(-1, d)
    return [out_ctx.convert(_join(out_re, out_im), Float)]


def _fft_on_host(x: np.ndarray, axis: int, length: int, inverse: bool, onesided: bool) -> np.ndarray:
    """ONNX's DFT of `x` (trailing dim 1: real, 2: complex) along `axis` with NumPy's FFT, at
    the input's precision: float32 (and narrower) in complex64, float64 in complex128."""
    real_type = np.float64 if x.dtype == np.float64 else np.float32
    x = x.astype(real_type, copy=False)
    signal = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]  # complex64 from float32
    if inverse and onesided:
        return np.fft.irfft(signal, n=length, axis=axis)[..., None].astype(real_type)
    out = np.fft.ifft(signal, n=length, axis=axis) if inverse else np.fft.fft(signal, n=length, axis=axis)
    if onesided and not inverse:
        out = np.take(out, np.arange(length // 2 + 1), axis=axis)
    return np.stack([out.real, out.imag], -1).astype(real_type)


@register("STFT", "math", "O(n^2) matrix products per frame (no FFT)")
def _stft(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    out_ctx, ctx = ctx, _wide(ctx)
    x = ctx.tensor(inputs[0], Float).cast(ctx.float_dtype)
    if len(x.shape) != 3:
        raise OnnxError(
            f"node {node.name!r} (STFT): the signal must be [batch, length, 1 or 2], got {list(x.shape)}"
        )
    step = ints(inputs[1])[0]
    window = _opt(inputs, 2)
    frame_in = _opt(inputs, 3)
    size = x.shape[1]
    frame = ints(frame_in)[0] if frame_in is not None else (
        ctx.tensor(window).shape[0] if window is not None else size
    )
    if step < 1 or not 1 <= frame <= size:
        raise OnnxError(
            f"node {node.name!r} (STFT): frame_step {step} and frame_length {frame} do not fit a signal "
            f"of {size}"
        )
    frames = 1 + (size - frame) // step
    index = (np.arange(frames)[:, None] * step + np.arange(frame)[None, :]).reshape(-1)
    re, im = _parts(node, x)
    batch = x.shape[0]

    def framed(t: Tensor) -> Tensor:
        t = t.select(1, [int(i) for i in index]).reshape((batch, frames, frame))
        if window is not None:
            t = t * ctx.tensor(window, Float).cast(ctx.float_dtype).reshape((1, 1, frame))
        return t

    out_re, out_im = _transform(ctx, framed(re), None if im is None else framed(im), frame, False,
                                bool(node.attr("onesided", 1)))
    return [out_ctx.convert(_join(out_re, out_im), Float)]


def _window(node: Node, inputs: Sequence[Any], terms: Sequence[float]) -> list[Any]:
    """``sum_k terms[k] cos(2 pi k n / N)`` for n < size (N = size when periodic, else size - 1),
    in the ``output_datatype``."""
    size = int(np.asarray(inputs[0]).reshape(-1)[0])
    if size < 1:
        raise OnnxError(f"node {node.name!r} ({node.op_type}): size {size} must be positive")
    period = size if node.attr("periodic", 1) else size - 1
    n = np.arange(size, dtype=np.float64)
    out = np.zeros(size)
    for k, c in enumerate(terms):
        out += c * (np.cos(2.0 * math.pi * k * n / period) if period else np.ones(size))
    return [out.astype(onnx_dtype(node.attr("output_datatype", 1)))]


register_host("HannWindow", "creation")(lambda node, inputs: _window(node, inputs, (0.5, -0.5)))
register_host("HammingWindow", "creation")(
    lambda node, inputs: _window(node, inputs, (25.0 / 46.0, -(1.0 - 25.0 / 46.0)))
)
register_host("BlackmanWindow", "creation")(lambda node, inputs: _window(node, inputs, (0.42, -0.5, 0.08)))
