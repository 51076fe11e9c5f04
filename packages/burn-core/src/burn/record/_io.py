"""File plumbing shared by the recorders: atomic saves, bounded reads, capped gunzip."""

from __future__ import annotations

import contextlib
import gzip
import os
import secrets
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from burn.record.errors import RecordError

# Large arrays are handed to writers in slices of this size, so compressing one tensor never
# allocates a second full-size buffer (zlib's output buffers grow to ~4x what one call gets).
CHUNK = 1 << 18
READ_CHUNK = 1 << 22
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6
# Default cap on gunzipped size: max(floor, ratio x compressed size). Model weights compress
# ~1.1x, so legitimate files stay far below it; a bomb (up to ~1000x) is stopped early.
GUNZIP_FLOOR = 1 << 30
GUNZIP_RATIO = 32


class PositionWriter:
    """Wraps a binary stream, counting bytes written (formats align tensor data on it)."""

    __slots__ = ("_out", "pos")

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.pos = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        size = len(data) if not isinstance(data, memoryview) else data.nbytes
        if size > CHUNK:
            view = memoryview(data).cast("B")
            for start in range(0, size, CHUNK):
                self._out.write(view[start : start + CHUNK])
        else:
            self._out.write(data)
        self.pos += size

    def write_array(self, array: np.ndarray) -> None:
        """Write a C-contiguous array's bytes without copying them."""
        if array.size:
            self.write(array.reshape(-1).view(np.uint8).data)


def atomic_write(path: Path, write: Callable[[BinaryIO], None], *, compress: bool = False) -> None:
    """Write `path` through a temp file in the same directory, fsync it, then `os.replace`:
    readers see the old file or the new one, never a partial one, even after a crash or kill.

    The temp file (``.NAME.RANDOM.tmp``) is removed when `write` raises; a killed process may
    leave it behind, harmlessly.
    """
    directory = path.parent if str(path.parent) else Path(".")
    tmp = directory / f".{path.name}.{secrets.token_hex(6)}.tmp"
    # os.open with 0o666 lets the umask decide the final permissions, like a plain open().
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            if compress:
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as gz:
                    write(gz)  # type: ignore[arg-type]
            else:
                write(raw)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; directories cannot be opened on Windows.
    if os.name != "posix":  # pragma: no cover
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_file(path: Path) -> memoryview:
    """The whole file in one writable buffer (tensors are zero-copy views into it).

    The buffer is sized from the file itself, so no size read from the file is trusted.
    NumPy's allocator skips the zero-filling `bytearray(n)` would do.
    """
    try:
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            buffer = np.empty(size, dtype=np.uint8)
            view = buffer.data
            done = 0
            while done < size:
                n = f.readinto(view[done:])  # type: ignore[attr-defined]
                if not n:
                    break
                done += n
    except FileNotFoundError:
        raise RecordError("no such file", source=str(path)) from None
    except OSError as exc:
        raise RecordError(f"cannot read: {exc}", source=str(path)) from exc
    if done != size:
        raise RecordError(f"file shrank while reading ({done} of {size} bytes)", source=str(path))
    return view


def gunzip_limit(compressed_size: int) -> int:
    """The default cap on the gunzipped size of a `compressed_size`-byte file."""
    return max(GUNZIP_FLOOR, GUNZIP_RATIO * compressed_size)


def gunzip(data: memoryview, limit: int | None) -> memoryview:
    """Decompress gzip `data` (several members allowed), refusing to produce more than `limit`
    bytes (default: `gunzip_limit`). Raises RecordError on corrupt or truncated input."""
    cap = gunzip_limit(data.nbytes) if limit is None else limit
    out = bytearray()
    size = data.nbytes
    start = 0
    while True:  # one gzip member per turn
        inflater = zlib.decompressobj(wbits=31)
        pos = start
        while not inflater.eof:
            if inflater.unconsumed_tail:
                chunk_in: bytes | memoryview = inflater.unconsumed_tail
            elif pos < size:
                chunk_in = data[pos : pos + READ_CHUNK]
                pos += chunk_in.nbytes
            else:
                raise RecordError("truncated gzip data")
            try:
                # max_length bounds what one call may allocate (0 would mean unbounded).
                out += inflater.decompress(chunk_in, cap + 1 - len(out))
            except zlib.error as exc:
                raise RecordError(f"corrupt gzip data: {exc}") from None
            if len(out) > cap:
                raise RecordError(
                    f"gzip data expands beyond {cap} bytes (decompression bomb?); "
                    "pass max_decompressed_bytes= to the recorder to allow larger records"
                )
        start = pos - len(inflater.unused_data)
        if start >= size:
            break
        if bytes(data[start : start + 2]) != GZIP_MAGIC:
            if not np.frombuffer(data[start:], dtype=np.uint8).any():  # zero padding, as gzip allows
                break
            raise RecordError("trailing garbage after gzip data")
    return memoryview(out)
