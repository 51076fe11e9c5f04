"""The pool family of `Autodiff`: max, average and adaptive average pooling in 1-D to 3-D, each
followed by its backward rule.

The rules call the inner backend's ``*_backward`` helpers (``max_pool2d_with_indices_backward``,
``avg_pool2d_backward``...), so a backend that overrides them speeds up training too; the 1-D
ops are 2-D ones of height 1. A max pool records the indices of each window's maximum
(`_max_pool_with_indices`, rank-generic) and routes the gradient there. The helpers themselves,
called on this backend, are differentiable (`burn_autodiff.ops.composed.backward_helpers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import make, unary
from burn_autodiff.ops._grad import Grads, Need, P, as_2d, drop_h
from burn_autodiff.ops.composed import backward_helpers

if TYPE_CHECKING:
    from collections.abc import Callable

    from burn.backend import Backend

Pair = tuple[int, int]
Triple = tuple[int, int, int]


# -- saved state of the rules (adaptive pools save their input alone) --------------------------
class MaxPoolSaved(NamedTuple):
    """A max pool: its input, the flat index of each window's maximum, and its options
    ``(kernel_size, stride, padding, dilation)``."""

    x: P
    indices: P
    options: tuple[Any, ...]


class AvgPoolSaved(NamedTuple):
    """An average pool: its input and its options ``(kernel_size, stride, padding,
    count_include_pad)``."""

    x: P
    options: tuple[Any, ...]


def _max_pool_with_indices(op: Any, rule: Callable[..., Grads], x: AD, *options: Any) -> tuple[AD, Any]:
    """The inner ``max_poolNd_with_indices`` `op`; the indices are saved for the rule."""
    out, indices = op(x.p, *options)
    return unary(out, x, rule, make(MaxPoolSaved, (x.p, indices, options))), indices


@backward_helpers("pool")
class AutodiffPoolOps:
    """The pool family of `Autodiff` (mixed into it; see `burn.backend.ops.pool`)."""

    _in: Backend

    # -- max pooling --------------------------------------------------------------------------
    def max_pool1d_with_indices(
        self, x: AD, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[AD, Any]:
        op = self._in.max_pool1d_with_indices
        return _max_pool_with_indices(op, self._max_pool1d_rule, x, kernel_size, stride, padding, dilation)

    @staticmethod
    def _max_pool1d_rule(B: Any, s: MaxPoolSaved, need: Need, g: P) -> Grads:
        kernel, stride, padding, dilation = s.options  # flat index h*W + w with h = 0
        n, c, lo = B.int_shape(s.indices)
        gx = B.max_pool2d_with_indices_backward(
            as_2d(B, s.x), (1, kernel), (1, stride), (0, padding), (1, dilation), as_2d(B, g),
            B.int_reshape(s.indices, (n, c, 1, lo)),
        )
        return (drop_h(B, gx),)

    def max_pool1d(self, x: AD, kernel_size: int, stride: int, padding: int, dilation: int) -> AD:
        if x.node is None:
            return AD(self._in.max_pool1d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool2d_with_indices(
        self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[AD, Any]:
        op = self._in.max_pool2d_with_indices
        return _max_pool_with_indices(op, self._max_pool2d_rule, x, kernel_size, stride, padding, dilation)

    @staticmethod
    def _max_pool2d_rule(B: Any, s: MaxPoolSaved, need: Need, g: P) -> Grads:
        # g goes to each window's argmax
        return (B.max_pool2d_with_indices_backward(s.x, *s.options, g, s.indices),)

    def max_pool2d(self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> AD:
        if x.node is None:
            return AD(self._in.max_pool2d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool3d_with_indices(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[AD, Any]:
        op = self._in.max_pool3d_with_indices
        return _max_pool_with_indices(op, self._max_pool3d_rule, x, kernel_size, stride, padding, dilation)

    @staticmethod
    def _max_pool3d_rule(B: Any, s: MaxPoolSaved, need: Need, g: P) -> Grads:
        # g goes to each window's argmax
        return (B.max_pool3d_with_indices_backward(s.x, *s.options, g, s.indices),)

    def max_pool3d(self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> AD:
        if x.node is None:
            return AD(self._in.max_pool3d(x.p, kernel_size, stride, padding, dilation), None)
        return self.max_pool3d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    # -- average pooling ----------------------------------------------------------------------
    def avg_pool1d(self, x: AD, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> AD:
        out = self._in.avg_pool1d(x.p, kernel_size, stride, padding, count_include_pad)
        options = (kernel_size, stride, padding, count_include_pad)
        return unary(out, x, self._avg_pool1d_rule, make(AvgPoolSaved, (x.p, options)))

    @staticmethod
    def _avg_pool1d_rule(B: Any, s: AvgPoolSaved, need: Need, g: P) -> Grads:
        kernel, stride, padding, count_include_pad = s.options  # a 2-D one of height 1
        gx = B.avg_pool2d_backward(
            as_2d(B, s.x), as_2d(B, g), (1, kernel), (1, stride), (0, padding), count_include_pad
        )
        return (drop_h(B, gx),)

    def avg_pool2d(
        self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> AD:
        out = self._in.avg_pool2d(x.p, kernel_size, stride, padding, count_include_pad)
        options = (kernel_size, stride, padding, count_include_pad)
        return unary(out, x, self._avg_pool2d_rule, make(AvgPoolSaved, (x.p, options)))

    @staticmethod
    def _avg_pool2d_rule(B: Any, s: AvgPoolSaved, need: Need, g: P) -> Grads:
        return (B.avg_pool2d_backward(s.x, g, *s.options),)  # g / window size, spread over each window

    def avg_pool3d(
        self, x: AD, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
    ) -> AD:
        out = self._in.avg_pool3d(x.p, kernel_size, stride, padding, count_include_pad)
        options = (kernel_size, stride, padding, count_include_pad)
        return unary(out, x, self._avg_pool3d_rule, make(AvgPoolSaved, (x.p, options)))

    @staticmethod
    def _avg_pool3d_rule(B: Any, s: AvgPoolSaved, need: Need, g: P) -> Grads:
        return (B.avg_pool3d_backward(s.x, g, *s.options),)  # g / window size, spread over each window

    # -- adaptive average pooling -------------------------------------------------------------
    def adaptive_avg_pool1d(self, x: AD, output_size: int) -> AD:
        return unary(self._in.adaptive_avg_pool1d(x.p, output_size), x, self._adaptive_avg_pool1d_rule, x.p)

    @staticmethod
    def _adaptive_avg_pool1d_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # one row of height 1: the 2-D bins along H are the identity
        return (drop_h(B, B.adaptive_avg_pool2d_backward(as_2d(B, x), as_2d(B, g))),)

    def adaptive_avg_pool2d(self, x: AD, output_size: Pair) -> AD:
        return unary(self._in.adaptive_avg_pool2d(x.p, output_size), x, self._adaptive_avg_pool2d_rule, x.p)

    @staticmethod
    def _adaptive_avg_pool2d_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.adaptive_avg_pool2d_backward(x, g),)

    def adaptive_avg_pool3d(self, x: AD, output_size: Triple) -> AD:
        return unary(self._in.adaptive_avg_pool3d(x.p, output_size), x, self._adaptive_avg_pool3d_rule, x.p)

    @staticmethod
    def _adaptive_avg_pool3d_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.adaptive_avg_pool3d_backward(x, g),)
