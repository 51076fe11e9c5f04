"""`Module`: dataclass-style containers of params, walked depth-first with `map` and `visit`."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, dataclass_transform, runtime_checkable

from burn.module.param import Param

if TYPE_CHECKING:
    from burn.backend.device import Device

M = TypeVar("M", bound="Module")


@runtime_checkable
class ModuleMapper(Protocol):
    """Maps each param to a new one: ``map_param(path, param) -> Param``."""

    def map_param(self, path: str, param: Param) -> Param: ...


@runtime_checkable
class ModuleVisitor(Protocol):
    """Sees each param: ``visit_param(path, param)``."""

    def visit_param(self, path: str, param: Param) -> None: ...


MapFn = Callable[[str, Param], Param]
VisitFn = Callable[[str, Param], None]


@dataclass_transform(eq_default=False)  # subclasses with annotations become dataclasses
class Module:
    """Base class of models and layers.

    Declare fields like a dataclass (annotations, defaults); a subclass with annotations and no
    ``__init__`` of its own becomes a dataclass automatically. A custom ``__init__`` that assigns
    attributes works too. A field holding a `Param`, a `Module`, or a list / tuple / dict of them is
    part of the module; anything else (numbers, strings, callables, locks, open files...) is a
    constant: kept, never visited, never saved. No forward method is imposed; calling a module
    calls its ``forward`` when it has one.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> class Affine(Module):
        ...     weight: Param
        ...     scale: float = 2.0
        ...     def forward(self, x):
        ...         return x * self.weight.val() * self.scale
        >>> m = Affine(Param.from_tensor(burn.Tensor.ones((3,), backend=B)))
        >>> [path for path, _ in m.named_params()], m.num_params()
        (['weight'], 3)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__ and cls.__dict__.get("__annotations__"):
            dataclasses.dataclass(cls, eq=False, repr=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        forward = getattr(self, "forward", None)
        if forward is None:
            raise TypeError(f"{type(self).__name__} has no forward method to call")
        return forward(*args, **kwargs)

    # -- traversal ----------------------------------------------------------------------------
    def map(self: M, mapper: ModuleMapper | MapFn) -> M:
        """A new module with every param replaced by ``mapper(path, param)``; never mutates.

        Depth-first over fields in declaration order; list/tuple items by index, dict values by
        key. Containers without params are shared, not copied.
        """
        # The attribute test is what isinstance() of the runtime Protocol checks, at a fraction of
        # its cost (it runs once per optimizer step).
        fn = mapper.map_param if hasattr(mapper, "map_param") else mapper
        return self._map("", fn)

    def visit(self, visitor: ModuleVisitor | VisitFn) -> None:
        """Call ``visitor(path, param)`` for every param, depth-first in declaration order."""
        fn = visitor.visit_param if hasattr(visitor, "visit_param") else visitor
        self._visit("", fn)

    def _map(self: M, prefix: str, fn: MapFn) -> M:
        changes = {}
        for name, value in vars(self).items():
            new = _map_value(value, prefix + name, fn)
            if new is not value:
                changes[name] = new
        if not changes:
            return self
        out = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(out, name, value)
        return out

    def _visit(self, prefix: str, fn: VisitFn) -> None:
        for name, value in vars(self).items():
            _visit_value(value, prefix + name, fn)

    # -- built on map / visit -----------------------------------------------------------------
    def named_params(self) -> Iterator[tuple[str, Param]]:
        """``(path, param)`` pairs, depth-first in declaration order."""
        found: list[tuple[str, Param]] = []
        self.visit(lambda path, param: found.append((path, param)))
        return iter(found)

    def params(self) -> list[Param]:
        return [param for _, param in self.named_params()]

    def num_params(self, *, trainable: bool = True) -> int:
        """Number of scalar values in the params that require a gradient, like PyTorch's
        ``sum(p.numel() for p in m.parameters() if p.requires_grad)``: running statistics
        (BatchNorm's) and frozen params are not counted. ``trainable=False`` counts every param,
        the values a record of the module stores. Lazy params are not initialized.

        Example:
            >>> import burn
            >>> from burn import nn
            >>> B = burn.backend("ndarray")  # doctest: +SKIP
            >>> bn = nn.BatchNormConfig(4).init(B.default_device())  # doctest: +SKIP
            >>> bn.num_params(), bn.num_params(trainable=False)  # doctest: +SKIP
            (8, 16)
        """
        return sum(p.num_elements() for p in self.params() if not trainable or p.require_grad)

    def devices(self) -> list[Device]:
        """The distinct devices the params live on, in order of first appearance."""
        seen: list[Device] = []
        for param in self.params():
            if param.device not in seen:
                seen.append(param.device)
        return seen

    def to_device(self: M, device: Device) -> M:
        """The module with every param on `device` (a lazy param stays lazy, on `device`)."""
        return self.map(lambda _path, param: param.to_device(device))

    def fork(self: M, device: Device) -> M:
        """Like `to_device`, and every param becomes a fresh graph leaf (as Burn's ``fork``)."""
        return self.map(lambda _path, param: param.to_device(device).set_require_grad(param.require_grad))

    def no_grad(self: M) -> M:
        """The module with no param requiring a gradient."""
        return self.map(lambda _path, param: param.no_grad())

    def valid(self) -> Any:
        """The module on the autodiff backend's inner backend, same ParamIds, no graph.

        Layers whose behaviour differs between training and inference (Dropout, BatchNorm) read
        it from their input's backend (`ad_enabled`), so the result runs in inference mode; an
        explicit `train` / `eval` mode is cleared for that reason.
        """

        def to_inner(_path: str, param: Param) -> Param:
            if not param.is_initialized:
                device = param.device
                inner = device.owner.inner if device.owner is not None else None
                if inner is None or inner is device.owner:
                    return param
                return param.to_device(device.with_owner(inner)).no_grad()
            tensor = param.val()
            if not tensor.backend.ad_enabled:
                return param
            return Param(param.id, tensor.inner(), False)

        return _with_mode(self.map(to_inner), None)

    # -- train / eval mode ---------------------------------------------------------------------
    def train(self: M, mode: bool = True) -> M:
        """A copy of the module with every module in it set to training mode (``mode=False``:
        evaluation mode); the module itself is not changed.

        Without an explicit mode (the default), layers that behave differently while training
        (`Dropout`, `BatchNorm`) train when their input is on an autodiff backend, as in Burn.
        An explicit mode wins over that: ``model.eval()`` on an autodiff backend runs batch norm
        on its running statistics (never updated) and turns dropout off, while gradients still
        flow (fine-tuning with frozen statistics). The mode is a constant of each module: `map`,
        `to_device`, `fork` and `load_record` keep it, records never save it, and `valid` clears
        it (the inner backend then infers).

        Example:
            >>> from burn import nn
            >>> bn = nn.BatchNormConfig(4).init(device).eval()  # doctest: +SKIP
            >>> bn.training_mode, bn.train().training_mode  # doctest: +SKIP
            (False, True)
        """
        return _with_mode(self, bool(mode))

    def eval(self: M) -> M:
        """``train(False)``: a copy with every module in evaluation mode."""
        return _with_mode(self, False)

    def auto_mode(self: M) -> M:
        """A copy with the explicit mode cleared everywhere: train exactly on autodiff backends."""
        return _with_mode(self, None)

    @property
    def training_mode(self) -> bool | None:
        """True (`train`), False (`eval`) or None (no explicit mode: decided by the backend)."""
        return vars(self).get(_MODE)

    def is_training(self, x: Any = None) -> bool:
        """Whether this module trains now: its explicit mode, else whether the input tensor `x`
        is on an autodiff backend. Custom layers with train-only behaviour call this."""
        mode = vars(self).get(_MODE)
        if mode is not None:
            return bool(mode)
        return x is not None and bool(x.backend.ad_enabled)

    # -- records (burn.module.persistence does the work) ---------------------------------------
    def into_record(self) -> Any:
        """A record of the params only (path -> id + tensor); tensors are not copied."""
        from burn.module.persistence import into_record

        return into_record(self)

    def load_record(self: M, record: Any, *, strict: bool = True, allow_partial: bool = False) -> M:
        """A new module with the record's params (same ParamIds as saved); initializers of lazy
        params never run. Strict loading reports missing/unexpected keys and shape mismatches."""
        from burn.module.persistence import load_record

        return load_record(self, record, strict=strict, allow_partial=allow_partial)

    def save_file(self, path: Any, recorder: Any = None) -> Any:
        """Save the params with `recorder` (default NamedMpkFileRecorder at full precision);
        the recorder adds its extension. Returns the path written."""
        from burn.module.persistence import save_file

        return save_file(self, path, recorder)

    def load_file(
        self: M, path: Any, recorder: Any = None, device: Device | None = None, **options: Any
    ) -> M:
        """Load params saved with `save_file` onto `device` (default: where the params are)."""
        from burn.module.persistence import load_file

        return load_file(self, path, recorder, device, **options)

    def __repr__(self) -> str:
        return "\n".join(_repr_lines(self, type(self).__name__, 0))


# -- train / eval mode ----------------------------------------------------------------------------
_MODE = "_train_mode"  # instance attribute holding a module's explicit mode (absent: none)


def _with_mode(value: Any, mode: bool | None) -> Any:
    """`value` with every module in it copied and given `mode` (None removes it)."""
    if isinstance(value, Module):
        changes = {}
        for name, item in vars(value).items():
            new = _with_mode(item, mode)
            if new is not item:
                changes[name] = new
        if not changes and vars(value).get(_MODE) is mode:
            return value  # already in that mode: shared, as `map` shares untouched modules
        out = copy.copy(value)
        for name, item in changes.items():
            object.__setattr__(out, name, item)
        if mode is None:
            vars(out).pop(_MODE, None)
        else:
            object.__setattr__(out, _MODE, mode)
        return out
    if isinstance(value, (list, tuple)):
        items = [_with_mode(item, mode) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, dict):
        mapped = {key: _with_mode(item, mode) for key, item in value.items()}
        if all(mapped[key] is item for key, item in value.items()):
            return value
        return type(value)(mapped) if type(value) is not dict else mapped
    return value


# -- value traversal ------------------------------------------------------------------------------
def _map_value(value: Any, path: str, fn: MapFn) -> Any:
    if isinstance(value, Param):
        return fn(path, value)
    if isinstance(value, Module):
        return value._map(path + ".", fn)
    if isinstance(value, (list, tuple)):
        items = [_map_value(item, f"{path}.{i}", fn) for i, item in enumerate(value)]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, dict):
        mapped = {key: _map_value(item, f"{path}.{key}", fn) for key, item in value.items()}
        if all(mapped[key] is item for key, item in value.items()):
            return value
        return type(value)(mapped) if type(value) is not dict else mapped
    return value


def _visit_value(value: Any, path: str, fn: VisitFn) -> None:
    if isinstance(value, Param):
        fn(path, value)
    elif isinstance(value, Module):
        value._visit(path + ".", fn)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _visit_value(item, f"{path}.{i}", fn)
    elif isinstance(value, dict):
        for key, item in value.items():
            _visit_value(item, f"{path}.{key}", fn)


def _contains_params(value: Any) -> bool:
    if isinstance(value, (Param, Module)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_params(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_params(v) for v in value.values())
    return False


def _count(value: Any) -> int:
    total = 0

    def add(_path: str, param: Param) -> None:
        nonlocal total
        total += param.num_elements()

    _visit_value(value, "", add)
    return total


def _repr_lines(value: Any, label: str, depth: int) -> list[str]:
    pad = "  " * depth
    if isinstance(value, Param):
        grad = "" if value.require_grad else ", no grad"
        lazy = "" if value.is_initialized else ", lazy"
        return [f"{pad}{label}: Param{list(value.shape)}{grad}{lazy}"]
    if isinstance(value, Module):
        children = [(name, v) for name, v in vars(value).items() if _contains_params(v)]
        head = f"{pad}{label}: {type(value).__name__}" if depth else f"{type(value).__name__}"
        head += f"  ({_count(value):,} params)"
        lines = [head]
        for name, child in children:
            lines += _repr_lines(child, name, depth + 1)
        return lines
    if isinstance(value, (list, tuple)):
        lines = [f"{pad}{label}: {type(value).__name__}[{len(value)}]  ({_count(value):,} params)"]
        for i, item in enumerate(value):
            if _contains_params(item):
                lines += _repr_lines(item, str(i), depth + 1)
        return lines
    if isinstance(value, dict):
        lines = [f"{pad}{label}: dict[{len(value)}]  ({_count(value):,} params)"]
        for key, item in value.items():
            if _contains_params(item):
                lines += _repr_lines(item, str(key), depth + 1)
        return lines
    return [f"{pad}{label}: {value!r}"]
