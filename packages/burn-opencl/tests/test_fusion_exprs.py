"""burn-core's shared table of fused expressions (`burn.backend.fusion_exprs`) against burn-opencl's
one-op kernels: fused and unfused kernels must compute each op with the same C expression."""

from __future__ import annotations

import pytest

from burn.backend.fusion_exprs import EXPRS, FLOAT_HELPERS, REDUCE_UPDATES
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd

# IR op -> the one-op kernel it must agree with.
ONE_OP: dict[str, ew.Ew] = {
    **{f"float_{k}": ew.FLOAT_UNARY[k] for k in (
        "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "erf", "round", "floor", "ceil", "neg",
        "recip", "log1p", "sign",
    )},
    **{k: ew.FLOAT_UNARY[k] for k in ("relu", "gelu", "sigmoid", "log_sigmoid", "silu")},
    **{f"float_{k}_scalar": ew.FLOAT_SCALAR[f"{k}_s"] for k in ("add", "sub", "mul", "div")},
    "float_remainder_scalar": ew.FLOAT_SCALAR["rem_s"],
    "float_powf_scalar": ew.FLOAT_SCALAR["pow_s"],
    **{k: ew.FLOAT_SCALAR[k] for k in ("leaky_relu", "softplus")},
    "float_clamp_min": ew.FLOAT_SCALAR["clamp_min"],
    "float_clamp_max": ew.FLOAT_SCALAR["clamp_max"],
    "float_clamp": ew.FLOAT_SCALAR2["clamp"],
    "hard_sigmoid": ew.FLOAT_SCALAR2["hard_sigmoid"],
    **{f"float_{k}": ew.FLOAT_BINARY[k] for k in ("add", "sub", "mul", "div")},
    "float_remainder": ew.FLOAT_BINARY["rem"],
    "float_powf": ew.FLOAT_BINARY["pow"],
    **{k: ew.FLOAT_BINARY[k] for k in ("relu_backward", "sigmoid_backward", "gelu_backward")},
    "float_is_nan": ew.FLOAT_TEST["is_nan"],
    "float_is_inf": ew.FLOAT_TEST["is_inf"],
    **{
        f"float_{name}": ew.COMPARE[k]
        for name, k in (("equal", "eq"), ("not_equal", "ne"), ("greater", "gt"), ("greater_equal", "ge"),
                        ("lower", "lt"), ("lower_equal", "le"))
    },
    **{
        f"float_{name}_elem": ew.COMPARE_SCALAR[f"{k}_s"]
        for name, k in (("equal", "eq"), ("not_equal", "ne"), ("greater", "gt"), ("greater_equal", "ge"),
                        ("lower", "lt"), ("lower_equal", "le"))
    },
    "bool_not": ew.BOOL_UNARY["not"],
    "bool_and": ew.BOOL_BINARY["and"],
    "bool_or": ew.BOOL_BINARY["or"],
    "bool_equal": ew.BOOL_BINARY["eq"],
    "float_mask_where": ew.MASK_WHERE,
    "float_mask_fill": ew.MASK_FILL,
    "float_cast": ew.CAST,
    "int_into_float": ew.CAST,
    "bool_into_float": ew.CAST,
}


@pytest.mark.no_device
@pytest.mark.parametrize("op", sorted(EXPRS))
def test_fused_expression_is_the_one_op_kernels(op: str) -> None:
    one_op = ONE_OP[op]
    assert EXPRS[op].expr == one_op.expr
    assert EXPRS[op].promote[: one_op.arity] == one_op.promote[: one_op.arity]


@pytest.mark.no_device
def test_helpers_and_reductions_are_the_one_op_kernels() -> None:
    assert FLOAT_HELPERS.replace("B_FN ", "inline ") == ew._FLOAT_HELPERS
    for op, update in REDUCE_UPDATES.items():
        assert update == rd._OPS[op.removeprefix("float_").removesuffix("_dim")][1]
