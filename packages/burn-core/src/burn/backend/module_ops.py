"""Module ops of the backend contract (Burn's ``ModuleOps``): convolution, pooling, embedding,
interpolation, and the backward helpers the autodiff decorator calls.

All are defaults written here in terms of float/int ops (TO BE FILLED: see the helper brief), so
a backend with only the required ops has them; backends override them to be faster.

Layouts are PyTorch's and Burn's: inputs ``[N, C, H, W]`` (``[N, C, L]`` in 1-D), conv weights
``[C_out, C_in / groups, KH, KW]``, transposed-conv weights ``[C_in, C_out / groups, KH, KW]``.
Tuples are ``(height, width)``. Max-pool indices are int primitives holding the flat index
``h * W + w`` into each input plane (as PyTorch returns them).
"""

from __future__ import annotations

from typing import Any, Literal

from burn.backend.contract import default

P = Any
Pair = tuple[int, int]
InterpolateMode = Literal["nearest", "bilinear"]


class ModuleOps:
    """Module ops; every one has a default."""

    # Signatures of the contract. The bodies are filled in by the module-ops work.
    @default
    def conv1d(self, x: P, weight: P, bias: P | None, stride: int, padding: int, dilation: int, groups: int) -> P:
        """``x [N, C_in, L]``, ``weight [C_out, C_in/groups, K]`` -> ``[N, C_out, L_out]``."""
        raise NotImplementedError

    @default
    def conv2d(self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_out, C_in/groups, KH, KW]``, ``bias [C_out]`` or None."""
        raise NotImplementedError

    @default
    def conv2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `x` (same shape as `x`)."""
        raise NotImplementedError

    @default
    def conv2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `weight` (same shape as `weight`)."""
        raise NotImplementedError

    @default
    def conv_transpose2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_in, C_out/groups, KH, KW]`` -> ``[N, C_out, H_out, W_out]``
        with ``H_out = (H-1)*stride - 2*padding + dilation*(KH-1) + padding_out + 1``."""
        raise NotImplementedError

    @default
    def conv_transpose2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        raise NotImplementedError

    @default
    def conv_transpose2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        raise NotImplementedError

    @default
    def max_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        """Padding counts as -inf."""
        raise NotImplementedError

    @default
    def max_pool2d_with_indices(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[P, P]:
        """Output and int indices (flat ``h * W + w`` into each unpadded input plane)."""
        raise NotImplementedError

    @default
    def max_pool2d_with_indices_backward(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: P, indices: P
    ) -> P:
        """Gradient with respect to `x`: `output_grad` scattered (summed) at `indices`."""
        raise NotImplementedError

    @default
    def avg_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> P:
        raise NotImplementedError

    @default
    def avg_pool2d_backward(
        self, x: P, output_grad: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> P:
        raise NotImplementedError

    @default
    def adaptive_avg_pool2d(self, x: P, output_size: Pair) -> P:
        """PyTorch's bins: ``start = floor(i*H/out)``, ``end = ceil((i+1)*H/out)``."""
        raise NotImplementedError

    @default
    def adaptive_avg_pool2d_backward(self, x: P, output_grad: P) -> P:
        raise NotImplementedError

    @default
    def max_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> P:
        raise NotImplementedError

    @default
    def max_pool1d_with_indices(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> tuple[P, P]:
        raise NotImplementedError

    @default
    def avg_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> P:
        raise NotImplementedError

    @default
    def adaptive_avg_pool1d(self, x: P, output_size: int) -> P:
        raise NotImplementedError

    @default
    def embedding(self, weights: P, indices: P) -> P:
        """``weights [V, D]``, int ``indices [...]`` -> ``[..., D]``."""
        raise NotImplementedError

    @default
    def embedding_backward(self, weights: P, output_grad: P, indices: P) -> P:
        """Gradient with respect to `weights`: rows of `output_grad` summed at `indices`."""
        raise NotImplementedError

    @default
    def interpolate(self, x: P, output_size: Pair, mode: InterpolateMode, align_corners: bool) -> P:
        """Resize ``[N, C, H, W]`` to `output_size`. Nearest uses ``floor(i * H_in / H_out)``
        (PyTorch's ``nearest``); bilinear follows PyTorch's ``align_corners`` semantics."""
        raise NotImplementedError

    @default
    def interpolate_backward(
        self, x: P, output_grad: P, output_size: Pair, mode: InterpolateMode, align_corners: bool
    ) -> P:
        raise NotImplementedError
