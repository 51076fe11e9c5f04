"""Convolution layers: `Conv1d`, `Conv2d`, `Conv3d`, `ConvTranspose1d`, `ConvTranspose2d`,
`ConvTranspose3d`, with Burn's configs.

Weights use PyTorch's (and Burn's) layouts: ``[C_out, C_in / groups, *kernel]`` for convolutions,
``[C_in, C_out / groups, *kernel]`` for the transposed one, so PyTorch weights load unchanged.
Fans follow Burn: ``fan_in = C_in / groups * prod(kernel)``, ``fan_out = C_out / groups *
prod(kernel)`` (a transposed convolution counts its output channels as fan-in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer, conv_fans
from burn.nn.padding import (
    PaddingConfig1d,
    PaddingConfig2d,
    PaddingConfig3d,
    resolve_conv_padding_1d,
    resolve_conv_padding_2d,
    resolve_padding_3d,
)
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "Conv3d",
    "Conv3dConfig",
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "ConvTranspose3d",
    "ConvTranspose3dConfig",
]


def _check_groups(layer: str, c_in: int, c_out: int, groups: int) -> None:
    if groups < 1 or c_in % groups or c_out % groups:
        raise ValueError(f"{layer}: channels ({c_in}, {c_out}) must both be divisible by groups={groups}")


def _positive(layer: str, name: str, values: tuple[int, ...]) -> None:
    if any(v < 1 for v in values):
        raise ValueError(f"{layer}: {name} must be >= 1, got {values}")


def _per_axis(value: int | tuple[int, ...]) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else tuple(value)


_Layer = TypeVar("_Layer", bound="_ConvLayer")


def _init_conv(
    cfg: Any,
    cls: type[_Layer],
    channels: tuple[int, int],
    device: Device | None,
    resolve_padding: Callable[[str], object] | None = None,
) -> _Layer:
    """Validates a convolution config, draws its weight and bias, and builds the layer `cls`.

    One path for every dimension: `cfg` carries ``kernel_size``, ``stride``, ``dilation`` (ints for 1-D,
    tuples otherwise), ``groups``, ``bias``, ``initializer`` and ``padding``. A transposed config also has
    ``padding_out``: its weight is ``[C_in, C_out / groups, *kernel]`` and its output channels count as
    fan-in; a plain convolution passes `resolve_padding` to turn its padding config into the layer's.
    """
    layer = type(cfg).__name__
    c_in, c_out = channels
    kernel = _per_axis(cfg.kernel_size)
    _check_groups(layer, c_in, c_out, cfg.groups)
    sizes = (*kernel, *_per_axis(cfg.stride), *_per_axis(cfg.dilation))
    _positive(layer, "kernel_size, stride and dilation", sizes)
    transposed = hasattr(cfg, "padding_out")
    hyper: dict[str, Any] = {"stride": cfg.stride, "dilation": cfg.dilation, "groups": cfg.groups}
    if transposed:
        hyper.update(padding=cfg.padding, padding_out=cfg.padding_out)
        fans = conv_fans(c_out, c_in, kernel, cfg.groups)
        shape = (c_in, c_out // cfg.groups, *kernel)
    else:
        assert resolve_padding is not None
        hyper["padding"] = resolve_padding(layer)
        fans = conv_fans(c_in, c_out, kernel, cfg.groups)
        shape = (c_out, c_in // cfg.groups, *kernel)
    device = resolve_device(device)
    initializer: Initializer = cfg.initializer
    weight = initializer.init_param(shape, device, *fans)
    bias = initializer.init_param((c_out,), device, *fans) if cfg.bias else None
    return cls(weight=weight, bias=bias, **hyper)


class _ConvLayer(Module):
    """The forward all convolution layers share: ``op(x, weight, bias, *hyper-parameters)``.

    Each subclass declares its dataclass fields (their types differ with the dimension), the functional
    op it calls and the names of the hyper-parameters that op takes after the bias, in order.
    """

    _op: ClassVar[Callable[..., Tensor]]
    _hyper: ClassVar[tuple[str, ...]] = ("stride", "padding", "dilation", "groups")
    if TYPE_CHECKING:
        weight: Param
        bias: Param | None

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        hyper = [getattr(self, name) for name in self._hyper]
        return type(self)._op(x, self.weight.val(), None if bias is None else bias.val(), *hyper)


class _ConvTransposeLayer(_ConvLayer):
    _hyper = ("stride", "padding", "padding_out", "dilation", "groups")


@config
class Conv1dConfig:
    """Builds a `Conv1d`: input ``[N, channels_in, L]``; `padding` is ``"valid"``, ``"same"``, an
    int, or Burn's asymmetric ``(left, right)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv1dConfig(2, 4, 3, padding="same").init(device)  # doctest: +SKIP
    """

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv1d:
        return _init_conv(
            self, Conv1d, (self.channels_in, self.channels_out), device,
            lambda layer: resolve_conv_padding_1d(layer, self.padding, self.kernel_size, self.dilation),
        )


class Conv1d(_ConvLayer):
    """1-D convolution: ``[N, C_in, L] -> [N, C_out, L_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, K]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: int = 1
    padding: int | tuple[int, int] = 0  # (left, right) when asymmetric
    dilation: int = 1
    groups: int = 1

    _op = staticmethod(F.conv1d)


@config
class Conv2dConfig:
    """Builds a `Conv2d`: input ``[N, C_in, H, W]``.

    Attributes:
        channels: ``(C_in, C_out)``.
        kernel_size: ``(KH, KW)``.
        padding: ``"valid"``, ``"same"``, ``(PH, PW)`` or Burn's asymmetric
            ``(top, left, bottom, right)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv2dConfig((3, 8), (3, 3), padding="same").init(device)  # doctest: +SKIP
        >>> layer(x).shape  # x: [2, 3, 32, 32]  # doctest: +SKIP
        (2, 8, 32, 32)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding: PaddingConfig2d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv2d:
        return _init_conv(
            self, Conv2d, self.channels, device,
            lambda layer: resolve_conv_padding_2d(layer, self.padding, self.kernel_size, self.dilation),
        )


class Conv2d(_ConvLayer):
    """2-D convolution: ``[N, C_in, H, W] -> [N, C_out, H_out, W_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    # ((top, bottom), (left, right)) when asymmetric
    padding: tuple[int, int] | tuple[tuple[int, int], tuple[int, int]] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    _op = staticmethod(F.conv2d)


@config
class ConvTranspose2dConfig:
    """Builds a `ConvTranspose2d`: input ``[N, C_in, H, W]``, output size per axis
    ``(H - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Attributes:
        channels: ``(C_in, C_out)``.
        padding_out: extra size added on one side of the output (smaller than stride or dilation).
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose2d:
        return _init_conv(self, ConvTranspose2d, self.channels, device)


class ConvTranspose2d(_ConvTransposeLayer):
    """2-D transposed convolution (the gradient of `Conv2d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    _op = staticmethod(F.conv_transpose2d)


@config
class Conv3dConfig:
    """Builds a `Conv3d`: input ``[N, C_in, D, H, W]``.

    Attributes:
        channels: ``(C_in, C_out)``.
        kernel_size: ``(KD, KH, KW)``.
        padding: ``"valid"``, ``"same"`` or ``(PD, PH, PW)``.

    Example:
        >>> from burn import nn
        >>> layer = nn.Conv3dConfig((2, 4), (3, 3, 3), padding="same").init()
        >>> layer.weight.shape, layer.padding
        ((4, 2, 3, 3, 3), (1, 1, 1))
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1
    padding: PaddingConfig3d = "valid"
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> Conv3d:
        return _init_conv(
            self, Conv3d, self.channels, device,
            lambda layer: resolve_padding_3d(layer, self.padding, self.kernel_size, self.dilation),
        )


class Conv3d(_ConvLayer):
    """3-D convolution: ``[N, C_in, D, H, W] -> [N, C_out, D_out, H_out, W_out]``.

    Attributes:
        weight: ``[C_out, C_in / groups, KD, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1

    _op = staticmethod(F.conv3d)


@config
class ConvTranspose1dConfig:
    """Builds a `ConvTranspose1d`: input ``[N, C_in, L]``, output length
    ``(L - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Attributes:
        channels: ``(C_in, C_out)``.
        padding_out: extra length added at the end of the output (smaller than stride or dilation).

    Example:
        >>> from burn import nn
        >>> nn.ConvTranspose1dConfig((4, 2), 3, stride=2).init().weight.shape
        (4, 2, 3)
    """

    channels: tuple[int, int]
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    padding: int = 0
    padding_out: int = 0
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose1d:
        return _init_conv(self, ConvTranspose1d, self.channels, device)


class ConvTranspose1d(_ConvTransposeLayer):
    """1-D transposed convolution (the gradient of `Conv1d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, K]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: int = 1
    padding: int = 0
    padding_out: int = 0
    dilation: int = 1
    groups: int = 1

    _op = staticmethod(F.conv_transpose1d)


@config
class ConvTranspose3dConfig:
    """Builds a `ConvTranspose3d`: input ``[N, C_in, D, H, W]``, output size per axis
    ``(D - 1) * stride - 2 * padding + dilation * (K - 1) + padding_out + 1``.

    Example:
        >>> from burn import nn
        >>> nn.ConvTranspose3dConfig((4, 2), (2, 2, 2), stride=(2, 2, 2)).init().weight.shape
        (4, 2, 2, 2, 2)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int, int]
    stride: tuple[int, int, int] = (1, 1, 1)
    dilation: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    padding_out: tuple[int, int, int] = (0, 0, 0)
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> ConvTranspose3d:
        return _init_conv(self, ConvTranspose3d, self.channels, device)


class ConvTranspose3d(_ConvTransposeLayer):
    """3-D transposed convolution (the gradient of `Conv3d` w.r.t. its input).

    Attributes:
        weight: ``[C_in, C_out / groups, KD, KH, KW]``.
        bias: ``[C_out]`` or None.
    """

    weight: Param
    bias: Param | None
    stride: tuple[int, int, int] = (1, 1, 1)
    padding: tuple[int, int, int] = (0, 0, 0)
    padding_out: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    groups: int = 1

    _op = staticmethod(F.conv_transpose3d)
