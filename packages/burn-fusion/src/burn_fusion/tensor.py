"""`FusionTensor`: the primitive of the fusion backend, a handle on a value that may not exist yet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.backend.ir import TensorIR
    from burn.foundations.dtype import DType


class FusionTensor:
    """A tensor of ``fusion(inner)``: either the inner backend's primitive (`value`) or a value
    recorded in the stream and not computed yet (`value` is None, `ir` names it in the stream).

    Shape, dtype and device are known without running anything for recorded values; for inner
    primitives they are asked of the inner backend on first need and kept.

    Attributes:
        value: the inner primitive, once computed.
        ir: the value's record while it is pending in the stream.
        shape: the dims (None until known).
        dtype: the element type (None until known).
        device: the inner backend's device (None until known).

    Example:
        >>> t = FusionTensor(None)
        >>> t.pending
        False
    """

    __slots__ = ("value", "ir", "shape", "dtype", "device", "__weakref__")

    def __init__(
        self,
        value: Any,
        shape: tuple[int, ...] | None = None,
        dtype: DType | None = None,
        device: Device | None = None,
        ir: TensorIR | None = None,
    ) -> None:
        self.value = value
        self.ir = ir
        self.shape = shape
        self.dtype = dtype
        self.device = device

    @property
    def pending(self) -> bool:
        """Whether the value is recorded and not computed yet."""
        return self.value is None and self.ir is not None

    def __repr__(self) -> str:
        state = "pending" if self.pending else "computed"
        dtype = None if self.dtype is None else self.dtype.value
        return f"FusionTensor({state}, shape={self.shape}, dtype={dtype})"
