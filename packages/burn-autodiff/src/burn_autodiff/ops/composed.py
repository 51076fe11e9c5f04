"""One mechanism for the contract ops that autodiff differentiates through their composition.

Some ops have a fast kernel on the inner backend but no backward rule of their own, because
burn-core's default composition is already exact and a rule would be large (deformable
convolution, grid sampling, the cumulative product, a scatter_nd that multiplies...), or because
they are the ``*_backward`` helpers that rules call and must stay differentiable for gradients of
gradients. For those, `inner_or_default` decides per call:

- no float input is tracked: run the inner backend's op (its native kernel when it has one) and
  return an untracked result, so inference and frozen layers pay nothing for autodiff;
- an input is tracked: run burn-core's default composition on the autodiff backend itself, so
  every op it is made of records its own node and the gradient is the composition's.

Both paths compute the same values: the composition is the contract's definition of the op.
Each family's mixin takes its own backward helpers with the `backward_helpers` class decorator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from burn.backend import Backend
from burn.backend.contract import op_facts
from burn_autodiff.node import ADTensor as AD

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

BACKWARD_HELPERS = tuple(sorted(name for name, f in op_facts().items() if f.backward_of is not None))
"""The backward helpers of the contract (declared ``backward_of=`` at each op)."""


def records_no_node(fn: F) -> F:
    """Mark an autodiff op that records no node of its own: its composition records the nodes
    (`inner_or_default`), or it is a hook such as ``float_detach``. Balanced checkpointing
    (`burn_autodiff.checkpoint.recording_ops`) leaves such ops alone."""
    fn.__records_no_node__ = True  # type: ignore[attr-defined]
    return fn


def inner_or_default(backend: Any, name: str, *args: Any) -> Any:
    """Contract op `name` on the autodiff `backend`: the inner op when nothing is tracked,
    else burn-core's default composition (recorded node by node).

    Args:
        backend: the `Autodiff` instance the op was called on.
        name: the contract op (``"deform_conv2d"``, ``"float_cumprod"``...), returning one float
            primitive or a tuple of them (``"lstm_cell_backward"``).
        *args: the op's arguments as the contract orders them (float primitives are
            `ADTensor`; anything else is handed over unchanged).

    Example:
        >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
        >>> x = burn.Tensor.from_data([[1.0, 2.0, 3.0]], backend=B)  # doctest: +SKIP
        >>> inner_or_default(B, "float_cumprod", x._p, 1).node is None  # doctest: +SKIP
        True
    """
    for a in args:
        if type(a) is AD and a.node is not None:
            composed: Any = getattr(Backend, name)(backend, *args)
            return composed
    out = getattr(backend._in, name)(*[a.p if type(a) is AD else a for a in args])
    return tuple(AD(o, None) for o in out) if type(out) is tuple else AD(out, None)


def _helper(name: str) -> Callable[..., Any]:
    def helper(self: Any, *args: Any) -> Any:
        out = inner_or_default(self, name, *args)  # tracked: the differentiable composition
        return out

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = getattr(Backend, name).__doc__
    return helper


def backward_helpers(family: str) -> Callable[[C], C]:
    """Class decorator: give a family's mixin the family's backward helpers, called on the
    autodiff backend itself (the rules call them on the inner backend).

    Each runs the inner backend's helper when no input is tracked, and otherwise burn-core's
    default composition of differentiable ops (so a gradient of a gradient is still recorded).

    Example:
        >>> @backward_helpers("embedding")
        ... class Ops:
        ...     pass
        >>> Ops.embedding_backward.__name__
        'embedding_backward'
    """
    facts = op_facts()

    def install(cls: C) -> C:
        for name in BACKWARD_HELPERS:
            if facts[name].family == family:
                setattr(cls, name, _helper(name))
        return cls

    return install
