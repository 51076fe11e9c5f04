"""`burn.compile`: trace a function once per input signature, then replay it as a lowered plan.

The first call with a new *signature* (each tensor argument's backend, device, kind, shape and
dtype; each module argument's type, param paths, ids, shapes and dtypes; every other argument's
value, which must be hashable; the autocast dtype of the call's region) runs the function once
on `burn.capture` (the call's result is that eager run's) and lowers the recorded program
(`burn.capture.lower.Plan`: dead code removed, element-wise chains fused through the backend's
fusion contract, values freed after their last use). Later calls with that signature run the
plan on the arguments' primitives: the params the trace read are read again from the module
arguments at each call, so an optimizer step's new values are used.

What cannot be replayed runs eagerly, with one `CompileWarning` naming the reason (and a record
on the ``burn.compile`` logger for each such call): a value read back to the host inside the
function (``.item()``, ``tolist()``, ``bool(t)``: the Python code after it may depend on the
data), a tensor the function closes over, an unhashable argument, or a new signature after
``max_recompiles`` traced ones.

Example:
    >>> import burn
    >>> @burn.compile
    ... def f(x):
    ...     return (x * 2.0 + 1.0).abs()
    >>> x = burn.Tensor.from_data([1.0, -2.0], backend="ndarray")
    >>> f(x).tolist(), f(x).tolist()
    ([3.0, 3.0], [3.0, 3.0])
    >>> s = burn.compile.stats()[f.name]
    >>> s["traces"], s["replays"], s["fused_groups"]
    (1, 1, 1)
"""

from __future__ import annotations

import copy
import functools
import logging
import warnings
import weakref
from collections.abc import Callable, Hashable
from typing import Any, overload

from burn.backend.base import Backend
from burn.capture.backend import CaptureTensor
from burn.capture.lower import Plan
from burn.capture.trace import Trace, _map_tensors, flatten_tensors, trace
from burn.errors import BackendMismatchError
from burn.module.base import _MODE, Module
from burn.module.param import Param
from burn.tensor._base import wrap
from burn.tensor.autocast import current_dtype
from burn.tensor.tensor import Tensor

__all__ = ["CompileWarning", "CompiledFunction", "Compiler", "compile"]

logger = logging.getLogger("burn.compile")

STAT_NAMES = (
    "traces", "replays", "fallbacks", "warmups", "recompiles", "fused_groups", "fused_ops", "kernels",
    "removed_ops", "program_updates",
)


class CompileWarning(UserWarning):
    """A compiled function (or one signature of it) runs eagerly; the message says why."""


class _Eager:
    """The cache entry of a signature that runs eagerly, and why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Unsupported(Exception):
    pass


class _Entry:
    """A traced signature: its plan and how to rebuild the function's result from the outputs."""

    __slots__ = ("plan", "backend", "template", "kinds", "param_paths", "device")

    def __init__(self, tr: Trace, plan: Plan, device: Any) -> None:
        self.plan = plan
        self.backend: Backend = tr.backend
        counter = iter(range(len(tr.outputs)))
        self.kinds = [t._k for t in tr.outputs]
        self.template = _map_tensors(tr.result, lambda t: _Slot(next(counter)))
        by_arg: dict[str, set[str]] = {}
        for path, _ in tr.program.params:
            head, _, rest = path.partition(".")
            if head.startswith("arg"):
                by_arg.setdefault(head, set()).add(rest)
            else:
                by_arg.setdefault("", set()).add(path)
        self.param_paths = by_arg
        self.device = device


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _signature(value: Any, where: str) -> Hashable:
    if isinstance(value, Tensor):
        return ("T", id(value._b), value._k.name, tuple(value.shape), value.dtype, value.device)
    if isinstance(value, Module):
        # Every attribute: params by id, shape and dtype; sub-modules; constants such as a
        # dropout's probability and the train/eval mode, which change what forward records.
        return ("M", type(value).__qualname__, tuple(
            (k, _signature(v, f"{where}.{k}")) for k, v in sorted(vars(value).items())
        ))
    if isinstance(value, Param):
        t = value.val()
        return ("P", value.id, tuple(t.shape), t.dtype, id(t._b))
    if isinstance(value, tuple | list):
        return (type(value).__qualname__, tuple(_signature(v, f"{where}[{i}]") for i, v in enumerate(value)))
    if isinstance(value, dict):
        return ("D", tuple((k, _signature(v, f"{where}[{k!r}]")) for k, v in value.items()))
    held = getattr(value, "__dict__", None)
    if isinstance(held, dict) and any(flatten_tensors(v) for v in held.values()):
        # Hashed by identity, it would trace again for every new object; and its tensors would
        # not be inputs of the trace.
        raise _Unsupported(
            f"{where} is a {type(value).__name__} holding tensors: a compiled function reads tensors "
            "from tuples, lists and dicts only"
        )
    try:
        hash(value)
    except TypeError:
        raise _Unsupported(
            f"{where} is an unhashable {type(value).__name__}: a compiled function's arguments other than "
            "tensors and modules are part of its signature and must be hashable"
        ) from None
    return ("C", type(value).__qualname__, value)


class CompiledFunction:
    """A function compiled by `burn.compile` (call it as the function).

    Attributes:
        fn: the original function.
        name: its key in `burn.compile.stats()`.
        max_recompiles: how many signatures are traced before new ones run eagerly.
    """

    def __init__(
        self, fn: Callable[..., Any], name: str, max_recompiles: int, bound: Module | None = None
    ) -> None:
        if max_recompiles < 1:
            raise ValueError(f"burn.compile: max_recompiles must be at least 1, got {max_recompiles}")
        self.fn = fn
        self.name = name
        self.max_recompiles = max_recompiles
        # A traced signature's entry (`_Entry`, or a compiled step's) has a `plan`; else `_Eager`.
        self._cache: dict[Hashable, Any] = {}
        self._counts = dict.fromkeys(STAT_NAMES, 0)
        self._warned: set[str] = set()
        self._reasons: dict[str, int] = {}  # eager calls per reason
        self._bound = bound
        functools.update_wrapper(self, fn if bound is None else getattr(bound, "forward", fn))

    def stats(self) -> dict[str, int]:
        """Counts of this function: traces, replays, fallbacks (eager calls, reasons in
        `fallback_reasons`), warmups (eager calls of a module whose lazy params were not
        initialized yet), recompiles (traces after the first), fused_groups and fused_ops (in the
        current plans), kernels (fused kernel launches by replays), removed_ops (dead calls
        dropped from the plans), program_updates (replays of a compiled training step that ran
        the optimizer update inside the program; 0 for other functions)."""
        counts = dict(self._counts)
        plans = [e.plan for e in self._cache.values() if not isinstance(e, _Eager)]
        counts["fused_groups"] = sum(p.fused_groups for p in plans)
        counts["fused_ops"] = sum(p.fused_ops for p in plans)
        counts["removed_ops"] = sum(p.removed for p in plans)
        # A compiled step's plan with the update inside launches kernels of its own.
        updates = [u.plan for e in self._cache.values() if (u := getattr(e, "update", None)) is not None]
        counts["kernels"] = sum(p.kernels for p in (*plans, *updates))
        return counts

    def fallback_reasons(self) -> dict[str, int]:
        """How many calls ran eagerly, per reason (the `CompileWarning`'s text after "runs
        eagerly: "); the counts add up to ``stats()["fallbacks"]``."""
        return dict(self._reasons)

    def _warn(self, reason: str) -> None:
        self._reasons[reason] = self._reasons.get(reason, 0) + 1
        logger.info("%s runs eagerly: %s", self.name, reason)
        if reason not in self._warned:
            self._warned.add(reason)
            warnings.warn(f"burn.compile: {self.name} runs eagerly: {reason}", CompileWarning, stacklevel=3)

    def _eager(self, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self._counts["fallbacks"] += 1
        self._warn(reason)
        return self.fn(*args, **kwargs)

    def _warmup(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run eagerly, not as a fallback, when a module argument has params not initialized
        yet: their lazy initializers draw from the generator in the order the function uses
        them, which reading them for the signature would change. The next call traces."""
        self._counts["warmups"] += 1
        return self.fn(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._bound is not None:
            args = (self._bound, *args)
        flat = (*args, *kwargs.values())
        if _uninitialized(flat):
            return self._warmup(args, kwargs)
        try:
            named = _signature(tuple(kwargs.values()), "a keyword argument")
            # The autocast region decides which dtype each op runs in: part of the signature.
            key = (_signature(args, "an argument"), tuple(kwargs), named, current_dtype())
        except _Unsupported as e:
            return self._eager(str(e), args, kwargs)
        entry = self._cache.get(key)
        if isinstance(entry, _Entry):
            self._counts["replays"] += 1
            return self._replay(entry, flat)
        if isinstance(entry, _Eager):
            return self._eager(entry.reason, args, kwargs)
        traced = sum(isinstance(e, _Entry) for e in self._cache.values())
        if traced >= self.max_recompiles:
            return self._eager(
                f"a new input signature after max_recompiles={self.max_recompiles} traced ones "
                "(arguments other than tensors and modules are part of the signature)", args, kwargs,
            )
        return self._trace(key, args, kwargs)

    def _trace(self, key: Hashable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        fn, names, n = self.fn, tuple(kwargs), len(args)

        def positional(*a: Any) -> Any:
            return fn(*a[:n], **dict(zip(names, a[n:], strict=True)))

        traced = (*args, *kwargs.values())
        if _on_autodiff(traced):
            # Layers in auto mode train when their input is on an autodiff backend; in the trace
            # the input is on the capture backend, so that choice is made explicit first.
            traced = tuple(_auto_trains(a) if isinstance(a, Module) else a for a in traced)
        draws = generator_state(traced)
        try:
            tr = trace(positional, *traced)
        except Exception as e:
            reason = _uncapturable(e)
            if reason is None:
                raise
            # The eager run raises the function's own errors again, without the capture layer,
            # and draws what the trace drew.
            restore_generator(draws)
            self._cache[key] = _Eager(reason)
            return self._eager(reason, args, kwargs)
        self._counts["traces"] += 1
        if self._counts["traces"] > 1:
            self._counts["recompiles"] += 1
        changed = _changed_params(tr)
        if changed:
            # The eager run makes the change on the caller's module (the trace changed a copy).
            reason = f"it replaces module state (param {changed!r}, e.g. batch norm's running statistics)"
            restore_generator(draws)
            self._cache[key] = _Eager(reason)
            return self._eager(reason, args, kwargs)
        if tr.program.host_reads:
            reason = _host_read_reason(tr.program.host_reads[0])
            self._cache[key] = _Eager(reason)
            self._counts["fallbacks"] += 1
            self._warn(reason)
            return tr.result  # the traced run was an eager run: its result is the answer
        device = tr.outputs[0].device if tr.outputs else None
        self._cache[key] = _Entry(tr, Plan(tr.program, tr.backend), device)
        return tr.result

    def _replay(self, entry: _Entry, flat: tuple[Any, ...]) -> Any:
        inputs = [t._p for a in flat if not isinstance(a, Module) for t in flatten_tensors(a)]
        params: dict[str, Any] = {}
        for i, a in enumerate(flat):
            if isinstance(a, Module):
                wanted = entry.param_paths.get(f"arg{i}")
                if wanted:
                    for path, p in a.named_params():
                        if path in wanted:
                            params[f"arg{i}.{path}"] = p.val()._p
        outs = entry.plan.run(inputs, params, entry.device)
        backend, kinds = entry.backend, entry.kinds
        return _map_tensors(entry.template, lambda s: wrap(outs[s.index], backend, kinds[s.index]), _Slot)


class Compiler:
    """`burn.compile`: the decorator, and `stats` of every function it compiled.

    Example:
        >>> import burn
        >>> f = burn.compile(lambda x: x + 1.0, max_recompiles=2)
        >>> f(burn.Tensor.from_data([1.0], backend="ndarray")).tolist()
        [2.0]
    """

    def __init__(self) -> None:
        # Weak: a compiled function (its plans, the programs' constants) goes when its user drops it.
        self._functions: weakref.WeakValueDictionary[str, CompiledFunction] = weakref.WeakValueDictionary()

    @overload
    def __call__(self, fn: Callable[..., Any], *, max_recompiles: int = 8) -> CompiledFunction: ...

    @overload
    def __call__(
        self, fn: None = None, *, max_recompiles: int = 8
    ) -> Callable[[Callable[..., Any]], CompiledFunction]: ...

    def __call__(
        self, fn: Callable[..., Any] | None = None, *, max_recompiles: int = 8
    ) -> CompiledFunction | Callable[[Callable[..., Any]], CompiledFunction]:
        """Compile `fn` (``@burn.compile`` or ``@burn.compile(max_recompiles=4)``).

        Args:
            fn: a function of tensors, modules and hashable values returning tensors (in tuples,
                lists, dicts), or a module (its params are read at each call).
            max_recompiles: how many input signatures are traced; calls with further new
                signatures run eagerly, with one `CompileWarning`.

        Returns:
            The `CompiledFunction`.
        """
        if fn is None:
            return lambda f: self(f, max_recompiles=max_recompiles)
        name = self._name(_qualname(fn))
        if isinstance(fn, Module):
            # The module is passed as the first argument of its forward, so its params are
            # inputs of the trace (read again at every call), not tensors it closes over.
            compiled = CompiledFunction(_forward, name, max_recompiles, bound=fn)
        else:
            compiled = CompiledFunction(fn, name, max_recompiles)
        self._functions[name] = compiled
        return compiled

    def step(
        self, loss_fn: Callable[..., Any], optimizer: Any, *, max_recompiles: int = 8
    ) -> Any:
        """Compile a whole training step: ``loss, model = step(lr, model, *batch)`` computes
        ``loss_fn(model, *batch)``, its gradients and ``optimizer.step(lr, model, grads)``, with
        the forward and backward passes replayed from one trace per signature
        (`burn.capture.step.CompiledStep`).

        Args:
            loss_fn: ``loss_fn(model, *batch) -> loss`` on an autodiff backend.
            optimizer: a `burn.optim.Optimizer` (its state advances at every call).
            max_recompiles: how many signatures (model structure, batch shapes) are traced.

        Returns:
            The `CompiledStep`.
        """
        from burn.capture.step import CompiledStep  # the step module builds on this one

        name = self._name(f"step({_qualname(loss_fn)})")
        compiled = CompiledStep(loss_fn, optimizer, name, max_recompiles)
        self._functions[name] = compiled
        return compiled

    def grad(self, fn: Callable[..., Any], *, max_recompiles: int = 8) -> Any:
        """Compile a function and its gradients: ``result, grads = f(model, *batch)`` computes
        ``result = fn(model, *batch)`` and the gradients of its loss (`result`, or its first
        element) for the model's params, the forward and backward passes replayed from one trace
        per signature (`burn.capture.step.CompiledGrad`).

        Args:
            fn: ``fn(model, *batch) -> loss`` or ``-> (loss, *rest)``, on an autodiff backend.
            max_recompiles: how many signatures (model structure, batch shapes) are traced.

        Returns:
            The `CompiledGrad`.
        """
        from burn.capture.step import CompiledGrad  # the step module builds on this one

        compiled = CompiledGrad(fn, self._name(f"grad({_qualname(fn)})"), max_recompiles)
        self._functions[compiled.name] = compiled
        return compiled

    def _name(self, base: str) -> str:
        name, k = base, 2
        while name in self._functions:
            name, k = f"{base}#{k}", k + 1
        return name

    def stats(self) -> dict[str, dict[str, int]]:
        """Per compiled function (by name): traces, replays, fallbacks, recompiles, fused_groups,
        fused_ops, kernels, removed_ops (see `CompiledFunction.stats`)."""
        return {name: f.stats() for name, f in list(self._functions.items())}

    def fallbacks(self) -> dict[str, dict[str, int]]:
        """Per compiled function with eager calls (by name): how many ran eagerly, per reason.

        Example:
            >>> import burn
            >>> f = burn.compile(lambda x: x * 2.0 if x.sum().item() > 0 else x)
            >>> _ = f(burn.Tensor.from_data([1.0], backend="ndarray"))  # doctest: +SKIP
            >>> burn.compile.fallbacks()[f.name]  # doctest: +SKIP
            {'it reads a value back to the host (float_into_data: ...)': 1}
        """
        return {
            name: f.fallback_reasons() for name, f in list(self._functions.items()) if f._reasons
        }

    def reset(self) -> None:
        """Forget every compiled function's counts and traces (tests, benchmarks)."""
        for f in list(self._functions.values()):
            f._cache.clear()
            f._counts = dict.fromkeys(STAT_NAMES, 0)
            f._warned.clear()
            f._reasons.clear()


def generator_state(values: tuple[Any, ...]) -> tuple[Any, Any] | None:
    """The random state the backend of `values` (its first tensor or param) draws from, and a
    copy of its host generator's state: when a traced call has to run again eagerly, restoring
    it makes the eager run draw what the trace drew (dropout's masks), so the result is the
    one a call without `burn.compile` gives. None when there is no tensor or no host generator.

    Example:
        >>> import burn
        >>> x = burn.Tensor.zeros((2,), backend="ndarray")
        >>> state = generator_state((x,))
        >>> a = x.backend.rng.random()
        >>> restore_generator(state)
        >>> bool(x.backend.rng.random() == a)
        True
    """
    backend: Any = None
    for v in values:
        if isinstance(v, Module):
            for _, p in v.named_params():
                backend = p.device.owner if p.device is not None else None
                break
        else:
            backend = next((t.backend for t in flatten_tensors(v)), None)
        if backend is not None:
            break
    return None if backend is None else backend_generator_state(backend)


def backend_generator_state(backend: Any) -> tuple[Any, Any] | None:
    """`generator_state` of `backend` itself (the random state its calling thread draws from)."""
    random = backend.current_random()
    rng = getattr(random, "rng", None)
    return None if rng is None else (random, rng.bit_generator.state)


def restore_generator(state: tuple[Any, Any] | None) -> None:
    """Put back a state taken by `generator_state` (nothing for None)."""
    if state is not None:
        random, saved = state
        random.rng.bit_generator.state = saved


def _uninitialized(values: tuple[Any, ...]) -> bool:
    """Whether a module among `values` has a param whose lazy initializer has not run."""
    found = False

    def check(_path: str, p: Param) -> None:
        nonlocal found
        found = found or not p.is_initialized

    for v in values:
        if isinstance(v, Module):
            v.visit(check)
    return found


def _on_autodiff(values: tuple[Any, ...]) -> bool:
    for v in values:
        if isinstance(v, Module):
            for _, p in v.named_params():
                return bool(p.val().backend.ad_enabled)
        for t in flatten_tensors(v):
            return bool(t.backend.ad_enabled)
    return False


def _auto_trains(value: Any) -> Any:
    """`value` with every module without an explicit mode copied into training mode (explicit
    modes kept): what auto mode decides on an autodiff backend."""
    if isinstance(value, Module):
        changes = {k: new for k, v in vars(value).items() if (new := _auto_trains(v)) is not v}
        auto = vars(value).get(_MODE) is None
        if not changes and not auto:
            return value
        out = copy.copy(value)
        for k, v in changes.items():
            object.__setattr__(out, k, v)
        if auto:
            object.__setattr__(out, _MODE, True)
        return out
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        items = [_auto_trains(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    if isinstance(value, dict):
        return {k: _auto_trains(v) for k, v in value.items()}
    return value


def _changed_params(tr: Trace) -> str | None:
    """The path of a param the traced function replaced with a computed value, or None."""
    produced = {o.id for c in tr.program.calls for o in c.outputs if o is not None}
    for m in tr.modules:
        for path, p in m.named_params():
            prim = p.val()._p
            if not isinstance(prim, CaptureTensor) or prim.ir.id in produced:
                return path
    return None


def _host_read_reason(where: str) -> str:
    """Why a function or step that read a value back to the host at `where` runs eagerly."""
    return (
        f"it reads a value back to the host ({where}: .item(), .tolist(), to_data() or a Python "
        "bool/int of a tensor), so what it does may depend on the data"
    )


def _uncapturable(e: Exception) -> str | None:
    """Why a trace failed because of capture itself (then the call runs eagerly), or None (an
    error of the function's own, raised as it is)."""
    text = str(e)
    if isinstance(e, BackendMismatchError) and "trace:" in text:
        return f"it cannot be captured ({text.splitlines()[-1]})"
    if "backward" in text and "has no autodiff" in text:
        # Capture wraps the tensors' backend, so on autodiff(x) it records the forward ops; the
        # backward pass runs below it, unseen (burn.compile.step traces under it).
        return (
            "it calls backward (a training step): capture records the ops above the autodiff layer, "
            "not the backward pass; compile the step with burn.compile.step(loss_fn, optimizer), or "
            "compile the forward or the loss and call backward outside"
        )
    return None


def _qualname(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__qualname__


def _forward(module: Module, *args: Any, **kwargs: Any) -> Any:
    return module(*args, **kwargs)


compile = Compiler()  # noqa: A001 - the public name is burn.compile
