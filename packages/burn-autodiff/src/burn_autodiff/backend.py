"""`Autodiff(inner)`: the decorator backend that makes any backend differentiable."""

from __future__ import annotations

from typing import Any

from burn.backend import Backend
from burn.backend.contract import implemented_ops, op_facts
from burn.backend.decorator import DecoratorBackend
from burn_autodiff import checkpoint, engine
from burn_autodiff.gradients import Gradients, check_gradients
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.ops.activation import AutodiffActivationOps
from burn_autodiff.ops.attention import AutodiffAttentionOps
from burn_autodiff.ops.bool import AutodiffBoolOps
from burn_autodiff.ops.conv import AutodiffConvOps
from burn_autodiff.ops.embedding import AutodiffEmbeddingOps
from burn_autodiff.ops.float import AutodiffFloatOps
from burn_autodiff.ops.int import AutodiffIntOps
from burn_autodiff.ops.loss import AutodiffLossOps
from burn_autodiff.ops.norm import AutodiffNormOps
from burn_autodiff.ops.optim import AutodiffOptimOps
from burn_autodiff.ops.pool import AutodiffPoolOps
from burn_autodiff.ops.quantization import AutodiffQuantizationOps
from burn_autodiff.ops.rnn import AutodiffRnnOps
from burn_autodiff.ops.sampling import AutodiffSamplingOps

# Ops of the int and bool families (as declared at the op) other than the few the int and bool
# mixins wrap (those take a device or return a float primitive) run on the inner backend's
# primitives unchanged, bound straight to the inner's methods.
_WRAPPED = implemented_ops(AutodiffIntOps) | implemented_ops(AutodiffBoolOps)
PASS_THROUGH = tuple(
    name for name, facts in op_facts().items() if facts.family in ("int", "bool") and name not in _WRAPPED
)


class Autodiff(
    AutodiffFloatOps, AutodiffIntOps, AutodiffBoolOps, AutodiffActivationOps, AutodiffConvOps,
    AutodiffPoolOps, AutodiffSamplingOps, AutodiffEmbeddingOps, AutodiffLossOps, AutodiffRnnOps,
    AutodiffAttentionOps, AutodiffNormOps, AutodiffOptimOps, AutodiffQuantizationOps, DecoratorBackend,
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
