"""`burn.compile.step(loss_fn, optimizer)`: a whole training step, forward and backward replayed.

A training step is ``loss = loss_fn(model, *batch)``, ``grads = loss.backward()`` and
``model = optimizer.step(lr, model, grads)``. `burn.compile` alone cannot capture it: capture
wraps the tensors' own backend, so on ``autodiff(x)`` it would see the forward ops while the
backward pass runs below it. Here the trace runs the step on ``autodiff(capture(x))`` instead:
a fresh autodiff layer over a `Capture` of the inner backend, so every inner op — the forward
ones autodiff forwards and the backward ones its engine issues — is recorded. The program's
inputs are the batch tensors, its params the model's params (inner primitives), its outputs the
loss and each param's gradient; the replay runs that plan (fused, dead code removed) with no
autodiff graph at all.

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
    >>> s = step.stats()
    >>> s["traces"], s["replays"], s["fallbacks"]
    (1, 2, 0)
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
    _uncapturable,
    _Unsupported,
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
from burn.tensor.tensor import Tensor

__all__ = ["CompiledStep"]


class _StepEntry:
    """A traced signature of a step: its plan and the param each gradient output belongs to."""

    __slots__ = ("plan", "paths", "grad_ids", "device")

    def __init__(self, plan: Plan, paths: frozenset[str], grad_ids: tuple[ParamId, ...], device: Any) -> None:
        self.plan = plan
        self.paths = paths
        self.grad_ids = grad_ids
        self.device = device


class CompiledStep(CompiledFunction):
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
        self.loss_fn = loss_fn
        self.optimizer = optimizer

        def eager(lr: float, model: Module, *batch: Any) -> tuple[Tensor, Module]:
            loss = loss_fn(model, *batch)
            grads = GradientsParams.from_grads(loss.backward(), model)
            return loss, optimizer.step(lr, model, grads)

        super().__init__(eager, name, max_recompiles)
        self.__wrapped__ = loss_fn

    def __call__(self, lr: float, model: Module, *batch: Any) -> tuple[Tensor, Module]:  # type: ignore[override]
        if not isinstance(model, Module):
            raise TypeError(
                f"{self.name}: a compiled step is called as step(lr, model, *batch), got a "
                f"{type(model).__name__} where the model goes"
            )
        try:
            key: Hashable = _signature((model, *batch), "an argument")
        except _Unsupported as e:
            return self._eager(str(e), (lr, model, *batch), {})  # type: ignore[no-any-return]
        entry = self._cache.get(key)
        if isinstance(entry, _StepEntry):
            self._counts["replays"] += 1
            return self._replay_step(entry, lr, model, batch)
        if isinstance(entry, _Eager):
            return self._eager(entry.reason, (lr, model, *batch), {})  # type: ignore[no-any-return]
        traced = sum(isinstance(e, _StepEntry) for e in self._cache.values())
        if traced >= self.max_recompiles:
            return self._eager(  # type: ignore[no-any-return]
                f"a new input signature after max_recompiles={self.max_recompiles} traced ones",
                (lr, model, *batch), {},
            )
        return self._trace_step(key, lr, model, batch)

    # -- tracing --------------------------------------------------------------------------------
    def _trace_step(
        self, key: Hashable, lr: float, model: Module, batch: tuple[Any, ...]
    ) -> tuple[Tensor, Module]:
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

        try:
            traced_model = model.map(as_param)
            traced_batch = tuple(_map_tensors(a, as_input) for a in batch)
            loss = self.loss_fn(traced_model, *traced_batch)
            if not isinstance(loss, Tensor) or loss._b is not ad_cap:
                raise BackendMismatchError(
                    "trace: the loss is not a tensor computed from the model and the batch"
                )
            grads = GradientsParams.from_grads(loss.backward(), traced_model)
        except Exception as e:
            reason = _uncapturable(e)
            if reason is None:
                raise
            self._cache[key] = _Eager(reason)
            return self._eager(reason, (lr, model, *batch), {})  # type: ignore[no-any-return]
        changed = _changed_param(traced_model, ad_cap, param_ir)
        if changed is not None:
            # The trace replaced it on a copy; the eager run replaces it on the caller's module.
            reason = f"it replaces module state (param {changed!r}, e.g. batch norm's running statistics)"
            self._cache[key] = _Eager(reason)
            return self._eager(reason, (lr, model, *batch), {})  # type: ignore[no-any-return]
        loss_p: CaptureTensor = ad_cap.float_inner(loss._p)
        grad_ids = tuple(grads)
        grad_ps: list[CaptureTensor] = [grads.get(i)._p for i in grad_ids]  # type: ignore[union-attr]
        # The traced run computed real values: its loss and gradients are this call's answer.
        real_loss = wrap(ad.float_from_inner(loss_p.value), ad, Float)
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
            read = _params_read(cap, (g.ir for g in grad_ps), param_ir)
            program = Program(
                tuple(inputs),
                tuple(param_ir[i] for i in read),
                tuple(cap.calls),
                (loss_p.ir, *(g.ir for g in grad_ps)),
                (),
            )
            paths = frozenset(param_ir[i][0] for i in read)
            self._cache[key] = _StepEntry(Plan(program, ad.inner), paths, grad_ids, real_loss.device)
        return real_loss, self.optimizer.step(lr, model, real)

    # -- replay ---------------------------------------------------------------------------------
    def _replay_step(
        self, entry: _StepEntry, lr: float, model: Module, batch: tuple[Any, ...]
    ) -> tuple[Tensor, Module]:
        ad: Any = _autodiff_backend(model, batch, self.name)
        inputs = [
            ad.float_inner(t._p) if t._k is Float else t._p for a in batch for t in flatten_tensors(a)
        ]
        params = {path: _inner_p(ad, p.val()) for path, p in model.named_params() if path in entry.paths}
        outs = entry.plan.run(inputs, params, entry.device)
        inner = ad.inner
        grads = GradientsParams(
            {i: wrap(g, inner, Float) for i, g in zip(entry.grad_ids, outs[1:], strict=True)}
        )
        return wrap(ad.float_from_inner(outs[0]), ad, Float), self.optimizer.step(lr, model, grads)


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
        b = p.val().backend
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


