"""Float ops that may reuse an operand's buffer (Burn's ownership trick; see `burn.tensor._ownership`).

The Tensor layer calls an ``*_owned`` op only after proving that an operand's tensor is a dying
temporary and moving its primitive out, so the operands are handed over by value: the caller
never uses them again. An operand the caller still needs (the other operand, held by its tensor)
has a second holder besides the caller's local variable, which is what tells the two apart: the
backend may write into an array referenced only by that one local and the call. A backend may
then write the result into an operand's buffer, but only where it proves for itself that nothing
else refers to that buffer; otherwise it computes out of place. Results are the plain op's, bit
for bit. The defaults simply call the plain op, so a backend that does not declare the
``buffer_reuse`` feature needs nothing here.
"""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default

P = Any  # an opaque primitive


class ReuseOps:
    """The ``float_*_owned`` ops: same semantics as the plain ops, operands handed over."""

    # -- binary, tensor operands: either may be handed over -------------------------------------
    @default
    def float_add_owned(self, lhs: P, rhs: P) -> P:
        return self.float_add(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_sub_owned(self, lhs: P, rhs: P) -> P:
        return self.float_sub(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_mul_owned(self, lhs: P, rhs: P) -> P:
        return self.float_mul(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_div_owned(self, lhs: P, rhs: P) -> P:
        return self.float_div(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    # -- scalar operand -----------------------------------------------------------------------
    @default
    def float_add_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_add_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_sub_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_sub_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_mul_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_mul_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_div_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_div_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    # -- unary math ---------------------------------------------------------------------------
    @default
    def float_exp_owned(self, tensor: P) -> P:
        return self.float_exp(tensor)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_log_owned(self, tensor: P) -> P:
        return self.float_log(tensor)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_sqrt_owned(self, tensor: P) -> P:
        return self.float_sqrt(tensor)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_neg_owned(self, tensor: P) -> P:
        return self.float_neg(tensor)  # type: ignore[attr-defined,no-any-return]

    @default
    def float_tanh_owned(self, tensor: P) -> P:
        return self.float_tanh(tensor)  # type: ignore[attr-defined,no-any-return]
