"""Gradient checkpointing: trade compute for memory by recomputing cheap outputs in backward.

With ``Autodiff(inner, checkpointing="balanced")`` (Burn's balanced strategy):

- a *memory-bound* op (elementwise arithmetic, unary math, clamps, masks, activations) records
  how to recompute its output, ``(inner_op, args)``, and no longer keeps its output alive;
- any node that would save the output of such an op (its own, or an input's) saves a marker
  instead: the producing `Node`, or `SELF` for its own output;
- *compute-bound* ops (matmul, convolutions, reductions, pooling...) and leaves keep their
  outputs as usual: they are the checkpoints recomputation starts from.

In backward, a node holding markers gets them resolved just before its rule runs, recomputing
(memoized for that backward) along the chain of memory-bound ops back to saved checkpoints. A
recomputed value is dropped when its own node has been processed, since nothing visited later
can need it.

The wrapping is installed per backend instance, so backends without checkpointing pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn_autodiff.errors import AutodiffError
from burn_autodiff.node import ADTensor, Node

if TYPE_CHECKING:
    from burn.backend import Backend

STRATEGIES = ("none", "balanced")


class _Self:
    """Marker for "this node's own output" in a checkpointed node's saved tuple."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SELF"


SELF = _Self()

MEMORY_BOUND = frozenset({
    "float_add", "float_sub", "float_mul", "float_div", "float_remainder", "float_powf",
    "float_add_scalar", "float_sub_scalar", "float_mul_scalar", "float_div_scalar",
    "float_remainder_scalar", "float_powf_scalar", "float_exp", "float_log", "float_log1p",
    "float_sqrt", "float_abs", "float_sin", "float_cos", "float_tanh", "float_erf", "float_neg",
    "float_recip", "float_clamp", "float_clamp_min", "float_clamp_max", "float_mask_fill",
    "float_mask_where", "relu", "leaky_relu", "gelu", "sigmoid", "log_sigmoid", "silu", "softplus",
    "hard_sigmoid",
    # math_ops and the further activations: element-wise too
    "float_tan", "float_sinh", "float_cosh", "float_asin", "float_acos", "float_atan", "float_asinh",
    "float_acosh", "float_atanh", "float_atan2", "float_fmod", "float_fmod_scalar", "gelu_approximate",
    "elu", "celu", "selu", "relu6", "hardtanh", "hard_swish", "softsign", "tanhshrink", "threshold",
    "thresholded_relu",
})

# Ops that may record a node but are not memory-bound: their outputs stay saved, and their
# saved inputs may still point at recomputable outputs.
COMPUTE_BOUND = frozenset({
    "float_matmul", "float_cast", "float_to_device", "float_round", "float_floor", "float_ceil",
    "float_sign", "float_sum", "float_sum_dim", "float_mean", "float_mean_dim", "float_prod",
    "float_prod_dim", "float_cumsum", "float_max_dim", "float_min_dim", "float_max_dim_with_indices",
    "float_min_dim_with_indices", "float_max", "float_min", "float_reshape", "float_permute",
    "float_swap_dims", "float_flip", "float_expand", "float_slice", "float_slice_assign", "float_cat",
    "float_repeat_dim", "float_gather", "float_scatter_add", "float_select", "float_select_add",
    "float_sort", "float_sort_with_indices", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d",
    "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "embedding", "interpolate", "softmax", "log_softmax",
    "float_trunc", "float_cummax", "float_cummin", "float_unfold", "float_gather_nd", "float_scatter_nd",
    "float_scatter_assign", "float_select_assign", "float_cross", "unfold4d", "fold4d", "glu", "softmin",
    "cross_entropy", "lstm_cell", "gru_cell",
})


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
        if markers and node.saved:
            saved = tuple(markers.get(id(s), s) for s in node.saved)
            if any(s is not o for s, o in zip(saved, node.saved, strict=True)):
                node.saved = saved
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
    for name in MEMORY_BOUND | COMPUTE_BOUND:
        setattr(backend, name, _wrap(getattr(backend, name), getattr(inner, name), name in MEMORY_BOUND))


def resolve_saved(node: Node, cache: dict[Node, Any]) -> tuple:
    """`node.saved` with markers replaced by the (re)computed outputs they stand for."""
    return tuple(
        value(node, cache) if s is SELF else value(s, cache) if type(s) is Node else s for s in node.saved
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
