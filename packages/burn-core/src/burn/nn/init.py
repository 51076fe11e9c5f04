"""Parameter initializers (Burn's ``Initializer``) and the fan-in / fan-out of layer shapes.

Each variant is a small frozen value usable as a config field: it saves to JSON the way Burn's
serde does (``"Zeros"``, ``{"KaimingUniform": {"gain": 0.577, "fan_out_only": false}}``) and
loads back. Layers call `Initializer.init_param`, which returns a *lazy* `Param`: nothing is drawn
until the param is first used, so a model built only to load a record never runs an initializer.

Formulas (as Burn's): Kaiming ``std = gain / sqrt(fan)`` with ``fan = fan_out if fan_out_only
else fan_in``, uniform bound ``sqrt(3) * std``; Xavier ``std = gain * sqrt(2 / (fan_in +
fan_out))``, uniform bound ``sqrt(3) * std``.

Example:
    >>> import burn
    >>> from burn.nn import Initializer
    >>> B = burn.backend("ndarray")  # doctest: +SKIP
    >>> init = Initializer.KaimingUniform(gain=1.0)
    >>> w = init.init_with((4, 3), B.default_device(), fan_in=4)  # doctest: +SKIP
    >>> bool((w.abs() <= 3 ** 0.5 / 2).all())  # doctest: +SKIP
    True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from burn.errors import ConfigError
from burn.foundations.distribution import Normal as _NormalDist
from burn.foundations.distribution import Uniform as _UniformDist
from burn.module.param import Param
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "Constant",
    "Initializer",
    "KaimingNormal",
    "KaimingUniform",
    "Normal",
    "Ones",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
    "Zeros",
    "conv_fans",
    "linear_fans",
]

Shape = tuple[int, ...]


class Initializer:
    """How a parameter tensor gets its first values; the variants are the subclasses below
    (also reachable as ``Initializer.KaimingUniform`` and so on, like Burn's enum)."""

    __slots__ = ()

    # Filled in below, after the variants exist (gives ``Initializer.Zeros()`` etc.).
    Constant: ClassVar[type[Constant]]
    Ones: ClassVar[type[Ones]]
    Zeros: ClassVar[type[Zeros]]
    Uniform: ClassVar[type[Uniform]]
    Normal: ClassVar[type[Normal]]
    KaimingUniform: ClassVar[type[KaimingUniform]]
    KaimingNormal: ClassVar[type[KaimingNormal]]
    XavierUniform: ClassVar[type[XavierUniform]]
    XavierNormal: ClassVar[type[XavierNormal]]

    # -- drawing --------------------------------------------------------------------------------
    def init_with(
        self, shape: Sequence[int], device: Device, fan_in: int | None = None, fan_out: int | None = None
    ) -> Tensor:
        """A new tensor of `shape` on `device` (the single place every initializer runs).

        Raises:
            ValueError: the variant needs `fan_in` / `fan_out` and it was not given.
        """
        return self._draw(tuple(shape), device, fan_in, fan_out)

    def init(self, shape: Sequence[int], device: Device) -> Tensor:
        """`init_with` without fans (Kaiming and Xavier variants need them and raise)."""
        return self.init_with(shape, device)

    def init_param(
        self,
        shape: Sequence[int],
        device: Device,
        fan_in: int | None = None,
        fan_out: int | None = None,
        *,
        require_grad: bool = True,
    ) -> Param:
        """A lazy `Param`: the draw runs on the param's first use, on the param's device then.

        Missing fans are reported now, not at first use.
        """
        self.check_fans(fan_in, fan_out)
        shape = tuple(int(d) for d in shape)

        def draw(dev: Device, _require_grad: bool) -> Tensor:
            return self.init_with(shape, dev, fan_in, fan_out)

        return Param.uninitialized(draw, shape, device, require_grad=require_grad)

    def check_fans(self, fan_in: int | None, fan_out: int | None) -> None:
        """Raise ValueError if this variant needs a fan that is missing."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} is not an initializer variant")

    # -- config (JSON) hooks: see burn.module.config ----------------------------------------------
    def __config_encode__(self) -> Any:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return {type(self).__name__: fields} if fields else type(self).__name__

    @classmethod
    def __config_decode__(cls, data: Any, where: str) -> Initializer:
        if isinstance(data, Initializer):
            return data
        fields: Any
        if isinstance(data, str):
            name, fields = data, {}
        elif isinstance(data, dict) and len(data) == 1:
            ((name, fields),) = data.items()
            fields = {} if fields is None else fields
        else:
            raise ConfigError(
                f'{where}: expected an initializer such as "Zeros" or '
                f'{{"KaimingUniform": {{...}}}}, got {data!r}'
            )
        variant = _VARIANTS.get(name)
        if variant is None or not issubclass(variant, cls):
            raise ConfigError(f"{where}: unknown initializer {name!r}; known: {', '.join(_VARIANTS)}")
        if not isinstance(fields, dict):
            raise ConfigError(f"{where}: the fields of {name} must be a JSON object, got {fields!r}")
        known = {f.name for f in dataclasses.fields(variant)}  # type: ignore[arg-type]
        unknown = sorted(set(fields) - known)
        if unknown:
            raise ConfigError(f"{where}: {name} has no field(s) {', '.join(map(repr, unknown))}")
        try:
            return variant(**fields)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {name}: {exc}") from None


def _number(owner: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner}.{name} must be a number, got {type(value).__name__} {value!r}")
    return float(value)


def _flag(owner: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{owner}.{name} must be a bool, got {type(value).__name__} {value!r}")
    return value


def _need(variant: str, what: str, fan: int | None) -> int:
    if fan is None:
        raise ValueError(f"{variant} initialization needs {what}; pass it to init_with / init_param")
    if fan <= 0:
        raise ValueError(f"{variant} initialization needs a positive {what}, got {fan}")
    return fan


@dataclasses.dataclass(frozen=True)
class Constant(Initializer):
    """Every element is `value`."""

    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _number("Constant", "value", self.value))

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.full(shape, self.value, device=device)


@dataclasses.dataclass(frozen=True)
class Ones(Initializer):
    """Every element is 1."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.ones(shape, device=device)


@dataclasses.dataclass(frozen=True)
class Zeros(Initializer):
    """Every element is 0."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.zeros(shape, device=device)


@dataclasses.dataclass(frozen=True)
class Uniform(Initializer):
    """Uniform on ``[min, max)``."""

    min: float
    max: float

    def __post_init__(self) -> None:
        lo, hi = _number("Uniform", "min", self.min), _number("Uniform", "max", self.max)
        if lo > hi:
            raise ValueError(f"Uniform: min {lo} is greater than max {hi}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.random(shape, _UniformDist(self.min, self.max), device=device)


@dataclasses.dataclass(frozen=True)
class Normal(Initializer):
    """Gaussian with `mean` and standard deviation `std`."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        std = _number("Normal", "std", self.std)
        if std < 0:
            raise ValueError(f"Normal: std must be >= 0, got {std}")
        object.__setattr__(self, "mean", _number("Normal", "mean", self.mean))
        object.__setattr__(self, "std", std)

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.random(shape, _NormalDist(self.mean, self.std), device=device)


@dataclasses.dataclass(frozen=True)
class _Kaiming(Initializer):
    gain: float = 1.0
    fan_out_only: bool = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        object.__setattr__(self, "gain", _number(name, "gain", self.gain))
        object.__setattr__(self, "fan_out_only", _flag(name, "fan_out_only", self.fan_out_only))

    def check_fans(self, fan_in: int | None, fan_out: int | None) -> None:
        self._std(fan_in, fan_out)

    def _std(self, fan_in: int | None, fan_out: int | None) -> float:
        name = type(self).__name__
        fan = _need(name, "fan_out", fan_out) if self.fan_out_only else _need(name, "fan_in", fan_in)
        return self.gain / math.sqrt(fan)


@dataclasses.dataclass(frozen=True)
class KaimingUniform(_Kaiming):
    """Uniform on ``[-a, a]``, ``a = gain * sqrt(3 / fan)`` (He et al.). Layers default to
    ``gain = 1 / sqrt(3)``, i.e. ``a = 1 / sqrt(fan_in)``, PyTorch's default for Linear/Conv."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        a = math.sqrt(3.0) * self._std(fan_in, fan_out)
        return Tensor.random(shape, _UniformDist(-a, a), device=device)


@dataclasses.dataclass(frozen=True)
class KaimingNormal(_Kaiming):
    """Gaussian with ``std = gain / sqrt(fan)`` (He et al.)."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.random(shape, _NormalDist(0.0, self._std(fan_in, fan_out)), device=device)


@dataclasses.dataclass(frozen=True)
class _Xavier(Initializer):
    gain: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "gain", _number(type(self).__name__, "gain", self.gain))

    def check_fans(self, fan_in: int | None, fan_out: int | None) -> None:
        self._std(fan_in, fan_out)

    def _std(self, fan_in: int | None, fan_out: int | None) -> float:
        name = type(self).__name__
        total = _need(name, "fan_in", fan_in) + _need(name, "fan_out", fan_out)
        return self.gain * math.sqrt(2.0 / total)


@dataclasses.dataclass(frozen=True)
class XavierUniform(_Xavier):
    """Uniform on ``[-a, a]``, ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio)."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        a = math.sqrt(3.0) * self._std(fan_in, fan_out)
        return Tensor.random(shape, _UniformDist(-a, a), device=device)


@dataclasses.dataclass(frozen=True)
class XavierNormal(_Xavier):
    """Gaussian with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot & Bengio)."""

    def _draw(self, shape: Shape, device: Device, fan_in: int | None, fan_out: int | None) -> Tensor:
        return Tensor.random(shape, _NormalDist(0.0, self._std(fan_in, fan_out)), device=device)


_VARIANTS: dict[str, type[Initializer]] = {
    cls.__name__: cls
    for cls in (
        Constant,
        Ones,
        Zeros,
        Uniform,
        Normal,
        KaimingUniform,
        KaimingNormal,
        XavierUniform,
        XavierNormal,
    )
}
for _name, _cls in _VARIANTS.items():
    setattr(Initializer, _name, _cls)


# -- fans ---------------------------------------------------------------------------------------
def linear_fans(d_input: int, d_output: int) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a Linear weight ``[d_input, d_output]``."""
    return d_input, d_output


def conv_fans(
    channels_in: int, channels_out: int, kernel_size: Sequence[int], groups: int = 1
) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a convolution: ``channels / groups * prod(kernel_size)`` each (as
    Burn). For a transposed convolution pass the channels swapped: its fan-in counts the output
    channels that each input value reaches."""
    k = math.prod(kernel_size)
    return channels_in // groups * k, channels_out // groups * k


DEFAULT_LAYER_INIT = KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)
"""Burn's default for Linear, Conv, attention and SwiGlu weights: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
