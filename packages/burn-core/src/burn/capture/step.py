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
(`burn.compile.grad`); `CompiledStep` (what `burn.train.Learner(compile=True)` runs) adds the
optimizer update.

The optimizer update runs inside the replayed program when the optimizer describes it
(`burn.optim.SimpleOptimizer.program_update`): as one fused backend op (Adam's and AdamW's
``float_adam_step``, the latter after its decay's ``float_mul_scalar``, SGD with momentum's
``float_sgd_momentum_step``, RMSProp's ``float_rmsprop_step``) or as the eager step's own op
sequence (AdaGrad, Lion, Adan, plain SGD). Each param's state tensors (Adam's moments) are
program inputs the replay takes out of the optimizer and hands over, so a fused op writes the new
moments into their buffers, and the host values (the learning rate, Adam's step count folded into
the bias-corrected step size and epsilon, AdaGrad's decayed lr, Adan's bias corrections, decay
factors) are scalar inputs computed at each call, so a new lr (a scheduler's) or step never
retraces. The gradients then never leave the program: the backward pass's fresh gradient
receives the new param. Gradient clipping (by value, by each param's norm, by the global
norm) is traced into the program from the Tensor API; the last micro-batch of an accumulation
group adds its gradients to the group's sum (``accumulated=``); a `burn.amp.GradScaler`
(``scaler=``) unscales, probes for inf/NaN and selects the old params and state on the device
when the step must be skipped, the verdict read back once after the run for the scaler's
``update()``. The first step (no state yet), an optimizer without a program update, a state just
loaded from a record or moved to another device run the update as the optimizer's own
``step(lr, model, grads)`` on the replayed gradients instead, the same values
(`stats()["program_updates"]` counts the replays that updated inside the program).

Example:
    >>> import burn
    >>> from burn import nn, optim
    >>> B = burn.backend("autodiff(ndarray)")
    >>> model = nn.LinearConfig(3, 1).init(B.default_device())
    >>> step = burn.compile.step(lambda m, x: m(x).square().mean(), optim.AdamConfig().init())
    >>> x = burn.Tensor.ones((4, 3), backend=B)
    >>> for _ in range(3):
    ...     loss, model = step(0.1, model, x)
    >>> s = step.stats()  # the first call initialized the lazy params: the second traced
    >>> s["warmups"], s["traces"], s["replays"], s["fallbacks"], s["program_updates"]
    (1, 1, 1, 0, 1)
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Hashable
from typing import Any

from burn.amp.grad_scaler import GradScaler
from burn.backend.base import Backend
from burn.backend.ir import CallIR, Program, TensorIR
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
from burn.capture.lower import Plan, ScalarInput
from burn.capture.trace import _kind, _map_tensors, _params_read, flatten_tensors
from burn.errors import BackendMismatchError
from burn.foundations import ownership as _ownership
from burn.foundations.dtype import DType
from burn.foundations.kind import Float
from burn.module.base import Module
from burn.module.param import Param, ParamId
from burn.optim.base import Optimizer, OptimizerAdaptor, _from_inner
from burn.optim.grads import GradientsAccumulator, GradientsParams
from burn.optim.program_update import ProgramUpdate
from burn.tensor._base import wrap
from burn.tensor.autocast import AutocastContext, current_dtype
from burn.tensor.tensor import Tensor

__all__ = ["CompiledGrad", "CompiledStep"]

_rc = sys.getrefcount
# An autocast region switched off (reentrant: it holds no state of its own).
_NO_AUTOCAST = AutocastContext(enabled=False)


# Every param's (path, value) by value id, each gradient's param path, the gradients' values,
# the autodiff backend.
_Source = tuple[dict[int, tuple[str, TensorIR]], tuple[str, ...], tuple[TensorIR, ...], Any]


class _StepEntry:
    """A traced signature: its plan, how to rebuild the function's result from the outputs, and
    the param each gradient output belongs to."""

    __slots__ = ("plan", "paths", "template", "kinds", "grad_ids", "device", "source", "updates")

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
        # What an update plan is built from (set by the trace).
        self.source: _Source | None = None
        # The update plans built so far, by variant (accumulated gradients given, a grad scaler).
        self.updates: dict[tuple[bool, bool], _UpdateEntry | None] = {}


class _UpdateEntry:
    """The plan of a traced signature with the optimizer update inside: its outputs are the
    function's result tensors, then per updated param its new value and new state tensors."""

    __slots__ = ("plan", "paths", "grad_paths", "update", "shapes", "n_scalars", "clipping", "scaled")

    def __init__(
        self, plan: Plan, paths: frozenset[str], grad_paths: tuple[str, ...], update: ProgramUpdate,
        shapes: tuple[tuple[tuple[int, ...], Any], ...], n_scalars: tuple[int, ...], clipping: Any,
        scaled: bool,
    ) -> None:
        self.plan = plan
        self.paths = paths
        self.grad_paths = grad_paths  # in `grad_ids` order
        self.update = update
        self.shapes = shapes  # each updated param's shape and dtype
        self.n_scalars = n_scalars  # each param's scalar inputs, for a check at each replay
        self.clipping = clipping  # the per-param gradient clipping traced into the program
        # With a grad scaler: scalar input 0 is the inverse scale, the last output the probe
        # (0, or NaN when a gradient is inf or NaN) and the update is selected on the device.
        self.scaled = scaled


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
        found = self._lookup(model, batch)
        if isinstance(found, _StepEntry):
            self._counts["replays"] += 1
            return self._replay_step(found, model, batch)
        return found  # type: ignore[no-any-return]

    def _lookup(self, model: Module, batch: tuple[Any, ...]) -> Any:
        """The traced entry of this call's signature, or the call's ``(result, grads)`` when it
        ran now (a warmup, a trace, an eager fallback)."""
        if not isinstance(model, Module):
            raise TypeError(
                f"{self.name}: called as f(model, *batch) (a compiled step as step(lr, model, "
                f"*batch)), got a {type(model).__name__} where the model goes"
            )
        _autodiff_backend(model, batch, self.name)  # refuses a model without autodiff first
        if _uninitialized((model,)):
            return self._warmup((model, *batch), {})
        try:
            key: Hashable = (_signature((model, *batch), "an argument"), current_dtype())
        except _Unsupported as e:
            return self._eager(str(e), (model, *batch), {})
        entry = self._cache.get(key)
        if isinstance(entry, _StepEntry):
            return entry
        if isinstance(entry, _Eager):
            return self._eager(entry.reason, (model, *batch), {})
        traced = sum(isinstance(e, _StepEntry) for e in self._cache.values())
        if traced >= self.max_recompiles:
            return self._eager(
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
            entry = _StepEntry(Plan(program, ad.inner), paths, template, kinds, grad_ids, real_outs[0].device)
            path_of = {p.id: path for path, p in traced_model.named_params()}
            entry.source = (param_ir, tuple(path_of[i] for i in grad_ids), tuple(g.ir for g in grad_ps), ad)
            self._cache[key] = entry
        return _map_tensors(template, lambda s: real_outs[s.index], _Slot), real

    # -- replay ---------------------------------------------------------------------------------
    def _replay_step(
        self, entry: _StepEntry, model: Module, batch: tuple[Any, ...]
    ) -> tuple[Any, GradientsParams]:
        ad: Any = _autodiff_backend(model, batch, self.name)
        inputs = _batch_inputs(ad, batch)
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
    `burn.compile.stats()` under its name (``program_updates``: replays that ran the optimizer
    update inside the program).

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

    def __call__(  # type: ignore[override]
        self, lr: float, model: Module, *batch: Any, accumulated: GradientsParams | None = None,
        scaler: GradScaler | None = None,
    ) -> tuple[Tensor, Module]:
        """One step; see the class docstring.

        Args:
            lr: this step's learning rate.
            model: the model (on an autodiff backend).
            *batch: the loss function's other arguments.
            accumulated: the summed gradients of the earlier micro-batches of a gradient
                accumulation group (`burn.optim.GradientsAccumulator.grads()`): this batch's
                gradients are added to them (``accumulated + grad``, the accumulator's op) and
                the update applies the sum.
            scaler: a `burn.amp.GradScaler` whose scale the loss function applied: the gradients
                are unscaled and checked inside the program, the update kept only when they are
                finite (a device select), and the verdict read back once (its one scalar read
                per step) for the scaler's ``update()``, which the caller runs as after
                ``scaler.step``.
        """
        if not isinstance(model, Module):
            raise TypeError(
                f"{self.name}: a compiled step is called as step(lr, model, *batch), got a "
                f"{type(model).__name__} where the model goes"
            )
        if scaler is not None and not scaler.enabled:
            scaler = None
        found = self._lookup(model, batch)
        if not isinstance(found, _StepEntry):
            loss, grads = found
            return loss, self._eager_update(lr, model, grads, accumulated, scaler)
        self._counts["replays"] += 1
        upd = self._update_for(found, accumulated is not None, scaler is not None)
        if upd is not None:
            stepped = self._replay_update(found, upd, lr, model, batch, accumulated, scaler)
            if stepped is not None:
                self._counts["program_updates"] += 1
                return stepped
        loss, grads = self._replay_step(found, model, batch)
        return loss, self._eager_update(lr, model, grads, accumulated, scaler)

    def _eager_update(
        self, lr: float, model: Module, grads: GradientsParams, accumulated: GradientsParams | None,
        scaler: GradScaler | None,
    ) -> Module:
        """The step as `burn.train.Learner`'s eager loop applies it: the gradients added to the
        accumulated ones, then the optimizer's own step (through the scaler's), outside any
        autocast region the step is called in (the update is float32 work on float32 params and
        state, and the program's update ops are never autocast either)."""
        if accumulated is not None:
            total = GradientsAccumulator()
            total.accumulate(accumulated)
            total.accumulate(grads)
            grads = total.grads()
        with _NO_AUTOCAST:
            if scaler is not None:
                return scaler.step(self.optimizer, model, grads, lr)
            return self.optimizer.step(lr, model, grads)

    def grads(self, model: Module, *batch: Any) -> tuple[Any, GradientsParams]:
        """``result, grads = step.grads(model, *batch)``: the forward and backward pass alone,
        from the same traces, the caller applying the update (`Learner(compile=True)` with
        gradient accumulation, a grad scaler or a strategy)."""
        return CompiledGrad.__call__(self, model, *batch)

    def _program_update(self) -> ProgramUpdate | None:
        opt = self.optimizer
        if not isinstance(opt, OptimizerAdaptor):
            return None
        return opt.optimizer.program_update()

    def _update_for(self, entry: _StepEntry, accumulate: bool, scaled: bool) -> _UpdateEntry | None:
        """The plan of `entry` with the update inside for this variant, built at its first use."""
        key = (accumulate, scaled)
        if key not in entry.updates:
            entry.updates[key] = self._update_entry(entry, accumulate, scaled)
        return entry.updates[key]

    def _update_entry(self, entry: _StepEntry, accumulate: bool, scaled: bool) -> _UpdateEntry | None:
        """`entry`'s program with the optimizer update appended (see the module docstring), or
        None when the optimizer gives no program update. With `accumulate`, one more input per
        gradient (the earlier micro-batches' sum) is added to it first; with `scaled`, the
        gradients are unscaled and checked, and the update selected, as `GradScaler.step` does."""
        update = self._program_update()
        if update is None or not entry.grad_ids or entry.source is None:
            return None
        param_ir, grad_paths, grad_irs, ad = entry.source
        clipping = self.optimizer.grad_clipping  # type: ignore[attr-defined]
        program = entry.plan.program
        ir_of = {path: t for path, t in param_ir.values()}
        n_out = len(program.outputs) - len(grad_irs)
        next_id = 1 + max(
            [t.id for t in program.inputs] + [t.id for _, t in program.params]
            + [o.id for c in program.calls for o in c.outputs if o is not None]
        )
        emit = update.emit
        if emit is None:
            # The op's arguments after its tensors, by name (printed with the program).
            names = list(inspect.signature(getattr(ad.inner, update.op)).parameters)
            emit = _op_emit(update, tuple(names[2 + len(update.state_keys) :]))
        for path, g in zip(grad_paths, grad_irs, strict=True):
            param = ir_of[path]
            if g.shape != param.shape or g.dtype is not param.dtype:
                return None  # the eager update casts: not this program's calls
        builder = _Builder(next_id)
        extra: list[TensorIR] = []  # the accumulated gradients' inputs
        grads = list(grad_irs)
        if accumulate:
            for k, (path, g) in enumerate(zip(grad_paths, grad_irs, strict=True)):
                builder.start(path, ir_of[path])
                (acc,) = builder.states(ir_of[path], 1)
                extra.append(acc)
                grads[k] = builder.call("float_add", acc, g)  # `GradientsAccumulator`'s sum
        probe: TensorIR | None = None
        if scaled:  # `GradScaler.unscale`'s ops: each gradient times 1/scale, (g * 0).sum() probes
            builder.start("", grad_irs[0])
            inverse = builder.scalar("inverse_scale")
            for k, (path, g) in enumerate(zip(grad_paths, grads, strict=True)):
                builder.start(path, ir_of[path])
                grads[k] = builder.call("float_mul_scalar", g, inverse)
                zero = builder.call_shaped("float_sum", (1,), builder.call("float_mul_scalar", grads[k], 0.0))
                probe = zero if probe is None else builder.call_shaped("float_add", (1,), probe, zero)
        states: list[TensorIR] = []
        outputs: list[TensorIR] = list(program.outputs[:n_out])
        shapes: list[tuple[tuple[int, ...], Any]] = []
        n_scalars: list[int] = []
        if clipping is not None:
            with _NO_AUTOCAST:  # as the eager update clips
                if clipping.is_global:
                    clipped = builder.traced(ad.inner, grads, clipping.clip_all, entry.device)
                else:
                    clipped = builder.traced(
                        ad.inner, grads, lambda ts: [clipping.clip(t) for t in ts], entry.device
                    )
            if clipped is None:
                return None
            grads = clipped
        for path, grad in zip(grad_paths, grads, strict=True):
            param = ir_of[path]
            ins = builder.states(param, len(update.state_keys))
            builder.start(path, param)
            results = emit(builder, param, grad, tuple(ins))
            if len(results) != 1 + len(ins):
                raise RuntimeError(
                    f"{type(self.optimizer).__name__}: its program update returned {len(results)} "
                    f"values for param {path!r}, expected the new param and {len(ins)} state tensors"
                )
            states.extend(ins)
            outputs.extend(results)
            shapes.append((param.shape, param.dtype))
            n_scalars.append(builder.asked)
        if probe is not None:
            # The update where the probe is finite (it is 0 or NaN: NaN != NaN), else the param
            # and state as they were: the skipped step, without a host branch.
            finite = builder.call_shaped("float_equal", (1,), probe, probe, dtype=DType.BOOL)
            width = 1 + len(update.state_keys)
            olds = [ir_of[path] for path in grad_paths]
            for j, old_param in enumerate(olds):
                ones = (1,) * len(old_param.shape)
                mask = builder.call_shaped("bool_reshape", ones, finite, ones, dtype=DType.BOOL)
                base = n_out + j * width
                olds_j = (old_param, *states[j * (width - 1) : (j + 1) * (width - 1)])
                for k, old in enumerate(olds_j):
                    builder.start(grad_paths[j], old)
                    outputs[base + k] = builder.call("float_mask_where", old, mask, outputs[base + k])
            outputs.append(probe)
        full = Program(
            (*program.inputs, *extra, *states),
            tuple(param_ir[i] for i in param_ir),
            (*program.calls, *builder.calls),
            tuple(outputs),
            (),
        )
        # With a scaler the old state is selected after the update: its buffers are not handed
        # over to be written in place.
        donated = frozenset() if scaled else frozenset(t.id for t in states)
        # The update's ops run one at a time: its element-wise chains are cut by the scalar
        # inputs into runs of 2-4 ops, and on burn-ndarray such runs as generated kernels cost
        # more than the ops one at a time, which write the donated buffers in place (the MLP
        # step with Lion, 1 thread: 3.0 ms fused against 2.5 eager, after one-dim fused kernels
        # vectorized; 14.6 against 7.0 before; docs/benchmarks-log.md).
        unfused = frozenset(o.id for c in builder.calls for o in c.outputs if o is not None)
        plan = Plan(full, ad.inner, donated=donated, unfused=unfused)
        paths = frozenset(path for path, _ in full.params)
        return _UpdateEntry(
            plan, paths, grad_paths, update, tuple(shapes), tuple(n_scalars), clipping, scaled
        )

    def _replay_update(
        self, entry: _StepEntry, upd: _UpdateEntry, lr: float, model: Module, batch: tuple[Any, ...],
        accumulated: GradientsParams | None, scaler: GradScaler | None,
    ) -> tuple[Any, Module] | None:
        """The replay with the update inside, or None when a param's state (or accumulated
        gradient) is not the one the program takes (then the caller replays the gradients and
        runs the eager update)."""
        opt = self.optimizer
        if (
            not isinstance(opt, OptimizerAdaptor) or opt._loaded
            or opt._custom_to_device or opt.optimizer.program_update() is None
            or opt.grad_clipping is not upd.clipping
        ):
            return None
        ad: Any = _autodiff_backend(model, batch, self.name)
        inner = ad.inner
        by_path = dict(model.named_params())
        update = upd.update
        stateless = not update.state_keys
        for pid, path, (shape, dtype) in zip(entry.grad_ids, upd.grad_paths, upd.shapes, strict=True):
            state: Any = opt.states.get(pid)
            value = by_path[path].val()
            if not update.ready(state) or not (stateless or opt._same_place(pid, inner, value.device)):
                return None
            for k in update.state_keys:
                if not _fits(state[k], inner, shape, dtype):
                    return None
        inputs = _batch_inputs(ad, batch)
        if accumulated is not None:
            if set(accumulated) != set(entry.grad_ids):
                return None  # a param with gradients in some micro-batches only: summed eagerly
            for pid, (shape, dtype) in zip(entry.grad_ids, upd.shapes, strict=True):
                acc = accumulated.get(pid)
                if not _fits(acc, inner, shape, dtype):
                    return None
                inputs.append(acc._p)  # type: ignore[union-attr]
        scalars: list[Any] = []
        if upd.scaled:
            assert scaler is not None
            scalars.append(1.0 / scaler.get_scale())  # `GradScaler.unscale`'s factor
        olds: list[dict[str, Any]] = []
        for pid, path, count in zip(entry.grad_ids, upd.grad_paths, upd.n_scalars, strict=True):
            # A copy, as `OptimizerAdaptor` hands over: a record from `to_record()` still holding
            # the dict keeps its tensors.
            held = opt.states.pop(pid, None)
            state = {} if held is None else dict(held)
            before = len(scalars)
            if update.emit is None and update.param_scale is not None:  # `_op_emit`'s order
                scalars.append(update.param_scale(lr))
            scalars.extend(update.scalars(lr, state))
            if len(scalars) - before != count:
                raise RuntimeError(
                    f"{type(opt.optimizer).__name__}: its program update gave {len(scalars) - before} "
                    f"host values for param {path!r}, its program reads {count}"
                )
            for k in update.state_keys:
                t = state.pop(k)
                # A tensor held by nothing else gives its buffer to the program, which then holds
                # it alone and lets the fused op write the new state into it; a held one (a
                # record's) keeps it, and the op writes fresh buffers.
                moves = _rc(t) == _ownership.SOLE
                inputs.append(t._p)
                if moves:
                    t._p = None
                del t
            olds.append(state)
        params = {path: _inner_p(ad, p.val()) for path, p in by_path.items() if path in upd.paths}
        outs = upd.plan.run(inputs, params, entry.device, scalars)
        skipped = False
        if upd.scaled:
            assert scaler is not None
            skipped = not scaler.check_probe(wrap(outs[-1], inner, Float))  # the one host read
        n, width = len(entry.kinds), 1 + len(update.state_keys)
        new_params: dict[str, Any] = {}
        for j, (pid, path) in enumerate(zip(entry.grad_ids, upd.grad_paths, strict=True)):
            base = n + j * width
            new_params[path] = outs[base]
            tensors = tuple(wrap(o, inner, Float) for o in outs[base + 1 : base + width])
            new_state = update.next_state(olds[j], tensors)
            if new_state is not None and skipped:
                # The program kept the old tensors; the host values (step counts) stay too.
                new_state.update(olds[j])
            if new_state is not None:
                opt.states[pid] = new_state
        kinds = entry.kinds
        result = _map_tensors(entry.template, lambda s: _wrap_out(ad, outs[s.index], kinds[s.index]), _Slot)

        def stepped(path: str, param: Param) -> Param:
            new = new_params.get(path)
            if new is None:
                return param
            tensor = param.val()
            return param.stepped(_from_inner(wrap(new, inner, Float), tensor))

        return result, model.map(stepped)


def _fits(t: Any, inner: Any, shape: tuple[int, ...], dtype: Any) -> bool:
    """Whether `t` is a tensor of `inner` with this shape and dtype (what the program takes)."""
    return isinstance(t, Tensor) and t._b is inner and tuple(t.shape) == shape and t.dtype is dtype


class _Builder:
    """Writes the update's calls after the traced program (`burn.optim.program_update.UpdateBuilder`):
    fresh value ids from `next_id` on, each result of the param's shape and dtype."""

    def __init__(self, next_id: int) -> None:
        self.next_id = next_id
        self.calls: list[CallIR] = []
        self.n_scalars = 0  # scalar inputs of the whole program
        self.asked = 0  # those of the current param
        self._path = ""
        self._like: TensorIR | None = None  # the param whose shape and dtype results take

    def _new(self) -> TensorIR:
        assert self._like is not None
        t = TensorIR(self.next_id, self._like.shape, self._like.dtype)
        self.next_id += 1
        return t

    def start(self, path: str, param: TensorIR) -> None:
        """The calls from here on update param `path`."""
        self._path, self._like, self.asked = path, param, 0

    def states(self, param: TensorIR, n: int) -> list[TensorIR]:
        """`n` new program inputs of `param`'s shape and dtype (its state tensors)."""
        self._like = param
        return [self._new() for _ in range(n)]

    def call(self, op: str, *args: Any, results: tuple[bool, ...] = (True,), boolean: bool = False) -> Any:
        if boolean:
            assert self._like is not None
            return self.call_shaped(op, self._like.shape, *args, dtype=DType.BOOL)
        outs = tuple(self._new() if r else None for r in results)
        self.calls.append(CallIR(op, args, (), outs))
        return outs[0] if len(results) == 1 else outs

    def call_shaped(
        self, op: str, shape: tuple[int, ...], *args: Any, dtype: DType | None = None
    ) -> TensorIR:
        """`call` for an op whose one result has `shape` (and `dtype`, default the param's)."""
        assert self._like is not None
        out = TensorIR(self.next_id, shape, self._like.dtype if dtype is None else dtype)
        self.next_id += 1
        self.calls.append(CallIR(op, args, (), (out,)))
        return out

    def scalar(self, name: str) -> ScalarInput:
        s = ScalarInput(self.n_scalars, f"{self._path}:{name}")
        self.n_scalars += 1
        self.asked += 1
        return s

    def traced(
        self, inner: Backend, grads: list[TensorIR], fn: Callable[[list[Tensor]], list[Tensor]], device: Any
    ) -> list[TensorIR] | None:
        """``fn(grads)`` recorded as calls (the Tensor API's own ops, run on zeros of the
        gradients' shapes: only the calls are kept), or None when it reads a value back to the
        host: gradient clipping, which has no host values, runs inside the program as the eager
        step runs it."""
        cap = Capture(inner)
        cap._next = self.next_id
        ins = [wrap(CaptureTensor(inner.float_zeros(g.shape, device, g.dtype), g), cap, Float) for g in grads]
        outs = [t._p for t in fn(ins)]
        self.next_id = cap._next
        if cap.host_reads or not all(isinstance(o, CaptureTensor) for o in outs):
            return None
        self.calls.extend(cap.calls)
        return [o.ir for o in outs]


def _op_emit(update: ProgramUpdate, names: tuple[str, ...]) -> Callable[..., tuple[Any, ...]]:
    """`ProgramUpdate.emit` for an update that is one fused op: AdamW's decay factor first (a
    scalar input), then the op with its host arguments as scalar inputs named as its parameters."""

    def emit(b: _Builder, param: TensorIR, grad: TensorIR, states: tuple[TensorIR, ...]) -> tuple[Any, ...]:
        operand = param
        if update.param_scale is not None:  # AdamW's decay: param * (1 - lr * wd) first
            operand = b.call("float_mul_scalar", param, b.scalar("param_scale"))
        scalars = tuple(b.scalar(name) for name in names)
        return b.call(update.op, operand, grad, *states, *scalars, results=(True,) * (1 + len(states)))  # type: ignore[no-any-return]

    return emit


def _batch_inputs(ad: Any, batch: tuple[Any, ...]) -> list[Any]:
    """The inner primitives of the batch's tensors, in the program's input order."""
    return [ad.float_inner(t._p) if t._k is Float else t._p for a in batch for t in flatten_tensors(a)]


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


