"""Write the zip files ``torch.save(state_dict, path)`` writes, without torch: the inverse of
`burn.record.pytorch_pickle`.

The archive holds ``<name>/data.pkl``, ``<name>/byteorder`` (``little``), one record
``<name>/data/<key>`` per tensor (its raw bytes, stored uncompressed and starting on a 64-byte
boundary, as PyTorch aligns them so that ``torch.load(..., mmap=True)`` can map them) and
``<name>/version``. ``data.pkl`` is a protocol-2 pickle of a ``collections.OrderedDict`` whose
values are calls to ``torch._utils._rebuild_tensor_v2(storage, 0, shape, stride, False,
OrderedDict())``, each storage a persistent id ``("storage", torch.<Type>Storage, key, "cpu",
numel)``: the names ``torch.load(..., weights_only=True)`` admits. The pickle is assembled opcode
by opcode here, because the standard pickler checks that every global it writes can be imported,
and torch is not a dependency.

Example:
    >>> import io, numpy as np
    >>> buffer = io.BytesIO()
    >>> write_checkpoint(buffer, {"weight": np.ones((2, 3), np.float32)})
    >>> import zipfile
    >>> sorted(zipfile.ZipFile(buffer).namelist())
    ['archive/byteorder', 'archive/data.pkl', 'archive/data/0', 'archive/version']
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Mapping
from typing import BinaryIO

import numpy as np

from burn.foundations.dtype import DType, from_numpy_dtype
from burn.record.errors import RecordError
from burn.record.items import saved_array
from burn.record.pytorch_pickle import _STORAGE_DTYPES

__all__ = ["STORAGE_TYPES", "write_checkpoint"]

STORAGE_TYPES: dict[DType, str] = {dtype: name for name, dtype in _STORAGE_DTYPES.items()}
"""burn dtype -> the ``torch.<Name>`` storage class a checkpoint names for it."""

ALIGN = 64
# The zip "extra field" id PyTorch pads its local headers with (the bytes "FB"); any id unknown to
# readers would do, they skip extra fields they do not know.
_PAD_ID = 0x4246
_LOCAL_HEADER = 30  # fixed part of a zip local file header
_ZIP64_EXTRA = 20  # the zip64 extra field zipfile adds to the local header of a large member
# 1980-01-01: fixed timestamps, so the same state dict always gives the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)
# The record format version torch.save writes for plain tensors.
_VERSION = b"3\n"


# -- a minimal protocol-2 pickle writer ----------------------------------------------------------
def _global(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode("ascii")


def _str(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


def _int(value: int) -> bytes:
    if 0 <= value < 1 << 8:
        return b"K" + bytes([value])  # BININT1
    if 0 <= value < 1 << 16:
        return b"M" + struct.pack("<H", value)  # BININT2
    if -(1 << 31) <= value < 1 << 31:
        return b"J" + struct.pack("<i", value)  # BININT
    raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw  # LONG1


def _tuple(items: list[bytes]) -> bytes:
    if not items:
        return b")"  # EMPTY_TUPLE
    if len(items) <= 3:
        return b"".join(items) + (b"\x85", b"\x86", b"\x87")[len(items) - 1]  # TUPLE1..3
    return b"(" + b"".join(items) + b"t"  # MARK ... TUPLE


_ORDERED_DICT = _global("collections", "OrderedDict") + b")R"  # OrderedDict()
_REBUILD = _global("torch._utils", "_rebuild_tensor_v2")
_SETITEMS_BATCH = 1000  # what the standard pickler batches too: bounded unpickler stack


def _tensor(key: str, storage: str, shape: tuple[int, ...]) -> bytes:
    numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
    strides = []
    step = 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    pid = _tuple([_str("storage"), _global("torch", storage), _str(key), _str("cpu"), _int(numel)])
    args = [
        pid + b"Q",  # BINPERSID: the storage record
        _int(0),  # storage offset
        _tuple([_int(d) for d in shape]),
        _tuple([_int(s) for s in reversed(strides)]),
        b"\x89",  # NEWFALSE: requires_grad
        _ORDERED_DICT,  # backward hooks
    ]
    return _REBUILD + _tuple(args) + b"R"


def state_dict_pickle(entries: list[tuple[str, str, str, tuple[int, ...]]]) -> bytes:
    """The ``data.pkl`` of a state dict: `entries` are ``(name, storage key, storage class,
    shape)`` in order."""
    parts = [b"\x80\x02", _ORDERED_DICT]
    for start in range(0, len(entries), _SETITEMS_BATCH):
        parts.append(b"(")  # MARK
        for name, key, storage, shape in entries[start : start + _SETITEMS_BATCH]:
            parts.append(_str(name))
            parts.append(_tensor(key, storage, shape))
        parts.append(b"u")  # SETITEMS
    parts.append(b".")  # STOP
    return b"".join(parts)


# -- the zip archive -----------------------------------------------------------------------------
def _member(
    zf: zipfile.ZipFile, out: BinaryIO, name: str, data: bytes | memoryview, *, align: bool = False
) -> None:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    size = memoryview(data).nbytes
    info.file_size = size  # lets zipfile pick zip64 up front (its rule: size * 1.05 > the limit)
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    if align:
        # The next local header starts where the file is; pad its extra field so the data after
        # it starts on an ALIGN boundary (4 bytes of id and length, then the padding).
        header = _LOCAL_HEADER + len(name.encode("utf-8")) + (_ZIP64_EXTRA if zip64 else 0) + 4
        pad = -(out.tell() + header) % ALIGN
        info.extra = struct.pack("<HH", _PAD_ID, pad) + b"\0" * pad
    with zf.open(info, "w", force_zip64=zip64) as member:
        member.write(data)


def write_checkpoint(out: BinaryIO, state: Mapping[str, np.ndarray], *, archive: str = "archive") -> None:
    """Write `state` (name -> array, in order) to the seekable binary stream `out` as
    ``torch.save`` writes a state dict (see the module docstring).

    Each array is written in its own dtype: float64/32/16, bfloat16 (``ml_dtypes``), int64/32/16/8,
    uint8 or bool.

    Raises:
        RecordError: an array of a dtype PyTorch has no storage for, naming its key.
    """
    entries = []
    for index, (name, array) in enumerate(state.items()):
        dtype = _dtype(array, name)
        entries.append((name, str(index), STORAGE_TYPES[dtype], tuple(int(d) for d in array.shape)))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _member(zf, out, f"{archive}/data.pkl", state_dict_pickle(entries))
        _member(zf, out, f"{archive}/byteorder", b"little")
        for (name, key, _, _), array in zip(entries, state.values(), strict=True):
            data = saved_array(array, _dtype(array, name), name)  # little-endian, C order
            _member(zf, out, f"{archive}/data/{key}", data.reshape(-1).view(np.uint8).data, align=True)
        _member(zf, out, f"{archive}/version", _VERSION)


def _dtype(array: np.ndarray, name: str) -> DType:
    dtype: DType | None
    try:
        dtype = from_numpy_dtype(array.dtype)
    except ValueError:
        dtype = None
    if dtype is None or dtype not in STORAGE_TYPES:
        known = ", ".join(sorted(d.value for d in STORAGE_TYPES))
        raise RecordError(f"no PyTorch storage for dtype {array.dtype} (supported: {known})", path=name)
    return dtype
