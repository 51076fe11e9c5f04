"""The norm family of the backend contract: layer normalization over the last dim as one op, and
its backward helper.

``layer_norm(x, gamma, beta) = (x - mean) / sqrt(var + epsilon) * gamma + beta`` with the mean
and the biased variance of each row (the last dim, size ``D``), `gamma` and `beta` ``[D]``. As its
composition it is nine ops over the whole tensor (two means, a subtraction, a square, the scale,
the shift...), each a pass over memory; as one op a backend normalizes a row while it is in cache
(burn-ndarray: one compiled pass), and autodiff keeps x, gamma and beta only, recomputing the
statistics in backward.

Preconditions (checked by `burn.tensor.module.layer_norm`): float `tensor` of rank >= 1, `gamma`
and `beta` (or None: no shift) float ``[D]`` of its dtype, `epsilon` finite and >= 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.contract import default, family

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any


def normalized(b: Backend, tensor: P, epsilon: float) -> tuple[P, P]:
    """``(x - mean) * rstd`` and ``rstd = 1 / sqrt(var + epsilon)`` (``[..., 1]``) of each row:
    written once, for the default op and its backward."""
    last = len(b.float_shape(tensor)) - 1
    centered = b.float_sub(tensor, b.float_mean_dim(tensor, last))
    var = b.float_mean_dim(b.float_mul(centered, centered), last)
    rstd = b.float_recip(b.float_sqrt(b.float_add_scalar(var, epsilon)))
    return b.float_mul(centered, rstd), rstd


@family("norm")
class NormOps:
    """Layer normalization; both ops have defaults (see the module docstring)."""

    @default(bound="memory")
    def layer_norm(self, tensor: P, gamma: P, beta: P | None, epsilon: float) -> P:
        """``(tensor - mean) / sqrt(var + epsilon) * gamma + beta`` over the last dim."""
        b: Backend = self  # type: ignore[assignment]
        out = b.float_mul(normalized(b, tensor, epsilon)[0], gamma)
        return out if beta is None else b.float_add(out, beta)

    @default(backward_of="layer_norm", bound="memory")
    def layer_norm_backward(
        self, tensor: P, gamma: P, epsilon: float, output_grad: P
    ) -> tuple[P, P, P]:
        """Gradients of `layer_norm` with respect to tensor, gamma and beta, from the output's.

        With ``xh`` the normalized rows, ``rstd`` their inverse deviation and ``g = dy * gamma``:
        ``dx = rstd * (g - mean(g) - xh * mean(g * xh))`` per row, ``dgamma = sum(dy * xh)`` and
        ``dbeta = sum(dy)`` over every row (``[D]``). The statistics are recomputed, not saved.
        """
        b: Backend = self  # type: ignore[assignment]
        shape = b.float_shape(tensor)
        last, width = len(shape) - 1, shape[-1]
        xh, rstd = normalized(b, tensor, epsilon)
        g = b.float_mul(output_grad, gamma)
        inner = b.float_mean_dim(b.float_mul(g, xh), last)
        centered = b.float_sub(g, b.float_mean_dim(g, last))
        grad_x = b.float_mul(b.float_sub(centered, b.float_mul(xh, inner)), rstd)

        def rows_sum(t: P) -> P:
            return b.float_reshape(b.float_sum_dim(b.float_reshape(t, (-1, width)), 0), (width,))

        return grad_x, rows_sum(b.float_mul(output_grad, xh)), rows_sum(output_grad)
