"""Fuzzing the readers: random bytes, truncations and bit flips of valid files of every format,
and mutations (byte edits, spliced pickle opcodes, truncations) of valid PyTorch checkpoints.

Whatever the input, loading (and loading into a module) either succeeds or raises RecordError,
and never through the catch-all that turns an unexpected exception into one (``internal``): each
malformed input must be caught where it is understood. CI-sized: a few seconds in all. It runs
on the minimal backend of this directory, so it needs no backend package.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_record_support import backend, make_net

import burn
from burn import record
from burn.record import RecordError
from burn.record.pytorch_pickle import TorchTensor, open_checkpoint

FORMATS = [
    record.NamedMpkBytesRecorder,
    record.NamedMpkGzFileRecorder,
    record.BinBytesRecorder,
    record.BinGzFileRecorder,
    record.JsonGzFileRecorder,
    record.PrettyJsonFileRecorder,
    record.SafetensorsFileRecorder,
]
# BURN_FUZZ_EXAMPLES=5000 for a long run; CI uses the default.
FUZZ = settings(
    max_examples=int(os.environ.get("BURN_FUZZ_EXAMPLES", "60")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _state(B):  # noqa: N803
    return {
        "model": make_net(B).into_record(),
        "step": 3,
        "betas": (0.9, 0.99),
        "m": burn.Tensor.from_data(np.arange(6, dtype=np.float32).reshape(2, 3), backend=B),
        "flags": burn.Tensor.from_data(np.array([True, False]), backend=B),
        "blob": b"xyz",
        1: "int key",
    }


@pytest.fixture(scope="module")
def valid() -> dict[type, tuple[bytes, bytes]]:
    """For each format: a module record file and a nested-record file."""
    B = backend("minimal")  # noqa: N806
    out = {}
    for cls in FORMATS:
        recorder = cls(record.HalfPrecisionSettings())
        out[cls] = (recorder.record(make_net(B).into_record()), recorder.record(_state(B)))
    return out


def _load(cls: type, raw: bytes) -> None:
    B = backend("minimal")  # noqa: N806
    template = make_net(B)
    recorder = cls(max_decompressed_bytes=1 << 20)
    try:
        rec = recorder.load(raw, template=template)
    except RecordError as err:
        assert not getattr(err, "internal", False), f"unexpected exception inside the reader: {err!r}"
        assert str(err).startswith("<bytes>: ")
        return
    if isinstance(rec, record.ModuleRecord):
        try:
            template.load_record(rec, strict=False, allow_partial=True)
            template.load_file(raw, recorder)
        except RecordError:
            pass


def _load_nested(cls: type, raw: bytes) -> None:
    B = backend("minimal")  # noqa: N806
    try:
        cls(max_decompressed_bytes=1 << 20).load(raw, template={"model": make_net(B)})
    except RecordError as err:
        assert not getattr(err, "internal", False), f"unexpected exception inside the reader: {err!r}"


def _regzip(cls: type, payload: bytes) -> bytes:
    return gzip.compress(payload) if cls.compressed else payload


def _inner(cls: type, raw: bytes) -> bytes:
    return gzip.decompress(raw) if cls.compressed else raw


@pytest.mark.parametrize("cls", FORMATS, ids=lambda c: c.__name__)
@FUZZ
@given(data=st.binary(max_size=600))
def test_random_bytes(cls, data):
    _load(cls, data)
    _load(cls, _regzip(cls, data))


@pytest.mark.parametrize("cls", FORMATS, ids=lambda c: c.__name__)
@FUZZ
@given(cut=st.floats(0.0, 1.0, exclude_max=True), nested=st.booleans())
def test_truncations(cls, valid, cut, nested):
    raw = valid[cls][nested]
    inner = _inner(cls, raw)
    n = int(cut * len(inner))
    with pytest.raises(RecordError):
        cls().load(_regzip(cls, inner[:n]), template=make_net(backend("minimal")))
    _load(cls, raw[: int(cut * len(raw))])


@pytest.mark.parametrize("cls", FORMATS, ids=lambda c: c.__name__)
@FUZZ
@given(
    flips=st.lists(
        st.tuples(st.floats(0.0, 1.0, exclude_max=True), st.integers(0, 7)), min_size=1, max_size=4
    ),
    nested=st.booleans(),
)
def test_bit_flips(cls, valid, flips, nested):
    # flip the payload (then re-gzip, to get past gzip's CRC) and the file as written
    for raw in (_inner(cls, valid[cls][nested]), valid[cls][nested]):
        mutated = bytearray(raw)
        for where, bit in flips:
            mutated[int(where * len(mutated))] ^= 1 << bit
        payload = _regzip(cls, bytes(mutated)) if raw is not valid[cls][nested] else bytes(mutated)
        (_load_nested if nested else _load)(cls, payload)


def test_the_catch_all_marks_internal_errors(monkeypatch):
    """The fuzz tests rely on `internal`: check that an unexpected exception does set it."""
    from burn.record import encodings

    def boom(*_args, **_kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(encodings.MpkEncoding, "read", boom)
    with pytest.raises(RecordError) as info:
        record.NamedMpkBytesRecorder().load(b"\x80")
    assert info.value.internal and "KeyError" in str(info.value)


# -- PyTorch checkpoints: hypothesis mutations of valid .pt files -----------------------------------
# Opcodes spliced into a pickle: memo, marks, containers, calls, persistent ids, DAG-building reuse.
_OPCODES = [
    b"h\x00",
    b"h\x01",
    b"q\x00",
    b"q\x07",
    b"(",
    b"t",
    b"\x85",
    b"\x86",
    b"0",
    b"2",
    b"\x94",
    b"R",
    b"Q",
    b"s",
    b"u",
    b"e",
    b"a",
    b"l",
    b"]",
    b"}",
    b")",
    b"N",
    b"K\x05",
    b"b",
    b"\x91",
    b"r\xff\xff\xff\x00",
    b"j\x03\x00\x00\x00",
    b"\x8e\xff\xff\xff\xff\xff\xff\xff\x7f",
]


def _torch_checkpoints(directory: Path) -> dict[str, bytes]:
    """A valid zip checkpoint (written by torch when it is importable, else by hand as torch lays
    it out) and a legacy one (by hand: torch writes it only on request)."""
    from test_record_limits import FLOATS, state, tensor, write_legacy, write_pt

    seeds = {}
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is optional
        torch = None
    if torch is not None:
        path = directory / "torch.pt"
        weights = torch.arange(12, dtype=torch.float32).reshape(4, 3)
        torch.save({"layers.0.weight": weights, "layers.0.bias": weights[0], "steps": torch.arange(3)}, path)
        seeds["torch"] = path.read_bytes()
    pkl = state(
        {"layers.0.weight": tensor("0", 3, (3, 1), (1, 1)), "layers.0.bias": tensor("0", 3, (3,), (1,))}
    )
    seeds["zip"] = write_pt(directory / "hand.pt", pkl, {"0": FLOATS}).read_bytes()
    seeds["legacy"] = write_legacy(directory / "legacy.pt", pkl, {"0": FLOATS}).read_bytes()
    return seeds


@pytest.fixture(scope="module")
def pt_seeds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    directory = tmp_path_factory.mktemp("pt-fuzz")
    return directory, _torch_checkpoints(directory)


def _repickle(raw: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    """`raw` (a zip checkpoint) with its data.pkl edited, re-zipped so the CRC still holds."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, edit(data) if info.filename.endswith("/data.pkl") else data)
    return out.getvalue()


def _load_pt(path: Path) -> None:
    module = make_net(backend("minimal"))
    try:
        with open_checkpoint(path) as ckpt:
            if isinstance(ckpt.obj, dict):
                for value in ckpt.obj.values():
                    if isinstance(value, TorchTensor):
                        value.read()
        record.load_pytorch(path, module, strict=False, allow_partial=True)
    except RecordError as err:
        assert not err.internal, f"unexpected exception inside the reader: {err!r}"
        assert str(path) in str(err)


@FUZZ
@given(
    seed=st.sampled_from(["torch", "zip", "legacy"]),
    in_pickle=st.booleans(),
    edits=st.lists(
        st.tuples(
            st.floats(0.0, 1.0, exclude_max=True),
            st.sampled_from(["flip", "insert", "delete", "opcode"]),
            st.integers(0, 255),
        ),
        min_size=1,
        max_size=6,
    ),
    cut=st.none() | st.floats(0.0, 1.0, exclude_max=True),
)
def test_mutated_pytorch_checkpoints_raise_only_record_errors(pt_seeds, seed, in_pickle, edits, cut):
    directory, seeds = pt_seeds
    if seed not in seeds:
        seed = "zip"
    raw = seeds[seed]

    def mutate(data: bytes) -> bytes:
        out = bytearray(data)
        for where, kind, value in edits:
            at = int(where * len(out)) if out else 0
            if kind == "flip" and out:
                out[at] ^= 1 << (value % 8)
            elif kind == "insert":
                out[at:at] = bytes([value])
            elif kind == "delete" and out:
                del out[at]
            elif kind == "opcode":
                out[at:at] = _OPCODES[value % len(_OPCODES)]
        return bytes(out[: int(cut * len(out))] if cut is not None else out)

    mutated = _repickle(raw, mutate) if in_pickle and seed != "legacy" else mutate(raw)
    path = directory / "mutated.pt"
    path.write_bytes(mutated)
    _load_pt(path)
