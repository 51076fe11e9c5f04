"""Recognize a record's encoding from its first bytes (for error hints and ``burn record inspect``)."""

from __future__ import annotations

import struct

GZIP_MAGIC = b"\x1f\x8b"
BIN_MAGIC = b"BURN-BIN"

_RECORDERS = {
    ("named-mpk", False): "NamedMpkFileRecorder (or NamedMpkBytesRecorder)",
    ("named-mpk", True): "NamedMpkGzFileRecorder",
    ("bin", False): "BinFileRecorder (or BinBytesRecorder)",
    ("bin", True): "BinGzFileRecorder",
    ("json", False): "PrettyJsonFileRecorder",
    ("json", True): "JsonGzFileRecorder",
    ("safetensors", False): "SafetensorsFileRecorder",
}


def detect_encoding(head: bytes | memoryview, size: int | None = None) -> str:
    """``"gzip"``, ``"bin"``, ``"safetensors"``, ``"json"``, ``"named-mpk"`` or ``"unknown"``
    from the first bytes of a file (`size`: the whole length, when known).

    Example:
        >>> detect_encoding(b'{"format": "burn-record"}')
        'json'
    """
    head = bytes(head[:64])
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(BIN_MAGIC):
        return "bin"
    if len(head) >= 9:
        (n,) = struct.unpack_from("<Q", head)
        if head[8:9] == b"{" and 2 <= n <= 100_000_000 and (size is None or n <= size - 8):
            return "safetensors"
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return "json"
    if head and (0x80 <= head[0] <= 0x8F or head[0] in (0xDE, 0xDF)):
        return "named-mpk"
    return "unknown"


def recorder_hint(encoding: str, compressed: bool = False) -> str:
    """The recorder that reads an encoding."""
    return _RECORDERS.get((encoding, compressed), f"a recorder for {encoding!r}")
