"""DLPack export hands a backend's accelerator buffer over as it is (no trip through the host),
and keeps the host path for CPU buffers. Checked with a stand-in primitive that reports a CUDA
device, on ndarray and through autodiff(ndarray)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.kind import Float
from burn.tensor._base import wrap

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

_CUDA = 2  # DLPack's kDLCUDA


class DeviceBuffer:
    """Looks like a CuPy array to DLPack consumers: lives on CUDA device 1."""

    def __init__(self) -> None:
        self.exported_with: dict[str, Any] | None = None

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_CUDA, 1)

    def __dlpack__(self, **kwargs: Any) -> str:
        self.exported_with = kwargs
        return "capsule"


def test_accelerator_buffer_is_exported_directly() -> None:
    buffer = DeviceBuffer()
    t = wrap(buffer, nd.NdArray(), Float)
    assert t.__dlpack_device__() == (_CUDA, 1)
    assert t.__dlpack__(stream=7) == "capsule"
    assert buffer.exported_with == {"stream": 7}


def test_accelerator_buffer_under_autodiff_is_the_inner_one() -> None:
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    B = ad.Autodiff(nd.NdArray())
    buffer = DeviceBuffer()
    t = wrap(B.float_from_inner(buffer), B, Float)
    assert t.__dlpack_device__() == (_CUDA, 1)
    assert t.__dlpack__() == "capsule"


def test_host_buffers_keep_the_cpu_path() -> None:
    import burn

    t = burn.Tensor.from_data(np.arange(6.0, dtype=np.float32).reshape(2, 3), backend=nd.NdArray())
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6.0).reshape(2, 3))
