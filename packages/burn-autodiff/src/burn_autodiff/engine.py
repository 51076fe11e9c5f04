"""The backward pass: walk the graph from the root in reverse creation order, apply each node's
rule once, accumulate gradients, and free everything as soon as it has been used.

All state lives in locals of `backward` and in the nodes of this one graph, so two threads
running backward on two graphs never share anything (thread safety without a global lock).
Backward *consumes* the graph, as in Burn: each visited node drops its saved tensors and its
parents, so the graph is released even if the caller keeps the root; a second backward through
a consumed node raises `AutodiffError`.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from burn_autodiff.checkpoint import resolve_saved
from burn_autodiff.errors import AutodiffError
from burn_autodiff.gradients import Gradients
from burn_autodiff.lazy import LAZY, accumulate, materialize
from burn_autodiff.node import ADTensor, Node

if TYPE_CHECKING:
    from burn.backend import Backend


def consumed(B: Any, saved: Any, need: Any, g: Any) -> tuple:
    """The rule of a node whose graph a previous backward already used up."""
    raise AutodiffError(
        "backward(): part of this graph was already consumed by a previous backward() (each graph "
        "can be differentiated once, as in Burn); recompute the forward pass, or add the losses "
        "and call backward() once"
    )


def backward(backend: Backend, root: ADTensor) -> Gradients:
    """Gradients of `root` (ones as the seed, whatever its shape) for the tensors requiring grad."""
    node = root.node
    B = backend.inner
    if node is None:
        x = root.p
        raise AutodiffError(
            f"backward(): the tensor (shape {B.float_shape(x)}, {B.float_get_dtype(x)}) has no graph: "
            "neither it nor any tensor it was computed from requires grad; call require_grad() on "
            "the parameters before the forward pass"
        )
    x = root.p
    seed = B.float_ones(B.float_shape(x), B.float_device(x), B.float_get_dtype(x))
    add = B.float_add
    # Nodes wait in a max-heap on id until every consumer has run: a consumer always has a larger
    # id than its inputs, so when a node is popped its gradient is complete.
    heap: list[tuple[int, Node]] = [(-node.id, node)]
    pending: dict[Node, Any] = {node: seed}
    get = pending.get
    kept: dict[int, Any] = {}
    cache: dict[Node, Any] = {}  # checkpointing: outputs recomputed during this backward
    while heap:
        n = heappop(heap)[1]
        g = pending.pop(n)
        if isinstance(g, LAZY):  # slices or products of n, evaluated now that every consumer has run
            g = materialize(B, g)
        if n.keep is not None:
            kept[n.id] = g if B.float_get_dtype(g) == n.keep else B.float_cast(g, n.keep)
        rule = n.rule
        if rule is None:  # a leaf
            continue
        parents = n.parents
        grads = rule(B, resolve_saved(n, cache) if n.lazy else n.saved, parents, g)
        # the graph is consumed: drop what this node held as soon as its rule has run
        n.saved = None
        n.parents = ()
        n.rule = consumed
        n.recompute = None
        if cache:
            cache.pop(n, None)
        for parent, grad in zip(parents, grads, strict=False):
            if parent is not None and grad is not None:
                prev = get(parent)
                if prev is None:
                    pending[parent] = grad
                    heappush(heap, (-parent.id, parent))
                elif isinstance(prev, LAZY) or isinstance(grad, LAZY):
                    pending[parent] = accumulate(B, prev, grad)
                else:
                    pending[parent] = add(prev, grad)
    return Gradients(backend, kept, node.id)
