"""`Optimizer`, `SimpleOptimizer` and `OptimizerAdaptor`, as in Burn's optimization design.

An `Optimizer` takes a learning rate, a module and its gradients and returns the updated module.
A `SimpleOptimizer` only says how one tensor is updated from its gradient and its own state; the
`OptimizerAdaptor` does the rest: walking the module, skipping params without gradient, moving
gradient and state to the param's device, stepping on inner (untracked) tensors, re-wrapping the
result as a graph leaf, and keeping one state per `ParamId`.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

from burn.foundations import ownership as _ownership
from burn.foundations.kind import Float
from burn.module.param import Param, ParamId
from burn.optim.grads import GradientsParams
from burn.optim.state import OwnedState, hands_over_grad
from burn.tensor._base import wrap

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.foundations.dtype import DType
    from burn.module.base import Module
    from burn.optim.clipping import GradientClipping
    from burn.optim.program_update import ProgramUpdate
    from burn.tensor.tensor import Tensor

M = TypeVar("M", bound="Module")
_rc = sys.getrefcount
S = TypeVar("S")


class Optimizer(abc.ABC):
    """Updates a module from its gradients; its state is a record."""

    @abc.abstractmethod
    def step(self, lr: float, module: M, grads: GradientsParams) -> M:
        """The module after one update with learning rate `lr`."""

    @abc.abstractmethod
    def to_record(self) -> Any:
        """The optimizer's state as a record (nested dicts of tensors and Python values)."""

    @abc.abstractmethod
    def load_record(self, record: Any) -> Optimizer:
        """Restore the state from `to_record()`'s output (tensors may be `TensorData`); returns self."""


class SimpleOptimizer(abc.ABC, Generic[S]):
    """The update rule of one tensor. Its per-param state may be anything a record can hold:
    tensors, ints, floats, strings, lists, dicts."""

    @abc.abstractmethod
    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: S | None) -> tuple[Tensor, S | None]:
        """The updated tensor and state. `tensor` and `grad` are inner (untracked) tensors on the
        same device; `state` is None on the first step. `OptimizerAdaptor` passes a dict state as
        an `OwnedState`, a copy that is the step's to take tensors out of (see `adam_apply`)."""

    def program_update(self) -> ProgramUpdate | None:
        """This optimizer's update as one fused backend op that a compiled training step runs
        inside its program (`burn.optim.program_update`), or None (the default: the step runs
        the update eagerly after the replayed forward and backward passes). An override must
        give exactly what `step` computes, and return None for a subclass that overrides `step`.
        """
        return None

    def to_device(self, state: S, device: Device) -> S:
        """`state` with its tensors on `device` (default: walks dicts, lists and tuples)."""
        return _state_to_device(state, device)  # type: ignore[no-any-return]

    def load_state(self, state: Any, tensor: Tensor) -> S:
        """A state read from a record (its tensors are `TensorData`) made ready to step `tensor`.

        Called once per param, at its first step after `OptimizerAdaptor.load_record`. The default
        puts every tensor on `tensor`'s device and gives float ones `tensor`'s dtype, as Burn
        (whose state tensors have the backend's float type): a float64 param resumes with float64
        state even if the record was saved at another precision. Int and bool tensors keep their
        dtype. Override it to keep, e.g., float32 state for a float16 param.
        """
        return _state_to_device(state, tensor.device, tensor.dtype)  # type: ignore[no-any-return]


def _step_usage(lr: Any, module: Any, grads: Any) -> NoReturn:
    """Raise the TypeError for a call that is not ``step(lr, module, grads)``: most often
    PyTorch's habit of an optimizer holding its learning rate, ``optimizer.step(model, grads)``."""
    got = ", ".join(type(a).__name__ for a in (lr, module, grads) if a is not None)
    raise TypeError(
        f"step(lr, module, grads): burn's optimizer takes the learning rate at every step, first "
        f"(got {got}); write model = optimizer.step(1e-3, model, grads), or pass a scheduler's "
        f"value: optimizer.step(scheduler.step(), model, grads)"
    )


class OptimizerAdaptor(Optimizer):
    """Turns a `SimpleOptimizer` into an `Optimizer` over whole modules.

    Example:
        >>> from burn.optim import SgdConfig
        >>> optimizer = SgdConfig().init()
        >>> optimizer.to_record()
        {}
    """

    def __init__(
        self, optimizer: SimpleOptimizer[Any], grad_clipping: GradientClipping | None = None
    ) -> None:
        self.optimizer = optimizer
        self.grad_clipping = grad_clipping
        self.states: dict[ParamId, Any] = {}
        # Params whose state came from `load_record` and has not been through `load_state` yet.
        self._loaded: set[ParamId] = set()
        # The backend instance and device each state was left on by its last step: `to_device`
        # runs only when the param moved since (walking every state each step costs more than a
        # small update), or every step for an optimizer that overrides it.
        self._state_devices: dict[ParamId, tuple[Any, Device]] = {}
        self._custom_to_device = type(optimizer).to_device is not SimpleOptimizer.to_device

    def step(self, lr: float, module: M, grads: GradientsParams | None = None) -> M:
        """The module after one update with learning rate `lr` (Burn's order: ``lr, module,
        grads``). `grads` is emptied: each param's gradient is taken out as it is applied.

        Example:
            >>> from burn.optim import SgdConfig
            >>> SgdConfig().init().step(0.1, None)  # doctest: +IGNORE_EXCEPTION_DETAIL
            Traceback (most recent call last):
            TypeError: step(lr, module, grads): ...
        """
        if grads is None or isinstance(lr, GradientsParams) or hasattr(lr, "named_params"):
            _step_usage(lr, module, grads)  # a module or grads where the lr goes
        grads = self._clip_global(grads)
        hands_over = hands_over_grad(self.optimizer)

        def update(path: str, param: Param) -> Param:
            grad = grads.remove(param.id)
            if grad is None:
                return param
            tensor = param.val()
            inner = tensor.inner()
            device = inner.device
            if grad.backend is not inner.backend and grad.backend.ad_enabled:
                grad = grad.inner()  # built on the autodiff backend: its inner tensor, no copy
            if grad.backend is not inner.backend or grad.device != device:
                grad = _state_to_device(grad, device)
            if grad.dtype is not inner.dtype:  # each param is updated in its own dtype
                grad = grad.cast(inner.dtype)
            if self.grad_clipping is not None and not self.grad_clipping.is_global:
                grad = self.grad_clipping.clip(grad)
            # Popped, so that the state handed over below is the only holder of its tensors
            # unless a record from to_record() still refers to them (then they are only read).
            state = self.states.pop(param.id, None)
            if state is not None:
                if self._loaded and param.id in self._loaded:
                    self._loaded.discard(param.id)
                    state = self.optimizer.to_device(self.optimizer.load_state(state, inner), device)
                elif self._custom_to_device or not self._same_place(param.id, inner.backend, device):
                    state = self.optimizer.to_device(state, device)
                if isinstance(state, dict):  # a copy: the caller's dicts are never modified
                    state = OwnedState(state)
                    # Proven here, where it is a local (taken out of `grads`, which the step
                    # consumes): a gradient that nothing else refers to is handed over with the
                    # state to a step of burn's own, whose fused update may reuse its buffer.
                    if hands_over and _rc(grad) == _ownership.SOLE:
                        state.grad = grad
            try:
                new_inner, new_state = self.optimizer.step(lr, inner, grad, state)
            except BaseException as exc:
                if state is not None:
                    self.states[param.id] = dict(state) if isinstance(state, OwnedState) else state
                exc.add_note(f"burn: in the {type(self.optimizer).__name__} step of param {path!r}")
                raise
            if new_state is not None:
                self.states[param.id] = new_state
                self._state_devices[param.id] = (inner.backend, device)
            new_tensor = new_inner if not tensor.backend.ad_enabled else _from_inner(new_inner, tensor)
            return param.stepped(new_tensor)

        return module.map(update)

    def _same_place(self, param_id: ParamId, backend: Any, device: Device) -> bool:
        """Whether the param's state was left by its last step on this backend instance and
        device (devices of two instances, e.g. ndarray float32 and float64, compare equal)."""
        last = self._state_devices.get(param_id)
        return last is not None and last[0] is backend and last[1] == device

    def _clip_global(self, grads: GradientsParams) -> GradientsParams:
        if self.grad_clipping is None or not self.grad_clipping.is_global:
            return grads
        return self.grad_clipping.clip_global(grads)

    def to_record(self) -> dict[str, Any]:
        return {str(param_id): state for param_id, state in self.states.items()}

    def load_record(self, record: Mapping[str, Any]) -> OptimizerAdaptor:
        """States are kept as loaded (tensors may be `TensorData`) and made ready for each param
        at its next step by `SimpleOptimizer.load_state` (its device and, for float tensors, its
        dtype), so the record may come from any backend, device or precision. For bit-exact
        resumes, save at a precision that holds every state tensor exactly (`FullPrecisionSettings`
        for float32 models, `DoublePrecisionSettings` or `KeepPrecisionSettings` for float64 or
        mixed ones)."""
        self.states = {ParamId.parse(key): value for key, value in record.items()}
        self._loaded = set(self.states)
        self._state_devices = {}
        return self

    def __repr__(self) -> str:
        return f"OptimizerAdaptor({type(self.optimizer).__name__}, {len(self.states)} param states)"


def _from_inner(inner: Tensor, like: Tensor) -> Tensor:
    """`inner` (a tensor of `like`'s inner backend) on `like`'s autodiff backend, not tracked:
    `Tensor.from_inner` without its checks (the optimizer made `inner` from `like`'s own)."""
    b = like._b
    if inner._k is Float:
        return wrap(b.float_from_inner(inner._p), b, Float)
    return wrap(inner._p, b, inner._k)


def _state_to_device(state: Any, device: Device, float_dtype: DType | None = None) -> Any:
    """Tensors (or `TensorData` loaded from a record) in nested containers, put on `device`;
    with `float_dtype`, float tensors are cast to it too."""
    from burn.foundations.data import TensorData
    from burn.tensor.tensor import Tensor

    if isinstance(state, Tensor):
        if state.backend is device.owner:
            moved = state if state.device == device else state.to_device(device)
        else:
            # Another backend (e.g. state saved on ndarray, resumed on opencl): go through the host.
            moved = Tensor.from_data(state.to_data(), device=device, dtype=state.dtype)
        if float_dtype is not None and moved.dtype.is_float and moved.dtype is not float_dtype:
            moved = moved.cast(float_dtype)
        return moved
    if isinstance(state, TensorData):
        dtype = state.dtype
        if float_dtype is not None and dtype.is_float:
            dtype = float_dtype
        return Tensor.from_data(state, device=device, dtype=dtype)
    if isinstance(state, dict):
        return {key: _state_to_device(value, device, float_dtype) for key, value in state.items()}
    if isinstance(state, list):
        return [_state_to_device(value, device, float_dtype) for value in state]
    if isinstance(state, tuple):
        return tuple(_state_to_device(value, device, float_dtype) for value in state)
    return state
