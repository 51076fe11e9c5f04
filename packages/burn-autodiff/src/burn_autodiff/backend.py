"""`Autodiff(inner)`: the decorator backend that makes any backend differentiable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend import Backend, Device, contract_ops
from burn.backend.decorator import DecoratorBackend
from burn_autodiff import checkpoint, engine
from burn_autodiff.errors import AutodiffError
from burn_autodiff.gradients import Gradients, check_gradients
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node
from burn_autodiff.ops_activation import AutodiffActivationOps
from burn_autodiff.ops_composed import records_no_node
from burn_autodiff.ops_float import AutodiffFloatOps
from burn_autodiff.ops_layout import AutodiffLayoutOps
from burn_autodiff.ops_math import AutodiffMathOps
from burn_autodiff.ops_module import AutodiffModuleOps
from burn_autodiff.ops_module_extra import AutodiffModuleExtraOps

if TYPE_CHECKING:
    from burn.foundations.data import TensorData
    from burn.foundations.distribution import Distribution
    from burn.foundations.dtype import DType

Shape = tuple[int, ...]

# Int and bool ops that neither take a device nor return a float primitive: they run on the
# inner backend's primitives unchanged, bound straight to the inner's methods.
_WRAPPED = frozenset({
    "int_into_float", "bool_into_float", "int_device", "bool_device", "int_from_data", "int_to_device",
    "int_full", "int_zeros", "int_ones", "int_empty", "int_arange", "int_random", "bool_from_data",
    "bool_to_device", "bool_full", "bool_zeros", "bool_ones", "bool_empty",
})
PASS_THROUGH = tuple(
    name for name in contract_ops() if name.startswith(("int_", "bool_")) and name not in _WRAPPED
)


class Autodiff(
    AutodiffFloatOps, AutodiffMathOps, AutodiffLayoutOps, AutodiffModuleOps, AutodiffModuleExtraOps,
    AutodiffActivationOps, DecoratorBackend,
):
    """A backend that records float ops and computes gradients, on top of any `inner` backend.

    Float primitives are `ADTensor` (inner primitive + graph node); int and bool primitives are
    the inner backend's own, and their ops are the inner's bound methods (no overhead).

    Args:
        inner: the backend doing the computation (``NdArray()``, an OpenCL backend, ...).
        checkpointing: ``None``/``"none"`` (default: save what backward needs) or
            ``"balanced"``: recompute memory-bound ops (elementwise, activations) in backward
            instead of keeping their outputs; compute-bound outputs (matmul, conv) are kept.
            `burn.backend("autodiff(ndarray)", ...)` passes its options to the base backend, so
            build a checkpointing backend directly: ``Autodiff(NdArray(), checkpointing="balanced")``.

    Example:
        >>> from burn_ndarray import NdArray  # doctest: +SKIP
        >>> B = Autodiff(NdArray(float_dtype="float64"))  # doctest: +SKIP
        >>> B.name, B.ad_enabled  # doctest: +SKIP
        ('autodiff(ndarray)', True)
    """

    ad_enabled = True

    def __init__(self, inner: Backend, checkpointing: str | None = None) -> None:
        self._check_inner(inner)
        strategy = "none" if checkpointing is None else checkpointing
        if strategy not in checkpoint.STRATEGIES:
            raise ValueError(
                f"Autodiff: unknown checkpointing strategy {checkpointing!r}; expected one of "
                f"{', '.join(checkpoint.STRATEGIES)} or None"
            )
        self.checkpointing = strategy
        features = (inner.capabilities.features - {"buffer_reuse"}) | {"autodiff"}
        self._init_decorator(inner, "autodiff", features)
        for name in PASS_THROUGH:
            setattr(self, name, getattr(inner, name))
        if strategy == "balanced":
            checkpoint.install(self)

    # -- decorator plumbing -------------------------------------------------------------------
    @property
    def inner(self) -> Backend:
        """The wrapped backend: gradients and ``tensor.inner()`` live on it."""
        return self._in

    def __repr__(self) -> str:
        extra = "" if self.checkpointing == "none" else f" checkpointing={self.checkpointing}"
        return f"<burn backend {self.name} float={self.float_dtype.value} int={self.int_dtype.value}{extra}>"

    # -- autodiff hooks -----------------------------------------------------------------------
    def backward(self, tensor: AD) -> Gradients:
        """Gradients of `tensor` (seeded with ones, whatever its shape) for every tensor that
        requires grad in its graph. Consumes the graph. Raises `AutodiffError` if it has none."""
        return engine.backward(self, tensor)

    def grad(self, tensor: AD, grads: Gradients) -> Any:
        """`tensor`'s gradient in `grads` (an inner primitive), or None (see `Gradients`)."""
        return check_gradients(grads, "grad()")._lookup(self, tensor.node, False, "grad()")

    def grad_remove(self, tensor: AD, grads: Gradients) -> Any:
        """Like `grad`, and removes the entry from `grads`."""
        return check_gradients(grads, "grad_remove()")._lookup(self, tensor.node, True, "grad_remove()")

    def float_inner(self, tensor: AD) -> Any:
        return tensor.p

    def float_from_inner(self, tensor: Any) -> AD:
        return AD(tensor, None)

    @records_no_node
    def float_detach(self, tensor: AD) -> AD:
        return tensor if tensor.node is None else AD(tensor.p, None)

    @records_no_node
    def float_set_require_grad(self, tensor: AD, require_grad: bool) -> AD:
        """True: a constant becomes a leaf; an intermediate tensor keeps its gradient in the next
        backward. False: the tensor is detached from its graph."""
        n = tensor.node
        if not require_grad:
            return tensor if n is None else AD(tensor.p, None)
        if n is None:
            return AD(tensor.p, Node.leaf(self._in.float_get_dtype(tensor.p)))
        if n.keep is None:
            if n.rule is engine.consumed:
                raise AutodiffError(
                    "set_require_grad(True): the tensor's graph was already consumed by backward(); "
                    "detach() it first to make it a new leaf"
                )
            n.keep = self._in.float_get_dtype(tensor.p)
        return tensor

    def float_is_require_grad(self, tensor: AD) -> bool:
        """Whether gradients flow through `tensor` (a leaf, or computed from one)."""
        return tensor.node is not None

    # -- int / bool ops that need wrapping (devices in, float primitives out) -----------------
    def int_into_float(self, tensor: Any, dtype: DType) -> AD:
        return AD(self._in.int_into_float(tensor, dtype), None)

    def bool_into_float(self, tensor: Any, dtype: DType) -> AD:
        return AD(self._in.bool_into_float(tensor, dtype), None)

    def int_device(self, tensor: Any) -> Device:
        return self._own_device(self._in.int_device(tensor))

    def bool_device(self, tensor: Any) -> Device:
        return self._own_device(self._in.bool_device(tensor))

    def int_from_data(self, data: TensorData, device: Device) -> Any:
        return self._in.int_from_data(data, self._inner_device(device))

    def int_to_device(self, tensor: Any, device: Device) -> Any:
        return self._in.int_to_device(tensor, self._inner_device(device))

    def int_full(self, shape: Shape, value: int, device: Device, dtype: DType) -> Any:
        return self._in.int_full(shape, value, self._inner_device(device), dtype)

    def int_zeros(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_zeros(shape, self._inner_device(device), dtype)

    def int_ones(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_ones(shape, self._inner_device(device), dtype)

    def int_empty(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_empty(shape, self._inner_device(device), dtype)

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> Any:
        return self._in.int_arange(start, end, step, self._inner_device(device), dtype)

    def int_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> Any:
        return self._in.int_random(shape, distribution, self._inner_device(device), dtype)

    def bool_from_data(self, data: TensorData, device: Device) -> Any:
        return self._in.bool_from_data(data, self._inner_device(device))

    def bool_to_device(self, tensor: Any, device: Device) -> Any:
        return self._in.bool_to_device(tensor, self._inner_device(device))

    def bool_full(self, shape: Shape, value: bool, device: Device) -> Any:
        return self._in.bool_full(shape, value, self._inner_device(device))

    def bool_zeros(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_zeros(shape, self._inner_device(device))

    def bool_ones(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_ones(shape, self._inner_device(device))

    def bool_empty(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_empty(shape, self._inner_device(device))
