"""Devices, options, errors (build log, allocation size), the probe and the plugin module."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import burn_opencl
from burn.errors import DeviceError
from burn.foundations.dtype import DType


def test_devices_and_capabilities(B):
    devices = B.devices()
    assert devices and all(d.owner is B and d.backend == "opencl" for d in devices)
    assert str(B.default_device()).startswith("opencl:")
    names = B.device_names()
    assert len(names) == len(devices) and all(" / " in n for n in names)
    caps = B.capabilities
    assert caps.supports(DType.F32) and caps.supports(DType.I64) and caps.supports(DType.U8)
    assert caps.supports(DType.F64) == B.runtime().fp64
    assert caps.has("async")


def test_device_option_and_env(monkeypatch):
    from burn_opencl.backend import OpenCL, resolve_device

    assert resolve_device(0) == 0 and resolve_device("0:0") == 0
    monkeypatch.setenv("BURN_OPENCL_DEVICE", "0")
    assert resolve_device(None) == 0
    with pytest.raises(DeviceError, match="no device"):
        resolve_device("7:7")
    b = OpenCL(float_dtype="float64", device="0:0")
    assert b.float_dtype is DType.F64 and b.options()["device"] == "0:0"


def test_tensor_device_is_owned_by_its_backend(B, dev):
    from burn_opencl import OpenCL

    other = OpenCL(float_dtype="float64")
    t = other.float_zeros((2,), other.default_device(), DType.F64)
    assert other.float_device(t).owner is other and other.float_device(t) == dev
    assert B.float_device(B.float_zeros((2,), dev, DType.F32)).owner is B


def test_foreign_device_rejected(B):
    from burn.backend.device import Device

    with pytest.raises(DeviceError):
        B.float_zeros((2,), Device("ndarray", "cpu"), DType.F32)


def test_build_failure_shows_log(B):
    rt = B.runtime()
    with pytest.raises(burn_opencl.KernelBuildError) as info:
        rt.kernel(("broken",), "k", lambda: "__kernel void k(__global float* o) { o[0] = undefined_name; }")
    text = str(info.value)
    assert "undefined_name" in text and "Build log" in text and "--- source ---" in text


def test_out_of_memory_names_the_size(B):
    rt = B.runtime()
    with pytest.raises(burn_opencl.DeviceMemoryError, match=r"\d+ bytes"):
        rt.alloc(rt.max_alloc + 1, "a test tensor")


def test_sync_and_async_queue(B, dev):
    x = B.float_ones((1000,), dev, DType.F32)
    B.sync()
    B.sync(dev)
    assert B.float_into_data(x).array.sum() == 1000


def test_to_device_round_trip(B, dev):
    data = np.arange(5, dtype=np.int16)
    from burn.foundations.data import TensorData

    t = B.int_from_data(TensorData(data), dev)
    assert B.int_to_device(t, dev) is t
    np.testing.assert_array_equal(B.int_into_data(t).array, data)


@pytest.mark.no_device
def test_plugin_imports_no_pyopencl():
    code = "import sys, burn_opencl.plugin; print('pyopencl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.no_device
def test_probe_explains_missing_platform(monkeypatch):
    import burn_opencl.backend as backend
    from burn_opencl import plugin

    monkeypatch.setattr(backend, "_DEVICES", [])
    reason = plugin._probe()
    assert (
        reason is not None
        and "no OpenCL platform" in reason
        and "pip install pocl-binary-distribution" in reason
    )


def test_registered_backend_by_name():
    import burn
    import burn.plugins as bp
    from burn_opencl import plugin

    bp.register(plugin)
    b = burn.backend("opencl")
    assert b.name == "opencl"
    assert burn.backend("opencl") is b
