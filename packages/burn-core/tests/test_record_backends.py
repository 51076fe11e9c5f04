"""Round trips across backends of different element types and devices: ndarray (float32),
ndarray with ``float_dtype="float64"``, autodiff over both, and opencl / autodiff(opencl) and
cuda / autodiff(cuda) when burn-opencl or burn-cuda is installed and finds a device. Saving on one
and loading on another converts every value to the loading backend's float and int types (through
the file's precision)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_record_support import SETTINGS, Linear, Net, Stats, make_lazy_net, tensor, values

import burn
from burn import record
from burn.foundations.dtype import DType
from burn.module import Param

BACKENDS = [
    "ndarray",
    "ndarray-f64",
    "autodiff",
    "autodiff-f64",
    "opencl",
    "autodiff-opencl",
    "cuda",
    "autodiff-cuda",
]
_CACHE: dict[str, Any] = {}


def _device_reason(base: str) -> str | None:
    """Why the device backend `base` (opencl, cuda) cannot run here, or None when it can."""
    try:
        rows = {r.name: r for r in burn.backends()}
    except Exception as exc:  # noqa: BLE001 - any discovery failure is a reason to skip
        return f"backend discovery failed: {exc}"
    row = rows.get(base)
    if row is None:
        return f"burn-{base} is not installed"
    return None if row.status == "available" else f"{base}: {row.status} {row.reason}"


def make(name: str) -> Any:
    if name not in _CACHE:
        base = name.removeprefix("autodiff-")
        if base in ("opencl", "cuda") and (reason := _device_reason(base)) is not None:
            pytest.skip(reason)
        nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not importable")
        if name.startswith("autodiff"):
            pytest.importorskip("burn_autodiff", reason="burn-autodiff is not importable")
        _CACHE[name] = {
            "ndarray": lambda: nd.NdArray(),
            "ndarray-f64": lambda: nd.NdArray(float_dtype="float64"),
            "autodiff": lambda: burn.backend("autodiff(ndarray)"),
            "autodiff-f64": lambda: burn.backend("autodiff(ndarray)", float_dtype="float64"),
            "opencl": lambda: burn.backend("opencl"),
            "autodiff-opencl": lambda: burn.backend("autodiff(opencl)"),
            "cuda": lambda: burn.backend("cuda"),
            "autodiff-cuda": lambda: burn.backend("autodiff(cuda)"),
        }[name]()
    return _CACHE[name]


def native_net(B: Any, seed: int = 0) -> Net:  # noqa: N803
    """`make_net`'s structure with float64-drawn values in the backend's own float and int types."""
    rng = np.random.default_rng(seed)
    fdt, idt = B.float_dtype.value, B.int_dtype.value

    def param(array: np.ndarray, dtype: str, require_grad: bool = True) -> Param:
        return Param.from_tensor(tensor(B, array, dtype), require_grad=require_grad)

    def lin(d_in: int, d_out: int) -> Linear:
        return Linear(param(rng.standard_normal((d_in, d_out)), fdt), param(rng.standard_normal(d_out), fdt))

    stats = Stats(
        param(rng.standard_normal(3), fdt, require_grad=False),
        param(rng.integers(-1000, 1000, size=(2, 3)), idt),
        Param.from_tensor(tensor(B, rng.random(5) > 0.5)),
    )
    return Net([lin(4, 3), lin(3, 2)], stats)


def expected(
    src: dict[str, np.ndarray], settings: record.PrecisionSettings, dst: Any
) -> dict[str, np.ndarray]:
    """Each value rounded to the file's dtype, then to the loading backend's type of its kind."""
    out = {}
    for path, array in src.items():
        saved = array.astype(settings.saved_dtype(DType.from_any(array.dtype)).numpy)
        kind = np.dtype(array.dtype).kind
        target = {"f": dst.float_dtype.numpy, "i": dst.int_dtype.numpy}.get(kind, array.dtype)
        out[path] = saved.astype(target)
    return out


def _check(loaded: Net, dst: Any, want: dict[str, np.ndarray]) -> None:
    got = values(loaded)
    assert list(got) == list(want)
    for path, array in want.items():
        assert got[path].dtype == array.dtype, (path, got[path].dtype, array.dtype)
        np.testing.assert_array_equal(got[path], array, err_msg=path)
    for path, param in loaded.named_params():
        value = param.val()
        assert value.backend is dst and param.is_initialized, path
        if dst.ad_enabled and value.dtype.is_float and param.require_grad:
            assert value.is_require_grad(), path  # an autodiff leaf, ready to train


CROSS_RECORDERS = [record.NamedMpkBytesRecorder, record.BinFileRecorder, record.SafetensorsFileRecorder]


@pytest.mark.parametrize("recorder_cls", CROSS_RECORDERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("dst_name", BACKENDS)
@pytest.mark.parametrize("src_name", BACKENDS)
def test_save_on_one_backend_load_on_another(
    src_name: str, dst_name: str, recorder_cls: Any, tmp_path
) -> None:  # noqa: ANN001
    src, dst = make(src_name), make(dst_name)
    net = native_net(src, seed=4)
    settings = record.KeepPrecisionSettings()  # the file holds the source's own dtypes
    recorder = recorder_cls(settings)
    calls: list[str] = []
    if recorder.extension:
        net.save_file(tmp_path / "net", recorder)
        loaded = make_lazy_net(dst, calls).load_file(tmp_path / "net", recorder)
    else:
        loaded = make_lazy_net(dst, calls).load_record(recorder.load(recorder.record(net.into_record())))
    assert calls == []
    assert [str(p.id) for _, p in loaded.named_params()] == [str(p.id) for _, p in net.named_params()]
    _check(loaded, dst, expected(values(net), settings, dst))


@pytest.mark.parametrize(
    "settings", SETTINGS, ids=lambda s: type(s).__name__.replace("PrecisionSettings", "")
)
@pytest.mark.parametrize("recorder_cls", record.ALL_RECORDERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "pair", [("ndarray-f64", "ndarray"), ("ndarray", "ndarray-f64"), ("ndarray-f64", "opencl")]
)
def test_every_recorder_and_precision_between_float64_and_float32(
    pair, recorder_cls, settings, tmp_path
) -> None:  # noqa: ANN001
    src, dst = make(pair[0]), make(pair[1])
    net = native_net(src, seed=5)
    recorder = recorder_cls(settings)
    if recorder.extension:
        net.save_file(tmp_path / "net", recorder)
        loaded = make_lazy_net(dst, []).load_file(tmp_path / "net", recorder)
    else:
        loaded = make_lazy_net(dst, []).load_record(
            recorder.load(recorder.record(net.into_record()), template=net)
        )
    _check(loaded, dst, expected(values(net), settings, dst))


def test_float64_values_survive_double_precision_exactly(tmp_path) -> None:  # noqa: ANN001
    """The comparison above can fail: float64 values do not survive a float32 file."""
    src = make("ndarray-f64")
    net = native_net(src, seed=6)
    full, double = record.FullPrecisionSettings(), record.DoublePrecisionSettings()
    for settings, exact in ((double, True), (full, False)):
        recorder = record.NamedMpkFileRecorder(settings)
        net.save_file(tmp_path / "net", recorder)
        loaded = native_net(src, seed=7).load_file(tmp_path / "net", recorder)
        same = np.array_equal(values(loaded)["layers.0.weight"], values(net)["layers.0.weight"])
        assert same is exact, type(settings).__name__
