"""`Bilinear`: ``y = x1^T W x2 + b`` per output feature (PyTorch's ``nn.Bilinear``).

The weight keeps PyTorch's layout ``[d_output, d_input1, d_input2]`` (this layer is not in Burn),
so PyTorch weights load unchanged. The default initializer draws weight and bias from
``U(-1/sqrt(d_input1), 1/sqrt(d_input1))``, as PyTorch does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Bilinear", "BilinearConfig"]


@config
class BilinearConfig:
    """Builds a `Bilinear` layer (fan-in ``d_input1``, fan-out ``d_output`` for the initializer).

    Example:
        >>> from burn import nn
        >>> layer = nn.BilinearConfig(4, 3, 2).init(device)  # doctest: +SKIP
        >>> layer(x1, x2).shape  # x1: [5, 4], x2: [5, 3]  # doctest: +SKIP
        (5, 2)
    """

    d_input1: int
    d_input2: int
    d_output: int
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Bilinear:
        sizes = (self.d_input1, self.d_input2, self.d_output)
        if any(v < 1 for v in sizes):
            raise ValueError(f"BilinearConfig: sizes must be >= 1, got {sizes}")
        device = resolve_device(device)
        fans = (self.d_input1, self.d_output)
        weight = self.initializer.init_param((self.d_output, self.d_input1, self.d_input2), device, *fans)
        bias = self.initializer.init_param((self.d_output,), device, *fans) if self.bias else None
        return Bilinear(weight=weight, bias=bias)


class Bilinear(Module):
    """``x1 [..., d_input1]``, ``x2 [..., d_input2]`` (same leading dims) -> ``[..., d_output]``.

    Attributes:
        weight: ``[d_output, d_input1, d_input2]``.
        bias: ``[d_output]`` or None.
    """

    weight: Param
    bias: Param | None

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        d_out, d_in1, d_in2 = self.weight.shape
        s1, s2 = x1.shape, x2.shape
        if not s1 or not s2 or s1[-1] != d_in1 or s2[-1] != d_in2 or s1[:-1] != s2[:-1]:
            raise ShapeError(
                f"Bilinear: expected inputs [..., {d_in1}] and [..., {d_in2}] with the same leading dims, "
                f"got {s1} and {s2}"
            )
        lead = s1[:-1]
        a = x1.reshape((-1, d_in1))
        b = x2.reshape((-1, 1, d_in2))
        # [B, d_in1] @ [d_in1, d_out * d_in2] -> [B, d_out, d_in2], then contract with x2.
        w = self.weight.val().swap_dims(0, 1).reshape((d_in1, d_out * d_in2))
        out = ((a @ w).reshape((-1, d_out, d_in2)) * b).sum_dim(2).reshape((*lead, d_out))
        return out if self.bias is None else out + self.bias.val()
