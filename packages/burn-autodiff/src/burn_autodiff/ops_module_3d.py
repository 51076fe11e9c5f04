"""Forward side of the 3-D convolution and pooling ops and of the 1-D/3-D transposed
convolutions (mixed into `burn_autodiff.ops_module.AutodiffModuleOps`).

Same pattern as the 2-D ops: compute on the inner backend, record a node with a rule from
`burn_autodiff.rules` when an input is tracked; the rules call the inner backend's ``*_backward``
helpers (``conv3d_x_backward``...), so a backend that overrides them speeds up training too.
"""

from __future__ import annotations

from typing import Any

from burn.backend import Backend
from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, unary

Triple = tuple[int, int, int]

# One recording pattern for every module op, of any rank (the 1-D/2-D ops in `ops_module` too).
def _conv(op: Any, rule: Any, x: AD, weight: AD, bias: AD | None, *hyper: Any) -> AD:
    """The inner convolution `op` (any rank, plain or transposed: ``op(x, weight, bias, *hyper)``),
    with a node on `rule` when the input, weight or bias is tracked; the rule gets
    ``(x, weight, *hyper)``."""
    out = op(x.p, weight.p, None if bias is None else bias.p, *hyper)
    parents = (x.node, weight.node, None if bias is None else bias.node)
    if parents == (None, None, None):
        return AD(out, None)
    return AD(out, Node(parents, rule, (x.p, weight.p, *hyper)))


def _max_pool_with_indices(op: Any, rule: Any, x: AD, *sizes: Any) -> tuple[AD, Any]:
    """The inner ``max_poolNd_with_indices`` `op`; the indices are saved for the rule."""
    out, indices = op(x.p, *sizes)
    return unary(out, x, rule, (x.p, indices, *sizes)), indices


class AutodiffModuleOps3d:
    """3-D module ops and 1-D/3-D transposed convolutions of `Autodiff`."""

    _in: Backend

    def conv3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, dilation: Triple,
        groups: int,
    ) -> AD:
        return _conv(self._in.conv3d, R.conv3d, x, weight, bias, stride, padding, dilation, groups)

    def conv_transpose1d(
        self, x: AD, weight: AD, bias: AD | None, stride: int, padding: int, padding_out: int, dilation: int,
        groups: int,
    ) -> AD:
        op = self._in.conv_transpose1d
        return _conv(op, R.conv_transpose1d, x, weight, bias, stride, padding, padding_out, dilation, groups)

    def conv_transpose3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> AD:
        op = self._in.conv_transpose3d
        return _conv(op, R.conv_transpose3d, x, weight, bias, stride, padding, padding_out, dilation, groups)

    def max_pool3d_with_indices(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[AD, Any]:
        op = self._in.max_pool3d_with_indices
        return _max_pool_with_indices(op, R.max_pool3d, x, kernel_size, stride, padding, dilation)

    def max_pool3d(self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> AD:
        if x.node is None:
            return AD(self._in.max_pool3d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool3d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def avg_pool3d(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
    ) -> AD:
        out = self._in.avg_pool3d(x.p, kernel_size, stride, padding, count_include_pad)
        return unary(out, x, R.avg_pool3d, (x.p, kernel_size, stride, padding, count_include_pad))

    def adaptive_avg_pool3d(self, x: AD, output_size: Triple) -> AD:
        return unary(self._in.adaptive_avg_pool3d(x.p, output_size), x, R.adaptive_avg_pool3d, (x.p,))
