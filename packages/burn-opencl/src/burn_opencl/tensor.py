"""`CLTensor`: the primitive of burn-opencl, a strided view of a device buffer."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime


@lru_cache(maxsize=4096)
def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements."""
    strides = [1] * len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


@lru_cache(maxsize=4096)
def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the elements lie row-major without gaps (dims of size 1 may have any stride)."""
    expected = 1
    for d in range(len(shape) - 1, -1, -1):
        size = shape[d]
        if size == 0:
            return True
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


class CLTensor:
    """A tensor on an OpenCL device: a buffer, an element offset, a shape and strides (in elements).

    Views (permute, slice, expand, flip, and reshape of contiguous data) share the buffer: tensors
    are immutable, so nothing can observe the sharing. Strides may be 0 (broadcast) or negative
    (flip). Every kernel reads through `offset` and `strides`, so views cost no copy.

    Attributes:
        buf: the pyopencl buffer (from the device's memory pool).
        shape: the dims.
        strides: element strides, one per dim.
        offset: index of element ``[0, ..., 0]`` in `buf`, in elements.
        dtype: the burn `DType`.
        rt: the device `Runtime` the buffer lives on.
        contig: whether the view is row-major contiguous (from `offset`).
        n: number of elements.

    Example:
        >>> t = backend.float_from_data(TensorData([[1.0, 2.0]]), device)  # doctest: +SKIP
        >>> t.shape, t.strides, t.contig  # doctest: +SKIP
        ((1, 2), (2, 1), True)
    """

    __slots__ = ("buf", "shape", "strides", "offset", "dtype", "rt", "contig", "n")

    def __init__(
        self,
        rt: Runtime,
        buf: Any,
        shape: tuple[int, ...],
        dtype: DType,
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
    ) -> None:
        self.rt = rt
        self.buf = buf
        self.shape = shape
        self.dtype = dtype
        self.offset = offset
        self.n = numel(shape)
        if strides is None:
            self.strides = c_strides(shape)
            self.contig = True
        else:
            self.strides = strides
            self.contig = is_contiguous(shape, strides)

    def view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> CLTensor:
        """Another view of the same buffer."""
        return CLTensor(self.rt, self.buf, shape, self.dtype, strides, offset)

    def __repr__(self) -> str:
        return (
            f"CLTensor(shape={self.shape}, dtype={self.dtype.value}, strides={self.strides}, "
            f"offset={self.offset}, device={self.rt.device})"
        )
