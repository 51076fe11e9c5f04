"""Shared pieces of the test_record_* files: backends, small modules, comparisons.

Backends: ``ndarray`` (burn-ndarray), ``autodiff`` (burn-autodiff over ndarray) when importable,
and ``minimal`` (the required-ops-only backend of this directory, always there: its primitives
are wrapper objects and it has no float16, so records must convert through `Tensor.from_data`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn
from burn import record
from burn.foundations.dtype import DType
from burn.module import Module, Param


def make_backend(name: str) -> Any:
    if name == "ndarray":
        nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not importable")
        return nd.NdArray()
    if name == "autodiff":
        nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not importable")
        ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not importable")
        return ad.Autodiff(nd.NdArray())
    if name == "minimal":
        minimal_backend = pytest.importorskip("minimal_backend", reason="tests/minimal_backend.py is missing")
        return minimal_backend.Minimal()
    raise ValueError(name)


BACKEND_NAMES = ["ndarray", "autodiff", "minimal"]
_CACHE: dict[str, Any] = {}


def backend(name: str) -> Any:
    if name not in _CACHE:
        _CACHE[name] = make_backend(name)
    return _CACHE[name]


SETTINGS = [
    record.FullPrecisionSettings(),
    record.HalfPrecisionSettings(),
    record.DoublePrecisionSettings(),
    record.BFloat16PrecisionSettings(),
    record.KeepPrecisionSettings(),
]


class Linear(Module):
    weight: Param
    bias: Param


class Stats(Module):
    """A module with int and bool params next to float ones (record every kind)."""

    scale: Param
    counts: Param
    mask: Param


class Net(Module):
    layers: list
    stats: Stats
    name: str = "net"
    connection: object = None  # a constant: never saved, never compared


def tensor(B: Any, array: np.ndarray, dtype: str | None = None) -> burn.Tensor:  # noqa: N803
    return burn.Tensor.from_data(array, device=B.default_device(), dtype=dtype)


def make_net(B: Any, seed: int = 0, *, width: int = 4) -> Net:  # noqa: N803
    rng = np.random.default_rng(seed)

    def lin(d_in: int, d_out: int) -> Linear:
        return Linear(
            Param.from_tensor(tensor(B, rng.standard_normal((d_in, d_out)).astype(np.float32))),
            Param.from_tensor(tensor(B, rng.standard_normal(d_out).astype(np.float32))),
        )

    stats = Stats(
        Param.from_tensor(tensor(B, rng.standard_normal(3).astype(np.float32)), require_grad=False),
        Param.from_tensor(tensor(B, rng.integers(-1000, 1000, size=(2, 3)), dtype="int64")),
        Param.from_tensor(tensor(B, rng.random(5) > 0.5)),
    )
    return Net([lin(width, 3), lin(3, 2)], stats, connection=object())


def make_lazy_net(B: Any, calls: list[str], *, width: int = 4) -> Net:  # noqa: N803
    """The same structure as `make_net`, every param lazy; initializers append to `calls`."""
    device = B.default_device()

    def lazy(shape: tuple[int, ...], kind: Any = burn.Float, require_grad: bool = True) -> Param:
        def init(dev: Any, _grad: bool) -> burn.Tensor:
            calls.append(str(shape))
            dtype = {burn.Float: None, burn.Int: "int64", burn.Bool: "bool"}[kind]
            return burn.Tensor.from_data(np.zeros(shape, dtype=dtype or "float32"), device=dev, dtype=dtype)

        return Param.uninitialized(init, shape, device, kind=kind, require_grad=require_grad)

    return Net(
        [Linear(lazy((width, 3)), lazy((3,))), Linear(lazy((3, 2)), lazy((2,)))],
        Stats(lazy((3,), require_grad=False), lazy((2, 3), burn.Int), lazy((5,), burn.Bool)),
    )


def values(module: Module) -> dict[str, np.ndarray]:
    return {path: np.array(param.val().to_data().array) for path, param in module.named_params()}


def ids(module: Module) -> dict[str, str]:
    return {path: str(param.id) for path, param in module.named_params()}


def expected_after(array: np.ndarray, settings: record.PrecisionSettings) -> np.ndarray:
    """What a value becomes after a save at `settings` (and a load back into its own dtype)."""
    saved = settings.saved_dtype(DType.from_any(array.dtype))
    return array.astype(saved.numpy).astype(array.dtype)


def assert_same_values(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert list(actual) == list(expected)
    for path in expected:
        a, e = actual[path], expected[path]
        assert a.shape == e.shape, path
        assert a.dtype == e.dtype, (path, a.dtype, e.dtype)
        np.testing.assert_array_equal(a, e, err_msg=path)


def record_round_trip(
    recorder: record.Recorder, rec: Any, tmp_path: Any, *, template: Any = None, to_file: bool = True
) -> Any:
    if to_file:
        path = recorder.record(rec, tmp_path / "rec")
        return recorder.load(path, template=template)
    return recorder.load(recorder.record(rec), template=template)


RecorderFactory = Callable[[record.PrecisionSettings], record.Recorder]
