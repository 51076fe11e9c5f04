"""The conv family of `Autodiff`: convolutions in 1-D to 3-D, plain and transposed, each
followed by its backward rule; deformable convolution; ``unfold4d`` / ``fold4d``.

Every convolution records through one rank-generic step (`_conv`); the rules call the inner
backend's ``*_backward`` helpers (``conv2d_x_backward``...), so a backend that overrides them
speeds up training too. The 1-D ops are 2-D ones with a height-1 kernel. The helpers themselves,
called on this backend, are differentiable (`burn_autodiff.ops.composed.backward_helpers`).

``unfold4d`` and ``fold4d`` (im2col and col2im) are each other's adjoint, so each one's rule is
a call of the other on the inner backend. Deformable convolution has no rule: its gradients
(bilinear weights differentiated with respect to the sampling positions, sums over taps and
groups) are exactly what burn-core's composition records, and a hand-written rule would repeat
that composition. It runs the inner op when nothing is tracked and records the composition
otherwise (`burn_autodiff.ops.composed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from burn.backend.ops.conv import (
    conv2d_fused_weight_backward,
    conv2d_fused_x_backward,
    conv_activation,
    conv_activation_grad,
)
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, make, unary
from burn_autodiff.ops._grad import Grads, Need, P, as_2d, drop_h
from burn_autodiff.ops.composed import backward_helpers, inner_or_default, records_no_node

if TYPE_CHECKING:
    from burn.backend import Backend

Pair = tuple[int, int]
Triple = tuple[int, int, int]


# -- saved state of the rules ------------------------------------------------------------------
class ConvSaved(NamedTuple):
    """A convolution of any rank, plain or transposed: its input, its weight, and its options
    in the contract's order: ``(stride, padding, dilation, groups)``, transposed
    ``(stride, padding, padding_out, dilation, groups)``."""

    x: P
    weight: P
    options: tuple[Any, ...]


class FusedConvSaved(NamedTuple):
    """conv2d_fused: its input, weight, pre-activation output `z` (None for no activation), and
    the options ``(stride, padding, dilation, groups, activation)``."""

    x: P
    weight: P
    z: P | None
    options: tuple[Any, ...]


class Unfold4dSaved(NamedTuple):
    """unfold4d: the input's spatial size and the options ``(kernel_size, stride, padding,
    dilation)``; fold4d saves those options alone."""

    size: Pair
    options: tuple[Any, ...]


def _conv(op: Any, rule: Callable[..., Grads], x: AD, weight: AD, bias: AD | None, *options: Any) -> AD:
    """The inner convolution `op` (any rank, plain or transposed: ``op(x, weight, bias,
    *options)``), with a node on `rule` when the input, weight or bias is tracked."""
    out = op(x.p, weight.p, None if bias is None else bias.p, *options)
    parents = (x.node, weight.node, None if bias is None else bias.node)
    if parents == (None, None, None):
        return AD(out, None)
    return AD(out, Node(parents, rule, make(ConvSaved, (x.p, weight.p, options))))


@backward_helpers("conv")
class AutodiffConvOps:
    """The conv family of `Autodiff` (mixed into it; see `burn.backend.ops.conv`)."""

    _in: Backend

    def conv1d(
        self, x: AD, weight: AD, bias: AD | None, stride: int, padding: int, dilation: int, groups: int
    ) -> AD:
        return _conv(self._in.conv1d, self._conv1d_rule, x, weight, bias, stride, padding, dilation, groups)

    @staticmethod
    def _conv1d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        stride, padding, dilation, groups = s.options  # a conv2d with a height-1 kernel
        x2, w2, g2 = as_2d(B, s.x), as_2d(B, s.weight), as_2d(B, g)
        options = ((1, stride), (0, padding), (1, dilation), groups)
        gx = drop_h(B, B.conv2d_x_backward(x2, w2, g2, *options)) if need[0] else None
        gw = drop_h(B, B.conv2d_weight_backward(x2, w2, g2, *options)) if need[1] else None
        return gx, gw, _bias_grad(B, g, need)

    def conv2d(
        self, x: AD, weight: AD, bias: AD | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> AD:
        return _conv(self._in.conv2d, self._conv2d_rule, x, weight, bias, stride, padding, dilation, groups)

    @staticmethod
    def _conv2d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        return _conv_grads(B, B.conv2d_x_backward, B.conv2d_weight_backward, s, need, g)

    def conv2d_fused(
        self, x: AD, weight: AD, bias: AD | None, stride: Pair, padding: tuple[int, int, int, int],
        dilation: Pair, groups: int, activation: str,
    ) -> AD:
        i = self._in
        b = None if bias is None else bias.p
        parents = (x.node, weight.node, None if bias is None else bias.node)
        if parents == (None, None, None):  # inference: the inner backend's fused epilogue
            return AD(i.conv2d_fused(x.p, weight.p, b, stride, padding, dilation, groups, activation), None)
        options = (stride, padding, dilation, groups, activation)
        if activation == "none":
            out = i.conv2d_fused(x.p, weight.p, b, stride, padding, dilation, groups, "none")
            return AD(out, Node(parents, self._conv2d_fused_rule, make(FusedConvSaved, (x.p, weight.p, None,
                                                                                        options))))
        # Training keeps the pre-activation output for the activation's gradient, so the
        # activation runs as its own pass after the convolution here.
        z = i.conv2d_fused(x.p, weight.p, b, stride, padding, dilation, groups, "none")
        saved = make(FusedConvSaved, (x.p, weight.p, z, options))
        return AD(conv_activation(i, activation, z), Node(parents, self._conv2d_fused_rule, saved))

    @staticmethod
    def _conv2d_fused_rule(B: Any, s: FusedConvSaved, need: Need, g: P) -> Grads:
        stride, padding, dilation, groups, activation = s.options
        dz = g if s.z is None else conv_activation_grad(B, activation, s.z, g)  # activation, then conv
        options = (stride, padding, dilation, groups)
        gx = conv2d_fused_x_backward(B, s.x, s.weight, dz, *options) if need[0] else None
        gw = conv2d_fused_weight_backward(B, s.x, s.weight, dz, *options) if need[1] else None
        return gx, gw, _bias_grad(B, dz, need)

    def conv3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, dilation: Triple,
        groups: int,
    ) -> AD:
        return _conv(self._in.conv3d, self._conv3d_rule, x, weight, bias, stride, padding, dilation, groups)

    @staticmethod
    def _conv3d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        return _conv_grads(B, B.conv3d_x_backward, B.conv3d_weight_backward, s, need, g)

    def conv_transpose1d(
        self, x: AD, weight: AD, bias: AD | None, stride: int, padding: int, padding_out: int, dilation: int,
        groups: int,
    ) -> AD:
        op = self._in.conv_transpose1d
        rule = self._conv_transpose1d_rule
        return _conv(op, rule, x, weight, bias, stride, padding, padding_out, dilation, groups)

    @staticmethod
    def _conv_transpose1d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        stride, padding, padding_out, dilation, groups = s.options  # a 2-D one with a height-1 kernel
        x2, w2, g2 = as_2d(B, s.x), as_2d(B, s.weight), as_2d(B, g)
        options = ((1, stride), (0, padding), (0, padding_out), (1, dilation), groups)
        gx = drop_h(B, B.conv_transpose2d_x_backward(x2, w2, g2, *options)) if need[0] else None
        gw = drop_h(B, B.conv_transpose2d_weight_backward(x2, w2, g2, *options)) if need[1] else None
        return gx, gw, _bias_grad(B, g, need)

    def conv_transpose2d(
        self, x: AD, weight: AD, bias: AD | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> AD:
        op = self._in.conv_transpose2d
        rule = self._conv_transpose2d_rule
        return _conv(op, rule, x, weight, bias, stride, padding, padding_out, dilation, groups)

    @staticmethod
    def _conv_transpose2d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        return _conv_grads(B, B.conv_transpose2d_x_backward, B.conv_transpose2d_weight_backward, s, need, g)

    def conv_transpose3d(
        self, x: AD, weight: AD, bias: AD | None, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> AD:
        op = self._in.conv_transpose3d
        rule = self._conv_transpose3d_rule
        return _conv(op, rule, x, weight, bias, stride, padding, padding_out, dilation, groups)

    @staticmethod
    def _conv_transpose3d_rule(B: Any, s: ConvSaved, need: Need, g: P) -> Grads:
        return _conv_grads(B, B.conv_transpose3d_x_backward, B.conv_transpose3d_weight_backward, s, need, g)

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

    def unfold4d(self, x: AD, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> AD:
        i = self._in
        out = i.unfold4d(x.p, kernel_size, stride, padding, dilation)
        n = x.node
        if n is None:
            return AD(out, None)
        size = tuple(i.float_shape(x.p)[2:])
        saved = make(Unfold4dSaved, (size, (kernel_size, stride, padding, dilation)))
        return AD(out, Node((n,), self._unfold4d_rule, saved))

    @staticmethod
    def _unfold4d_rule(B: Any, s: Unfold4dSaved, need: Need, g: P) -> Grads:
        return (B.fold4d(g, s.size, *s.options),)  # the adjoint of im2col is col2im

    def fold4d(
        self, cols: AD, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> AD:
        out = self._in.fold4d(cols.p, output_size, kernel_size, stride, padding, dilation)
        return unary(out, cols, self._fold4d_rule, (kernel_size, stride, padding, dilation))

    @staticmethod
    def _fold4d_rule(B: Any, options: tuple[Any, ...], need: Need, g: P) -> Grads:
        return (B.unfold4d(g, *options),)  # the adjoint of col2im is im2col


# -- helpers of the rules above ----------------------------------------------------------------
def _conv_grads(
    B: Any, x_backward: Callable[..., P], weight_backward: Callable[..., P], s: ConvSaved, need: Need, g: P
) -> Grads:
    """A convolution's gradients from the inner backend's helpers for its rank and kind:
    ``x_backward`` and ``weight_backward`` give the input's and the weight's, the bias's is `g`
    summed over all dims but the channels."""
    gx = x_backward(s.x, s.weight, g, *s.options) if need[0] else None
    gw = weight_backward(s.x, s.weight, g, *s.options) if need[1] else None
    return gx, gw, _bias_grad(B, g, need)


def _bias_grad(B: Any, g: P, need: Need) -> P | None:
    """The bias's gradient when it needs one: `g` summed over every dim but the channels (dim 1)."""
    if not (len(need) > 2 and need[2]):
        return None
    shape = B.float_shape(g)
    for d in range(len(shape) - 1, -1, -1):
        if d != 1:
            g = B.float_sum_dim(g, d)
    return B.float_reshape(g, (shape[1],))
