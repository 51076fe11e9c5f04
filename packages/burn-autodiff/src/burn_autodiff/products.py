"""Weight gradients of a matrix used in several products, summed by one GEMM.

A matrix ``W`` used as ``X_k @ W`` by several ops (a recurrent layer's hidden-to-hidden weights,
once per time step; a weight shared between layers) gets one gradient per use, ``X_k^T @ G_k``,
and the engine used to compute each and add them up: per use a GEMM with a short inner dim (the
batch) and a full-size addition. Their sum is one product, ``[X_1; X_2; ...]^T @ [G_1; G_2; ...]``
(the rows stacked), which BLAS runs at a much better rate, with no additions.

The matmul rule returns a `ProductGrad` for the matrix instead of computing it, when its factors
are small (`MAX_FACTOR_SIZE`: the factors are held until the matrix's gradient is complete, at
the end of the backward pass for a parameter, so large ones are multiplied at once as before).
The engine keeps the products of one tensor together (`accumulate`) and multiplies them when its
gradient is complete (`materialize`); met with any other kind of gradient, they are multiplied
first and added as before. The sum is the same up to rounding: one GEMM accumulates in another
order than a sum of GEMMs.
"""

from __future__ import annotations

from typing import Any

P = Any  # a primitive of the inner backend

# Factors of at most this many elements (together) stay lazy: an LSTM step's [32, 256] and
# [32, 1024] are 40K; a Linear layer on a large batch is multiplied at once.
MAX_FACTOR_SIZE = 1 << 16


class ProductGrad:
    """``x^T @ g`` for 2-D `x` ``[M, K]`` and `g` ``[M, N]``, not yet multiplied."""

    __slots__ = ("g", "x")

    def __init__(self, x: P, g: P) -> None:
        self.x = x
        self.g = g


class Products(list):  # type: ignore[type-arg]
    """Several `ProductGrad` of one tensor, in arrival order."""


def weight_grad(B: Any, x: P, g: P) -> Any:
    """``x^T @ g`` for 2-D `x` and `g`: lazy when the factors are small, else the product."""
    xs, gs = B.float_shape(x), B.float_shape(g)
    if xs[0] * (xs[1] + gs[1]) <= MAX_FACTOR_SIZE:
        return ProductGrad(x, g)
    return B.float_matmul(B.float_swap_dims(x, 0, 1), g)


def multiply(B: Any, grad: ProductGrad | Products) -> P:
    """The sum of the products as one primitive: one GEMM over the stacked factors."""
    if grad.__class__ is ProductGrad:
        x, g = grad.x, grad.g  # type: ignore[union-attr]
    else:
        x = B.float_cat([p.x for p in grad], 0)  # type: ignore[union-attr]
        g = B.float_cat([p.g for p in grad], 0)  # type: ignore[union-attr]
    return B.float_matmul(B.float_swap_dims(x, 0, 1), g)


def join(prev: ProductGrad | Products, grad: ProductGrad | Products) -> Products:
    """Two pending product sums of one tensor as one."""
    joined = Products(prev) if prev.__class__ is Products else Products([prev])
    joined.extend(grad if grad.__class__ is Products else [grad])
    return joined
