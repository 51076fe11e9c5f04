"""`Fusion(inner)`: the decorator backend that records element-wise ops and runs them fused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn.backend import Backend, Device, contract_ops, implemented_ops
from burn.backend.decorator import DecoratorBackend, delegate_op
from burn.backend.fusion import fused_reductions, supports_fusion
from burn.backend.ir import ELEMENTWISE, broadcast_shapes, result_dtype
from burn.foundations.dtype import DType
from burn_fusion.errors import FusionError
from burn_fusion.stream import FusionStats, Stream
from burn_fusion.tensor import FusionTensor

Shape = tuple[int, ...]
_BOOL = DType.BOOL

# Contract ops answered from the handle (no flush, no inner call).
_METADATA = frozenset({
    "float_shape", "int_shape", "bool_shape", "float_get_dtype", "int_get_dtype",
    "float_device", "int_device", "bool_device",
})
# Ops composed here (their burn-core default) rather than delegated when the inner backend fuses
# these reductions: the composition's reductions then take their element-wise prologue (softmax:
# max, then exp(x - max) fused into the sum, then the division: 3 kernels instead of 4).
_COMPOSED_WHEN_REDUCING = {"softmax": frozenset({"float_max_dim", "float_sum_dim"})}


class Fusion(DecoratorBackend):
    """A backend that records element-wise ops and runs each group of them as one kernel of `inner`.

    Primitives are `FusionTensor` handles. Element-wise ops (arithmetic with broadcasting, scalar
    ops, unary math, activations and their backward helpers, comparisons, masks, casts) are
    recorded in a stream; a reduction, matmul or any other op runs on `inner` as usual after the
    values it reads are computed. The stream is flushed (one ``inner.fusion_execute`` call per
    block) when a value is read (`into_data`, a non-fusable op), on `sync()`, when an op cannot
    join the open block (another shape or device) and when the block reaches its bounds.

    `inner` must implement the fusion contract (`burn.backend.fusion.FusionBackend`). Ops that the
    inner backend overrides are delegated to it; the other ``@default`` ops run here, composed of
    the recorded ops, so they fuse too (an Adam update is one kernel).

    Args:
        inner: the backend doing the computation (``burn.backend("opencl")``).

    Example:
        >>> import burn  # doctest: +SKIP
        >>> B = burn.backend("fusion(opencl)")  # doctest: +SKIP
        >>> x = burn.Tensor.ones((1024, 1024), backend=B)  # doctest: +SKIP
        >>> y = ((x * 2.0).exp() + 1.0).sqrt()  # recorded, not run  # doctest: +SKIP
        >>> y.to_data().shape, B.stats.kernels  # doctest: +SKIP
        ((1024, 1024), 1)
    """

    def __init__(self, inner: Backend) -> None:
        self._check_inner(inner)
        if not supports_fusion(inner):
            raise FusionError(
                f"fusion({inner.name}): the backend {inner.name!r} does not implement the fusion contract "
                "(fusion_ops, fusion_dtypes, fusion_execute; see burn.backend.fusion.FusionBackend), so "
                "it cannot run fused kernels; use it without fusion, or a backend that implements it "
                "(opencl)"
            )
        self._init_decorator(inner, "fusion", inner.capabilities.features - {"buffer_reuse"})
        fusable: Any = inner
        self._fusion_ops = frozenset(fusable.fusion_ops()) & ELEMENTWISE.keys()
        self._fusion_dtypes = frozenset(fusable.fusion_dtypes())
        # Row chains (ops going on past a reduction, `Stream.reduce`) where the inner backend
        # offers them: an optional part of the fusion contract.
        self._stream = Stream(
            fusable.fusion_execute,
            getattr(inner, "fusion_rows", None),
            getattr(inner, "fusion_execute_rows", None),
        )
        self._reductions = fused_reductions(inner)
        overridden = implemented_ops(type(inner))
        for name, kind in contract_ops().items():
            if name in _METADATA:
                continue
            delegate = kind == "required" or name in overridden
            needs = _COMPOSED_WHEN_REDUCING.get(name)
            if kind != "required" and needs is not None and needs <= self._reductions:
                delegate = False  # the inherited default runs here, composed of fused ops
            fallback = self._delegate(name) if delegate else getattr(Backend, name).__get__(self)
            if name in self._fusion_ops:
                setattr(self, name, self._recorder(name, fallback))
            elif name in self._reductions:
                setattr(self, name, self._reducer(name, fallback))
            elif delegate:
                setattr(self, name, fallback)

    # -- decorator plumbing -------------------------------------------------------------------
    @property
    def wrapped(self) -> Backend:
        """The backend that runs the kernels (``opencl`` in ``fusion(opencl)``).

        (`inner` stays this backend itself: fusion is transparent, a tensor of ``fusion(x)`` has no
        "inner" tensor the way an autodiff tensor has.)
        """
        return self._in

    @property
    def stats(self) -> FusionStats:
        """Counters of fused kernels and ops (`FusionStats`); ``stats.reset()`` zeroes them."""
        return self._stream.stats

    def flush(self) -> None:
        """Run the recorded ops now (one fused kernel), without waiting for the device."""
        self._stream.flush()

    def sync(self, device: Device | None = None) -> None:
        self._stream.flush()
        super().sync(device)

    # -- handles ------------------------------------------------------------------------------
    def _value(self, tensor: FusionTensor) -> Any:
        """The inner primitive of `tensor`, running the stream first if it is pending."""
        value = tensor.value
        if value is None:
            if tensor.ir is None:
                raise FusionError(
                    "fusion: this tensor's value was lost: the fused kernel that computes it failed "
                    "(the error was raised then)"
                )
            self._stream.flush()
            value = tensor.value
        return value

    def _meta(self, tensor: FusionTensor, kind: str) -> None:
        """Fill in the shape, dtype and device of a computed handle (asked of the inner backend)."""
        inner: Any = self._in
        value = self._value(tensor)
        if tensor.shape is None:
            tensor.shape = tuple(getattr(inner, f"{kind}_shape")(value))
        if tensor.dtype is None:
            tensor.dtype = _BOOL if kind == "bool" else getattr(inner, f"{kind}_get_dtype")(value)
        if tensor.device is None:
            tensor.device = getattr(inner, f"{kind}_device")(value)

    def float_shape(self, tensor: FusionTensor) -> Shape:
        if tensor.shape is None:
            self._meta(tensor, "float")
        return tensor.shape  # type: ignore[return-value]

    def int_shape(self, tensor: FusionTensor) -> Shape:
        if tensor.shape is None:
            self._meta(tensor, "int")
        return tensor.shape  # type: ignore[return-value]

    def bool_shape(self, tensor: FusionTensor) -> Shape:
        if tensor.shape is None:
            self._meta(tensor, "bool")
        return tensor.shape  # type: ignore[return-value]

    def float_get_dtype(self, tensor: FusionTensor) -> DType:
        if tensor.dtype is None:
            self._meta(tensor, "float")
        return tensor.dtype  # type: ignore[return-value]

    def int_get_dtype(self, tensor: FusionTensor) -> DType:
        if tensor.dtype is None:
            self._meta(tensor, "int")
        return tensor.dtype  # type: ignore[return-value]

    def float_device(self, tensor: FusionTensor) -> Device:
        if tensor.device is None:
            self._meta(tensor, "float")
        return self._own_device(tensor.device)  # type: ignore[arg-type]

    def int_device(self, tensor: FusionTensor) -> Device:
        if tensor.device is None:
            self._meta(tensor, "int")
        return self._own_device(tensor.device)  # type: ignore[arg-type]

    def bool_device(self, tensor: FusionTensor) -> Device:
        if tensor.device is None:
            self._meta(tensor, "bool")
        return self._own_device(tensor.device)  # type: ignore[arg-type]

    # -- op builders --------------------------------------------------------------------------
    def _delegate(self, name: str) -> Callable[..., Any]:
        """`name` run on the inner backend: handles in, computed first; handles out."""
        return delegate_op(
            name, getattr(self._in, name), self._value, FusionTensor, self._inner_device, self._own_device
        )

    def _reducer(self, name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
        """Reduction `name` closing the open block when it reads a value pending there (the block
        becomes its prologue, see `Stream.reduce`), else `fallback`."""
        stream = self._stream

        def op(tensor: Any, dim: Any, *rest: Any, **kwargs: Any) -> Any:
            shape = tensor.shape
            if (
                not rest and not kwargs and tensor.pending and type(dim) is int
                and 0 <= dim < len(shape) and 0 not in shape
            ):
                handle = stream.reduce(name, tensor, dim, shape[:dim] + (1,) + shape[dim + 1 :])
                if handle is not None:
                    return handle
            return fallback(tensor, dim, *rest, **kwargs)

        op.__name__ = name
        return op

    def _recorder(self, name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
        """`name` recorded in the stream when its dtypes and devices allow, else `fallback`."""
        spec = ELEMENTWISE[name]
        arity, nscalars, kinds, rule = spec.arity, spec.nscalars, spec.kinds, spec.result
        stream, meta, stats = self._stream, self._meta, self._stream.stats
        castable = frozenset(d for d in self.capabilities.dtypes if d.is_float) & self._fusion_dtypes
        # A tuple: `in` compares enum members by identity in C, where a set would hash each one
        # with Enum's Python-level __hash__ (several per recorded op).
        fdtypes = tuple(self._fusion_dtypes)

        def eager(*args: Any, **kwargs: Any) -> Any:
            stats.eager_ops += 1
            return fallback(*args, **kwargs)

        def op(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                return eager(*args, **kwargs)
            tensors = args[:arity]
            device: Any = None
            for t, kind in zip(tensors, kinds, strict=True):
                if t.device is None or t.dtype is None:
                    meta(t, kind)
                if t.dtype not in fdtypes:
                    return eager(*args)
                if device is None:
                    device = t.device
                elif t.device is not device and t.device != device:
                    return eager(*args)  # the inner backend raises its device error
            if rule == "cast":
                out = args[arity]
                if out not in castable:
                    return eager(*args)  # the inner backend raises its dtype error
            else:
                out = result_dtype(name, [t.dtype for t in tensors])
                if out is None or out not in fdtypes:
                    return eager(*args)
            shape = tensors[0].shape
            if arity > 1 and any(t.shape != shape for t in tensors):  # most ops: one shape
                shape = broadcast_shapes(name, [t.shape for t in tensors])
            scalars = tuple([float(s) for s in args[arity : arity + nscalars]]) if nscalars else ()
            return stream.record(name, tensors, scalars, shape, out, device)

        op.__name__ = name
        return op
