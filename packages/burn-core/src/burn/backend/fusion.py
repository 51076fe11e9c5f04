"""The fusion contract: what a backend implements so that the ``fusion`` decorator can wrap it.

``fusion(inner)`` (package burn-fusion) records element-wise ops lazily as `burn.backend.ir`
records and hands groups of them to `inner` as one `FusedBlock`. A backend opts in with three
methods (a structural protocol: no base class to inherit):

- ``fusion_ops()``: the names of the `burn.backend.ir.ELEMENTWISE` ops its fused kernels can
  compute. Others are run one by one, as usual.
- ``fusion_dtypes()``: the dtypes its fused kernels can read, compute and write. An op touching
  another dtype is run one by one.
- ``fusion_execute(block, inputs)``: compile (once per ``block.signature()`` and input layout) and
  launch one kernel computing `block`; `inputs` are the backend's own primitives for
  ``block.inputs``, all on one device; returns new primitives for ``block.outputs``, in order, each
  contiguous with its own shape and dtype. Results must equal running the ops one by one up to
  the dtype's rounding (values kept in registers are not rounded to storage between ops).

One method is optional, for backends that also fuse a reduction with its element-wise prologue:

- ``fusion_reduce_ops()``: the names of the `burn.backend.ir.REDUCTIONS` (``float_sum_dim``,
  ``float_mean_dim``...) that may end a block. `fusion_execute` then also receives blocks whose
  ``reduce`` is set: it computes the block's ops at each element, reduces ``reduce.input`` along
  ``reduce.dim`` in the same kernel (or pass, for long dims), and returns the primitives for
  ``block.outputs`` followed by the reduction's result (keepdim shape). A backend without the
  method never receives such blocks: reductions then run on their own, after their prologue's
  block.

Two more optional methods let a chain go on past such a reduction (layer norm, softmax: the
reduced value feeds element-wise ops over the same rows), so the whole chain runs as one kernel:

- ``fusion_rows(op, shape, dim, dtype)``: whether ops may keep reading a block of `shape` after its
  reduction `op` along `dim` (the backend's row kernels take that chain).
- ``fusion_execute_rows(blocks, values)``: run the chain of `blocks` (each ending in a reduction
  but the last) as one kernel; `values` maps ids to the backend's primitives; returns each block's
  outputs and reduction results by id, or None to decline (burn-fusion then runs the blocks one
  by one with ``fusion_execute``).

Example:
    >>> from burn.backend.fusion import supports_fusion
    >>> class NoFusion: ...
    >>> supports_fusion(NoFusion())
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from burn.backend.ir import REDUCTIONS, FusedBlock
from burn.foundations.dtype import DType


@runtime_checkable
class FusionBackend(Protocol):
    """A backend that compiles and launches fused element-wise kernels (see the module docstring)."""

    def fusion_ops(self) -> frozenset[str]:
        """Names of the element-wise IR ops the fused kernels support."""
        ...

    def fusion_dtypes(self) -> frozenset[DType]:
        """Dtypes the fused kernels can read, compute in and write."""
        ...

    def fusion_execute(self, block: FusedBlock, inputs: Sequence[Any]) -> list[Any]:
        """Run `block` as one kernel over `inputs`; new primitives for ``block.outputs``."""
        ...


def supports_fusion(backend: object) -> bool:
    """Whether `backend` implements the fusion contract."""
    return isinstance(backend, FusionBackend)


def fused_reductions(backend: object) -> frozenset[str]:
    """The reductions `backend` fuses with their prologue (its optional ``fusion_reduce_ops()``,
    kept to `burn.backend.ir.REDUCTIONS`); empty when it has no such method.

    Example:
        >>> fused_reductions(object())
        frozenset()
    """
    method = getattr(backend, "fusion_reduce_ops", None)
    if method is None:
        return frozenset()
    return frozenset(method()) & REDUCTIONS


__all__ = ["FusionBackend", "fused_reductions", "supports_fusion"]
