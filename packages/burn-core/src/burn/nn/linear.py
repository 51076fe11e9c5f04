"""`Linear`: ``y = x @ weight + bias`` with Burn's weight layout ``[d_input, d_output]``.

Burn stores the weight as ``[d_input, d_output]`` (the transpose of PyTorch's ``[out, in]``), so
the forward is a plain matmul with no transpose. Loading PyTorch weights means transposing them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer, linear_fans
from burn.tensor import autocast as _amp

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Linear", "LinearConfig"]


@config
class LinearConfig:
    """Builds a `Linear` layer.

    Attributes:
        d_input: size of each input sample.
        d_output: size of each output sample.
        bias: learn an additive bias.
        initializer: for the weight and the bias (fan-in ``d_input``, fan-out ``d_output``);
            Burn's default ``KaimingUniform(gain=1/sqrt(3))`` draws ``U(-1/sqrt(d_input), ...)``.

    Example:
        >>> import burn
        >>> from burn import nn
        >>> B = burn.backend("ndarray")  # doctest: +SKIP
        >>> layer = nn.LinearConfig(4, 2).init(B.default_device())  # doctest: +SKIP
        >>> layer(burn.Tensor.ones((3, 4), backend=B)).shape  # doctest: +SKIP
        (3, 2)
    """

    d_input: int
    d_output: int
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Linear:
        """A new layer with lazy params on `device` (default backend's device when None)."""
        device = resolve_device(device)
        fan_in, fan_out = linear_fans(self.d_input, self.d_output)
        weight = self.initializer.init_param((self.d_input, self.d_output), device, fan_in, fan_out)
        bias = self.initializer.init_param((self.d_output,), device, fan_in, fan_out) if self.bias else None
        return Linear(weight=weight, bias=bias)


class Linear(Module):
    """Applies ``x @ weight + bias`` to the last dim of `x` (any rank >= 1).

    Attributes:
        weight: ``[d_input, d_output]``.
        bias: ``[d_output]`` or None.
    """

    weight: Param
    bias: Param | None = None

    def forward(self, x: Tensor) -> Tensor:
        """``[..., d_input] -> [..., d_output]``."""
        w = self.weight.val()
        bias = self.bias
        b = None if bias is None else bias.val()
        if _amp.active:  # as `burn.tensor.module.linear`: the bias too, so the output is low
            x, w, b = _amp.low_precision("linear", x, w, b)
        if len(x.shape) == 1:  # matmul needs rank 2: treat a vector as one row
            out = x.unsqueeze().matmul(w).squeeze(0)
        else:
            out = x.matmul(w)
        return out if b is None else out + b

    @property
    def d_input(self) -> int:
        return self.weight.shape[0]

    @property
    def d_output(self) -> int:
        return self.weight.shape[1]
