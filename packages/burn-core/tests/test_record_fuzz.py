"""Fuzzing the readers: random bytes, truncations and bit flips of valid files of every format.

Whatever the input, loading (and loading into a module) either succeeds or raises RecordError,
and never through the catch-all that turns an unexpected exception into one (``internal``): each
malformed input must be caught where it is understood. CI-sized: a few seconds in all. It runs
on the minimal backend of this directory, so it needs no backend package.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_record_support import backend, make_net

import burn
from burn import record
from burn.record import RecordError

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
