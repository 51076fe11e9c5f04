"""Forward side of the window and sampling module ops: ``unfold4d``/``fold4d`` (im2col and
col2im), ``deform_conv2d`` and ``grid_sample_2d``.

``unfold4d`` and ``fold4d`` are each other's adjoint, so each records one node whose rule is a
call of the other on the inner backend. Deformable convolution and grid sampling have no rule:
their gradients (bilinear weights differentiated with respect to the sampling positions, sums
over taps and groups) are exactly what burn-core's compositions record, and a hand-written rule
would repeat that composition. They run the inner op when nothing is tracked and record the
composition otherwise (`burn_autodiff.ops_composed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, unary
from burn_autodiff.ops_composed import inner_or_default, records_no_node

if TYPE_CHECKING:
    from burn.backend import Backend

Pair = tuple[int, int]


class AutodiffModuleExtraOps:
    """Window and sampling module ops of `Autodiff` (mixed into it)."""

    _in: Backend

    def unfold4d(self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> AD:
        i = self._in
        out = i.unfold4d(x.p, kernel_size, stride, padding, dilation)
        n = x.node
        if n is None:
            return AD(out, None)
        size = tuple(i.float_shape(x.p)[2:])
        return AD(out, Node((n,), R.unfold4d, (size, kernel_size, stride, padding, dilation)))

    def fold4d(
        self, cols: AD, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> AD:
        out = self._in.fold4d(cols.p, output_size, kernel_size, stride, padding, dilation)
        return unary(out, cols, R.fold4d, (kernel_size, stride, padding, dilation))

    @records_no_node
    def deform_conv2d(
        self, x: AD, offset: AD, weight: AD, mask: AD | None, bias: AD | None, stride: Pair, padding: Pair,
        dilation: Pair, weight_groups: int, offset_groups: int,
    ) -> AD:
        out: AD = inner_or_default(
            self, "deform_conv2d", x, offset, weight, mask, bias, stride, padding, dilation, weight_groups,
            offset_groups,
        )
        return out

    @records_no_node
    def grid_sample_2d(self, x: AD, grid: AD, mode: Any, padding_mode: Any, align_corners: bool) -> AD:
        out: AD = inner_or_default(self, "grid_sample_2d", x, grid, mode, padding_mode, align_corners)
        return out
