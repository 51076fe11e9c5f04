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
from burn_autodiff.node import Node

Triple = tuple[int, int, int]

# The backward helpers of these ops, called on the autodiff backend itself (see `ops_module`).
BACKWARD_HELPERS_3D = (
    "conv3d_x_backward", "conv3d_weight_backward", "conv_transpose3d_x_backward",
    "conv_transpose3d_weight_backward", "max_pool3d_with_indices_backward", "avg_pool3d_backward",
    "adaptive_avg_pool3d_backward",
)


def _conv(out: Any, x: AD, weight: AD, bias: AD | None, rule: Any, saved: tuple) -> AD:
    parents = (x.node, weight.node, None if bias is None else bias.node)
    if parents == (None, None, None):
        return AD(out, None)
    return AD(out, Node(parents, rule, saved))


class AutodiffModuleOps3d:
    """3-D module ops and 1-D/3-D transposed convolutions of `Autodiff`."""

    _in: Backend

    def conv3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, dilation: Triple,
        groups: int,
    ) -> AD:
        b = None if bias is None else bias.p
        out = self._in.conv3d(x.p, weight.p, b, stride, padding, dilation, groups)
        return _conv(out, x, weight, bias, R.conv3d, (x.p, weight.p, stride, padding, dilation, groups))

    def conv_transpose1d(
        self, x: AD, weight: AD, bias: AD | None, stride: int, padding: int, padding_out: int, dilation: int,
        groups: int,
    ) -> AD:
        b = None if bias is None else bias.p
        out = self._in.conv_transpose1d(x.p, weight.p, b, stride, padding, padding_out, dilation, groups)
        saved = (x.p, weight.p, stride, padding, padding_out, dilation, groups)
        return _conv(out, x, weight, bias, R.conv_transpose1d, saved)

    def conv_transpose3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> AD:
        b = None if bias is None else bias.p
        out = self._in.conv_transpose3d(x.p, weight.p, b, stride, padding, padding_out, dilation, groups)
        saved = (x.p, weight.p, stride, padding, padding_out, dilation, groups)
        return _conv(out, x, weight, bias, R.conv_transpose3d, saved)

    def max_pool3d_with_indices(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[AD, Any]:
        out, indices = self._in.max_pool3d_with_indices(x.p, kernel_size, stride, padding, dilation)
        n = x.node
        if n is None:
            return AD(out, None), indices
        saved = (x.p, indices, kernel_size, stride, padding, dilation)
        return AD(out, Node((n,), R.max_pool3d, saved)), indices

    def max_pool3d(self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> AD:
        if x.node is None:
            return AD(self._in.max_pool3d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool3d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def avg_pool3d(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
    ) -> AD:
        out = self._in.avg_pool3d(x.p, kernel_size, stride, padding, count_include_pad)
        n = x.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), R.avg_pool3d, (x.p, kernel_size, stride, padding, count_include_pad)))

    def adaptive_avg_pool3d(self, x: AD, output_size: Triple) -> AD:
        out = self._in.adaptive_avg_pool3d(x.p, output_size)
        n = x.node
        return AD(out, None if n is None else Node((n,), R.adaptive_avg_pool3d, (x.p,)))
