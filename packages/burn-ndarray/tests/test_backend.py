"""The backend object: options, devices, capabilities, plugin, and contract coverage."""

from __future__ import annotations

import numpy as np
import pytest

from burn.backend import Backend, Device, contract_ops, implemented_ops
from burn.errors import DeviceError
from burn.foundations.dtype import DType
from burn_ndarray import NdArray

# Ops whose core default is already right for a backend without autodiff (identity / errors).
AUTODIFF_HOOKS = {"float_detach", "float_set_require_grad", "float_is_require_grad"}


def test_defaults_and_options() -> None:
    B = NdArray()
    assert B.name == "ndarray"
    assert B.float_dtype is DType.F32 and B.int_dtype is DType.I64
    B2 = NdArray(float_dtype="float64", int_dtype="int32")
    assert B2.float_dtype is DType.F64 and B2.int_dtype is DType.I32
    assert B2.options() == {"float_dtype": "float64", "int_dtype": "int32"}
    with pytest.raises(ValueError, match="float_dtype"):
        NdArray(float_dtype="int32")


def test_one_device_owned_by_the_backend(B: NdArray) -> None:
    (device,) = B.devices()
    assert device == Device("ndarray", "cpu") and str(device) == "ndarray:cpu"
    assert device.owner is B
    assert B.default_device() is device


def test_to_device_rejects_foreign_devices(B: NdArray) -> None:
    a = np.ones(3, np.float32)
    assert B.float_to_device(a, Device("ndarray", "cpu")) is a
    with pytest.raises(DeviceError, match="opencl:0"):
        B.float_to_device(a, Device("opencl", 0))


def test_capabilities() -> None:
    caps = NdArray().capabilities
    for dtype in DType:
        assert caps.supports(dtype), dtype
    assert caps.has("dlpack")
    assert not caps.has("autodiff")


def test_every_contract_op_is_implemented_here() -> None:
    missing = set(contract_ops()) - implemented_ops(NdArray) - AUTODIFF_HOOKS
    assert not missing, f"ops left to burn-core defaults: {sorted(missing)}"


def test_one_to_one_ops_are_the_ufuncs_themselves() -> None:
    # Binding the ufunc as a class attribute means no Python frame between the caller and NumPy.
    # At one thread the float ufunc ops are bound so too; with more, they check the size first.
    import burn_ndarray

    B = NdArray()
    before = burn_ndarray.get_num_threads()
    try:
        burn_ndarray.set_num_threads(1)
        assert B.float_add is np.add and B.int_mul is np.multiply and B.bool_and is np.logical_and
        assert B.float_exp is np.exp and B.float_lower_elem is np.less
        burn_ndarray.set_num_threads(2)
        assert B.float_add is not np.add and B.float_exp is not np.exp
        assert B.int_mul is np.multiply and B.float_lower_elem is np.less
    finally:
        burn_ndarray.set_num_threads(before)


def test_is_a_backend_and_seed_resets_rng(B: NdArray) -> None:
    assert isinstance(B, Backend)
    B.seed(7)
    first = B.rng.random(3)
    B.seed(7)
    assert np.array_equal(B.rng.random(3), first)


def test_plugin_spec() -> None:
    import burn.plugins as bp
    from burn_ndarray import plugin

    (spec,) = plugin.burn_backends()
    assert isinstance(spec, bp.BackendSpec)
    assert spec.name == "ndarray" and spec.package == "burn-ndarray"
    assert spec.probe is not None and spec.probe() is None
    built = spec.factory(float_dtype="float64")
    assert isinstance(built, NdArray) and built.float_dtype is DType.F64


def test_selected_by_name_through_burn() -> None:
    import burn
    import burn.plugins as bp
    from burn_ndarray import plugin

    try:
        bp.register(plugin)
    except Exception:  # already registered (installed entry point, or another test)
        pass
    backend = burn.backend("ndarray", float_dtype="float64")  # type: ignore[operator]
    assert isinstance(backend, NdArray) and backend.float_dtype is DType.F64
    t = burn.Tensor.from_data([1.0, 2.0], device=backend.default_device())
    assert (t + t).to_data().to_list() == [2.0, 4.0]
