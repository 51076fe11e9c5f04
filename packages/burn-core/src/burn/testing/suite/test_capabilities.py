"""Declared optional features do what `burn.backend.capabilities.FEATURES` says.

Each test is skipped, with the capability as reason, when the backend does not declare it:

- ``dlpack``: tensors export through DLPack (``__dlpack__``/``__dlpack_device__``: the host array
  on the CPU, the device buffer itself on an accelerator) and import from any DLPack producer;
- ``async``: ops are queued and ``sync()`` waits for them; results read after it (or read
  without it: reading waits) are the computed ones, on every device;
- ``pinned_host``: ``host_buffer`` gives page-locked memory; a tensor made from a view of it holds
  the view's values once `HostBuffer.wait` returned, whatever is written to the buffer after.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing.helpers import check_exact, check_float, f64, make, rand_any, rand_float, require_feature

DLPACK_CPU = 1  # DLPack's device type of host memory (kDLCPU)


class _DLPackOnly:
    """A DLPack producer that is nothing else (no ``__array__``): import has to use DLPack."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._owner.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return tuple(self._owner.__dlpack_device__())  # type: ignore[return-value]


@pytest.mark.parametrize("dtype_name", ["float", "int", "bool"])
def test_dlpack_export_and_import(backend: Any, dtype_name: str, rng: Any) -> None:
    require_feature(backend, "dlpack")
    from burn import Tensor

    dtype = {"float": backend.float_dtype, "int": backend.int_dtype, "bool": DType.BOOL}[dtype_name]
    x = rand_any(rng, (3, 4), dtype)
    t = make(backend, x, dtype)
    kind, _ = t.__dlpack_device__()
    assert isinstance(kind, int), f"__dlpack_device__() returned {t.__dlpack_device__()!r}"
    capsule = t.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule", f"__dlpack__() returned {type(capsule).__name__}"
    if kind != DLPACK_CPU:
        # An accelerator buffer: exported without a copy, readable by the device's own libraries
        # (not by NumPy); importing it back goes through the host.
        back = Tensor.from_data(t.to_data(), backend=backend)
        check_exact(back, x, dtype, what="round trip of a tensor exported from an accelerator")
        return
    exported = np.from_dlpack(_DLPackOnly(t))
    assert exported.dtype == x.dtype and exported.shape == x.shape, (
        f"DLPack export: {exported.dtype}{exported.shape}, expected {x.dtype}{x.shape}"
    )
    np.testing.assert_array_equal(exported, x, err_msg="values exported through DLPack")
    imported = Tensor.from_data(_DLPackOnly(x), dtype=dtype, backend=backend)
    check_exact(imported, x, dtype, what="tensor imported from a DLPack producer")
    again = Tensor.from_data(_DLPackOnly(t), dtype=dtype, backend=backend)
    check_exact(again, x, dtype, what="tensor imported from a burn tensor through DLPack")


def test_dlpack_export_of_a_computed_and_a_sliced_tensor(backend: Any, rng: Any) -> None:
    require_feature(backend, "dlpack")
    dtype = backend.float_dtype
    x = rand_float(rng, (4, 6), dtype)
    t = make(backend, x, dtype)
    for out, want, what in [
        ((t * 2.0).exp(), np.exp(2.0 * f64(x)), "exp(2x)"),
        (t[1:3, ::2], f64(x)[1:3, ::2], "a strided slice"),
        (t.transpose(), f64(x).T, "a transpose"),
    ]:
        if out.__dlpack_device__()[0] != DLPACK_CPU:
            check_float(out, want, dtype, what=what)
            continue
        got = np.from_dlpack(_DLPackOnly(out))
        assert got.shape == want.shape, f"{what}: DLPack shape {got.shape}, expected {want.shape}"
        check_float(make(backend, np.array(got), dtype), want, dtype, what=f"{what} through DLPack")


def test_async_sync_waits_for_queued_work(backend: Any, rng: Any) -> None:
    require_feature(backend, "async")
    dtype = backend.float_dtype
    x = rand_float(rng, (64, 64), dtype, -1, 1)
    for device in backend.devices():
        t = make(backend, x, dtype, device)
        want = f64(x)
        for _ in range(8):  # a queue of dependent kernels
            t = (t * 0.5 + 0.25).tanh()
            want = np.tanh(want * 0.5 + 0.25)
        assert backend.sync(device) is None
        check_float(t, want, dtype, terms=8, what=f"8 queued steps on {device}, after sync({device})")
        u = t.matmul(t)  # queued again, read without an explicit sync: reading waits
        check_float(u, want @ want, dtype, terms=64 * 8, what=f"matmul on {device}, read without sync")
    assert backend.sync() is None  # every device


def test_async_sync_on_a_tensors_device(backend: Any) -> None:
    require_feature(backend, "async")
    dtype = backend.float_dtype
    t = make(backend, np.arange(6.0).reshape(2, 3), dtype)
    s = t.sum()
    backend.sync(t.device)
    check_float(s, [15.0], dtype, what="sum after sync(tensor.device)")


def test_pinned_host_uploads_are_done_after_wait(backend: Any, rng: Any) -> None:
    require_feature(backend, "pinned_host")
    from burn.backend.capabilities import HostBuffer, host_buffer
    from burn.foundations.data import TensorData

    dtype = backend.float_dtype
    device = backend.default_device()
    x = rand_float(rng, (64, 33), dtype)
    buf = host_buffer(backend, x.nbytes + 64, device)
    try:
        assert buf.pinned, f"{backend.name} declares pinned_host but host_buffer gave {buf!r}"
        # at an offset into the buffer, as a ring's fields are
        view = buf.array[64 : 64 + x.nbytes].view(x.dtype).reshape(x.shape)
        view[...] = x
        assert HostBuffer.holding(view) is buf, "HostBuffer.holding does not find the pinned buffer of a view"
        from burn import Tensor
        from burn.foundations.kind import Float
        from burn.tensor._base import wrap

        t = wrap(backend.float_from_data(TensorData.from_numpy(view), device), backend, Float)
        buf.wait()
        view[...] = -x  # after wait the buffer is free: the tensor keeps what was uploaded
        check_exact(t, x, dtype, what="a tensor uploaded from a pinned buffer rewritten after wait")
        check_exact(Tensor.from_data(view, device), -x, dtype, what="a second upload from the buffer")
    finally:
        buf.close()
