"""`burn.compile.grad(fn)` and `burn.compile.step(loss_fn, optimizer)`: forward and backward replayed.

A training step is ``loss = loss_fn(model, *batch)``, ``grads = loss.backward()`` and
``model = optimizer.step(lr, model, grads)``. `burn.compile` alone cannot capture it: capture
wraps the tensors' own backend, so on ``autodiff(x)`` it would see the forward ops while the
backward pass runs below it. Here the trace runs the step on ``autodiff(capture(x))`` instead:
a fresh autodiff layer over a `Capture` of the inner backend, so every inner op — the forward
ones autodiff forwards and the backward ones its engine issues — is recorded. The program's
inputs are the batch tensors, its params the model's params (inner primitives), its outputs the
loss (and the function's other result tensors) and each param's gradient; the replay runs that
plan (fused, dead code removed) with no autodiff graph at all. That much is `CompiledGrad`
(`burn.compile.grad`, what `burn.train.Learner(compile=True)` runs); `CompiledStep` adds the
optimizer update.

The optimizer update then runs as the optimizer's own `step` on the replayed gradients: its
state (momentum, Adam's moments and step count) stays in the optimizer and advances at every
call, and the learning rate is an argument of each call, never part of the signature. The
update is already one fused backend call per param (``float_adam_step``,
``float_sgd_momentum_step``), so what the plan saves is the forward and backward dispatch.

Example:
    >>> import burn
    >>> from burn import nn, optim
    >>> B = burn.backend("autodiff(ndarray)")
    >>> model = nn.LinearConfig(3, 1).init(B.default_device())
    >>> step = burn.compile.step(lambda m, x: m(x).square().mean(), optim.SgdConfig().init())
    >>> x = burn.Tensor.ones((4, 3), backend=B)
    >>> for _ in range(3):
    ...     loss, model = step(0.1, model, x)
    >>> s = step.stats()  # the first call initialized the lazy params: the second traced
    >>> s["warmups"], s["traces"], s["replays"], s["fallbacks"]
    (1, 1, 1, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from burn.backend.base import Backend
from burn.backend.ir import Program, TensorIR
from burn.capture.backend import Capture, CaptureTensor
from burn.capture.compiler import (
    CompiledFunction,
    _Eager,
    _host_read_reason,
    _signature,
    _Slot,
    _uncapturable,
    _uninitialized,
    _Unsupported,
    generator_state,
    restore_generator,
)
from burn.capture.lower import Plan
from burn.capture.trace import _kind, _map_tensors, _params_read, flatten_tensors
from burn.errors import BackendMismatchError
from burn.foundations.kind import Float
from burn.module.base import Module
from burn.module.param import Param, ParamId
from burn.optim.base import Optimizer
from burn.optim.grads import GradientsParams
from burn.tensor._base import wrap
from burn.tensor.autocast import current_dtype
from burn.tensor.tensor import Tensor

__all__ = ["CompiledGrad", "CompiledStep"]


class _StepEntry:
    """A traced signature: its plan, how to rebuild the function's result from the outputs, and
    the param each gradient output belongs to."""

    __slots__ = ("plan", "paths", "template", "kinds", "grad_ids", "device")

    def __init__(
        self, plan: Plan, paths: frozenset[str], template: Any, kinds: tuple[Any, ...],
        grad_ids: tuple[ParamId, ...], device: Any,
    ) -> None:
        self.plan = plan
        self.paths = paths
        self.template = template
        self.kinds = kinds
        self.grad_ids = grad_ids
        self.device = device


class CompiledGrad(CompiledFunction):
    """A function and its gradients compiled by `burn.compile.grad`: ``result, grads =
    f(model, *batch)`` computes ``result = fn(model, *batch)`` and the gradients of its loss
    (`result` itself, or its first element) with respect to the model's params, with the forward
    and backward passes replayed from one trace per signature (see the module docstring).

    The model and the batch tensors must be on an autodiff backend. The other tensors of the
    result (a model's output, the targets...) come back as values without a graph; its other
    values (ints, strings) are those of the traced call.

    Args:
        fn: ``fn(model, *batch) -> loss`` or ``-> (loss, *rest)`` (tensors in tuples, lists, dicts).
        name: its key in `burn.compile.stats()`.
        max_recompiles: how many signatures (model structure, batch shapes) are traced.

    Example:
        >>> import burn
        >>> from burn import nn
        >>> B = burn.backend("autodiff(ndarray)")
        >>> model = nn.LinearConfig(3, 1).init(B.default_device())
        >>> f = burn.compile.grad(lambda m, x: (m(x).square().mean(), m(x)))
        >>> x = burn.Tensor.ones((4, 3), backend=B)
        >>> for _ in range(3):  # initializes the lazy params, traces, replays
        ...     (loss, y), grads = f(model, x)
        >>> y.shape, len(grads), f.stats()["replays"]
        ((4, 1), 2, 1)
    """

    def __init__(self, fn: Callable[..., Any], name: str, max_recompiles: int) -> None:
        def eager(model: Module, *batch: Any) -> tuple[Any, GradientsParams]:
            result = fn(model, *batch)
            loss = _loss_of(result, name)
            return result, GradientsParams.from_grads(loss.backward(), model)

        super().__init__(eager, name, max_recompiles)
        self.loss_fn = fn
        self.__wrapped__ = fn

    def __call__(self, model: Module, *batch: Any) -> tuple[Any, GradientsParams]:  # type: ignore[override]
        if not isinstance(model, Module):
            raise TypeError(
                f"{self.name}: called as f(model, *batch) (a compiled step as step(lr, model, "
                f"*batch)), got a {type(model).__name__} where the model goes"
            )
        _autodiff_backend(model, batch, self.name)  # refuses a model without autodiff first
        if _uninitialized((model,)):
            return self._warmup((model, *batch), {})  # type: ignore[no-any-return]
        try:
            key: Hashable = (_signature((model, *batch), "an argument"), current_dtype())
        except _Unsupported as e:
            return self._eager(str(e), (model, *batch), {})  # type: ignore[no-any-return]
        entry = self._cache.get(key)
        if isinstance(entry, _StepEntry):
            self._counts["replays"] += 1
            return self._replay_step(entry, model, batch)
        if isinstance(entry, _Eager):
            return self._eager(entry.reason, (model, *batch), {})  # type: ignore[no-any-return]
        traced = sum(isinstance(e, _StepEntry) for e in self._cache.values())
        if traced >= self.max_recompiles:
            return self._eager(  # type: ignore[no-any-return]
                f"a new input signature after max_recompiles={self.max_recompiles} traced ones",
                (model, *batch), {},
            )
        return self._trace_step(key, model, batch)

    # -- tracing --------------------------------------------------------------------------------
    def _trace_step(
        self, key: Hashable, model: Module, batch: tuple[Any, ...]
    ) -> tuple[Any, GradientsParams]:
        ad = _autodiff_backend(model, batch, self.name)
        cap = Capture(ad.inner)
        # A fresh autodiff layer over the capture: its backward pass calls the capture's ops.
        ad_cap: Any = type(ad)(cap, checkpointing=getattr(ad, "checkpointing", None))
        inputs: list[TensorIR] = []
        param_ir: dict[int, tuple[str, TensorIR]] = {}

        def as_input(t: Tensor) -> Tensor:
            _check_backend(t.backend, ad, self.name, "a batch tensor")
            kind = _kind(t)
            c = cap.input(ad.float_inner(t._p) if kind == "float" else t._p, kind)
            inputs.append(c.ir)
            return wrap(ad_cap.float_from_inner(c) if kind == "float" else c, ad_cap, t._k)

        def as_param(path: str, p: Param) -> Param:
            t = p.val()
            _check_backend(t.backend, ad, self.name, f"param {path!r}")
            kind = _kind(t)
            c = cap.input(ad.float_inner(t._p) if kind == "float" else t._p, kind)
            param_ir[c.ir.id] = (path, c.ir)
            value = wrap(ad_cap.float_from_inner(c) if kind == "float" else c, ad_cap, t._k)
            return Param(p.id, value, p.require_grad)

        draws = generator_state((model, *batch))
        try:
            traced_model = model.map(as_param)
            traced_batch = tuple(_map_tensors(a, as_input) for a in batch)
            result = self.loss_fn(traced_model, *traced_batch)
            loss = _loss_of(result, self.name)
            outs = flatten_tensors(result)
            prims = [_traced_prim(ad_cap, t) for t in outs]
            grads = GradientsParams.from_grads(loss.backward(), traced_model)
        except Exception as e:
            reason = _uncapturable(e)
            if reason is None and isinstance(e, BackendMismatchError):
                # The eager run raises it again when it is the function's own mistake.
                reason = (
                    "it cannot be captured: it uses a tensor that is neither a batch tensor nor a "
                    "model param (one it closes over?)"
                )
            if reason is None:
                raise
            restore_generator(draws)  # the eager run draws what the trace drew
            self._cache[key] = _Eager(reason)
            return self._eager(reason, (model, *batch), {})  # type: ignore[no-any-return]
        changed = _changed_param(traced_model, ad_cap, param_ir)
        if changed is not None:
            # The trace replaced it on a copy; the eager run replaces it on the caller's module.
            reason = f"it replaces module state (param {changed!r}, e.g. batch norm's running statistics)"
            restore_generator(draws)
            self._cache[key] = _Eager(reason)
            return self._eager(reason, (model, *batch), {})  # type: ignore[no-any-return]
        grad_ids = tuple(grads)
        grad_ps: list[CaptureTensor] = [grads.get(i)._p for i in grad_ids]  # type: ignore[union-attr]
        # The traced run computed real values: its result and gradients are this call's answer.
        kinds = tuple(t._k for t in outs)
        counter = iter(range(len(outs)))
        template = _map_tensors(result, lambda t: _Slot(next(counter)))
        real_outs = [_wrap_out(ad, p.value, k) for p, k in zip(prims, kinds, strict=True)]
        real = GradientsParams(
            {i: wrap(g.value, ad.inner, Float) for i, g in zip(grad_ids, grad_ps, strict=True)}
        )
        self._counts["traces"] += 1
        if self._counts["traces"] > 1:
            self._counts["recompiles"] += 1
        if cap.host_reads:
            reason = _host_read_reason(cap.host_reads[0])
            self._cache[key] = _Eager(reason)
            self._counts["fallbacks"] += 1
            self._warn(reason)
        else:
            read = _params_read(cap, (c.ir for c in (*prims, *grad_ps)), param_ir)
            program = Program(
                tuple(inputs),
                tuple(param_ir[i] for i in read),
                tuple(cap.calls),
                (*(p.ir for p in prims), *(g.ir for g in grad_ps)),
                (),
            )
            paths = frozenset(param_ir[i][0] for i in read)
            self._cache[key] = _StepEntry(
                Plan(program, ad.inner), paths, template, kinds, grad_ids, real_outs[0].device
            )
        return _map_tensors(template, lambda s: real_outs[s.index], _Slot), real

    # -- replay ---------------------------------------------------------------------------------
    def _replay_step(
        self, entry: _StepEntry, model: Module, batch: tuple[Any, ...]
    ) -> tuple[Any, GradientsParams]:
        ad: Any = _autodiff_backend(model, batch, self.name)
        inputs = [
            ad.float_inner(t._p) if t._k is Float else t._p for a in batch for t in flatten_tensors(a)
        ]
        params = {path: _inner_p(ad, p.val()) for path, p in model.named_params() if path in entry.paths}
        outs = entry.plan.run(inputs, params, entry.device)
        inner, n = ad.inner, len(entry.kinds)
        grads = GradientsParams(
            {i: wrap(g, inner, Float) for i, g in zip(entry.grad_ids, outs[n:], strict=True)}
        )
        kinds = entry.kinds
        result = _map_tensors(entry.template, lambda s: _wrap_out(ad, outs[s.index], kinds[s.index]), _Slot)
        return result, grads


class CompiledStep(CompiledGrad):
    """A training step compiled by `burn.compile.step` (see the module docstring).

    Call it as ``loss, model = step(lr, model, *batch)``: `lr` may change at every call, the
    model and batch tensors must be on an autodiff backend. Counts are in `stats()` and in
    `burn.compile.stats()` under its name.

    Args:
        loss_fn: ``loss_fn(model, *batch) -> loss`` (a tensor on the model's backend).
        optimizer: the optimizer whose ``step(lr, model, grads)`` applies the gradients.
        name: its key in `burn.compile.stats()`.
        max_recompiles: how many signatures (model structure, batch shapes) are traced.
    """

    def __init__(
        self, loss_fn: Callable[..., Tensor], optimizer: Optimizer, name: str, max_recompiles: int
    ) -> None:
        super().__init__(loss_fn, name, max_recompiles)
        self.optimizer = optimizer

    def __call__(self, lr: float, model: Module, *batch: Any) -> tuple[Tensor, Module]:  # type: ignore[override]
        if not isinstance(model, Module):
            raise TypeError(
                f"{self.name}: a compiled step is called as step(lr, model, *batch), got a "
                f"{type(model).__name__} where the model goes"
            )
        loss, grads = super().__call__(model, *batch)
        return loss, self.optimizer.step(lr, model, grads)


def _loss_of(result: Any, name: str) -> Tensor:
    """The tensor to differentiate: `result` itself, or its first element."""
    loss = result[0] if isinstance(result, tuple | list) and result else result
    if not isinstance(loss, Tensor):
        raise TypeError(
            f"{name}: the function must return the loss (a tensor) or a tuple whose first element "
            f"is the loss, got {type(result).__name__}"
        )
    return loss


def _traced_prim(ad_cap: Any, t: Tensor) -> CaptureTensor:
    """The capture-level value of a result tensor of the traced function."""
    prim = ad_cap.float_inner(t._p) if t._k is Float and t._b is ad_cap else t._p
    if t._b is not ad_cap or not isinstance(prim, CaptureTensor):
        raise BackendMismatchError(
            f"trace: a result is on backend {t._b.name!r}, not computed from the model and the batch"
        )
    return prim


def _wrap_out(ad: Any, prim: Any, kind: Any) -> Tensor:
    """A result value on the autodiff backend, without a graph."""
    return wrap(ad.float_from_inner(prim) if kind is Float else prim, ad, kind)


def _changed_param(traced: Module, ad_cap: Any, param_ir: dict[int, tuple[str, TensorIR]]) -> str | None:
    """The path of a param the loss function replaced on the traced model, or None."""
    for path, p in traced.named_params():
        t = p.val()
        prim = ad_cap.float_inner(t._p) if t._k is Float else t._p
        if not isinstance(prim, CaptureTensor) or prim.ir.id not in param_ir:
            return path
    return None


def _inner_p(ad: Any, t: Tensor) -> Any:
    return ad.float_inner(t._p) if t._k is Float else t._p



def _autodiff_backend(model: Module, batch: tuple[Any, ...], name: str) -> Any:
    for _, p in model.named_params():
        # The device's owner: reading the value would run a lazy initializer out of order.
        owner = p.device.owner if p.device is not None else None
        b = owner if owner is not None else p.val().backend
        break
    else:
        tensors = [t for a in batch for t in flatten_tensors(a)]
        if not tensors:
            raise ValueError(f"{name}: the step has no model params and no batch tensors")
        b = tensors[0].backend
    if not b.ad_enabled:
        raise TypeError(
            f"{name}: a compiled training step needs the model on an autodiff backend (got "
            f"{b.name!r}): build it with burn.backend('autodiff(...)')"
        )
    return b


def _check_backend(b: Backend, ad: Backend, name: str, what: str) -> None:
    if b is not ad:
        raise BackendMismatchError(f"{name}: {what} is on backend {b.name!r}, the model on {ad.name!r}")


