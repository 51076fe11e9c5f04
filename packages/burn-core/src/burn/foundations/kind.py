"""Tensor kinds: `Float`, `Int` and `Bool`, as in Burn."""

from __future__ import annotations

from burn.foundations.dtype import DType


class Kind:
    """The kind of a tensor. There are exactly three instances: `Float`, `Int`, `Bool`.

    The kind picks the family of backend ops (``float_*``, ``int_*``, ``bool_*``) a tensor
    dispatches to; the dtype is the precise element type within the kind.

    Example:
        >>> from burn import Float, Int
        >>> Float.name, Int.accepts(DType.I32)
        ('Float', True)
    """

    __slots__ = ("name", "prefix")

    def __init__(self, name: str, prefix: str) -> None:
        self.name = name
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"burn.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    def accepts(self, dtype: DType) -> bool:
        """Whether `dtype` belongs to this kind."""
        if self is Float:
            return dtype.is_float
        if self is Int:
            return dtype.is_int
        return dtype.is_bool

    @staticmethod
    def of(dtype: DType) -> Kind:
        """The kind a dtype belongs to."""
        if dtype.is_float:
            return Float
        if dtype.is_int:
            return Int
        return Bool


Float = Kind("Float", "float_")
Int = Kind("Int", "int_")
Bool = Kind("Bool", "bool_")
