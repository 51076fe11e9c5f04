"""Gradients the engine keeps unevaluated until a tensor's gradient is complete: slices of it
(`sliced`) and products that sum to it (`products`). `accumulate` adds two pending gradients of
one tensor (at least one of them lazy), `materialize` evaluates one."""

from __future__ import annotations

from typing import Any

from burn_autodiff import products, sliced
from burn_autodiff.products import ProductGrad, Products
from burn_autodiff.sliced import Pieces, SlicedGrad

P = Any  # a primitive of the inner backend

LAZY = (SlicedGrad, Pieces, ProductGrad, Products)
_PRODUCTS = (ProductGrad, Products)


def materialize(B: Any, grad: Any) -> P:
    """A pending gradient as one primitive (unchanged when it already is one)."""
    if isinstance(grad, _PRODUCTS):
        return products.multiply(B, grad)
    return sliced.materialize(B, grad)


def accumulate(B: Any, prev: Any, grad: Any) -> Any:
    """The sum of two pending gradients of one tensor, at least one of them lazy: products stay
    together while their factors share dtypes; anything else meeting a product multiplies it."""
    prev_product, grad_product = isinstance(prev, _PRODUCTS), isinstance(grad, _PRODUCTS)
    if prev_product and grad_product and _same_dtypes(B, prev, grad):
        return products.join(prev, grad)
    if prev_product:
        prev = products.multiply(B, prev)
    if grad_product:
        grad = products.multiply(B, grad)
    if isinstance(prev, sliced.Lazy) or isinstance(grad, sliced.Lazy):
        return sliced.accumulate(B, prev, grad)
    return B.float_add(prev, grad)


def _first(grad: ProductGrad | Products) -> ProductGrad:
    return grad if isinstance(grad, ProductGrad) else grad[0]


def _same_dtypes(B: Any, a: ProductGrad | Products, b: ProductGrad | Products) -> bool:
    """Whether the stacked factors of `a` and `b` can be concatenated (one dtype each)."""
    x, y = _first(a), _first(b)
    dtype = B.float_get_dtype
    return dtype(x.x) == dtype(y.x) and dtype(x.g) == dtype(y.g)
