"""Forward side of the module ops (conv, pooling, embedding, interpolate) and activations.

Same pattern as `burn_autodiff.ops_float`: compute on the inner backend, record a node with a
rule from `burn_autodiff.rules` when an input is tracked. Rules use the inner backend's
``*_backward`` helpers, so a backend that overrides them (a fused kernel) speeds up training too.

The ``*_backward`` helper ops themselves, called on this backend, run the inner backend's
helper when no input is tracked, and otherwise burn-core's default composition of differentiable
ops (so a gradient of a gradient is still recorded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend import Backend
from burn.backend.contract import op_facts
from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, unary
from burn_autodiff.ops_composed import inner_or_default
from burn_autodiff.ops_module_3d import (
    AutodiffModuleOps3d,
    _conv,
    _max_pool_with_indices,
)

if TYPE_CHECKING:
    from collections.abc import Callable

Pair = tuple[int, int]


class AutodiffModuleOps(AutodiffModuleOps3d):
    """Module and activation ops of `Autodiff` (mixed into it)."""

    _in: Backend

    # -- convolution --------------------------------------------------------------------------
    def conv1d(
        self, x: AD, weight: AD, bias: AD | None, stride: int, padding: int, dilation: int, groups: int
    ) -> AD:
        return _conv(self._in.conv1d, R.conv1d, x, weight, bias, stride, padding, dilation, groups)

    def conv2d(
        self, x: AD, weight: AD, bias: AD | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> AD:
        return _conv(self._in.conv2d, R.conv2d, x, weight, bias, stride, padding, dilation, groups)

    def conv_transpose2d(
        self, x: AD, weight: AD, bias: AD | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> AD:
        op = self._in.conv_transpose2d
        return _conv(op, R.conv_transpose2d, x, weight, bias, stride, padding, padding_out, dilation, groups)

    # -- pooling ------------------------------------------------------------------------------
    def max_pool2d_with_indices(
        self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[AD, Any]:
        op = self._in.max_pool2d_with_indices
        return _max_pool_with_indices(op, R.max_pool2d, x, kernel_size, stride, padding, dilation)

    def max_pool2d(self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> AD:
        if x.node is None:
            return AD(self._in.max_pool2d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool1d_with_indices(
        self, x: AD, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[AD, Any]:
        op = self._in.max_pool1d_with_indices
        return _max_pool_with_indices(op, R.max_pool1d, x, kernel_size, stride, padding, dilation)

    def max_pool1d(self, x: AD, kernel_size: int, stride: int, padding: int, dilation: int) -> AD:
        if x.node is None:
            return AD(self._in.max_pool1d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def avg_pool2d(
        self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> AD:
        out = self._in.avg_pool2d(x.p, kernel_size, stride, padding, count_include_pad)
        return unary(out, x, R.avg_pool2d, (x.p, kernel_size, stride, padding, count_include_pad))

    def avg_pool1d(self, x: AD, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> AD:
        out = self._in.avg_pool1d(x.p, kernel_size, stride, padding, count_include_pad)
        return unary(out, x, R.avg_pool1d, (x.p, kernel_size, stride, padding, count_include_pad))

    def adaptive_avg_pool2d(self, x: AD, output_size: Pair) -> AD:
        return unary(self._in.adaptive_avg_pool2d(x.p, output_size), x, R.adaptive_avg_pool2d, (x.p,))

    def adaptive_avg_pool1d(self, x: AD, output_size: int) -> AD:
        return unary(self._in.adaptive_avg_pool1d(x.p, output_size), x, R.adaptive_avg_pool1d, (x.p,))

    # -- embedding, interpolation -------------------------------------------------------------
    def embedding(self, weights: AD, indices: Any) -> AD:
        out = self._in.embedding(weights.p, indices)
        return unary(out, weights, R.embedding, (weights.p, indices))

    def interpolate(self, x: AD, output_size: Pair, mode: Any, align_corners: bool) -> AD:
        out = self._in.interpolate(x.p, output_size, mode, align_corners)
        n = x.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), R.interpolate, (x.p, output_size, mode, align_corners)))

    # -- activations --------------------------------------------------------------------------
    def relu(self, x: AD) -> AD:
        out = self._in.relu(x.p)
        return unary(out, x, R.relu, (out,))

    def leaky_relu(self, x: AD, negative_slope: float) -> AD:
        out = self._in.leaky_relu(x.p, negative_slope)
        return unary(out, x, R.leaky_relu, (x.p, negative_slope))

    def gelu(self, x: AD) -> AD:
        out = self._in.gelu(x.p)
        return unary(out, x, R.gelu, (x.p,))

    def sigmoid(self, x: AD) -> AD:
        out = self._in.sigmoid(x.p)
        return unary(out, x, R.sigmoid, (out,))

    def log_sigmoid(self, x: AD) -> AD:
        out = self._in.log_sigmoid(x.p)
        return unary(out, x, R.log_sigmoid, (x.p,))

    def silu(self, x: AD) -> AD:
        out = self._in.silu(x.p)
        return unary(out, x, R.silu, (x.p,))

    def softplus(self, x: AD, beta: float) -> AD:
        out = self._in.softplus(x.p, beta)
        return unary(out, x, R.softplus, (x.p, beta))

    def hard_sigmoid(self, x: AD, alpha: float, beta: float) -> AD:
        out = self._in.hard_sigmoid(x.p, alpha, beta)
        return unary(out, x, R.hard_sigmoid, (x.p, alpha, beta))

    def softmax(self, x: AD, dim: int) -> AD:
        out = self._in.softmax(x.p, dim)
        return unary(out, x, R.softmax, (out, dim))

    def log_softmax(self, x: AD, dim: int) -> AD:
        out = self._in.log_softmax(x.p, dim)
        return unary(out, x, R.log_softmax, (out, dim))

    # -- losses and recurrent cells -----------------------------------------------------------
    def cross_entropy(self, logits: AD, targets: Any, reduction: Any) -> AD:
        out = self._in.cross_entropy(logits.p, targets, reduction)
        return unary(out, logits, R.cross_entropy, (logits.p, targets, reduction))

    def lstm_cell(self, gates: AD, cell: AD) -> AD:
        out = self._in.lstm_cell(gates.p, cell.p)
        parents = (gates.node, cell.node)
        if parents == (None, None):
            return AD(out, None)
        return AD(out, Node(parents, R.lstm_cell, (gates.p, cell.p, out)))

    def gru_cell(self, gates_x: AD, gates_h: AD, hidden: AD) -> AD:
        out = self._in.gru_cell(gates_x.p, gates_h.p, hidden.p)
        parents = (gates_x.node, gates_h.node, hidden.node)
        if parents == (None, None, None):
            return AD(out, None)
        return AD(out, Node(parents, R.gru_cell, (gates_x.p, gates_h.p, hidden.p)))


# The backward helpers of the contract (declared ``backward_of=`` at each op), called on the
# autodiff backend itself.
BACKWARD_HELPERS = tuple(sorted(name for name, f in op_facts().items() if f.backward_of is not None))


def _helper(name: str) -> Callable[..., Any]:
    def helper(self: Any, *args: Any) -> Any:
        out = inner_or_default(self, name, *args)  # tracked: the differentiable composition
        return out

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = getattr(Backend, name).__doc__
    return helper


for _name in BACKWARD_HELPERS:
    setattr(AutodiffModuleOps, _name, _helper(_name))
del _name
