"""A malformed tensor in a file of any format raises `RecordError` naming the file and the param
path: each test rewrites one tensor's shape in a valid file (through the format's own header) so
that it no longer matches the bytes stored for it."""

from __future__ import annotations

import gzip
import json
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
from test_record_support import backend, make_net

from burn import record
from burn.record import RecordError

BAD_SHAPE = [3, 200]  # layers.1.weight is [3, 2]


def _mpk(raw: bytes) -> bytes:
    doc = msgpack.unpackb(raw, strict_map_key=False)
    doc["item"]["$module"]["layers.1.weight"]["$param"]["tensor"]["$tensor"]["shape"] = BAD_SHAPE
    return msgpack.packb(doc, use_bin_type=True)


def _json(raw: bytes) -> bytes:
    doc = json.loads(raw)
    doc["item"]["$module"]["layers.1.weight"]["$param"]["tensor"]["$tensor"]["shape"] = BAD_SHAPE
    return json.dumps(doc).encode()


def _bin(raw: bytes) -> bytes:
    (n,) = struct.unpack_from("<Q", raw, 8)
    data = raw[-(-(16 + n) // 64) * 64 :]
    header = msgpack.unpackb(raw[16 : 16 + n], strict_map_key=False)
    header["item"]["$module_bin"]["tensors"][2]["$tensor"]["shape"] = BAD_SHAPE
    packed = msgpack.packb(header, use_bin_type=True)
    out = raw[:8] + struct.pack("<Q", len(packed)) + packed
    return out + bytes(-len(out) % 64) + data


def _safetensors(raw: bytes) -> bytes:
    (n,) = struct.unpack_from("<Q", raw, 0)
    header = json.loads(raw[8 : 8 + n])
    header["layers.1.weight"]["shape"] = BAD_SHAPE
    packed = json.dumps(header).encode()
    return struct.pack("<Q", len(packed)) + packed + raw[8 + n :]


def _gz(edit: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda raw: gzip.compress(edit(gzip.decompress(raw)))


EDITS: dict[type, Callable[[bytes], bytes]] = {
    record.NamedMpkFileRecorder: _mpk,
    record.NamedMpkGzFileRecorder: _gz(_mpk),
    record.NamedMpkBytesRecorder: _mpk,
    record.BinFileRecorder: _bin,
    record.BinGzFileRecorder: _gz(_bin),
    record.BinBytesRecorder: _bin,
    record.JsonGzFileRecorder: _gz(_json),
    record.PrettyJsonFileRecorder: _json,
    record.SafetensorsFileRecorder: _safetensors,
}


def test_every_recorder_is_covered() -> None:
    assert set(EDITS) == set(record.ALL_RECORDERS)


@pytest.mark.parametrize("recorder_cls", record.ALL_RECORDERS, ids=lambda c: c.__name__)
def test_a_malformed_tensor_is_reported_with_file_and_param_path(recorder_cls: Any, tmp_path: Path) -> None:
    net = make_net(backend("ndarray"))
    recorder = recorder_cls()
    if recorder.extension:
        path = net.save_file(tmp_path / "net", recorder)
        make_net(backend("ndarray"), seed=1).load_file(path, recorder)  # valid before the edit
        path.write_bytes(EDITS[recorder_cls](path.read_bytes()))
        where = re.escape(path.name) + ": "
        load: Callable[[], Any] = lambda: make_net(backend("ndarray"), seed=1).load_file(path, recorder)  # noqa: E731
    else:
        raw = EDITS[recorder_cls](recorder.record(net.into_record()))
        where = "<bytes>: "
        load = lambda: recorder.load(raw, template=net)  # noqa: E731
    with pytest.raises(
        RecordError, match=where + r"layers\.1\.weight: .*(\[3, 200\]|2400 bytes|\+2400)"
    ) as info:
        load()
    assert not info.value.internal  # a reasoned refusal, not a caught bug
