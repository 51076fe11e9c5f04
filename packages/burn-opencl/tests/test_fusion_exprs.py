"""burn-opencl's one-op kernels and the fused kernels compute each contract op with the one C
expression declared at the op (`burn.backend.contract.Elementwise`, gathered in
`burn.backend.ir.ELEMENTWISE` and `burn.backend.fusion_exprs.EXPRS`)."""

from __future__ import annotations

import pytest

from burn.backend.fusion_exprs import EXPRS, FLOAT_HELPERS, REDUCE_UPDATES
from burn.backend.ir import ELEMENTWISE
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd


@pytest.mark.no_device
@pytest.mark.parametrize("op", sorted(EXPRS))
def test_fused_expression_is_the_one_op_kernels(op: str) -> None:
    if ELEMENTWISE[op].result == "cast":
        assert ew.CAST.expr == EXPRS[op].expr
        return
    one_op = ew.OPS[op]
    assert one_op.expr == EXPRS[op].expr == ELEMENTWISE[op].expr
    assert one_op.promote[: one_op.arity] == EXPRS[op].promote[: one_op.arity]
    assert (one_op.arity, one_op.nscalars) == (ELEMENTWISE[op].arity, ELEMENTWISE[op].nscalars)


@pytest.mark.no_device
def test_one_program_per_kernel_signature() -> None:
    # ops sharing a program must share their parameter list (inputs, scalars, promotion)
    for group, ops in ew.GROUPS.items():
        assert len({(o.arity, o.nscalars, o.promote[: o.arity], o.int_scalars) for o in ops}) == 1, group


@pytest.mark.no_device
def test_helpers_and_reductions_are_the_one_op_kernels() -> None:
    assert FLOAT_HELPERS.replace("B_FN ", "inline ") == ew._FLOAT_HELPERS
    for op, update in REDUCE_UPDATES.items():
        assert update == rd._OPS[op.removeprefix("float_").removesuffix("_dim")][1]
