"""MessagePack: a streaming writer of plain trees and a zero-copy, bounds-checked reader.

The writer streams: container headers are written by hand, scalars by `msgpack.packb`, tensor bytes are
written straight from each converted array. The reader is ours rather than `msgpack.unpackb`
because it returns ``bin`` payloads as views into the file buffer (no second copy of the model),
checks every length against the bytes present before building anything, holds nesting to
``limits.max_depth`` and the values it builds to ``limits.max_object_nodes`` (a container's
declared length counts before its items are read), and refuses extension types: a hostile file can
only produce a `RecordError`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import msgpack

from burn.foundations.limits import DEFAULT_LIMITS, Limits
from burn.record._io import PositionWriter
from burn.record._tree import TensorRef
from burn.record.errors import RecordError

_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_F32 = struct.Struct(">f")
_F64 = struct.Struct(">d")


ALIGN = 64


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def map_header(n: int) -> bytes:
    return (
        bytes((0x80 | n,)) if n < 16 else (b"\xde" + _U16.pack(n) if n < 1 << 16 else b"\xdf" + _U32.pack(n))
    )


def array_header(n: int) -> bytes:
    return (
        bytes((0x90 | n,)) if n < 16 else (b"\xdc" + _U16.pack(n) if n < 1 << 16 else b"\xdd" + _U32.pack(n))
    )


def bin_header(n: int) -> bytes:
    if n < 1 << 8:
        return b"\xc4" + _U8.pack(n)
    if n < 1 << 16:
        return b"\xc5" + _U16.pack(n)
    if n < 1 << 32:
        return b"\xc6" + _U32.pack(n)
    raise RecordError(
        f"a MessagePack bin holds at most 4 GiB, this tensor has {n} bytes; use BinFileRecorder"
    )


def write_plain(obj: Any, out: PositionWriter, tensor: Callable[[TensorRef, PositionWriter], None]) -> None:
    """Write a plain tree; `tensor` writes the node of each `TensorRef` in place."""
    if isinstance(obj, dict):
        out.write(map_header(len(obj)))
        for key, value in obj.items():
            out.write(_pack(key))
            write_plain(value, out, tensor)
    elif isinstance(obj, list):
        out.write(array_header(len(obj)))
        for value in obj:
            write_plain(value, out, tensor)
    elif isinstance(obj, TensorRef):
        tensor(obj, out)
    else:
        out.write(_pack(obj))


def write_inline_tensor(ref: TensorRef, out: PositionWriter) -> None:
    """``{"dtype", "shape", "pad", "data"}`` with ``data``'s bytes starting on a 64-byte boundary
    of the file (``pad`` is filler), so loading can view them in place, aligned."""
    out.write(map_header(4))
    out.write(_pack("dtype"))
    out.write(_pack(ref.dtype.value))
    out.write(_pack("shape"))
    out.write(_pack(list(ref.shape)))
    out.write(_pack("pad"))
    header = bin_header(ref.nbytes)
    # after "pad": bin8 header (2) + padding + fixstr "data" (5) + the data's bin header
    padding = -(out.pos + 2 + 5 + len(header)) % ALIGN
    out.write(_pack(bytes(padding)))
    out.write(_pack("data"))
    array = ref.array()
    out.write(header)
    out.write_array(array)


# -- reader -------------------------------------------------------------------------------------
class _Reader:
    __slots__ = ("buf", "pos", "end", "limits", "max_depth", "nodes")

    def __init__(self, buf: memoryview, pos: int, end: int, limits: Limits) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end
        self.limits = limits
        self.max_depth = limits.max_depth
        self.nodes = 1  # values built so far, the root included

    def count(self, n: int, what: str) -> None:
        """Account for `n` more values before a container of them is built."""
        self.nodes += n
        if self.limits.exceeds("max_object_nodes", self.nodes):
            where = f"MessagePack {what} of {n} items at byte {self.pos}"
            raise RecordError(self.limits.refusal("max_object_nodes", self.nodes, where))

    def fail(self, message: str) -> RecordError:
        return RecordError(f"malformed MessagePack at byte {self.pos}: {message}")

    def take(self, n: int) -> int:
        """Reserve `n` bytes; returns where they start."""
        start = self.pos
        if n > self.end - start:
            raise self.fail(f"needs {n} more bytes, {self.end - start} left (truncated?)")
        self.pos = start + n
        return start

    def num(self, fmt: struct.Struct) -> Any:
        return fmt.unpack_from(self.buf, self.take(fmt.size))[0]

    def value(self, depth: int) -> Any:
        if depth > self.max_depth:
            where = f"MessagePack nested too deeply at byte {self.pos}"
            raise RecordError(self.limits.refusal("max_depth", depth, where))
        b = self.buf[self.take(1)]
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0xA0 <= b <= 0xBF:
            return self.text(b & 0x1F)
        if 0x90 <= b <= 0x9F:
            return self.array(b & 0x0F, depth)
        if 0x80 <= b <= 0x8F:
            return self.map(b & 0x0F, depth)
        if b == 0xC0:
            return None
        if b == 0xC2:
            return False
        if b == 0xC3:
            return True
        if b == 0xC4:
            return self.binary(self.num(_U8))
        if b == 0xC5:
            return self.binary(self.num(_U16))
        if b == 0xC6:
            return self.binary(self.num(_U32))
        if b == 0xCA:
            return self.num(_F32)
        if b == 0xCB:
            return self.num(_F64)
        if b == 0xCC:
            return self.num(_U8)
        if b == 0xCD:
            return self.num(_U16)
        if b == 0xCE:
            return self.num(_U32)
        if b == 0xCF:
            return self.num(_U64)
        if b == 0xD0:
            return self.num(_I8)
        if b == 0xD1:
            return self.num(_I16)
        if b == 0xD2:
            return self.num(_I32)
        if b == 0xD3:
            return self.num(_I64)
        if b == 0xD9:
            return self.text(self.num(_U8))
        if b == 0xDA:
            return self.text(self.num(_U16))
        if b == 0xDB:
            return self.text(self.num(_U32))
        if b == 0xDC:
            return self.array(self.num(_U16), depth)
        if b == 0xDD:
            return self.array(self.num(_U32), depth)
        if b == 0xDE:
            return self.map(self.num(_U16), depth)
        if b == 0xDF:
            return self.map(self.num(_U32), depth)
        self.pos -= 1
        raise self.fail(f"unsupported type byte 0x{b:02x} (extension types are refused)")

    def binary(self, n: int) -> memoryview:
        start = self.take(n)
        return self.buf[start : start + n]

    def text(self, n: int) -> str:
        start = self.take(n)
        try:
            return str(self.buf[start : start + n], "utf-8")
        except UnicodeDecodeError:
            self.pos = start
            raise self.fail("invalid UTF-8 in a string") from None

    def array(self, n: int, depth: int) -> list[Any]:
        if n > self.end - self.pos:  # every item takes at least one byte
            raise self.fail(f"array of {n} items in {self.end - self.pos} bytes")
        self.count(n, "array")
        return [self.value(depth + 1) for _ in range(n)]

    def map(self, n: int, depth: int) -> dict[Any, Any]:
        if 2 * n > self.end - self.pos:
            raise self.fail(f"map of {n} entries in {self.end - self.pos} bytes")
        self.count(2 * n, "map")
        out: dict[Any, Any] = {}
        for _ in range(n):
            key = self.value(depth + 1)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise self.fail(f"map key of type {type(key).__name__}")
            out[key] = self.value(depth + 1)
        return out


def unpack(
    buf: memoryview,
    start: int = 0,
    end: int | None = None,
    *,
    whole: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Any, int]:
    """Decode one value from ``buf[start:end]``; returns it and where it ended. With `whole`,
    trailing bytes are an error. ``bin`` values come back as views into `buf`."""
    buf = buf.cast("B") if buf.format != "B" or buf.ndim != 1 else buf
    reader = _Reader(buf, start, buf.nbytes if end is None else end, limits)
    value = reader.value(0)
    if whole and reader.pos != reader.end:
        raise reader.fail(f"{reader.end - reader.pos} trailing bytes after the record")
    return value, reader.pos
