"""The autodiff primitive (`ADTensor`) and the graph node (`Node`) it points to.

A float tensor of the autodiff backend is an `ADTensor`: the inner backend's primitive plus the
node that produced it, or ``None`` when no gradient flows through it (a constant). Nodes form a
DAG through `Node.parents`; a node's id is drawn from one process-wide counter, so a parent's id
is always smaller than its children's and sorting by id gives a topological order for free.

Both classes use ``__slots__`` and plain positional construction: one node is created per
tracked op, so their cost is the autodiff overhead.

What a node saves for its rule is a small NamedTuple naming each value (``Operands(lhs, rhs,
lhs_shape, rhs_shape)``), or the one value itself when the rule needs one (``exp`` keeps its
output), or ``None`` when it needs nothing. Forwards build the NamedTuple with `make`, and
`saved_fields` / `with_fields` take any saved state apart and back (checkpointing swaps values
for markers that way).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

# `next()` on an itertools.count is atomic under the GIL, so two threads building graphs at the
# same time still get unique, increasing ids without a lock.
_ids = itertools.count(1)
next_id = _ids.__next__

Rule = Callable[..., tuple[Any, ...]]


class Node:
    """One recorded op: how to turn the gradient of its output into gradients of its inputs.

    Attributes:
        id: unique and increasing in creation order (parents have smaller ids).
        parents: the input nodes, ``None`` where an input is a constant (no gradient needed).
        rule: the backward rule (next to its forward in `burn_autodiff.ops`); ``None`` for a
            leaf.
        saved: what the rule needs (inner primitives, shapes...): a NamedTuple, the one value,
            or ``None``; freed once consumed.
        keep: the dtype of the gradient to keep in `Gradients` for this node (leaves and
            tensors marked with ``set_require_grad(True)``), else ``None``.
        lazy: ``True`` when `saved` holds checkpoint markers to resolve before the rule runs.
        recompute: with gradient checkpointing, ``(inner_op, args)`` recomputing this node's
            output in backward instead of keeping it; ``None`` otherwise.
    """

    __slots__ = ("id", "parents", "rule", "saved", "keep", "lazy", "recompute", "__weakref__")

    id: int
    parents: tuple[Node | None, ...]
    rule: Rule | None
    saved: Any
    keep: Any  # a burn DType or None
    lazy: bool
    recompute: tuple[Callable[..., Any], tuple[Any, ...]] | None

    def __init__(self, parents: tuple[Node | None, ...], rule: Rule | None, saved: Any) -> None:
        self.id = next_id()
        self.parents = parents
        self.rule = rule
        self.saved = saved
        self.keep = None
        self.lazy = False
        self.recompute = None

    @classmethod
    def leaf(cls, dtype: Any) -> Node:
        """A node for a tensor that requires grad: its gradient is kept under its id."""
        node = cls((), None, None)
        node.keep = dtype
        return node

    @property
    def is_leaf(self) -> bool:
        return self.rule is None

    def __repr__(self) -> str:
        name = "leaf" if self.rule is None else getattr(self.rule, "__name__", "op")
        return f"<Node {self.id} {name}>"


class ADTensor:
    """The float primitive of `Autodiff`: an inner primitive and its graph node (or ``None``).

    Example:
        >>> t = ADTensor("inner-primitive", None)
        >>> t.p, t.node is None
        ('inner-primitive', True)
    """

    __slots__ = ("p", "node")

    def __init__(self, p: Any, node: Node | None) -> None:
        self.p = p
        self.node = node

    def __repr__(self) -> str:
        return f"ADTensor({self.p!r}, node={self.node!r})"


make = tuple.__new__
"""``make(MulSaved, (x, y))`` is ``MulSaved(x, y)`` for a NamedTuple ``MulSaved``, at about half
the cost: it skips the Python-level ``__new__`` that NamedTuple generates. A recorded op costs
~2 us; its saved NamedTuple adds ~0.1 us this way, ~0.25 us through ``MulSaved(x, y)``. A single
value is saved as itself, never as a NamedTuple (`saved_fields` tells the two apart by type)."""


def _is_record(saved: Any) -> bool:
    """Whether `saved` is a NamedTuple of fields (not one value that happens to be a tuple)."""
    return isinstance(saved, tuple) and hasattr(type(saved), "_fields")


def saved_fields(saved: Any) -> tuple[Any, ...]:
    """The values in a node's saved state: a NamedTuple's fields, else the one value (none
    for ``None``).

    Example:
        >>> from typing import NamedTuple
        >>> class Pair(NamedTuple):
        ...     a: int
        ...     b: int
        >>> saved_fields(Pair(1, 2)), saved_fields((3, 4)), saved_fields(None)
        ((1, 2), ((3, 4),), ())
    """
    if saved is None:
        return ()
    return tuple(saved) if _is_record(saved) else (saved,)


def with_fields(saved: Any, values: tuple[Any, ...]) -> Any:
    """Saved state of `saved`'s form holding `values` (as `saved_fields` lists them): the same
    NamedTuple type, or the one value.

    Example:
        >>> with_fields((3, 4), ("shape",))
        'shape'
    """
    if saved is None:
        return None
    return make(type(saved), values) if _is_record(saved) else values[0]


def unary(out: Any, x: ADTensor, rule: Rule, saved: Any) -> ADTensor:
    """`out` of an op of the one input `x`, with a node on `rule` (keeping `saved`) when `x` is
    tracked: the recording step of every one-input forward.

    Example:
        >>> unary("inner-out", ADTensor("inner-x", None), lambda *a: a, ()).node is None
        True
    """
    n = x.node
    return ADTensor(out, None if n is None else Node((n,), rule, saved))
