"""Building burn's errors for tensor ops.

Ops call the backend first and come here only when something went wrong (or when a cheap identity
check already failed), so the diagnosis may be slow: it reads shapes, dtypes and devices to name
what was wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import BackendMismatchError, BurnError, DeviceError, KindError, ShapeError
from burn.tensor._base import TensorBase

if TYPE_CHECKING:
    from burn.foundations.kind import Kind


def describe(t: TensorBase) -> str:
    """``Float tensor of shape (2, 3), dtype float32, on ndarray:cpu`` (best effort)."""
    try:
        return f"{t._k.name} tensor of shape {t.shape}, dtype {t.dtype.value}, on {t.device}"
    except Exception:  # the backend itself is failing; say what we can
        return f"{t._k.name} tensor of backend {t._b.name!r}"


def kind_error(op: str, t: TensorBase, expected: str, hint: str = "") -> KindError:
    """``op`` is not defined for `t`'s kind; `expected` names the kinds it accepts."""
    msg = f"{op}: expects {expected}, got a {describe(t)}"
    return KindError(f"{msg}; {hint}" if hint else msg)


def operand_error(op: str, a: TensorBase, b: TensorBase) -> BurnError:
    """Two tensors that cannot meet in a binary op for a reason visible without the backend."""
    if a._b is not b._b:
        return BackendMismatchError(
            f"{op}: tensors of two backends, {a._b.name!r} ({describe(a)}) and {b._b.name!r} "
            f"({describe(b)}); burn never copies between backends silently: move one with "
            "Tensor.from_data(t.to_data(), device=...)"
        )
    if a._k is not b._k:
        return KindError(
            f"{op}: a {describe(a)} and a {describe(b)}; both must have the same kind "
            "(convert one with .float(), .int() or .bool())"
        )
    return kind_error(op, a, "Float or Int tensors", "Bool tensors have no arithmetic")


def binary_error(op: str, a: TensorBase, b: TensorBase, exc: BaseException) -> BaseException:
    """The error to raise after the backend failed on ``op(a, b)``: a burn error naming the
    devices or shapes when they explain the failure, else the backend's own error with a note."""
    if isinstance(exc, BurnError):
        return exc
    try:
        da, db = a.device, b.device
        if da != db:
            err: BurnError = DeviceError(
                f"{op}: tensors on two devices, {da} and {db} ({describe(a)}; {describe(b)})"
            )
            err.__cause__ = exc
            return err
        sa, sb = a.shape, b.shape
        shape_msg = _shape_problem(op, sa, sb)
    except Exception:  # diagnosing must never hide the original error
        shape_msg = None
    if shape_msg is not None:
        err = ShapeError(shape_msg)
        err.__cause__ = exc
        return err
    exc.add_note(f"burn: in {op} of a {describe(a)} and a {describe(b)}")
    return exc


def _shape_problem(op: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> str | None:
    if op == "matmul":
        return matmul_problem(sa, sb)
    try:
        np.broadcast_shapes(sa, sb)
    except ValueError:
        return f"{op}: shapes {sa} and {sb} cannot be broadcast together"
    return None


def broadcasts_to(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `to` without changing it (a mask to scores, a scale to its
    tensor): NumPy's rule in one direction."""
    return len(shape) <= len(to) and all(s in (1, t) for s, t in zip(shape[::-1], to[::-1], strict=False))


def matmul_problem(sa: tuple[int, ...], sb: tuple[int, ...]) -> str | None:
    """Why ``matmul`` cannot multiply shapes `sa` and `sb`, or None when it can."""
    if len(sa) < 2 or len(sb) < 2:
        return f"matmul: both tensors need rank >= 2, got shapes {sa} and {sb} (use unsqueeze for vectors)"
    if sa[-1] != sb[-2]:
        return f"matmul: shapes {sa} and {sb}: inner dims {sa[-1]} and {sb[-2]} differ"
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        return f"matmul: batch dims of shapes {sa} and {sb} cannot be broadcast together"
    return None


def note_failure(exc: BaseException, op: str, *tensors: Any) -> BaseException:
    """After the backend failed on `op`: a DeviceError when the tensors sit on several devices,
    else the backend's error with a note naming `op` and the tensors it was given."""
    if isinstance(exc, BurnError):
        return exc
    given = [t for t in tensors if isinstance(t, TensorBase)]
    try:
        devices = [t.device for t in given]
    except Exception:  # diagnosing must never hide the original error
        devices = []
    if len(set(devices)) > 1:
        err = DeviceError(f"{op}: tensors on several devices ({'; '.join(describe(t) for t in given)})")
        err.__cause__ = exc
        return err
    exc.add_note(f"burn: in {op} of {', '.join(describe(t) for t in given)}")
    return exc


def expect_same(op: str, t: TensorBase, other: Any, kind: Kind | None, what: str) -> None:
    """Check that `other` is a tensor of `t`'s backend (and of `kind` when given)."""
    if not isinstance(other, TensorBase):
        raise TypeError(f"{op}: {what} must be a burn.Tensor, got {type(other).__name__}")
    if other._b is not t._b:
        raise operand_error(op, t, other)
    if kind is not None and other._k is not kind:
        raise KindError(f"{op}: {what} must be a {kind.name} tensor, got a {describe(other)}")
