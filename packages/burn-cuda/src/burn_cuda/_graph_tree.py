"""The tensors inside a graphed function's arguments and results, and how to rebuild those
structures around other arrays (`burn_cuda.graphs`).

A structure flattens to a hashable spec (what it is, minus the arrays) and its tensors in order.
Arguments may nest tensors, modules (their params, in `Module.visit` order), `GradientsParams`,
tuples, lists and dicts; any other hashable value is a constant of the spec. Results may hold
tensors, `GradientsParams`, tuples, lists, dicts and None: a graph replays device work only, so a
host value computed inside would be stale, and a module result would carry an optimizer step
whose host-side step count the graph would freeze.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from burn.foundations.kind import Float, Kind
from burn.module.base import Module
from burn.module.param import ParamId
from burn.optim.grads import GradientsParams
from burn.tensor._base import wrap
from burn.tensor.tensor import Tensor

Spec = Any


@dataclass(frozen=True)
class TensorSpec:
    """A tensor: its backend and kind, and whether it is rebuilt as a graph leaf."""

    backend: Any
    kind: Kind
    require_grad: bool


@dataclass(frozen=True)
class ModuleSpec:
    """A module: rebuilt from the first call's module with each param holding a new tensor
    (`require_grad` per param: freezing one selects another graph)."""

    cls: type
    paths: tuple[str, ...]
    params: tuple[TensorSpec, ...]
    require_grad: tuple[bool, ...]
    template: Module = field(compare=False, hash=False)


@dataclass(frozen=True)
class GradsSpec:
    ids: tuple[ParamId, ...]
    grads: tuple[TensorSpec, ...]


@dataclass(frozen=True)
class SeqSpec:
    type: type
    items: tuple[Spec, ...]


@dataclass(frozen=True)
class DictSpec:
    keys: tuple[Any, ...]
    values: tuple[Spec, ...]


@dataclass(frozen=True)
class ConstSpec:
    value: Any


def _tensor_spec(t: Tensor) -> TensorSpec:
    return TensorSpec(t.backend, t.kind, t.is_require_grad())


def flatten(value: Any, path: str, *, result: bool = False) -> tuple[Spec, list[tuple[str, Tensor]]]:
    """``(spec, [(path, tensor), ...])`` of `value`; `result` applies the rules for results.

    Raises:
        TypeError: a value the structure cannot hold, named by its path.
    """
    leaves: list[tuple[str, Tensor]] = []
    return _flatten(value, path, result, leaves), leaves


def _flatten(value: Any, path: str, result: bool, leaves: list[tuple[str, Tensor]]) -> Spec:
    if isinstance(value, Tensor):
        leaves.append((path, value))
        return TensorSpec(value.backend, value.kind, False) if result else _tensor_spec(value)
    if isinstance(value, GradientsParams):
        grads = list(value.items())
        leaves.extend((f"{path}[{pid}]", t) for pid, t in grads)
        return GradsSpec(tuple(pid for pid, _ in grads), tuple(_tensor_spec(t) for _, t in grads))
    if isinstance(value, Module):
        if result:
            raise TypeError(
                f"graphed: the result {path} is a module; return gradients and run the optimizer "
                "outside the graph (its step count and learning rate are host values a graph freezes)"
            )
        named = list(value.named_params())
        tensors = [(f"{path}.{p}", param.val()) for p, param in named]
        leaves.extend(tensors)
        specs = tuple(TensorSpec(t.backend, t.kind, False) for _, t in tensors)
        flags = tuple(param.require_grad for _, param in named)
        return ModuleSpec(type(value), tuple(p for p, _ in named), specs, flags, value)
    if isinstance(value, (tuple, list)):
        items = tuple(_flatten(v, f"{path}[{i}]", result, leaves) for i, v in enumerate(value))
        return SeqSpec(type(value), items)
    if isinstance(value, dict):
        keys = tuple(value)
        return DictSpec(keys, tuple(_flatten(value[k], f"{path}[{k!r}]", result, leaves) for k in keys))
    if result and value is not None:
        raise TypeError(
            f"graphed: the result {path} is a {type(value).__name__}; a graph replays device work "
            "only, so return tensors (a host value computed inside would never change)"
        )
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"graphed: the argument {path} ({type(value).__name__}) is neither a tensor structure "
            "nor a hashable constant"
        ) from None
    return ConstSpec(value)


def tensor_of(array: Any, spec: TensorSpec) -> Tensor:
    """A tensor of `spec`'s backend around the innermost backend's `array`."""
    b = spec.backend
    if spec.kind is Float and b.ad_enabled:
        t = wrap(b.float_from_inner(array), b, Float)
        return t.require_grad() if spec.require_grad else t
    return wrap(array, b, spec.kind)


def rebuild(spec: Spec, arrays: Iterator[Any]) -> Any:
    """The structure of `spec` with its tensors around the next arrays of `arrays`."""
    if isinstance(spec, TensorSpec):
        return tensor_of(next(arrays), spec)
    if isinstance(spec, GradsSpec):
        pairs = zip(spec.ids, spec.grads, strict=True)
        return GradientsParams({pid: tensor_of(next(arrays), s) for pid, s in pairs})
    if isinstance(spec, ModuleSpec):
        params = iter(spec.params)
        return spec.template.map(lambda _path, p: p.with_value(tensor_of(next(arrays), next(params))))
    if isinstance(spec, SeqSpec):
        items = [rebuild(s, arrays) for s in spec.items]
        if spec.type is tuple:
            return tuple(items)
        return spec.type(*items) if hasattr(spec.type, "_fields") else spec.type(items)  # namedtuple
    if isinstance(spec, DictSpec):
        return {k: rebuild(s, arrays) for k, s in zip(spec.keys, spec.values, strict=True)}
    return spec.value
