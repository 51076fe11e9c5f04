"""The bool family of the backend contract (Burn's ``BoolTensorOps``), with the float family's
conventions (`burn.backend.ops.float`). Bool scatter and select OR-accumulate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.contract import Elementwise, default, family, required
from burn.backend.ops.kinds import KindOps
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.device import Device

P = Any
Shape = tuple[int, ...]
Slices = tuple[slice, ...]


@family("bool", grad=False, bound=None, kind="bool")
class BoolOps(KindOps):
    """Bool tensor ops."""

    @required
    def bool_from_data(self, data: TensorData, device: Device) -> P: ...

    @required(host_read=True)
    def bool_into_data(self, tensor: P) -> TensorData: ...

    @required
    def bool_device(self, tensor: P) -> Device: ...

    @required
    def bool_to_device(self, tensor: P, device: Device) -> P: ...

    @required
    def bool_shape(self, tensor: P) -> Shape: ...

    @required(results=("int",))
    def bool_into_int(self, tensor: P, dtype: DType) -> P: ...

    @required(ew=Elementwise("a", result="cast", kinds=("bool",)), results=("float",))
    def bool_into_float(self, tensor: P, dtype: DType) -> P: ...

    @required(ew=Elementwise("!a", result="bool", kinds=("bool",)))
    def bool_not(self, tensor: P) -> P: ...

    @required(ew=Elementwise("a && b", 2, result="bool", kinds=("bool", "bool")))
    def bool_and(self, lhs: P, rhs: P) -> P: ...

    @required(ew=Elementwise("a || b", 2, result="bool", kinds=("bool", "bool")))
    def bool_or(self, lhs: P, rhs: P) -> P: ...

    @required(ew=Elementwise("a == b", 2, result="bool", kinds=("bool", "bool")))
    def bool_equal(self, lhs: P, rhs: P) -> P: ...

    @required(results=("int",))
    def bool_argwhere(self, tensor: P) -> P:
        """Int primitive ``[n_true, rank]`` of the true positions in row-major order."""

    @required
    def bool_reshape(self, tensor: P, shape: Shape) -> P: ...

    @required
    def bool_permute(self, tensor: P, axes: Shape) -> P: ...

    @required
    def bool_flip(self, tensor: P, axes: Shape) -> P: ...

    @required
    def bool_expand(self, tensor: P, shape: Shape) -> P: ...

    @required
    def bool_slice(self, tensor: P, slices: Slices) -> P: ...

    @required
    def bool_slice_assign(self, tensor: P, slices: Slices, value: P) -> P: ...

    @required
    def bool_cat(self, tensors: Sequence[P], dim: int) -> P: ...

    @default
    def bool_full(self, shape: Shape, value: bool, device: Device) -> P:
        return self.bool_from_data(TensorData(np.full(shape, value, dtype=np.bool_)), device)

    @default
    def bool_zeros(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, False, device)

    @default
    def bool_ones(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, True, device)

    @default
    def bool_empty(self, shape: Shape, device: Device) -> P:
        return self.bool_zeros(shape, device)

    @default
    def bool_not_equal(self, lhs: P, rhs: P) -> P:
        return self.bool_not(self.bool_equal(lhs, rhs))

    @default
    def bool_xor(self, lhs: P, rhs: P) -> P:
        return self.bool_not_equal(lhs, rhs)

    def _bool_counts(self, tensor: P, dim: int | None) -> P:
        as_int = self.bool_into_int(tensor, self.int_dtype)  # type: ignore[attr-defined]
        if dim is None:
            return self.int_sum(as_int)  # type: ignore[attr-defined]
        return self.int_sum_dim(as_int, dim)  # type: ignore[attr-defined]

    @default
    def bool_any(self, tensor: P) -> P:
        """Shape ``(1,)``: whether any element is true."""
        return self.int_greater_elem(self._bool_counts(tensor, None), 0)  # type: ignore[attr-defined]

    @default
    def bool_all(self, tensor: P) -> P:
        count = self._bool_counts(tensor, None)
        total = int(np.prod(self.bool_shape(tensor), dtype=np.int64))
        return self.int_equal_elem(count, total)  # type: ignore[attr-defined]

    @default
    def bool_any_dim(self, tensor: P, dim: int) -> P:
        return self.int_greater_elem(self._bool_counts(tensor, dim), 0)  # type: ignore[attr-defined]

    @default
    def bool_all_dim(self, tensor: P, dim: int) -> P:
        count = self._bool_counts(tensor, dim)
        return self.int_equal_elem(count, self.bool_shape(tensor)[dim])  # type: ignore[attr-defined]

    @default
    def bool_swap_dims(self, tensor: P, dim1: int, dim2: int) -> P:
        axes = list(range(len(self.bool_shape(tensor))))
        axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
        return self.bool_permute(tensor, tuple(axes))

    @default
    def bool_repeat_dim(self, tensor: P, dim: int, times: int) -> P:
        return self.bool_cat([tensor] * times, dim) if times > 0 else self.bool_slice(
            tensor, tuple(slice(0, 0 if d == dim else n) for d, n in enumerate(self.bool_shape(tensor)))
        )

    @default
    def bool_select(self, tensor: P, dim: int, indices: P) -> P:
        as_int = self.bool_into_int(tensor, self.int_dtype)  # type: ignore[attr-defined]
        return self.int_not_equal_elem(self.int_select(as_int, dim, indices), 0)  # type: ignore[attr-defined]

    @default
    def bool_gather(self, dim: int, tensor: P, indices: P) -> P:
        as_int = self.bool_into_int(tensor, self.int_dtype)  # type: ignore[attr-defined]
        return self.int_not_equal_elem(self.int_gather(dim, as_int, indices), 0)  # type: ignore[attr-defined]

    @default
    def bool_mask_where(self, tensor: P, mask: P, value: P) -> P:
        return self.bool_or(self.bool_and(tensor, self.bool_not(mask)), self.bool_and(value, mask))

    @default
    def bool_unfold(self, tensor: P, dim: int, size: int, step: int) -> P:
        return self._unfold("bool", tensor, dim, size, step)

    @default
    def bool_gather_nd(self, tensor: P, indices: P) -> P:
        return self._gather_nd("bool", tensor, indices)

    @default
    def bool_scatter_assign(self, dim: int, tensor: P, indices: P, values: P) -> P:
        out = self._scatter_assign("int", dim, self._as_int(tensor), indices, self._as_int(values))
        return self._as_bool(out)

    @default
    def bool_select_assign(self, tensor: P, dim: int, indices: P, values: P) -> P:
        out = self._select_assign("int", self._as_int(tensor), dim, indices, self._as_int(values))
        return self._as_bool(out)

    @default
    def bool_scatter_add(self, dim: int, tensor: P, indices: P, values: P) -> P:
        """Burn's bool scatter: `tensor` OR the `values` sent to `indices` along `dim`."""
        b: Any = self
        summed = b.int_scatter_add(dim, self._as_int(tensor), indices, self._as_int(values))
        return self._as_bool(summed)

    @default
    def bool_select_add(self, tensor: P, dim: int, indices: P, values: P) -> P:
        """Burn's bool select_assign: `tensor` OR the rows of `values` sent to rows `indices`."""
        b: Any = self
        summed = b.int_select_add(self._as_int(tensor), dim, indices, self._as_int(values))
        return self._as_bool(summed)
