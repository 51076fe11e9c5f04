"""`QuantScheme`: how values are stored (int8, int4, uint4), over what each scale is shared
(the whole tensor, a channel, a block of values) and whether a zero point shifts the range.

The integer ranges, and how a scale (and zero point) is found from the values it covers
(``amax = max|x|``, ``lo = min(min x, 0)``, ``hi = max(max x, 0)``):

============  ==========  ===========  ====================================================
value         symmetric   affine       scale, zero point
============  ==========  ===========  ====================================================
``int8``      [-127, 127] [-128, 127]  symmetric: ``amax / 127``, 0;
``int4``      [-7, 7]     [-8, 7]      affine: ``(hi - lo) / (qmax - qmin)``,
``uint4``     (affine)    [0, 15]      ``clamp(qmin - round(lo / scale), qmin, qmax)``
============  ==========  ===========  ====================================================

A scale of 0 (values all zero) is stored as 1, so that every value quantizes to the zero point
and dequantizes to 0 exactly. Symmetric ranges leave out the most negative integer so that the
range is its own negation, as Burn's symmetric schemes do. The range holds 0 in affine mode
(``lo <= 0 <= hi``), so zero (padding, ReLU outputs) is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from burn.foundations.dtype import DType

QuantValue = Literal["int8", "int4", "uint4"]
QuantLevel = Literal["tensor", "channel", "block"]
QuantMode = Literal["symmetric", "affine"]
Activations = Literal["none", "dynamic", "static"]

_VALUES = ("int8", "int4", "uint4")
_LEVELS = ("tensor", "channel", "block")
_MODES = ("symmetric", "affine")
_ACTIVATIONS = ("none", "dynamic", "static")


@dataclass(frozen=True)
class QuantScheme:
    """A quantization scheme for a tensor (and, for modules, its activations).

    Attributes:
        value: the stored integer type: ``"int8"``, or ``"int4"`` / ``"uint4"`` packed two to a
            byte (uint8 storage).
        level: what one scale covers: ``"tensor"``, ``"channel"`` (one per index of `axis`) or
            ``"block"`` (`block_size` consecutive values along the last dim).
        mode: ``"symmetric"`` (zero point 0) or ``"affine"`` (a zero point per scale).
        axis: the channel dim for ``level="channel"``.
        block_size: values per block for ``level="block"`` (even, so blocks pack whole bytes).
        activations: for `burn.quantization.quantize` of a module: ``"dynamic"`` quantizes a
            Linear's input per row to int8 at run time and multiplies in integers (needs int8
            symmetric per-channel weights); ``"static"`` quantizes the input of a Linear and
            a Conv2d with a scale and zero point calibrated beforehand
            (`burn.quantization.calibrate`) and sums in int32; ``"none"`` dequantizes the
            weights on the fly.

    Example:
        >>> QuantScheme.parse("int4-weight")
        QuantScheme(value='int4', level='block', mode='symmetric', axis=0, block_size=32, activations='none')
        >>> QuantScheme("int8").range()
        (-127, 127)
    """

    value: QuantValue = "int8"
    level: QuantLevel = "tensor"
    mode: QuantMode = "symmetric"
    axis: int = 0
    block_size: int = 32
    activations: Activations = "none"

    def __post_init__(self) -> None:
        for field, allowed in (
            ("value", _VALUES),
            ("level", _LEVELS),
            ("mode", _MODES),
            ("activations", _ACTIVATIONS),
        ):
            got = getattr(self, field)
            if got not in allowed:
                raise ValueError(f"QuantScheme: {field} must be one of {', '.join(allowed)}, got {got!r}")
        if self.value == "uint4" and self.mode != "affine":
            raise ValueError("QuantScheme: uint4 has no symmetric range; use mode='affine' (or int4)")
        if self.level == "block" and (self.block_size < 2 or self.block_size % 2):
            raise ValueError(f"QuantScheme: block_size must be an even number >= 2, got {self.block_size}")
        if self.activations != "none" and (self.value, self.mode) != ("int8", "symmetric"):
            raise ValueError(
                f"QuantScheme: {self.activations} activation quantization multiplies int8 by int8 and needs "
                f"value='int8', mode='symmetric' weights, got value={self.value!r}, mode={self.mode!r}"
            )

    @classmethod
    def parse(cls, scheme: QuantScheme | str) -> QuantScheme:
        """A scheme, or one of the names: ``"int8"`` (int8 weights, symmetric per output channel,
        with dynamic int8 activations), ``"int8-weight"`` (the same weights, dequantized on the
        fly), ``"int8-static"`` (the same weights, activations quantized with calibrated
        parameters: `burn.quantization.calibrate`) and ``"int4-weight"`` (int4 symmetric per
        block of 32, dequantized on the fly)."""
        if isinstance(scheme, QuantScheme):
            return scheme
        named = {
            "int8": cls("int8", "channel", "symmetric", activations="dynamic"),
            "int8-weight": cls("int8", "channel", "symmetric"),
            "int8-static": cls("int8", "channel", "symmetric", activations="static"),
            "int4-weight": cls("int4", "block", "symmetric", block_size=32),
        }
        if not isinstance(scheme, str) or scheme not in named:
            raise ValueError(
                f"unknown quantization scheme {scheme!r}: expected a QuantScheme or one of "
                f"{', '.join(repr(n) for n in named)}"
            )
        return named[scheme]

    @property
    def packed(self) -> bool:
        """Whether two values share a byte (4-bit values)."""
        return self.value != "int8"

    @property
    def bits(self) -> int:
        """Bits per stored value."""
        return 8 if self.value == "int8" else 4

    def range(self) -> tuple[int, int]:
        """The integer range ``(qmin, qmax)`` values are clamped to."""
        if self.value == "uint4":
            return 0, 15
        top = (1 << (self.bits - 1)) - 1
        return (-top, top) if self.mode == "symmetric" else (-top - 1, top)

    @property
    def storage_dtype(self) -> DType:
        """The dtype of the stored values: int8, or uint8 holding two 4-bit values per byte."""
        return DType.I8 if self.value == "int8" else DType.U8

    @property
    def zero_point_dtype(self) -> DType:
        """The dtype zero points are kept in (affine mode)."""
        return DType.U8 if self.value == "uint4" else DType.I8
