"""Casts between kinds and dtypes: `int()`, `float()`, `bool()`, `cast(dtype)`,
`to_full_precision()`.

The methods are named after the builtins (as in Burn), so this class body annotates with
``builtins.*`` where it means the Python types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import DTypeError
from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int
from burn.tensor._base import wrap
from burn.tensor.tensor_ops_index import IndexOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

_HALF = (DType.F16, DType.BF16)


class CastOps(IndexOps):
    """Cast ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    def int(self) -> Tensor:
        """An Int tensor in the backend's int dtype (floats truncate toward zero, bools give 0/1).

        Example:
            >>> Tensor.from_data([1.7, -1.7]).int().tolist()  # doctest: +SKIP
            [1, -1]
        """
        b = self._b
        k = self._k
        target = b.int_dtype
        if k is Float:
            return wrap(b.float_into_int(self._p, target), b, Int)
        if k is Int:
            if b.int_get_dtype(self._p) is target:
                return self  # type: ignore[return-value]
            return wrap(b.int_cast(self._p, target), b, Int)
        return wrap(b.bool_into_int(self._p, target), b, Int)

    def float(self) -> Tensor:
        """A Float tensor in the backend's float dtype."""
        b = self._b
        k = self._k
        target = b.float_dtype
        if k is Float:
            if b.float_get_dtype(self._p) is target:
                return self  # type: ignore[return-value]
            return wrap(b.float_cast(self._p, target), b, Float)
        if k is Int:
            return wrap(b.int_into_float(self._p, target), b, Float)
        return wrap(b.bool_into_float(self._p, target), b, Float)

    def bool(self) -> Tensor:
        """A Bool tensor: true where the values are nonzero."""
        k = self._k
        if k is Bool:
            return self  # type: ignore[return-value]
        if k is Float:
            return wrap(self._b.float_not_equal_elem(self._p, 0.0), self._b, Bool)
        return wrap(self._b.int_not_equal_elem(self._p, 0), self._b, Bool)

    def cast(self, dtype: DType | str) -> Tensor:
        """The values in `dtype` (any dtype the backend declares); the kind follows the dtype.

        Example:
            >>> Tensor.from_data([1.5]).cast("float16").dtype  # doctest: +SKIP
            burn.float16

        Raises:
            DTypeError: the backend does not declare `dtype`, or it is not a dtype at all.
        """
        try:
            target = DType.from_any(dtype)
        except ValueError as exc:
            raise DTypeError(f"cast: {exc}") from None
        b = self._b
        if not b.capabilities.supports(target):
            declared = ", ".join(d.value for d in DType if b.capabilities.supports(d))
            raise DTypeError(
                f"cast: backend {b.name!r} does not support {target.value} (it declares {declared})"
            )
        k = self._k
        if target is DType.BOOL:
            return self.bool()
        if k is Float:
            if target.is_float:
                if b.float_get_dtype(self._p) is target:
                    return self  # type: ignore[return-value]
                return wrap(b.float_cast(self._p, target), b, Float)
            return wrap(b.float_into_int(self._p, target), b, Int)
        if k is Int:
            if target.is_int:
                if b.int_get_dtype(self._p) is target:
                    return self  # type: ignore[return-value]
                return wrap(b.int_cast(self._p, target), b, Int)
            return wrap(b.int_into_float(self._p, target), b, Float)
        if target.is_float:
            return wrap(b.bool_into_float(self._p, target), b, Float)
        return wrap(b.bool_into_int(self._p, target), b, Int)

    def to_full_precision(self) -> Tensor:
        """float16/bfloat16 tensors as float32 (for numerically sensitive steps); others unchanged."""
        if self._k is Float and self._b.float_get_dtype(self._p) in _HALF:
            return self.cast(DType.F32)
        return self  # type: ignore[return-value]
