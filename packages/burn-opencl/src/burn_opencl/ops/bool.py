"""Bool ops of the contract (`burn.backend.ops.bool`) on `CLTensor` primitives, each a thin call
into a kernel module; those every kind shares are `tensor_common`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import index as ix
from burn_opencl.kernels import reduce as rd
from burn_opencl.ops import tensor_common as c
from burn_opencl.ops.tensor_common import OpenCLTensorBase, P, Shape, flat

if TYPE_CHECKING:
    from burn.backend.device import Device

_run = ew.run
_I64 = DType.I64
_BOOL = DType.BOOL


class OpenCLBoolOps(OpenCLTensorBase):
    """The ``bool_*`` ops of `burn_opencl.OpenCL`."""

    # -- host exchange & metadata ---------------------------------------------------------------
    def bool_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "bool", self.capabilities.dtypes)

    bool_into_data = c.into_data
    bool_device = c.device
    bool_to_device = c.to_device
    bool_shape = c.shape

    def bool_into_int(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("bool_into_int", dtype, "int")
        return _run(ew.CAST, [tensor], dtype)

    def bool_into_float(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("bool_into_float", dtype, "float")
        return _run(ew.CAST, [tensor], dtype)

    # -- creation -------------------------------------------------------------------------------
    def bool_full(self, shape: Shape, value: bool, device: Device) -> P:
        return _run(
            ew.INT_FILL, [], _BOOL, (int(bool(value)),), compute=_I64, shape=tuple(shape), rt=self._rt(device)
        )

    def bool_zeros(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, False, device)

    def bool_ones(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, True, device)

    def bool_empty(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, False, device)

    # -- logic ------------------------------------------------------------------------------------
    def bool_not(self, tensor: P) -> P:
        return _run(ew.OPS["bool_not"], (tensor,), _BOOL)

    def bool_and(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_and"], (lhs, rhs), _BOOL)

    def bool_or(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_or"], (lhs, rhs), _BOOL)

    def bool_equal(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_equal"], (lhs, rhs), _BOOL)

    def bool_not_equal(self, lhs: P, rhs: P) -> P:
        return _run(ew.BOOL_NE, (lhs, rhs), _BOOL)

    bool_xor = bool_not_equal

    def bool_argwhere(self, tensor: P) -> P:
        return ix.argwhere(tensor, self.int_dtype)

    def bool_any(self, tensor: P) -> P:
        return rd.reduce_dim("any", flat(tensor), 0, _BOOL)[0]

    def bool_all(self, tensor: P) -> P:
        return rd.reduce_dim("all", flat(tensor), 0, _BOOL)[0]

    def bool_any_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("any", tensor, dim, _BOOL)[0]

    def bool_all_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("all", tensor, dim, _BOOL)[0]

    # -- layout -----------------------------------------------------------------------------------
    bool_reshape = c.reshape
    bool_permute = c.permute
    bool_flip = c.flip
    bool_expand = c.expand
    bool_slice = c.slice_
    bool_slice_assign = c.slice_assign
    bool_cat = c.cat
    bool_swap_dims = c.swap_dims
    bool_repeat_dim = c.repeat_dim

    # -- indexing ---------------------------------------------------------------------------------
    bool_gather = c.gather
    bool_select = c.select
    bool_mask_where = c.mask_where
