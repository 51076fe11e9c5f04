"""``burn record inspect FILE``: a record file's metadata and its param tree, without a model.

Works on every format (gzip detected by its magic bytes), including foreign safetensors files
and bin records, whose params are listed by position (bin stores no names).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burn.foundations.limits import Limits, resolve_limits
from burn.record._io import gunzip, read_file
from burn.record.detect import detect_encoding
from burn.record.encodings import (
    POSITIONAL,
    BinEncoding,
    Encoding,
    JsonEncoding,
    MpkEncoding,
    SafetensorsEncoding,
)
from burn.record.errors import RecordError
from burn.record.items import ModuleRecord, ParamRecord, is_tensor, tensor_meta

_ENCODINGS: dict[str, Encoding] = {
    "named-mpk": MpkEncoding(),
    "bin": BinEncoding(),
    "json": JsonEncoding(indent=None),
    "safetensors": SafetensorsEncoding(),
}


def inspect_file(
    path: str | os.PathLike[str],
    *,
    max_decompressed_bytes: int | None = None,
    limits: Limits | None = None,
) -> str:
    """A human-readable description of the record file at `path`.

    Args:
        path: the record file (a regular file: FIFOs, devices and directories are refused).
        max_decompressed_bytes: replaces ``limits.max_decompressed_bytes`` for gzip files.
        limits: the bounds on what the file may declare (`burn.Limits`; default: the defaults).

    Example:
        >>> print(inspect_file("model.mpk"))  # doctest: +SKIP
        model.mpk (2.1 KiB): burn-record v1, named-mpk, written by burn 0.1.0, FullPrecisionSettings ...
        module record: 2 params, 12 values, 48 B of tensor data
          linear.weight  [2, 4]  float32  8  32 B  id 1f0c...
    """
    source = str(path)
    limits = resolve_limits(limits, "inspect_file(limits=)")
    if max_decompressed_bytes is not None:
        limits = limits.replace(max_decompressed_bytes=max_decompressed_bytes)
    buf = read_file(Path(path), limits)
    size = buf.nbytes
    try:
        encoding = detect_encoding(buf, size)
        compressed = encoding == "gzip"
        if compressed:
            buf = gunzip(buf, limits)
            encoding = detect_encoding(buf, buf.nbytes)
        if encoding not in _ENCODINGS:
            raise RecordError(f"not a record file{_looks_like(buf)}: {KNOWN_FORMATS}")
        try:
            meta, record = _ENCODINGS[encoding].read(buf, POSITIONAL, limits)
        except RecordError as err:
            # The encoding was guessed from a byte or two: a PNG's first byte is also a MessagePack
            # map's. A file that is plainly something else is "not a record", not "a broken one".
            foreign = _looks_like(buf)
            if foreign:
                raise RecordError(f"not a record file{foreign}: {KNOWN_FORMATS}") from err
            raise
    except RecordError as err:
        raise err.with_source(source) from err.__cause__
    head = f"{source} ({_size(size)}{', gzip' if compressed else ''}): "
    head += meta.describe() if meta is not None else f"{encoding} without burn metadata (a foreign file)"
    return "\n".join([head, *_describe(record)])


KNOWN_FORMATS = "burn reads named-mpk, bin, json and safetensors records, each optionally gzipped"

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (
        b"PK\x03\x04",
        "a zip archive; a PyTorch .pt/.pth file is one: save its state_dict as safetensors to load it",
    ),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"%PDF", "a PDF document"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
)


def _looks_like(buf: memoryview | bytes) -> str:
    """``" (it looks like a PNG image)"`` for a file recognized as something other than a record,
    else ``""``."""
    head = bytes(buf[:64])
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            return f" (it looks like {what})"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5 and bytes(buf[-1:]) == b".":
        return " (it looks like a Python pickle, which burn never loads)"
    sample = bytes(buf[:4096])
    if sample and not sample.lstrip().startswith(b"{"):
        try:
            text = sample.decode("utf-8")
        except UnicodeDecodeError:
            return ""
        if all(c.isprintable() or c in "\r\n\t" for c in text):
            return " (it looks like a text file)"
    return ""


def _describe(record: Any) -> list[str]:
    if isinstance(record, ModuleRecord):
        return _module_lines(record, "")
    lines = [f"record: {_summary(record)}"]
    _tree_lines(record, 1, lines)
    return lines


def _module_lines(record: ModuleRecord, pad: str) -> list[str]:
    total_bytes = sum(_nbytes(p.tensor) for p in record.values())
    lines = [
        f"{pad}module record: {len(record)} params, {record.num_params():,} values, "
        f"{_size(total_bytes)} of tensor data"
    ]
    rows = []
    for path, param in record.items():
        dtype, shape = tensor_meta(param.tensor)
        count = 1
        for d in shape:
            count *= d
        rows.append(
            (
                path,
                str(list(shape)),
                dtype.value,
                f"{count:,}",
                _size(_nbytes(param.tensor)),
                f"id {param.id or '-'}",
            )
        )
    if rows:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            cells = [
                cell.ljust(w) if i in (0, 1, 2) else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append(f"{pad}  " + "  ".join(cells).rstrip())
    return lines


def _tree_lines(value: Any, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    items: list[tuple[Any, Any]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    else:
        return
    for key, item in items:
        if isinstance(item, ModuleRecord):
            lines.append(f"{pad}{key}:")
            lines.extend(_module_lines(item, pad + "  "))
        else:
            lines.append(f"{pad}{key}: {_summary(item)}")
            _tree_lines(item, depth + 1, lines)


def _summary(value: Any) -> str:
    if isinstance(value, ParamRecord):
        value = value.tensor
    if is_tensor(value):
        dtype, shape = tensor_meta(value)
        return f"tensor {list(shape)} {dtype.value} ({_size(_nbytes(value))})"
    if isinstance(value, dict):
        return f"dict[{len(value)}]"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{len(value)}]"
    if isinstance(value, bytes):
        return f"bytes[{len(value)}]"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _nbytes(tensor: Any) -> int:
    dtype, shape = tensor_meta(tensor)
    count = 1
    for d in shape:
        count *= d
    return count * dtype.itemsize


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def inspect_files(files: Sequence[str], *, max_decompressed_bytes: int | None = None) -> int:
    """Print `inspect_file` of each file (errors go to stderr); returns 1 if any file could not be
    read, else 0.

    Example:
        >>> inspect_files(["model.mpk"])  # doctest: +SKIP
        0
    """
    status = 0
    for i, name in enumerate(files):
        try:
            text = inspect_file(name, max_decompressed_bytes=max_decompressed_bytes)
        except RecordError as err:
            print(f"error: {err}", file=sys.stderr)
            status = 1
            continue
        print(("\n" if i else "") + text)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``burn record inspect FILE...`` (``python -m burn.record.inspect FILE...``);
    returns the exit status (1 if any file could not be read)."""
    from burn.cli import main as burn_main

    return burn_main(["record", "inspect", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
