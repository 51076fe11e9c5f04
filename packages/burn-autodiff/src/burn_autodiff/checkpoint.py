"""Gradient checkpointing: trade compute for memory by recomputing cheap outputs in backward.

With ``Autodiff(inner, checkpointing="balanced")`` (Burn's balanced strategy):

- a *memory-bound* op (elementwise arithmetic, unary math, clamps, masks, activations) records
  how to recompute its output, ``(inner_op, args)``, and no longer keeps its output alive;
- any node that would save the output of such an op (its own, or an input's) saves a marker
  instead: the producing `Node`, or `SELF` for its own output (in the field of its saved
  NamedTuple that held the output, or as the saved value itself);
- *compute-bound* ops (matmul, convolutions, reductions, pooling...) and leaves keep their
  outputs as usual: they are the checkpoints recomputation starts from.

In backward, a node holding markers gets them resolved just before its rule runs, recomputing
(memoized for that backward) along the chain of memory-bound ops back to saved checkpoints. A
recomputed value is dropped when its own node has been processed, since nothing visited later
can need it.

Which ops are which is declared at each op in the contract (``bound=``, `burn.backend.contract`);
`recording_ops` reads it for every op the autodiff backend records, so a new op cannot be left
out. The wrapping is installed per backend instance, so backends without checkpointing pay
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn.backend.contract import implemented_ops, op_facts
from burn_autodiff.errors import AutodiffError
from burn_autodiff.node import ADTensor, Node, saved_fields, with_fields

if TYPE_CHECKING:
    from burn.backend import Backend

STRATEGIES = ("none", "balanced")


class _Self:
    """Marker for "this node's own output" in a checkpointed node's saved state."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SELF"


SELF = _Self()

def recording_ops(cls: type) -> dict[str, str]:
    """Every op `cls` records a node for, with the checkpoint class declared at the op in the
    contract (``bound=`` in `burn.backend.ops`, the family's default otherwise).

    A recording op is a differentiable contract op that `cls` overrides, other than a backward
    helper and other than an op marked `records_no_node` (its composition records the nodes, or it
    is a hook such as ``float_detach``). Every such op has a class by construction: the contract
    cannot declare an op outside a family, and a family gives each differentiable op one.

    Example:
        >>> from burn_autodiff import Autodiff
        >>> ops = recording_ops(Autodiff)
        >>> ops["conv3d"], ops["relu"]
        ('compute', 'memory')
    """
    facts = op_facts()
    out: dict[str, str] = {}
    for name in sorted(implemented_ops(cls)):
        f = facts[name]
        if not f.differentiable or f.backward_of is not None:
            continue
        if getattr(getattr(cls, name), "__records_no_node__", False):
            continue
        assert f.bound is not None, f"{name}: a differentiable op without a checkpoint class"
        out[name] = f.bound
    return out


def _recomputable(t: Any) -> Node | None:
    n = t.node
    return n if n is not None and n.recompute is not None else None


def _wrap(op: Callable[..., Any], inner_op: Callable[..., Any], memory_bound: bool) -> Callable[..., Any]:
    def checkpointed(*args: Any) -> Any:
        result = op(*args)
        out = result[0] if type(result) is tuple else result
        node = out.node
        if node is None:
            return result
        markers: dict[int, Any] = {}
        for a in args:
            for t in a if type(a) is list or type(a) is tuple else (a,):
                if type(t) is ADTensor:
                    src = _recomputable(t)
                    if src is not None:
                        markers[id(t.p)] = src
        if memory_bound:
            node.recompute = (inner_op, tuple(_recompute_arg(a) for a in args))
            markers.setdefault(id(out.p), SELF)
        saved = node.saved
        if markers and saved is not None:
            fields = saved_fields(saved)
            marked = tuple(markers.get(id(s), s) for s in fields)
            if any(m is not s for m, s in zip(marked, fields, strict=True)):
                node.saved = with_fields(saved, marked)  # the same NamedTuple type: rules read fields
                node.lazy = True
        return result

    checkpointed.__name__ = getattr(op, "__name__", "op")
    return checkpointed


def _recompute_arg(a: Any) -> Any:
    if type(a) is ADTensor:
        src = _recomputable(a)
        return a.p if src is None else src
    return a


def install(backend: Backend) -> None:
    """Wrap the recording ops of an `Autodiff` instance for balanced checkpointing."""
    inner = backend.inner
    for name, bound in recording_ops(type(backend)).items():
        setattr(backend, name, _wrap(getattr(backend, name), getattr(inner, name), bound == "memory"))


def resolve_saved(node: Node, cache: dict[Node, Any]) -> Any:
    """`node.saved` with markers replaced by the (re)computed outputs they stand for (of the
    same form: the same NamedTuple type, or the one value)."""
    saved = node.saved
    fields = saved_fields(saved)
    return with_fields(
        saved,
        tuple(value(node, cache) if s is SELF else value(s, cache) if type(s) is Node else s for s in fields),
    )


def value(target: Node, cache: dict[Node, Any]) -> Any:
    """The output of `target`, recomputed (iteratively, memoized in `cache`) if not cached."""
    found = cache.get(target)
    if found is not None:
        return found
    stack = [target]
    while stack:
        n = stack[-1]
        if n in cache:
            stack.pop()
            continue
        if n.recompute is None:
            raise AutodiffError(
                "backward(): a checkpointed output is needed but its graph was already consumed by a "
                "previous backward(); recompute the forward pass"
            )
        op, args = n.recompute
        missing = [a for a in args if type(a) is Node and a not in cache]
        if missing:
            stack.extend(missing)
            continue
        cache[n] = op(*[cache[a] if type(a) is Node else a for a in args])
        stack.pop()
    return cache[target]
