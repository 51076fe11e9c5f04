"""Zero-copy exchange with CuPy, PyTorch and any other DLPack library.

burn tensors are immutable values: an array obtained here shares the tensor's GPU memory and must
not be written to; a tensor made from a foreign array shares that array's memory, so the array
must not be written to afterwards either (copy it first if it will be).

Example:
    >>> import torch, burn
    >>> from burn_cuda.dlpack import from_dlpack, to_torch  # doctest: +SKIP
    >>> t = from_dlpack(torch.ones(3, device="cuda"))  # doctest: +SKIP
    >>> to_torch(t * 2)  # doctest: +SKIP
    tensor([2., 2., 2.], device='cuda:0')
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.errors import BackendMismatchError, DTypeError
from burn.foundations.kind import Bool, Float, Int
from burn.tensor import Tensor
from burn.tensor._base import wrap
from burn_cuda._dtypes import DTYPE_OF
from burn_cuda.backend import Cuda


def _base(tensor: Tensor) -> Tensor:
    """`tensor` on its base `Cuda` backend (the inner tensor of an autodiff one)."""
    while not isinstance(tensor.backend, Cuda):
        if tensor.backend.inner is tensor.backend:
            raise BackendMismatchError(f"to_cupy: the tensor is on {tensor.backend.name!r}, not on cuda")
        tensor = tensor.inner()
    return tensor


def to_cupy(tensor: Tensor) -> Any:
    """The tensor's CuPy array itself (no copy). Read it, never write to it."""
    return _base(tensor)._p


def to_torch(tensor: Tensor) -> Any:
    """A ``torch.Tensor`` on the same GPU sharing the tensor's memory (through DLPack)."""
    import torch

    return torch.from_dlpack(to_cupy(tensor))


def from_dlpack(obj: Any, backend: Cuda | None = None) -> Tensor:
    """A tensor of `backend` (default ``burn.backend("cuda")``) sharing the memory of `obj`: any
    object with ``__dlpack__`` on a CUDA device (CuPy, PyTorch, JAX...) or a CuPy array."""
    if backend is None:
        from burn.plugins import backend as select_backend

        found = select_backend("cuda")
        assert isinstance(found, Cuda)
        backend = found
    array = obj if isinstance(obj, cp.ndarray) else cp.from_dlpack(obj)
    dtype = DTYPE_OF.get(array.dtype)
    if dtype is None:
        raise DTypeError(f"from_dlpack: dtype {array.dtype} has no burn dtype on cuda")
    kind = Float if dtype.is_float else Int if dtype.is_int else Bool
    return wrap(array, backend, kind)
