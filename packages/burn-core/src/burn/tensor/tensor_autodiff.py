"""Autodiff methods: each calls the backend hook of the same name (`backward`, `grad`, ...).

Plain backends implement the hooks as identities or errors; the autodiff decorator
(``burn.backend("autodiff(ndarray)")``) implements them for real.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor._errors import kind_error
from burn.tensor.tensor_casts import CastOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


class AutodiffOps(CastOps):
    """Autodiff methods (mixin of `burn.Tensor`)."""

    __slots__ = ()

    def _need_autodiff(self, op: str) -> None:
        if self._k is not Float:
            raise kind_error(op, self, "a Float tensor", "only Float tensors carry gradients")
        if not self._b.ad_enabled:
            name = self._b.name
            raise TypeError(f"{op}: backend {name!r} has no autodiff; use burn.backend('autodiff({name})')")

    def require_grad(self) -> Tensor:
        """A tensor with the same values that requires grad (a leaf of the autodiff graph).

        Example:
            >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
            >>> x = Tensor.from_data([2.0], backend=B).require_grad()  # doctest: +SKIP
            >>> (x * x).backward() and None  # doctest: +SKIP

        Raises:
            KindError: the tensor is not Float.
            TypeError: the backend has no autodiff.
        """
        self._need_autodiff("require_grad")
        return wrap(self._b.float_set_require_grad(self._p, True), self._b, Float)

    def set_require_grad(self, require_grad: bool) -> Tensor:
        """A tensor with the same values that does (or does not) require grad.

        ``set_require_grad(False)`` works on every backend and kind (it is a no-op where nothing
        tracks gradients).
        """
        if not require_grad and (self._k is not Float or not self._b.ad_enabled):
            return self  # type: ignore[return-value]
        self._need_autodiff("set_require_grad")
        return wrap(self._b.float_set_require_grad(self._p, require_grad), self._b, Float)

    def is_require_grad(self) -> bool:
        """Whether the tensor requires grad (always False on backends without autodiff)."""
        return self._k is Float and bool(self._b.float_is_require_grad(self._p))

    def backward(self) -> Any:
        """Run backpropagation from this tensor (a non-scalar root seeds ones, as in Burn);
        returns the backend's `Gradients`."""
        self._need_autodiff("backward")
        return self._b.backward(self._p)

    def grad(self, grads: Any) -> Tensor | None:
        """This tensor's gradient in `grads`, as a tensor of the inner backend, or None."""
        self._need_autodiff("grad")
        g = self._b.grad(self._p, grads)
        return None if g is None else wrap(g, self._b.inner, Float)

    def grad_remove(self, grads: Any) -> Tensor | None:
        """Like `grad`, and removes the gradient from `grads`."""
        self._need_autodiff("grad_remove")
        g = self._b.grad_remove(self._p, grads)
        return None if g is None else wrap(g, self._b.inner, Float)

    def detach(self) -> Tensor:
        """The same values cut from the autodiff graph (the tensor itself on other backends)."""
        if self._k is Float:
            return wrap(self._b.float_detach(self._p), self._b, Float)
        return self  # type: ignore[return-value]

    def inner(self) -> Tensor:
        """The tensor on the inner backend of a decorator (autodiff); itself on plain backends.

        Float tensors go through the backend's `float_inner` hook; Int and Bool primitives are
        shared by a decorator and its inner backend.
        """
        b = self._b
        if self._k is Float:
            return wrap(b.float_inner(self._p), b.inner, Float)
        return wrap(self._p, b.inner, self._k)
