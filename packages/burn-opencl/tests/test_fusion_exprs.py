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


@pytest.mark.no_device
def test_literal_exponents_are_written_into_the_kernels() -> None:
    from burn.backend.fusion_exprs import op_code, scalar_values
    from burn.backend.ir import FusedBlock, OpIR, TensorIR
    from burn.foundations.dtype import DType
    from burn_opencl.fusion import OPENCL

    # one-op kernels: a kernel per declared exponent, the exponent a literal, no scalar parameter
    square = ew.LITERAL["float_powf_scalar", 2.0]
    text = ew._source(square.group, (DType.F32,), DType.F32, DType.F32, -1)
    kernel = text[text.index(f"void {square.cname}(") :].split("}\n")[0]
    assert "T s0 = (T)2.0;" in kernel and "s0_" not in kernel
    assert ("float_powf_scalar", 2.5) not in ew.LITERAL

    # fused kernels: the same, and the exponent is part of the block's signature
    def block(exponent: float) -> FusedBlock:
        x, y = TensorIR(0, (4,), DType.F32), TensorIR(1, (4,), DType.F32)
        return FusedBlock((4,), (x,), (OpIR("float_powf_scalar", (x,), (y,), (exponent,)),), (y,))

    params: list[str] = []
    code = "\n".join(op_code(block(-0.5), OPENCL, {}, params, "_i"))
    assert "T s0 = (T)-0.5;" in code and params == [] and scalar_values(block(-0.5)) == []
    params = []
    code = "\n".join(op_code(block(2.5), OPENCL, {}, params, "_i"))
    assert "T s0 = p0;" in code and params == ["float p0"] and scalar_values(block(2.5)) == [2.5]
    assert block(2.0).signature() != block(3.0).signature()
    assert block(2.5).signature() == block(1.5).signature()
