"""The metadata every record file carries, and the checks made when reading it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from burn.record.errors import RecordError
from burn.record.settings import PrecisionSettings

FORMAT = "burn-record"
FORMAT_VERSION = 1
"""Bumped when a change would make older burn releases misread new files."""

ENCODINGS = ("named-mpk", "bin", "json", "safetensors")
_KEYS = ("format", "format_version", "encoding", "burn_version", "settings", "float_dtype", "int_dtype")

_version: str | None = None


def library_version() -> str:
    """``burn.__version__``, else the installed burn-core's version, else ``"unknown"``."""
    global _version
    if _version is None:
        try:
            from burn._version import __version__

            _version = str(__version__)
        except ImportError:  # pragma: no cover - _version.py ships with burn-core
            try:
                from importlib.metadata import version

                _version = version("burn-core")
            except Exception:
                _version = "unknown"
    return _version


@dataclass(frozen=True)
class Metadata:
    """What a record file says about itself.

    Attributes:
        format: always ``"burn-record"``.
        format_version: the layout version (`FORMAT_VERSION` when written by this burn).
        encoding: ``"named-mpk"``, ``"bin"``, ``"json"`` or ``"safetensors"`` (gzip is a wrapper).
        burn_version: the burn-core version that wrote it.
        settings: the precision settings' class name (``"HalfPrecisionSettings"``).
        float_dtype / int_dtype: the element types floats and ints were saved in (``"keep"``
            when each tensor kept its own).

    Example:
        >>> from burn.record.settings import HalfPrecisionSettings
        >>> meta = Metadata.for_writing("json", HalfPrecisionSettings())
        >>> meta.float_dtype, meta.format_version
        ('float16', 1)
    """

    format: str
    format_version: int
    encoding: str
    burn_version: str
    settings: str
    float_dtype: str
    int_dtype: str

    @classmethod
    def for_writing(cls, encoding: str, settings: PrecisionSettings) -> Metadata:
        return cls(
            FORMAT,
            FORMAT_VERSION,
            encoding,
            library_version(),
            settings.name,
            settings.float_dtype.value if settings.float_dtype else "keep",
            settings.int_dtype.value if settings.int_dtype else "keep",
        )

    def to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in _KEYS}

    @classmethod
    def from_dict(cls, raw: Any, expected_encoding: str) -> Metadata:
        """Validate the fields read from a file; refuse newer versions and other encodings."""
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise RecordError("not a burn record (no 'format': 'burn-record' metadata)")
        version = raw.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise RecordError(f"invalid record format version {version!r}")
        burn_version = raw.get("burn_version")
        if version > FORMAT_VERSION:
            raise RecordError(
                f"record format version {version} (written by burn {burn_version}) is newer than this "
                f"burn {library_version()} can read (up to version {FORMAT_VERSION}); upgrade burn-core"
            )
        values = {}
        for key in _KEYS[2:]:
            value = raw.get(key)
            if not isinstance(value, str):
                raise RecordError(f"record metadata field {key!r} is missing or not a string: {value!r}")
            values[key] = value
        meta = cls(FORMAT, version, **values)
        if meta.encoding != expected_encoding:
            from burn.record.detect import recorder_hint

            raise RecordError(
                f"this is a {meta.encoding!r} record, not {expected_encoding!r}: "
                f"load it with {recorder_hint(meta.encoding)}"
            )
        return meta

    def describe(self) -> str:
        """One line for humans (used by ``burn record inspect``)."""
        return (
            f"{self.format} v{self.format_version}, {self.encoding}, written by burn {self.burn_version}, "
            f"{self.settings} (floats {self.float_dtype}, ints {self.int_dtype})"
        )
