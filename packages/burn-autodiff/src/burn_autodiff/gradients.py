"""`Gradients`: what one ``backward()`` call produced, keyed by graph node id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.errors import BackendMismatchError
from burn_autodiff.errors import AutodiffError

if TYPE_CHECKING:
    from burn.backend import Backend
    from burn_autodiff.node import Node


class Gradients:
    """The gradients of one backward pass, as inner-backend primitives keyed by node id.

    Only tensors that require grad (leaves made by ``require_grad()``, or intermediate tensors
    marked with ``set_require_grad(True)`` before backward) get an entry. Read them through the
    tensor: ``x.grad(grads)`` (an inner-backend tensor) or ``x.grad_remove(grads)``.

    Asking for a tensor's gradient:

    - a tensor that requires grad and is part of this backward's graph: its gradient;
    - a tensor that does not require grad, or that requires grad but did not contribute to the
      root (or whose entry was removed): ``None``;
    - a tensor created *after* the root of this backward (so it cannot be in its graph, e.g.
      a parameter updated by an optimizer step) raises `AutodiffError`: these are stale
      gradients of another step;
    - a `Gradients` of another autodiff backend instance raises `BackendMismatchError`.

    Example:
        >>> import burn  # doctest: +SKIP
        >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
        >>> x = burn.Tensor.from_data([1.0, 2.0], backend=B).require_grad()  # doctest: +SKIP
        >>> grads = (x * x).sum().backward()  # doctest: +SKIP
        >>> x.grad(grads).tolist()  # doctest: +SKIP
        [2.0, 4.0]
    """

    __slots__ = ("_grads", "_backend", "_root_id")

    def __init__(self, backend: Backend, grads: dict[int, Any], root_id: int) -> None:
        self._grads = grads
        self._backend = backend
        self._root_id = root_id

    def __len__(self) -> int:
        return len(self._grads)

    def node_ids(self) -> list[int]:
        """Ids of the graph nodes that have a gradient here."""
        return list(self._grads)

    def __repr__(self) -> str:
        return f"<Gradients of {self._backend.name}: {len(self._grads)} tensors, root node {self._root_id}>"

    def _lookup(self, backend: Backend, node: Node | None, remove: bool, op: str) -> Any:
        if backend is not self._backend:
            raise BackendMismatchError(
                f"{op}: these Gradients come from backend {self._backend.name!r} "
                f"(instance {id(self._backend):#x}) but the tensor is on {backend.name!r} "
                f"(instance {id(backend):#x})"
            )
        if node is None:
            return None
        if node.id > self._root_id:
            raise AutodiffError(
                f"{op}: the tensor (graph node {node.id}) was created after the root of the backward "
                f"that produced these Gradients (node {self._root_id}), so it is not part of that graph: "
                "these are the gradients of another graph or an earlier step; call backward() on a "
                "loss computed from this tensor"
            )
        return self._grads.pop(node.id, None) if remove else self._grads.get(node.id)


def check_gradients(grads: Any, op: str) -> Gradients:
    """`grads` itself, or a TypeError naming what was passed instead."""
    if type(grads) is not Gradients:
        raise TypeError(f"{op}: expected the Gradients returned by backward(), got {type(grads).__name__}")
    return grads
