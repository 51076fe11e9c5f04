"""Devices: listing, identity, moves between devices, and work on a non-default device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, make, rand_any, require_devices


def test_devices_belong_to_the_backend(backend: Any) -> None:
    from burn import Device

    devices = backend.devices()
    assert devices, f"backend {backend.name!r} lists no device"
    for d in devices:
        assert isinstance(d, Device)
        assert d.owner is backend, f"{d} is owned by {d.owner!r}, not {backend!r}"
        assert str(d) == f"{d.backend}:{d.id}"
        twin = Device(d.backend, d.id)  # equality and hashing ignore the owner
        assert d == twin and hash(d) == hash(twin)
    assert len(set(devices)) == len(devices), "devices must be distinct"
    assert backend.default_device() in devices
    assert backend.default_device().owner is backend
    backend.sync()
    for d in devices:
        backend.sync(d)


@covers("float_device", "int_device", "bool_device", "float_to_device", "int_to_device", "bool_to_device")
def test_to_device_on_every_device(backend: Any, any_dtype: DType, rng: Any) -> None:
    x = rand_any(rng, (3, 4), any_dtype)
    t = make(backend, x, any_dtype)
    assert t.device == backend.default_device()
    assert t.backend is backend
    for d in backend.devices():
        moved = t.to_device(d)
        assert moved.device == d, f"to_device({d}) gave a tensor on {moved.device}"
        assert moved.backend is backend
        check_exact(moved, x, any_dtype, what=f"values after to_device({d})")
        check_exact(
            moved.to_device(backend.default_device()), x, any_dtype, what="back to the default device"
        )


@covers(
    "float_from_data",
    "float_device",
    "int_device",
    "bool_device",
    "float_add",
    "float_sum_dim",
    "float_zeros",
    "int_arange",
)
def test_creation_and_ops_on_each_device(backend: Any) -> None:
    from burn import Bool, Int, Tensor

    for d in backend.devices():
        z = Tensor.zeros((2, 3), device=d)
        assert z.backend is backend and z.device == d, f"zeros(device={d}) is on {z.device}"
        t = Tensor.from_data(np.ones((2, 3)), device=d, backend=backend)
        assert t.device == d
        s = (t + z).sum_dim(1)
        assert s.device == d, f"op results must stay on {d}, got {s.device}"
        check_exact(s, np.full((2, 1), 3.0), backend.float_dtype, what=f"on {d}")
        assert Tensor.arange(3, device=d).device == d
        assert Tensor.zeros((2,), device=d, kind=Int).device == d
        assert Tensor.zeros((2,), device=d, kind=Bool).device == d
        assert (t > 0).device == d


@covers("float_to_device", "float_add", "float_device")
def test_moves_between_two_devices(backend: Any, rng: Any) -> None:
    from burn.errors import DeviceError

    d0, d1 = require_devices(backend, 2)[:2]
    x = rng.normal(size=(2, 3))
    a = make(backend, x, backend.float_dtype, device=d0)
    b = a.to_device(d1)
    assert (a.device, b.device) == (d0, d1)
    with pytest.raises(DeviceError) as err:
        _ = a + b
    assert str(d0) in str(err.value) and str(d1) in str(err.value), (
        f"message must name both devices: {err.value}"
    )
    check_exact(
        a + b.to_device(d0),
        2 * x.astype(backend.float_dtype.numpy).astype(np.float64),
        backend.float_dtype,
        what="after moving back",
    )
