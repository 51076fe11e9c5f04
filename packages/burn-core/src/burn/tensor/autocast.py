"""Autocast: which contract ops run in a low float dtype and which stay in float32 while a
`burn.amp.autocast` context is open (automatic mixed precision).

Autocast is a policy over the Tensor API, not a backend: each op listed in `POLICY` asks this
module, on entry, for its float operands in the dtype the policy gives it, and every cast goes
through `Tensor.cast`, which autodiff differentiates (the gradient of a cast is cast back to the
operand's dtype). So float32 params used by a bfloat16 matmul get float32 gradients, and the
optimizer updates them, and keeps its state, in float32.

- ``"low"`` ops (matmul and linear, convolutions, attention) run in the context's dtype: float32
  operands are cast down and the result is low.
- ``"float32"`` ops (reductions, cumulative ops, exp / log / pow, softmax, norms, losses) cast
  float16 / bfloat16 operands up to float32 and return float32.
- Every other op runs in the dtype of its operands; binary ops with two float dtypes give the
  wider one (the contract's rule), so a low activation plus a float32 bias is float32.

float64 operands are never cast. Outside any context, or in an ``enabled=False`` one, the ops
are untouched; the check an op pays outside is one module-global read (`active`).

Example:
    >>> import burn
    >>> from burn import Tensor
    >>> from burn.tensor.autocast import AutocastContext
    >>> a = Tensor.ones((2, 2))  # doctest: +SKIP
    >>> with AutocastContext("bfloat16"):  # doctest: +SKIP
    ...     (a @ a).dtype, (a @ a).sum().dtype
    (burn.bfloat16, burn.float32)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from burn.errors import DTypeError
from burn.foundations.dtype import DType
from burn.foundations.kind import Float

if TYPE_CHECKING:
    pass

__all__ = ["POLICY", "AutocastContext", "active", "current_dtype", "full_precision", "low_precision"]

Policy = Literal["low", "float32"]

POLICY: dict[str, Policy] = {
    # run in the context's dtype: the compute-bound products
    "matmul": "low",  # Tensor.matmul / @, batched (leading dims) included
    "linear": "low",  # burn.tensor.module.linear (nn.Linear): weight and bias cast down
    "conv1d": "low",
    "conv2d": "low",
    "conv3d": "low",
    "conv_transpose1d": "low",
    "conv_transpose2d": "low",
    "conv_transpose3d": "low",
    "attention": "low",  # scaled dot-product attention's two products (nn.MultiHeadAttention)
    # stay in float32: accumulations and ranges a 8-bit or 11-bit mantissa loses
    "sum": "float32",
    "sum_dim": "float32",
    "mean": "float32",
    "mean_dim": "float32",
    "prod": "float32",
    "prod_dim": "float32",
    "var": "float32",  # var, var_bias
    "cumsum": "float32",
    "cumprod": "float32",
    "exp": "float32",
    "log": "float32",
    "log1p": "float32",
    "powf": "float32",  # powf, powf_scalar
    "softmax": "float32",
    "log_softmax": "float32",
    "layer_norm": "float32",  # nn.LayerNorm
    "rms_norm": "float32",  # nn.RmsNorm
    "group_norm": "float32",  # nn.GroupNorm
    "batch_norm": "float32",  # nn.BatchNorm
    "cross_entropy": "float32",  # burn.tensor.module.cross_entropy, nn.CrossEntropyLoss
    "cross_entropy_with_logits": "float32",
    "mse_loss": "float32",  # nn.MseLoss
}
"""The one policy table: op name -> ``"low"`` or ``"float32"``. Each op named here calls
`low_precision` or `full_precision` with its name; `burn.testing`'s autocast tests check every
entry on every backend."""

LOW_DTYPES = (DType.BF16, DType.F16)
_HALF = frozenset(LOW_DTYPES)

active = 0
"""How many autocast contexts are open, in all threads: the ops read this one global first and
look at their thread's state only when it is nonzero."""

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_lock = threading.Lock()
_local = threading.local()


def current_dtype() -> DType | None:
    """The low dtype of this thread's innermost enabled autocast context, or None (no context,
    or the innermost one is disabled)."""
    stack: list[DType | None] | None = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def low_precision(op: str, *tensors: Any) -> tuple[Any, ...]:
    """`tensors` as `op` runs them under this thread's autocast: float32 (and the other half
    dtype's) float tensors cast to the context's dtype; None, non-float and float64 tensors
    unchanged. Call only when `active` is nonzero.

    Raises:
        DTypeError: the backend of a tensor to cast does not declare the context's dtype.

    Example:
        >>> low_precision("matmul", None)  # no context open in this thread
        (None,)
    """
    dtype = current_dtype()
    if dtype is None:
        return tensors
    return tuple(_cast(op, t, dtype) for t in tensors)


def full_precision(op: str, tensor: T) -> T:
    """`tensor` as a float32-policy op runs it under this thread's autocast: a float16 or
    bfloat16 tensor cast to float32, anything else unchanged. Call only when `active` is nonzero.

    Example:
        >>> full_precision("sum", None) is None  # no context open in this thread
        True
    """
    t: Any = tensor
    if current_dtype() is None or t is None or t._k is not Float:
        return tensor
    if t._b.float_get_dtype(t._p) in _HALF:
        return t.cast(DType.F32)  # type: ignore[no-any-return]
    return tensor


def _cast(op: str, t: Any, dtype: DType) -> Any:
    if t is None or t._k is not Float:
        return t
    b = t._b
    have = b.float_get_dtype(t._p)
    if have is dtype or have is DType.F64:
        return t
    if not b.capabilities.supports(dtype):
        raise DTypeError(
            f"autocast({dtype.value!r}): {op} would run in {dtype.value}, which backend {b.name!r} "
            f"does not declare (see backend.capabilities.dtypes); use the other half dtype if it "
            f"has it, or leave this backend's steps in float32"
        )
    return t.cast(dtype)




class AutocastContext:
    """A context manager (and decorator) that opens an autocast region in the current thread.

    Public as `burn.amp.autocast`; see that module for the user-facing description.

    Args:
        dtype: ``"bfloat16"`` or ``"float16"`` (or the `burn.DType`), the dtype of the ``"low"``
            ops.
        enabled: False opens a region where no op is cast (inside another one, it switches
            autocast off until it closes).

    Raises:
        ValueError: `dtype` is not bfloat16 or float16.

    Example:
        >>> ctx = AutocastContext("float16")
        >>> with ctx:
        ...     current_dtype()
        burn.float16
        >>> current_dtype() is None
        True
    """

    __slots__ = ("dtype", "enabled")

    def __init__(self, dtype: DType | str = "bfloat16", enabled: bool = True) -> None:
        try:
            target = DType.from_any(dtype)
        except ValueError:
            target = None
        if target not in _HALF:
            raise ValueError(f"autocast: dtype must be 'bfloat16' or 'float16', got {dtype!r}")
        self.dtype: DType = target  # type: ignore[assignment]
        self.enabled = bool(enabled)

    def __enter__(self) -> AutocastContext:
        global active
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self.dtype if self.enabled else None)
        with _lock:
            active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global active
        _local.stack.pop()
        with _lock:
            active -= 1

    def __call__(self, fn: F) -> F:
        """`fn` run inside this context at every call (a fresh region per call, so the decorated
        function may be called from several threads)."""
        dtype, enabled = self.dtype, self.enabled

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with AutocastContext(dtype, enabled):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"autocast({self.dtype.value!r}, enabled={self.enabled})"
