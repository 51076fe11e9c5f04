"""File plumbing shared by the recorders and checkpoint readers: atomic saves, bounded reads of
regular files only, and gunzip capped while it inflates (`burn.Limits`)."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import secrets
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from burn.foundations.limits import Limits, resolve_limits
from burn.record.errors import RecordError

# Large arrays are handed to writers in slices of this size, so compressing one tensor never
# allocates a second full-size buffer (zlib's output buffers grow to ~4x what one call gets).
CHUNK = 1 << 18
READ_CHUNK = 1 << 22
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6
# Deflate's largest expansion ratio (a stream of one repeated byte): no valid deflate data, gzip
# member or zip record inflates further, so a size declared above it is corrupt or hostile.
DEFLATE_MAX_RATIO = 1032
# Inflated per zlib call: what one step may allocate before the cap is checked again.
INFLATE_STEP = 1 << 24
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


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


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str], limits: Limits | None = None) -> tuple[io.FileIO, int]:
    """`path` opened for reading (unbuffered) and its size, once it is known to be a regular file
    of at most ``limits.max_file_bytes``.

    A FIFO, device, socket or directory is refused before it is opened (opening a FIFO blocks
    until a writer comes); the file is then opened non-blocking and checked again with fstat, so a
    path swapped for a FIFO in between is refused too.

    Raises:
        RecordError: naming the path: no such file, not a regular file, too large, unreadable.
    """
    limits = resolve_limits(limits)
    source = os.fspath(path)
    try:
        kind = _not_regular(os.stat(source).st_mode)
        if kind is not None:
            raise RecordError(f"{kind}, not a regular file: refused", source=str(source))
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise RecordError("no such file", source=str(source)) from None
    except OSError as exc:
        raise RecordError(f"cannot read: {exc}", source=str(source)) from exc
    try:
        info = os.fstat(fd)
        kind = _not_regular(info.st_mode)
        if kind is not None:
            raise RecordError(f"{kind}, not a regular file: refused", source=str(source))
        if limits.exceeds("max_file_bytes", info.st_size):
            raise RecordError(limits.refusal("max_file_bytes", info.st_size, str(source)))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True), info.st_size
    except BaseException:
        os.close(fd)
        raise


def read_file(path: Path, limits: Limits | None = None) -> memoryview:
    """The whole regular file (`open_regular`) in one writable buffer (tensors are zero-copy
    views into it).

    The buffer is sized from the file itself, so no size read from the file is trusted.
    NumPy's allocator skips the zero-filling `bytearray(n)` would do.
    """
    f, size = open_regular(path, limits)
    try:
        with f:
            buffer = np.empty(size, dtype=np.uint8)
            view = buffer.data
            done = 0
            while done < size:
                n = f.readinto(view[done:])
                if not n:
                    break
                done += n
    except OSError as exc:
        raise RecordError(f"cannot read: {exc}", source=str(path)) from exc
    if done != size:
        raise RecordError(f"file shrank while reading ({done} of {size} bytes)", source=str(path))
    return view


def gunzip_limit(compressed_size: int, limits: Limits | None = None) -> int:
    """The most bytes a `compressed_size`-byte gzip file may inflate to: the limit
    ``max_decompressed_bytes``, and no more than deflate can produce from that many bytes."""
    cap = resolve_limits(limits).max_decompressed_bytes
    return min(cap, DEFLATE_MAX_RATIO * compressed_size + (1 << 16))


def gunzip(data: memoryview, limits: Limits | None = None) -> memoryview:
    """Decompress gzip `data` (several members allowed), refusing to produce more than
    `gunzip_limit` bytes. The cap is checked while inflating, in steps of at most `INFLATE_STEP`
    bytes, so the output never outgrows it by more than one step (the gzip trailer's size field
    is not trusted: it is only the size modulo 4 GiB, and unchecked until the end). Raises
    RecordError on corrupt, truncated or too large input."""
    limits = resolve_limits(limits)
    size = data.nbytes
    cap = gunzip_limit(size, limits)
    out = bytearray()
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
                out += inflater.decompress(chunk_in, min(INFLATE_STEP, cap + 1 - len(out)))
            except zlib.error as exc:
                raise RecordError(f"corrupt gzip data: {exc}") from None
            if len(out) > cap:
                raise RecordError(_gunzip_refusal(limits, cap, len(out), size))
        start = pos - len(inflater.unused_data)
        if start >= size:
            break
        if bytes(data[start : start + 2]) != GZIP_MAGIC:
            if not np.frombuffer(data[start:], dtype=np.uint8).any():  # zero padding, as gzip allows
                break
            raise RecordError("trailing garbage after gzip data")
    return memoryview(out)


def _gunzip_refusal(limits: Limits, cap: int, value: int, size: int) -> str:
    if cap < limits.max_decompressed_bytes:
        return (
            f"gzip data of {size} bytes inflates to more than {cap} bytes, more than deflate produces "
            f"from that many ({DEFLATE_MAX_RATIO}x): corrupt or a decompression bomb"
        )
    return limits.refusal("max_decompressed_bytes", value, "gzip data (a decompression bomb?)")
