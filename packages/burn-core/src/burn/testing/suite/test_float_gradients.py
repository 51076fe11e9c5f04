"""Gradients of every differentiable float op against central finite differences (float64):
arithmetic, math functions, reductions, shape and indexing ops (`gather_nd`, every mode of
`scatter_nd`, assign-mode scatter/select, `unfold`, `cross`), the Tensor methods composed from
them (``tensor_*`` cases: pad, roll, tril, mask_select, var...), the ``float_*_owned`` ops (the same
gradients as the plain ops), and through casts, device moves and detaching.

Each case calls one contract op directly on the backend (through `op`), so the op named in
`covers` is exactly the one differentiated, with inputs chosen away from the points where the
op is not differentiable (kinks, ties, jumps): inputs of max/min scatters are distinct and the
scattered values differ from the tensor's. Conventions at those points are checked in
``test_gradients_semantics.py``. Skipped (with the reason) on backends without autodiff.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.testing import covers
from burn.testing.gradcheck import (
    Case,
    const,
    distinct,
    finite_difference_test,
    frac,
    inputs,
    nz,
    op,
    require_autodiff,
    u,
)


def _remainder_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    y = rng.uniform(1.0, 2.0, size=(2, 3)) * np.where(rng.random((2, 3)) < 0.5, -1.0, 1.0)
    x = (rng.integers(-2, 3, size=(2, 3)) + rng.uniform(0.2, 0.8, size=(2, 3))) * y  # x/y far from integers
    return [x, y]


S = slice


CASES = [
    # -- arithmetic (with broadcasting on either side) -------------------------------------
    Case("add", ("float_add",), lambda a, b: op("float_add", a, b), inputs(u((2, 3)), u((3,)))),
    Case("add_bcast_both", ("float_add",), lambda a, b: op("float_add", a, b), inputs(u((2, 1)), u((1, 3)))),
    Case("sub", ("float_sub",), lambda a, b: op("float_sub", a, b), inputs(u((3,)), u((2, 3)))),
    Case("mul", ("float_mul",), lambda a, b: op("float_mul", a, b), inputs(u((2, 1, 3)), u((4, 1)))),
    Case("div", ("float_div",), lambda a, b: op("float_div", a, b), inputs(u((2, 3)), nz((2, 1)))),
    Case("remainder", ("float_remainder",), lambda a, b: op("float_remainder", a, b), _remainder_inputs),
    Case("powf", ("float_powf",), lambda a, b: op("float_powf", a, b), inputs(u((2, 3), 0.5, 2.0), u((3,)))),
    Case("matmul", ("float_matmul",), lambda a, b: op("float_matmul", a, b), inputs(u((2, 3)), u((3, 4)))),
    Case(
        "matmul_batched",
        ("float_matmul",),
        lambda a, b: op("float_matmul", a, b),
        inputs(u((2, 2, 3)), u((3, 2))),
    ),
    Case(
        "matmul_bcast_batch",
        ("float_matmul",),
        lambda a, b: op("float_matmul", a, b),
        inputs(u((1, 2, 2, 3)), u((3, 1, 3, 2))),
    ),
    Case(
        "matmul_unit_batch_rhs",  # a matrix at the batch's rank: [1, K, N], as ONNX import gives
        ("float_matmul",),
        lambda a, b: op("float_matmul", a, b),
        inputs(u((2, 2, 3)), u((1, 3, 2))),
    ),
    Case("add_scalar", ("float_add_scalar",), lambda a: op("float_add_scalar", a, 1.5), inputs(u((2, 3)))),
    Case("sub_scalar", ("float_sub_scalar",), lambda a: op("float_sub_scalar", a, 0.5), inputs(u((2, 3)))),
    Case("mul_scalar", ("float_mul_scalar",), lambda a: op("float_mul_scalar", a, -1.7), inputs(u((2, 3)))),
    Case("div_scalar", ("float_div_scalar",), lambda a: op("float_div_scalar", a, 1.3), inputs(u((2, 3)))),
    Case(
        "remainder_scalar",
        ("float_remainder_scalar",),
        lambda a: op("float_remainder_scalar", a, 1.0),
        inputs(frac((2, 3), 0.2, 0.8)),
    ),
    Case(
        "powf_scalar",
        ("float_powf_scalar",),
        lambda a: op("float_powf_scalar", a, 2.5),
        inputs(u((2, 3), 0.5, 2.0)),
    ),
    Case(
        "powf_scalar_int",
        ("float_powf_scalar",),
        lambda a: op("float_powf_scalar", a, 3.0),
        inputs(u((2, 3))),
    ),
    Case(
        "powf_scalar_square",
        ("float_powf_scalar",),
        lambda a: op("float_powf_scalar", a, 2.0),
        inputs(u((2, 3))),
    ),
    Case(
        "powf_scalar_rsqrt",
        ("float_powf_scalar",),
        lambda a: op("float_powf_scalar", a, -0.5),
        inputs(u((2, 3), 0.5, 2.0)),
    ),
    # -- unary math ------------------------------------------------------------------------
    Case("exp", ("float_exp",), lambda a: op("float_exp", a), inputs(u((2, 3)))),
    Case("log", ("float_log",), lambda a: op("float_log", a), inputs(u((2, 3), 0.2, 3.0))),
    Case("log1p", ("float_log1p",), lambda a: op("float_log1p", a), inputs(u((2, 3), -0.5, 3.0))),
    Case("sqrt", ("float_sqrt",), lambda a: op("float_sqrt", a), inputs(u((2, 3), 0.2, 3.0))),
    Case("abs", ("float_abs",), lambda a: op("float_abs", a), inputs(nz((2, 3)))),
    Case("sin", ("float_sin",), lambda a: op("float_sin", a), inputs(u((2, 3)))),
    Case("cos", ("float_cos",), lambda a: op("float_cos", a), inputs(u((2, 3)))),
    Case("tanh", ("float_tanh",), lambda a: op("float_tanh", a), inputs(u((2, 3)))),
    Case("erf", ("float_erf",), lambda a: op("float_erf", a), inputs(u((2, 3)))),
    Case("round", ("float_round",), lambda a: op("float_round", a), inputs(frac((2, 3)))),
    Case("floor", ("float_floor",), lambda a: op("float_floor", a), inputs(frac((2, 3)))),
    Case("ceil", ("float_ceil",), lambda a: op("float_ceil", a), inputs(frac((2, 3)))),
    Case("sign", ("float_sign",), lambda a: op("float_sign", a), inputs(nz((2, 3)))),
    Case("neg", ("float_neg",), lambda a: op("float_neg", a), inputs(u((2, 3)))),
    Case("recip", ("float_recip",), lambda a: op("float_recip", a), inputs(nz((2, 3)))),
    Case(
        "clamp_min",
        ("float_clamp_min",),
        lambda a: op("float_clamp_min", a, 0.05),
        inputs(nz((3, 3), 0.1, 2)),
    ),
    Case(
        "clamp_max",
        ("float_clamp_max",),
        lambda a: op("float_clamp_max", a, 0.05),
        inputs(nz((3, 3), 0.1, 2)),
    ),
    Case(
        "clamp",
        ("float_clamp",),
        lambda a: op("float_clamp", a, -1.0, 1.0),
        inputs(const([[-1.5, -0.5, 0.0], [0.7, 1.2, 2.0]])),
    ),
    # -- reductions ------------------------------------------------------------------------
    Case("sum", ("float_sum",), lambda a: op("float_sum", a), inputs(u((2, 3)))),
    Case("sum_dim", ("float_sum_dim",), lambda a: op("float_sum_dim", a, 1), inputs(u((2, 3, 2)))),
    Case("mean", ("float_mean",), lambda a: op("float_mean", a), inputs(u((2, 3)))),
    Case("mean_dim", ("float_mean_dim",), lambda a: op("float_mean_dim", a, 0), inputs(u((2, 3)))),
    Case("prod", ("float_prod",), lambda a: op("float_prod", a), inputs(nz((2, 3)))),
    Case("prod_dim", ("float_prod_dim",), lambda a: op("float_prod_dim", a, 1), inputs(nz((2, 3)))),
    Case(
        "prod_dim_zeros",
        ("float_prod_dim",),
        lambda a: op("float_prod_dim", a, 1),
        inputs(const([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0], [1.1, 0.5, 2.0]])),
    ),
    Case("cumsum", ("float_cumsum",), lambda a: op("float_cumsum", a, 1), inputs(u((2, 4)))),
    Case("max", ("float_max",), lambda a: op("float_max", a), inputs(distinct((2, 3)))),
    Case("min", ("float_min",), lambda a: op("float_min", a), inputs(distinct((2, 3)))),
    Case("max_dim", ("float_max_dim",), lambda a: op("float_max_dim", a, 1), inputs(distinct((2, 3)))),
    Case("min_dim", ("float_min_dim",), lambda a: op("float_min_dim", a, 0), inputs(distinct((2, 3)))),
    Case(
        "max_dim_with_indices",
        ("float_max_dim_with_indices",),
        lambda a: op("float_max_dim_with_indices", a, 0),
        inputs(distinct((3, 2))),
    ),
    Case(
        "min_dim_with_indices",
        ("float_min_dim_with_indices",),
        lambda a: op("float_min_dim_with_indices", a, 1),
        inputs(distinct((3, 2))),
    ),
    # -- shape -----------------------------------------------------------------------------
    Case("reshape", ("float_reshape",), lambda a: op("float_reshape", a, (3, -1)), inputs(u((2, 3)))),
    Case("permute", ("float_permute",), lambda a: op("float_permute", a, (2, 0, 1)), inputs(u((2, 3, 4)))),
    Case("swap_dims", ("float_swap_dims",), lambda a: op("float_swap_dims", a, 0, 2), inputs(u((2, 3, 1)))),
    Case("flip", ("float_flip",), lambda a: op("float_flip", a, (0, 1)), inputs(u((2, 3)))),
    Case("expand", ("float_expand",), lambda a: op("float_expand", a, (2, 3, 3)), inputs(u((3, 1)))),
    Case(
        "slice", ("float_slice",), lambda a: op("float_slice", a, (S(0, 2, 1), S(1, 4, 2))), inputs(u((3, 4)))
    ),
    Case(
        "slice_assign",
        ("float_slice_assign",),
        lambda a, v: op("float_slice_assign", a, (S(1, 3, 1), S(0, 4, 2)), v),
        inputs(u((3, 4)), u((2, 2))),
    ),
    Case(
        "cat",
        ("float_cat",),
        lambda a, b, c: op("float_cat", [a, b, c], 1),
        inputs(u((2, 1)), u((2, 3)), u((2, 2))),
    ),
    Case("repeat_dim", ("float_repeat_dim",), lambda a: op("float_repeat_dim", a, 1, 3), inputs(u((2, 2)))),
    # -- indexing --------------------------------------------------------------------------
    Case(
        "gather",
        ("float_gather",),
        lambda a, i: op("float_gather", 1, a, i),
        inputs(u((2, 3)), const([[0, 2, 2, 1], [1, 1, 0, 0]])),
    ),
    Case(
        "scatter_add",
        ("float_scatter_add",),
        lambda a, i, v: op("float_scatter_add", 1, a, i, v),
        lambda rng: [
            rng.uniform(-2, 2, (2, 3)),
            np.array([[0, 2, 2], [1, 1, 0]]),
            rng.uniform(-2, 2, (2, 3)),
        ],
    ),
    Case(
        "select",
        ("float_select",),
        lambda a, i: op("float_select", a, 0, i),
        inputs(u((3, 2)), const([2, 0, 2, 1])),
    ),
    Case(
        "select_add",
        ("float_select_add",),
        lambda a, i, v: op("float_select_add", a, 0, i, v),
        lambda rng: [rng.uniform(-2, 2, (3, 2)), np.array([2, 0, 2]), rng.uniform(-2, 2, (3, 2))],
    ),
    Case(
        "mask_where",
        ("float_mask_where",),
        lambda a, m, v: op("float_mask_where", a, m, v),
        lambda rng: [rng.uniform(-2, 2, (2, 3)), rng.random((2, 3)) < 0.5, rng.uniform(-2, 2, (3,))],
    ),
    Case(
        "mask_where_bcast",
        ("float_mask_where",),
        lambda a, m, v: op("float_mask_where", a, m, v),
        lambda rng: [rng.uniform(-2, 2, (3,)), rng.random((2, 1)) < 0.5, rng.uniform(-2, 2, (2, 3))],
    ),
    Case(
        "mask_fill",
        ("float_mask_fill",),
        lambda a, m: op("float_mask_fill", a, m, 0.5),
        lambda rng: [rng.uniform(-2, 2, (2, 3)), rng.random((2, 3)) < 0.5],
    ),
    # -- sorting ---------------------------------------------------------------------------
    Case("sort", ("float_sort",), lambda a: op("float_sort", a, 1, False), inputs(distinct((2, 4)))),
    Case("sort_desc", ("float_sort",), lambda a: op("float_sort", a, 0, True), inputs(distinct((3, 2)))),
    Case(
        "sort_with_indices",
        ("float_sort_with_indices",),
        lambda a: op("float_sort_with_indices", a, 1, True),
        inputs(distinct((2, 4))),
    ),
    # -- tensor API compositions (default ops of the Tensor layer) --------------------------
    Case("tensor_topk", (), lambda a: a.topk(2, dim=1), inputs(distinct((2, 4)))),
    Case("tensor_var", (), lambda a: a.var(1), inputs(u((2, 4)))),
    Case("tensor_getitem", (), lambda a: a[1:, ::2], inputs(u((3, 4)))),
    Case("tensor_stack", (), lambda a, b: type(a).stack([a, b], 1), inputs(u((2, 3)), u((2, 3)))),
]


test_gradient_matches_finite_differences = finite_difference_test(CASES, __name__)


# -- math functions --------------------------------------------------------------------------------
def _atan2_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    # every quadrant, away from the branch cut (x < 0, y = 0) and the origin
    return [nz((2, 3), 0.3, 2.0)(rng), nz((3,), 0.3, 2.0)(rng)]


MATH_CASES = [
    # -- trigonometric and hyperbolic --------------------------------------------------------
    Case("tan", ("float_tan",), lambda a: op("float_tan", a), inputs(u((2, 3), -1.2, 1.2))),
    Case("sinh", ("float_sinh",), lambda a: op("float_sinh", a), inputs(u((2, 3)))),
    Case("cosh", ("float_cosh",), lambda a: op("float_cosh", a), inputs(u((2, 3)))),
    Case("asin", ("float_asin",), lambda a: op("float_asin", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("acos", ("float_acos",), lambda a: op("float_acos", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("atan", ("float_atan",), lambda a: op("float_atan", a), inputs(u((2, 3), -4, 4))),
    Case("asinh", ("float_asinh",), lambda a: op("float_asinh", a), inputs(u((2, 3), -4, 4))),
    Case("acosh", ("float_acosh",), lambda a: op("float_acosh", a), inputs(u((2, 3), 1.2, 4))),
    Case("atanh", ("float_atanh",), lambda a: op("float_atanh", a), inputs(u((2, 3), -0.9, 0.9))),
    Case("atan2", ("float_atan2",), lambda y, x: op("float_atan2", y, x), _atan2_inputs),
    # -- rounding, fmod ----------------------------------------------------------------------
    Case("trunc", ("float_trunc",), lambda a: op("float_trunc", a), inputs(frac((2, 3)))),
    Case("fmod", ("float_fmod",), lambda a, b: op("float_fmod", a, b), _remainder_inputs),
    Case(
        "fmod_bcast",
        ("float_fmod",),
        lambda a, b: op("float_fmod", a, b),
        inputs(frac((2, 3), 0.2, 0.8), const([1.0, -1.0, 1.0])),
    ),
    Case(
        "fmod_scalar",
        ("float_fmod_scalar",),
        lambda a: op("float_fmod_scalar", a, -1.0),
        inputs(frac((2, 3), 0.2, 0.8)),
    ),
    # -- cumulative (differentiated through their default composition) -----------------------
    Case("cumprod", ("float_cumprod",), lambda a: op("float_cumprod", a, 1), inputs(nz((2, 4)))),
    Case(
        "cumprod_zero",
        ("float_cumprod",),
        lambda a: op("float_cumprod", a, 0),
        inputs(const([[1.5, -0.5], [0.0, 2.0], [0.7, 0.0], [1.2, 0.9]])),
    ),
    Case("cummax", ("float_cummax",), lambda a: op("float_cummax", a, 1), inputs(distinct((2, 5)))),
    Case("cummin", ("float_cummin",), lambda a: op("float_cummin", a, 0), inputs(distinct((4, 2)))),
    # -- Tensor compositions -----------------------------------------------------------------
    Case("tensor_sum_dims", (), lambda a: a.sum_dims([0, 2]), inputs(u((2, 3, 2)))),
    Case("tensor_mean_dims", (), lambda a: a.mean_dims([1, 2]), inputs(u((2, 3, 2)))),
    Case("tensor_max_dims", (), lambda a: a.max_dims([0, 1]), inputs(distinct((2, 3, 2)))),
    Case("tensor_prod_dims", (), lambda a: a.prod_dims([0, 1]), inputs(nz((2, 2, 2)))),
    Case("tensor_max_abs_dims", (), lambda a: a.max_abs_dims([1]), inputs(distinct((2, 3)))),
    Case("tensor_max_pair", (), lambda a, b: a.max_pair(b), inputs(distinct((2, 3)), distinct((3,)))),
    Case("tensor_min_pair", (), lambda a, b: a.min_pair(b), inputs(distinct((2, 3)), distinct((2, 1)))),
    Case("tensor_median", (), lambda a: a.median(1), inputs(distinct((2, 5)))),
    Case("tensor_var_mean", (), lambda a: sum(a.var_mean(1)), inputs(u((2, 4)))),
    Case("tensor_var_mean_bias", (), lambda a: a.var_mean_bias(0)[0], inputs(u((3, 2)))),
    Case("tensor_cov", (), lambda a: a.cov(1), inputs(u((2, 5)))),
    Case("tensor_cov_batch", (), lambda a: a.cov(-2), inputs(u((2, 4, 3)))),
    Case("tensor_hypot", (), lambda a, b: a.hypot(b), inputs(nz((2, 3)), nz((3,)))),
    Case("tensor_square", (), lambda a: a.square(), inputs(u((2, 3)))),
    Case("tensor_deg2rad", (), lambda a: a.deg2rad() + a.rad2deg(), inputs(u((2, 3)))),
]


test_math_gradient_matches_finite_differences = finite_difference_test(
    MATH_CASES, __name__, "test_math_gradient_matches_finite_differences"
)


# -- shape and indexing ops ------------------------------------------------------------------------
_IDX_ND = [[1, 0], [0, 2], [1, 0]]  # a repeated index: accumulation and "last wins" are exercised


_SCATTER_MODES = ("add", "mul", "max", "min", "assign")


LAYOUT_CASES = [
    Case("unfold", ("float_unfold",), lambda a: op("float_unfold", a, 1, 2, 1), inputs(u((2, 4)))),
    Case("unfold_step", ("float_unfold",), lambda a: op("float_unfold", a, 0, 2, 2), inputs(u((5, 2)))),
    Case(
        "gather_nd",
        ("float_gather_nd",),
        lambda a, i: op("float_gather_nd", a, i),
        inputs(u((2, 3)), const(_IDX_ND)),
    ),
    Case(
        "gather_nd_rows",
        ("float_gather_nd",),
        lambda a, i: op("float_gather_nd", a, i),
        inputs(u((3, 2)), const([[2], [0], [2]])),
    ),
    *(
        Case(
            f"scatter_nd_{mode}",
            ("float_scatter_nd",),
            lambda a, i, v, mode=mode: op("float_scatter_nd", a, i, v, mode),
            inputs(distinct((2, 3)), const(_IDX_ND), distinct((3,))),
        )
        for mode in _SCATTER_MODES
    ),
    Case(
        "scatter_nd_rows_max",
        ("float_scatter_nd",),
        lambda a, i, v: op("float_scatter_nd", a, i, v, "max"),
        inputs(distinct((3, 2)), const([[2], [0], [2]]), distinct((3, 2))),
    ),
    Case(
        "scatter_assign",
        ("float_scatter_assign",),
        lambda a, i, v: op("float_scatter_assign", 1, a, i, v),
        inputs(u((2, 3)), const([[2, 0], [1, 1]]), u((2, 2))),
    ),
    Case(
        "select_assign",
        ("float_select_assign",),
        lambda a, i, v: op("float_select_assign", a, 1, i, v),
        inputs(u((2, 3)), const([2, 0, 2]), u((2, 3))),
    ),
    Case("cross", ("float_cross",), lambda a, b: op("float_cross", a, b, 1), inputs(u((2, 3)), u((2, 3)))),
    # -- Tensor methods composed from other ops ------------------------------------------------
    Case("tensor_pad_constant", (), lambda a: a.pad((1, 2, 0, 1), value=0.5), inputs(u((2, 3)))),
    Case("tensor_pad_reflect", (), lambda a: a.pad((2, 1), mode="reflect"), inputs(u((2, 3)))),
    Case("tensor_pad_edge", (), lambda a: a.pad((1, 2), mode="edge"), inputs(u((2, 3)))),
    Case("tensor_roll", (), lambda a: a.roll([1, -1], [0, 1]), inputs(u((2, 3)))),
    Case("tensor_tril", (), lambda a: a.tril(-1), inputs(u((3, 3)))),
    Case("tensor_triu", (), lambda a: a.triu(1), inputs(u((2, 3, 3)))),
    Case("tensor_take", (), lambda a, i: a.take(1, i), inputs(u((2, 3)), const([[2, 0], [2, 2]]))),
    Case("tensor_movedim", (), lambda a: a.movedim(0, -1) * 1.0, inputs(u((2, 3, 2)))),
    Case("tensor_mask_select", (), lambda a: a.mask_select(a > 0), inputs(distinct((2, 3)))),
    Case("tensor_slice_negative_step", (), lambda a: a.slice([None, (0, 4, -2)]), inputs(u((2, 4)))),
    Case(
        "tensor_slice_assign_negative_step",
        (),
        lambda a, v: a.slice_assign([slice(None, None, -1)], v),
        inputs(u((3, 2)), u((3, 2))),
    ),
    Case("tensor_dot", (), lambda a, b: a.dot(b), inputs(u((4,)), u((4,)))),
]


test_layout_gradient_matches_finite_differences = finite_difference_test(
    LAYOUT_CASES, __name__, "test_layout_gradient_matches_finite_differences"
)


# -- the *_owned ops -------------------------------------------------------------------------------
OWNED_BINARY = ["add", "sub", "mul", "div"]


OWNED_UNARY = ["exp", "log", "sqrt", "neg", "tanh"]


def _grad(backend: Any, x: np.ndarray, build: Any) -> np.ndarray:
    from burn import Tensor

    t = Tensor.from_data(x, backend=backend).require_grad()
    out = wrap(build(t._p), backend, Float)
    grad = t.grad(out.sum().backward())
    assert grad is not None, "no gradient reached the operand of an owned op"
    return np.array(grad.to_numpy())


@covers(
    *(f"float_{op}_owned" for op in OWNED_BINARY),
    *(f"float_{op}_scalar_owned" for op in OWNED_BINARY),
    *(f"float_{op}_owned" for op in OWNED_UNARY),
)
def test_owned_ops_have_the_plain_gradients(backend: Any, rng: np.random.Generator) -> None:
    if not backend.ad_enabled:
        pytest.skip("needs an autodiff backend")
    x = rng.uniform(0.5, 2.0, size=(3, 4)).astype(np.float64)
    y = backend.float_from_data(TensorData(rng.uniform(0.5, 2.0, size=(4,))), backend.default_device())
    for name in OWNED_BINARY:
        owned, plain = getattr(backend, f"float_{name}_owned"), getattr(backend, f"float_{name}")
        np.testing.assert_allclose(
            _grad(backend, x, lambda p, o=owned: o(p, y)), _grad(backend, x, lambda p, f=plain: f(p, y))
        )
        owned = getattr(backend, f"float_{name}_scalar_owned")
        plain = getattr(backend, f"float_{name}_scalar")
        np.testing.assert_allclose(
            _grad(backend, x, lambda p, o=owned: o(p, 1.5)), _grad(backend, x, lambda p, f=plain: f(p, 1.5))
        )
    for name in OWNED_UNARY:
        owned, plain = getattr(backend, f"float_{name}_owned"), getattr(backend, f"float_{name}")
        np.testing.assert_allclose(_grad(backend, x, owned), _grad(backend, x, plain))


# -- casts, device moves, detaching ----------------------------------------------------------------
@covers("float_cast")
def test_cast_gradient_goes_back_in_the_input_dtype(backend: Any) -> None:
    from burn import Tensor
    from burn.foundations.dtype import DType

    require_autodiff(backend)
    others = [d for d in backend.capabilities.float_dtypes if d is not backend.float_dtype]
    if not others:
        pytest.skip(f"capability: backend {backend.name!r} declares a single float dtype, nothing to cast to")
    target = others[0]
    x = Tensor.from_data(np.array([[0.5, -1.25], [2.0, 3.5]]), backend=backend).require_grad()
    y = x.cast(target) * Tensor.from_data(np.array([2.0, -3.0]), backend=backend, dtype=target)
    g = y.sum().backward()
    grad = x.grad(g)
    assert grad is not None
    assert grad.dtype is backend.float_dtype, (
        f"gradient dtype {grad.dtype}, input dtype {backend.float_dtype}"
    )
    np.testing.assert_allclose(grad.to_numpy().astype(np.float64), [[2.0, -3.0], [2.0, -3.0]])
    assert DType.from_any(target).is_float


@covers("float_to_device")
def test_to_device_gradient_comes_back_to_the_input_device(backend: Any) -> None:
    from burn import Tensor

    require_autodiff(backend)
    devices = backend.devices()
    source, target = devices[0], devices[-1]
    x = Tensor.from_data(np.array([1.0, -2.0, 4.0]), source, backend=backend).require_grad()
    y = x.to_device(target)
    g = ((y * y).sum()).backward()
    grad = x.grad(g)
    assert grad is not None and grad.device == source, (
        f"gradient on {grad and grad.device}, input on {source}"
    )
    np.testing.assert_allclose(grad.to_numpy().astype(np.float64), [2.0, -4.0, 8.0])


@covers("float_detach", "float_set_require_grad")
def test_detach_and_set_require_grad_false_block_gradients(backend: Any) -> None:
    from burn import Tensor

    require_autodiff(backend)
    x = Tensor.from_data(np.array([1.0, 2.0]), backend=backend).require_grad()
    y = x * x.detach() + x.set_require_grad(False) * 3.0 + x
    grads = y.sum().backward()
    # d/dx [x * c + 3c + x] with c = x held constant: c + 1
    grad = x.grad(grads)
    assert grad is not None
    np.testing.assert_allclose(grad.to_numpy().astype(np.float64), [2.0, 3.0])
