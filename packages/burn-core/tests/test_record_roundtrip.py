"""Round trips: every recorder x precision x backend, across backends, autodiff <-> plain, and
records of nested data (optimizer-like state)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_record_support import (
    BACKEND_NAMES,
    SETTINGS,
    assert_same_values,
    backend,
    expected_after,
    ids,
    make_lazy_net,
    make_net,
    record_round_trip,
    values,
)

import burn
from burn import record
from burn.foundations.data import TensorData
from burn.record import ModuleRecord, ParamRecord, RecordError

RECORDERS = record.ALL_RECORDERS
_settings_id = [type(s).__name__.replace("PrecisionSettings", "") for s in SETTINGS]


def _expected(net_values: dict[str, np.ndarray], settings: record.PrecisionSettings) -> dict[str, np.ndarray]:
    return {path: expected_after(array, settings) for path, array in net_values.items()}


@pytest.mark.parametrize("backend_name", BACKEND_NAMES)
@pytest.mark.parametrize("settings", SETTINGS, ids=_settings_id)
@pytest.mark.parametrize("recorder_cls", RECORDERS, ids=lambda c: c.__name__)
def test_module_round_trip(recorder_cls, settings, backend_name, tmp_path):
    B = backend(backend_name)  # noqa: N806
    net = make_net(B, seed=1)
    recorder = recorder_cls(settings)
    target = make_net(B, seed=2)  # other values and other ids: everything must come from the file
    path = net.save_file(tmp_path / "net", recorder)
    if recorder.extension:
        assert path == tmp_path / ("net" + recorder.extension) and path.exists()
    loaded = target.load_file(tmp_path / "net", recorder)
    assert ids(loaded) == ids(net)
    assert_same_values(values(loaded), _expected(values(net), settings))
    assert loaded.name == "net" and loaded.connection is target.connection  # constants are the target's
    for (_, before), (_, after) in zip(target.named_params(), loaded.named_params(), strict=True):
        assert after.require_grad == before.require_grad
        assert after.val().backend is B


@pytest.mark.parametrize("recorder_cls", RECORDERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("src", BACKEND_NAMES)
@pytest.mark.parametrize("dst", BACKEND_NAMES)
def test_save_on_one_backend_load_on_another(recorder_cls, src, dst, tmp_path):
    net = make_net(backend(src), seed=3)
    recorder = recorder_cls(record.FullPrecisionSettings())
    net.save_file(tmp_path / "net", recorder)
    calls: list[str] = []
    loaded = make_lazy_net(backend(dst), calls).load_file(tmp_path / "net", recorder)
    assert calls == []  # a module built only to load weights never runs its initializers
    assert ids(loaded) == ids(net)
    expected = values(net)
    expected["stats.counts"] = expected["stats.counts"].astype(backend(dst).int_dtype.numpy)
    assert_same_values(values(loaded), expected)
    for _, param in loaded.named_params():
        assert param.is_initialized and param.val().backend is backend(dst)


def test_autodiff_params_come_back_as_leaves_that_train(tmp_path):
    plain, ad = backend("ndarray"), backend("autodiff")
    net = make_net(plain, seed=4)
    net.save_file(tmp_path / "net")
    loaded = make_lazy_net(ad, []).load_file(tmp_path / "net")
    weight = loaded.layers[0].weight
    assert weight.require_grad and weight.val().is_require_grad()
    assert not loaded.stats.scale.val().is_require_grad()  # require_grad=False params stay so
    x = burn.Tensor.ones((2, 4), backend=ad)
    grads = ((x @ weight.val()) + loaded.layers[0].bias.val()).sum().backward()
    grad = weight.val().grad(grads)
    assert grad is not None
    np.testing.assert_allclose(grad.to_numpy(), np.full((4, 3), 2.0))
    # ...and back to the plain backend, from the autodiff model's own tensors.
    loaded.save_file(tmp_path / "again", record.BinFileRecorder())
    back = make_net(plain, seed=9).load_file(tmp_path / "again", record.BinFileRecorder())
    assert_same_values(values(back), values(net))


def test_load_record_in_memory_with_tensors_from_another_backend():
    net = make_net(backend("autodiff"), seed=5)
    target = make_net(backend("minimal"), seed=6)
    loaded = target.load_record(net.into_record())
    expected = values(net)
    assert_same_values(values(loaded), expected)
    assert ids(loaded) == ids(net)
    # the source module is untouched (records do not copy, loading never mutates)
    assert_same_values(values(net), expected)


def test_into_record_does_not_copy():
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    rec = net.into_record()
    assert isinstance(rec, ModuleRecord)
    assert list(rec) == [p for p, _ in net.named_params()]
    assert rec["layers.0.weight"].tensor is net.layers[0].weight.val()
    assert rec["layers.0.weight"].id == str(net.layers[0].weight.id)
    assert rec.num_params() == net.num_params(trainable=False)  # a record holds the running stats too
    assert list(rec.sub("layers.1")) == ["weight", "bias"]
    assert set(rec.nested()) == {"layers", "stats"}


def test_load_onto_another_device(tmp_path):
    minimal = backend("minimal")
    net = make_net(backend("ndarray"), seed=7)
    net.save_file(tmp_path / "net")
    other = minimal.devices()[1]
    loaded = make_lazy_net(minimal, []).load_file(tmp_path / "net", device=other)
    assert {str(p.val().device) for _, p in loaded.named_params()} == {"minimal:1"}


def test_initialized_params_keep_their_dtype(tmp_path):
    """A float64 param in a float32 model stays float64 (values rounded through the file's f32)."""
    B = backend("ndarray")  # noqa: N806
    net = make_net(B)
    wide = net.map(lambda path, p: p.map(lambda t: t.cast("float64")) if path == "stats.scale" else p)
    wide.save_file(tmp_path / "net", record.NamedMpkFileRecorder(record.FullPrecisionSettings()))
    loaded = wide.load_file(tmp_path / "net")
    assert loaded.stats.scale.val().dtype == burn.float64
    np.testing.assert_array_equal(
        loaded.stats.scale.val().to_numpy(), net.stats.scale.val().to_numpy().astype(np.float64)
    )


def _state(B):  # noqa: N802, N803
    """An optimizer/scheduler/checkpoint-like record: every kind of value records can hold."""
    return {
        "step": 12,
        "lr": 1e-3,
        "betas": (0.9, 0.999),
        "inf": math.inf,
        "nan": math.nan,
        "name": "adam",
        "flags": [True, False, None],
        "blob": b"\x00\xffraw",
        "$dollar": {"$tensor": "not a tensor"},
        7: "int key",
        ("a", 1): "tuple key",
        "moments": {
            "0123456789abcdef": {
                "m": burn.Tensor.from_data(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), backend=B),
                "count": burn.Tensor.from_data(np.array([3, -4], dtype=np.int64), backend=B),
                "mask": burn.Tensor.from_data(np.array([True, False, True]), backend=B),
            }
        },
        "numpy": np.arange(4, dtype=np.float64),
        "data": TensorData([1.5, 2.5], dtype="float64"),
        "model": make_net(B).into_record(),
        "empty": burn.Tensor.zeros((0, 3), backend=B),
        "scalar": burn.Tensor.from_data(3.5, backend=B),  # rank 0
        "transposed": np.arange(6.0).reshape(2, 3).T,  # not C-contiguous
    }


@pytest.mark.parametrize("settings", SETTINGS, ids=_settings_id)
@pytest.mark.parametrize("recorder_cls", RECORDERS, ids=lambda c: c.__name__)
def test_nested_record_round_trip(recorder_cls, settings, tmp_path):
    B = backend("ndarray")  # noqa: N806
    state = _state(B)
    recorder = recorder_cls(settings)
    for to_file in (True, False):
        back = record_round_trip(recorder, state, tmp_path, template={"model": make_net(B)}, to_file=to_file)
        assert set(back) == set(state)
        for key in ("step", "lr", "betas", "inf", "name", "flags", "blob", "$dollar", 7, ("a", 1)):
            assert back[key] == state[key] and type(back[key]) is type(state[key]), key
        assert math.isnan(back["nan"])
        moments = back["moments"]["0123456789abcdef"]
        src = state["moments"]["0123456789abcdef"]
        for name in ("m", "count", "mask"):
            data = moments[name]
            assert isinstance(data, TensorData)
            original = src[name].to_numpy()
            assert data.dtype == settings.saved_dtype(src[name].dtype)
            np.testing.assert_array_equal(data.array, original.astype(data.dtype.numpy))
        assert back["numpy"].dtype == settings.saved_dtype(burn.float64)
        assert back["data"].array.tolist() == [1.5, 2.5]
        assert back["empty"].shape == (0, 3)
        assert back["scalar"].shape == () and back["scalar"].array.item() == 3.5
        assert back["transposed"].array.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        model = back["model"]
        assert isinstance(model, ModuleRecord) and list(model) == list(state["model"])
        assert all(isinstance(p, ParamRecord) and p.id == state["model"][k].id for k, p in model.items())


def test_int_values_that_do_not_fit_are_refused(tmp_path):
    B = backend("ndarray")  # noqa: N806
    state = {"big": burn.Tensor.from_data(np.array([1, 70000], dtype=np.int64), backend=B)}
    with pytest.raises(RecordError, match=r"big: int values in \[1, 70000\] do not fit in int16"):
        record.NamedMpkFileRecorder(record.HalfPrecisionSettings()).record(state, tmp_path / "s")
    assert not list(tmp_path.iterdir())  # refused before the file was created
    raw = record.NamedMpkBytesRecorder(record.FullPrecisionSettings()).record(state)
    assert record.NamedMpkBytesRecorder().load(raw)["big"].array.tolist() == [1, 70000]


def test_unrecordable_values_are_refused_with_their_path():
    with pytest.raises(RecordError, match=r"a\.0: cannot record a value of type object"):
        record.NamedMpkBytesRecorder().record({"a": [object()]})
    with pytest.raises(RecordError, match="does not fit in 64 bits"):
        record.NamedMpkBytesRecorder().record({"a": 1 << 70})


def test_keep_precision_is_exact_for_mixed_dtypes():
    B = backend("ndarray")  # noqa: N806
    values64 = np.random.default_rng(0).standard_normal(5)
    state = {
        "f64": burn.Tensor.from_data(values64, backend=B, dtype="float64"),
        "f16": burn.Tensor.from_data(values64, backend=B, dtype="float16"),
        "i8": burn.Tensor.from_data(np.array([-3, 4]), backend=B, dtype="int64").cast("int32"),
    }
    back = record.NamedMpkBytesRecorder(record.KeepPrecisionSettings()).load(
        record.NamedMpkBytesRecorder(record.KeepPrecisionSettings()).record(state)
    )
    assert back["f64"].dtype == burn.float64 and back["f64"].array.tolist() == values64.tolist()
    assert back["f16"].dtype == burn.float16
    assert back["i8"].dtype == burn.int32


def test_metadata_is_written_and_read(tmp_path):
    B = backend("ndarray")  # noqa: N806
    recorder = record.JsonGzFileRecorder(record.BFloat16PrecisionSettings())
    path = recorder.record(make_net(B).into_record(), tmp_path / "m")
    meta, rec = recorder.load_with_metadata(path)
    assert meta is not None
    assert (meta.format, meta.format_version, meta.encoding) == ("burn-record", record.FORMAT_VERSION, "json")
    assert (meta.settings, meta.float_dtype, meta.int_dtype) == (
        "BFloat16PrecisionSettings",
        "bfloat16",
        "int16",
    )
    assert meta.burn_version == burn.__version__
    assert rec["layers.0.weight"].dtype == burn.bfloat16


def test_bytes_recorders_and_file_recorders_agree():
    B = backend("ndarray")  # noqa: N806
    rec = make_net(B).into_record()
    assert record.NamedMpkBytesRecorder().record(rec) == record.NamedMpkFileRecorder().record(rec)
    assert record.BinBytesRecorder().record(rec) == record.BinFileRecorder().record(rec)


def test_mpk_tensor_data_is_aligned_and_viewed_in_place():
    B = backend("ndarray")  # noqa: N806
    raw = bytearray(record.NamedMpkBytesRecorder().record(make_net(B).into_record()))
    rec = record.NamedMpkBytesRecorder().load(raw)
    base = np.frombuffer(raw, np.uint8).ctypes.data
    for param in rec.values():
        array = param.tensor.array
        if array.size:
            assert (array.ctypes.data - base) % 64 == 0  # 64-byte aligned within the file
            assert np.shares_memory(array, np.frombuffer(raw, np.uint8))  # no copy


def test_msgpack_output_is_standard_msgpack():
    import msgpack

    B = backend("ndarray")  # noqa: N806
    raw = record.NamedMpkBytesRecorder().record(make_net(B).into_record())
    doc = msgpack.unpackb(raw)
    assert doc["format"] == "burn-record" and doc["encoding"] == "named-mpk"
    param = doc["item"]["$module"]["layers.0.weight"]["$param"]
    assert param["tensor"]["$tensor"]["shape"] == [4, 3]
