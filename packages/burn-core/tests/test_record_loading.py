"""Loading rules: strict / partial loading, lazy params, metadata checks, format hints, paths,
gzip caps, and `burn record inspect`."""

from __future__ import annotations

import gzip
import json

import msgpack
import numpy as np
import pytest
from test_record_support import Linear, Net, Stats, backend, ids, make_lazy_net, make_net, values

import burn
from burn import record
from burn.module import Module, Param
from burn.record import RecordError
from burn.record._io import gunzip_limit
from burn.record.inspect import inspect_file, main


@pytest.fixture
def B():  # noqa: N802
    return backend("ndarray")


class Wider(Module):
    layers: list
    stats: Stats
    extra: Param


def test_lazy_initializers_never_run(B, tmp_path):  # noqa: N803
    for recorder in (
        record.NamedMpkFileRecorder(),
        record.BinFileRecorder(),
        record.SafetensorsFileRecorder(),
    ):
        make_net(B).save_file(tmp_path / "net", recorder)
        calls: list[str] = []
        lazy = make_lazy_net(B, calls)
        loaded = lazy.load_file(tmp_path / "net", recorder)
        assert calls == []
        assert all(p.is_initialized for _, p in loaded.named_params())
        assert not any(p.is_initialized for _, p in lazy.named_params())  # the template is untouched
        assert calls == []


def test_strict_loading_reports_every_problem_by_path(B):  # noqa: N803
    rec = make_net(B).into_record()
    params = dict(rec)
    del params["layers.1.bias"]
    params["layers.9.weight"] = rec["layers.0.weight"]
    params["stats.scale"] = record.ParamRecord(None, burn.Tensor.zeros((4,), backend=B))
    params["stats.counts"] = record.ParamRecord(None, burn.Tensor.zeros((2, 3), backend=B))  # float, not int
    with pytest.raises(RecordError) as info:
        make_net(B).load_record(record.ModuleRecord(params))
    message = str(info.value)
    assert "missing keys (in the module, not the record): layers.1.bias" in message
    assert "unexpected keys (in the record, not the module): layers.9.weight" in message
    assert "stats.scale: record shape [4] vs module shape [3]" in message
    assert "stats.counts: record dtype float32 (Float) vs module kind Int" in message
    assert "allow_partial=True" in message and "strict=False" in message
    assert info.value.path == "layers.1.bias"


def test_allow_partial_loads_what_matches(B):  # noqa: N803
    source = make_net(B, seed=1)
    params = dict(source.into_record())
    del params["layers.1.bias"]
    params["stats.scale"] = record.ParamRecord(None, burn.Tensor.zeros((4,), backend=B))
    calls: list[str] = []
    target = make_lazy_net(B, calls)
    with pytest.raises(RecordError):
        target.load_record(record.ModuleRecord(params))
    loaded = target.load_record(record.ModuleRecord(params), allow_partial=True)
    assert not loaded.layers[1].bias.is_initialized and not loaded.stats.scale.is_initialized
    assert calls == []
    np.testing.assert_array_equal(
        loaded.layers[0].weight.val().to_numpy(), source.layers[0].weight.val().to_numpy()
    )
    assert loaded.layers[0].weight.id == source.layers[0].weight.id


def test_strict_false_ignores_unexpected_keys_only(B, tmp_path):  # noqa: N803
    wider = Wider(make_net(B).layers, make_net(B).stats, Param.from_tensor(burn.Tensor.ones((2,), backend=B)))
    wider.save_file(tmp_path / "wide")
    with pytest.raises(RecordError, match=r"wide\.mpk: extra: record does not fit Net: unexpected keys"):
        make_net(B).load_file(tmp_path / "wide")
    loaded = make_net(B).load_file(tmp_path / "wide", strict=False)
    assert ids(loaded) == {k: v for k, v in ids(wider).items() if k != "extra"}
    narrow = make_net(B).save_file(tmp_path / "narrow")
    with pytest.raises(RecordError, match="missing keys.*extra"):  # the other way round
        wider.load_file(narrow, strict=False)
    with pytest.raises(TypeError, match="unexpected options"):
        make_net(B).load_file(tmp_path / "wide", strct=False)


def test_load_record_accepts_plain_mappings_of_tensors(B):  # noqa: N803
    lin = Linear(
        Param.from_tensor(burn.Tensor.zeros((2, 2), backend=B)),
        Param.from_tensor(burn.Tensor.zeros((2,), backend=B)),
    )
    loaded = lin.load_record(
        {"weight": np.eye(2, dtype=np.float32), "bias": burn.TensorData([1.0, 2.0], dtype="float64")}
    )
    assert loaded.weight.id == lin.weight.id  # no id in the record: the module's stays
    assert loaded.bias.val().dtype == burn.float32 and loaded.bias.val().tolist() == [1.0, 2.0]
    with pytest.raises(RecordError, match="expects a module record"):
        lin.load_record([1, 2])
    with pytest.raises(RecordError, match="weight: expected a ParamRecord or tensor"):
        lin.load_record({"weight": "nope", "bias": np.zeros(2)})


def test_bin_records_need_the_same_structure(B, tmp_path):  # noqa: N803
    recorder = record.BinFileRecorder()
    path = recorder.record(make_net(B).into_record(), tmp_path / "net")
    with pytest.raises(RecordError, match="store no param names: load with template="):
        recorder.load(path)
    wider = Wider(make_net(B).layers, make_net(B).stats, Param.from_tensor(burn.Tensor.ones((2,), backend=B)))
    with pytest.raises(RecordError, match="holds 7 params, the template 8"):
        wider.load_file(path, recorder)

    class Renamed(Module):
        blocks: list
        stats: Stats

    renamed = Renamed(make_net(B).layers, make_net(B).stats)
    with pytest.raises(RecordError, match="other param paths"):
        renamed.load_file(path, recorder)
    assert list(recorder.load(path, template=make_net(B).into_record())) == [
        p for p, _ in make_net(B).named_params()
    ]


def _mpk_with(raw: bytes, **changes) -> bytes:
    doc = msgpack.unpackb(raw)
    doc.update(changes)
    return msgpack.packb(doc, use_bin_type=True)


def test_newer_format_version_is_refused_clearly(B, tmp_path):  # noqa: N803
    raw = record.NamedMpkBytesRecorder().record(make_net(B).into_record())
    # a re-packed file loses the 64-byte alignment: loading copies the odd tensors, still works
    assert list(record.NamedMpkBytesRecorder().load(_mpk_with(raw)))
    newer = _mpk_with(raw, format_version=record.FORMAT_VERSION + 1, burn_version="9.0.0")
    with pytest.raises(
        RecordError, match=r"format version 2 \(written by burn 9\.0\.0\) is newer .* upgrade burn-core"
    ):
        record.NamedMpkBytesRecorder().load(newer)
    path = tmp_path / "net.json"
    record.PrettyJsonFileRecorder().record(make_net(B).into_record(), path)
    text = path.read_text().replace('"format_version": 1', '"format_version": 7')
    path.write_text(text)
    with pytest.raises(RecordError, match=r"net\.json: record format version 7"):
        make_net(B).load_file(path, record.PrettyJsonFileRecorder())
    with pytest.raises(RecordError, match="not a burn record"):
        record.NamedMpkBytesRecorder().load(_mpk_with(raw, format="something-else"))


def test_wrong_recorder_says_which_one_to_use(B, tmp_path):  # noqa: N803
    net = make_net(B)
    net.save_file(tmp_path / "net", record.BinFileRecorder())
    with pytest.raises(RecordError, match="looks like a 'bin' record; use BinFileRecorder"):
        make_net(B).load_file(tmp_path / "net.bin", record.NamedMpkFileRecorder())
    net.save_file(tmp_path / "net", record.JsonGzFileRecorder())
    with pytest.raises(RecordError, match="gzip-compressed data.*JsonGzFileRecorder"):
        make_net(B).load_file(tmp_path / "net.json.gz", record.NamedMpkFileRecorder())
    with pytest.raises(RecordError, match="it looks like a 'json' record; use JsonGzFileRecorder"):
        make_net(B).load_file(tmp_path / "net.json.gz", record.NamedMpkGzFileRecorder())
    with pytest.raises(RecordError, match="no such file"):
        make_net(B).load_file(tmp_path / "absent")


def test_extensions(B, tmp_path):  # noqa: N803
    rec = make_net(B).into_record()
    assert record.NamedMpkFileRecorder().record(rec, tmp_path / "a") == tmp_path / "a.mpk"
    assert record.NamedMpkFileRecorder().record(rec, tmp_path / "b.mpk") == tmp_path / "b.mpk"
    assert record.BinGzFileRecorder().record(rec, str(tmp_path / "c.v2")) == tmp_path / "c.v2.bin.gz"
    assert record.NamedMpkBytesRecorder().record(rec, tmp_path / "raw") == tmp_path / "raw"
    assert list(record.NamedMpkFileRecorder().load(tmp_path / "b"))  # extension added on load too
    assert list(record.NamedMpkFileRecorder().load(tmp_path / "raw"))  # ...unless the path exists as is


def test_gzip_cap_stops_bombs():
    payload = gzip.compress(bytes(4 << 20))  # 4 MiB of zeros in ~4 KiB
    recorder = record.NamedMpkGzFileRecorder(max_decompressed_bytes=1 << 20)
    with pytest.raises(
        RecordError,
        match=r"<bytes>: gzip data \(a decompression bomb\?\): 1048577 bytes once decompressed, over the "
        r"limit of 1048576 \(raise it with limits=burn\.Limits\(max_decompressed_bytes=\.\.\.\)\)",
    ):
        recorder.load(payload * 3)  # several members: still capped as a whole
    # the same cap through limits=; without one, deflate's ratio bounds what a small file may give
    with pytest.raises(RecordError, match=r"over the limit of 1048576"):
        record.NamedMpkGzFileRecorder().load(payload * 3, limits=burn.Limits(max_decompressed_bytes=1 << 20))
    assert gunzip_limit(1000) == 1032 * 1000 + (1 << 16)
    assert gunzip_limit(1 << 30) == burn.Limits().max_decompressed_bytes
    assert gunzip_limit(1 << 30, burn.Limits(max_decompressed_bytes=5)) == 5


def test_gzip_multi_member_and_garbage(B):  # noqa: N803
    raw = record.NamedMpkBytesRecorder().record(make_net(B).into_record())
    split = gzip.compress(raw[:100]) + gzip.compress(raw[100:])
    assert list(record.NamedMpkGzFileRecorder().load(split))
    with pytest.raises(RecordError, match="trailing garbage"):
        record.NamedMpkGzFileRecorder().load(gzip.compress(raw) + b"junk")
    with pytest.raises(RecordError, match="truncated gzip"):
        record.NamedMpkGzFileRecorder().load(gzip.compress(raw)[:-12])


def test_hostile_sizes_are_refused_before_allocating():
    import tracemalloc

    cases = [
        b"\xdd\xff\xff\xff\xff",  # an array of 4 billion items in 5 bytes
        b"\xdf\xff\xff\xff\xff",  # a map of 4 billion entries
        b"\xc6\xff\xff\xff\xf0abc",  # a 4 GiB bin
        b"\xdb\xff\xff\xff\xf0abc",  # a 4 GiB string
        b"\x91" * 100_000,  # 100k nested arrays
    ]
    tracemalloc.start()
    try:
        for raw in cases:
            with pytest.raises(RecordError):
                record.NamedMpkBytesRecorder().load(raw)
        with pytest.raises(RecordError, match="header of"):
            record.BinBytesRecorder().load(b"BURN-BIN" + (1 << 62).to_bytes(8, "little") + b"\x80")
        with pytest.raises(RecordError, match="safetensors header of"):
            record.SafetensorsFileRecorder().load((1 << 40).to_bytes(8, "little") + b"{}")
        header = json.dumps(
            {"w": {"dtype": "F32", "shape": [1 << 40, 1 << 20], "data_offsets": [0, 8]}}
        ).encode()
        with pytest.raises(RecordError, match="1152921504606846976 elements in one tensor, over the limit"):
            record.SafetensorsFileRecorder().load(len(header).to_bytes(8, "little") + header + bytes(8))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_inspect(B, tmp_path, capsys):  # noqa: N803
    net = make_net(B)
    path = net.save_file(tmp_path / "net", record.NamedMpkGzFileRecorder(record.HalfPrecisionSettings()))
    text = inspect_file(path)
    assert (
        "gzip" in text
        and "named-mpk" in text
        and "HalfPrecisionSettings (floats float16, ints int16)" in text
    )
    assert "module record: 7 params, 37 values" in text
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("layers.0.weight"))
    assert "[4, 3]" in line and "float16" in line and "24 B" in line and str(net.layers[0].weight.id) in line
    bin_path = net.save_file(tmp_path / "net", record.BinFileRecorder())
    assert "#0" in inspect_file(bin_path)  # bin has no names: params by position
    bad = tmp_path / "bad.mpk"
    bad.write_bytes(path.read_bytes()[:10])
    assert main([str(path), str(bin_path)]) == 0
    out = capsys.readouterr().out
    assert "layers.1.bias" in out and "#6" in out
    assert main([str(bad)]) == 1
    assert "error:" in capsys.readouterr().err


def test_recorder_repr_and_settings():
    recorder = record.NamedMpkFileRecorder(record.HalfPrecisionSettings())
    assert repr(recorder) == "NamedMpkFileRecorder(HalfPrecisionSettings())"
    assert recorder == record.NamedMpkFileRecorder(record.HalfPrecisionSettings())
    assert record.NamedMpkFileRecorder().settings == record.FullPrecisionSettings()
    with pytest.raises(TypeError, match="PrecisionSettings instance"):
        record.NamedMpkFileRecorder(record.HalfPrecisionSettings)  # the class, not an instance


def test_values_survive_a_module_with_constants_only_fields(B, tmp_path):  # noqa: N803
    """Only params are saved: constants (here an sqlite-like object) never reach the recorder."""
    net = Net(make_net(B).layers, make_net(B).stats, name="x", connection=open(tmp_path / "f", "w"))  # noqa: SIM115
    try:
        path = net.save_file(tmp_path / "net")
        assert values(make_net(B).load_file(path)).keys() == values(net).keys()
    finally:
        net.connection.close()
