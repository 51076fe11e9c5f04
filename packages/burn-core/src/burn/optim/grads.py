"""Gradients keyed by `ParamId`: what optimizers consume."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from burn.module.param import Param, ParamId

if TYPE_CHECKING:
    from burn.module.base import Module
    from burn.tensor.tensor import Tensor


class GradientsParams:
    """Gradients of a module's params, keyed by `ParamId`, as inner-backend tensors.

    Built from the `Gradients` that ``loss.backward()`` returns: `from_grads` takes (and removes)
    the gradient of every param of `module` that has one. Pass a submodule to optimize only it.

    Example:
        >>> grads = GradientsParams()
        >>> len(grads), grads.get(ParamId(7)) is None
        (0, True)
    """

    __slots__ = ("_grads",)

    def __init__(self, grads: dict[ParamId, Tensor] | None = None) -> None:
        self._grads: dict[ParamId, Tensor] = dict(grads or {})

    @classmethod
    def from_grads(cls, grads: Any, module: Module) -> GradientsParams:
        """Gradients of every param of `module` found in `grads` (removed from `grads`)."""
        out = cls()

        def take(_path: str, param: Param) -> None:
            if not param.is_initialized or not param.require_grad:
                return
            grad = param.val().grad_remove(grads)
            if grad is not None:
                out._grads[param.id] = grad

        module.visit(take)
        return out

    @classmethod
    def from_module(cls, grads: Any, module: Module) -> GradientsParams:
        """Only the gradients of `module`'s params (a submodule of the differentiated model)."""
        return cls.from_grads(grads, module)

    def get(self, param_id: ParamId) -> Tensor | None:
        return self._grads.get(param_id)

    def remove(self, param_id: ParamId) -> Tensor | None:
        return self._grads.pop(param_id, None)

    def register(self, param_id: ParamId, grad: Tensor) -> None:
        """Set (replace) the gradient of `param_id`."""
        self._grads[param_id] = grad

    def __len__(self) -> int:
        return len(self._grads)

    def __contains__(self, param_id: object) -> bool:
        return param_id in self._grads

    def __iter__(self) -> Iterator[ParamId]:
        return iter(self._grads)

    def items(self) -> Iterator[tuple[ParamId, Tensor]]:
        return iter(self._grads.items())

    def __repr__(self) -> str:
        return f"GradientsParams({len(self)} params)"


class GradientsAccumulator:
    """Sums `GradientsParams` over micro-batches; `grads()` hands the sum over and resets.

    Example:
        >>> acc = GradientsAccumulator()
        >>> len(acc.grads())
        0
    """

    __slots__ = ("_sum",)

    def __init__(self) -> None:
        self._sum: dict[ParamId, Tensor] = {}

    def accumulate(self, grads: GradientsParams) -> None:
        for param_id, grad in grads.items():
            current = self._sum.get(param_id)
            self._sum[param_id] = grad if current is None else current + grad

    def grads(self) -> GradientsParams:
        out = GradientsParams(self._sum)
        self._sum = {}
        return out
