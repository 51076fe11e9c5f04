"""Automatic mixed precision: `autocast` runs the compute-bound ops (matmul, linear,
convolutions, attention) in bfloat16 or float16 and keeps reductions, softmax, norms and losses in
float32, while params, gradients and optimizer state stay float32; `GradScaler` scales a float16
loss so that small gradients do not flush to zero, and skips the steps whose gradients overflow.

The policy table, which op runs in which dtype, is `POLICY` (`burn.tensor.autocast`); the
precision guide (docs/guides/precision.md) explains it. `burn.train.Learner` takes
``precision="bf16-mixed"`` (autocast bfloat16) or ``"16-mixed"`` (autocast float16 and a
`GradScaler`).

Example:
    >>> import burn
    >>> from burn import Tensor, amp
    >>> x = Tensor.ones((2, 3))  # doctest: +SKIP
    >>> with amp.autocast("bfloat16"):  # doctest: +SKIP
    ...     y = x @ Tensor.ones((3, 4))
    ...     y.dtype, y.sum().dtype
    (burn.bfloat16, burn.float32)
"""

from __future__ import annotations

from burn.amp.grad_scaler import GradScaler
from burn.foundations.dtype import DType
from burn.tensor.autocast import POLICY, AutocastContext, current_dtype

__all__ = ["POLICY", "AutocastContext", "GradScaler", "autocast", "current_dtype"]


def autocast(dtype: DType | str = "bfloat16", enabled: bool = True) -> AutocastContext:
    """A region where the ops of `POLICY` run in `dtype` (``"low"`` ops) or float32.

    A context manager and a decorator; the region belongs to the current thread and regions
    nest (the innermost one decides; ``enabled=False`` switches autocast off inside another).

    Args:
        dtype: ``"bfloat16"`` (the usual choice: float32's range, no loss scaling needed) or
            ``"float16"`` (more mantissa, a range of 6e-5 to 65504: pair it with `GradScaler`).
        enabled: False makes the region a no-op, or an opt-out inside an enabled one.

    Returns:
        The context (``with autocast(...):`` or ``@autocast(...)``).

    Raises:
        ValueError: `dtype` is neither bfloat16 nor float16.

    Example:
        >>> with autocast("float16"):
        ...     with autocast(enabled=False):
        ...         print(current_dtype())
        ...     print(current_dtype())
        None
        burn.float16
    """
    return AutocastContext(dtype, enabled)
