"""`PadMode`: how `Tensor.pad` fills the new elements, Burn's ``PadMode`` enum as a value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

PadKind = Literal["constant", "reflect", "edge"]


@dataclass(frozen=True)
class PadMode:
    """A padding mode for `Tensor.pad`, spelled as Burn's enum: ``PadMode.Constant(value)``
    fills with `value`, ``PadMode.Reflect`` mirrors without repeating the edge element (pads
    must be smaller than the dim) and ``PadMode.Edge`` repeats the edge element. A plain number
    passed where a mode is expected means ``PadMode.Constant(number)``, as Burn's
    ``From<E> for PadMode``.

    Example:
        >>> from burn import PadMode, Tensor
        >>> Tensor.from_data([1.0, 2.0, 3.0]).pad([(1, 2)], PadMode.Constant(9.0)).tolist()  # doctest: +SKIP
        [9.0, 1.0, 2.0, 3.0, 9.0, 9.0]
        >>> PadMode.Reflect
        PadMode(kind='reflect', value=0.0)
    """

    kind: PadKind = "constant"
    value: float = 0.0

    Reflect: ClassVar[PadMode]
    Edge: ClassVar[PadMode]

    def __post_init__(self) -> None:
        if self.kind not in ("constant", "reflect", "edge"):
            raise ValueError(f"PadMode: unknown kind {self.kind!r}; expected constant, reflect or edge")
        if self.kind != "constant" and self.value != 0.0:
            raise ValueError(
                f"PadMode: only the constant mode holds a value, got {self.kind} with {self.value!r}"
            )

    @staticmethod
    def Constant(value: float = 0.0) -> PadMode:  # noqa: N802 - Burn's variant name
        """Fill with `value` (Burn's ``PadMode::Constant``; its default is 0)."""
        return PadMode("constant", value)


PadMode.Reflect = PadMode("reflect")
PadMode.Edge = PadMode("edge")
