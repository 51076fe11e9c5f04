"""Recorders: a format (encoding + optional gzip) and precision settings, saving to files or bytes."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Any, ClassVar

from burn.foundations.limits import Limits, resolve_limits
from burn.record._io import GZIP_LEVEL, PositionWriter, atomic_write, gunzip, read_file
from burn.record.detect import GZIP_MAGIC, detect_encoding, recorder_hint
from burn.record.encodings import BinEncoding, Encoding, JsonEncoding, MpkEncoding, SafetensorsEncoding
from burn.record.errors import RecordError
from burn.record.metadata import Metadata
from burn.record.settings import FullPrecisionSettings, PrecisionSettings

Source = str | os.PathLike[str] | bytes | bytearray | memoryview


class Recorder:
    """Writes records in one format at one precision, and reads them back.

    ``record(record, path)`` writes a file atomically (the recorder adds its extension unless the
    path already ends with it) and returns its path; ``record(record)`` returns the bytes.
    ``load(path_or_bytes)`` returns the record with `TensorData` tensors in the saved dtype;
    loading it into a module converts each param to the module's dtype and device.

    Args:
        settings: the precision floats and ints are saved in (default `FullPrecisionSettings`).
        max_decompressed_bytes: for gzip formats, the most bytes a file may expand to; when
            given, it replaces ``Limits.max_decompressed_bytes`` of every load (default: the
            limit, 64 GiB, and at most deflate's 1032x the compressed size); more raises
            RecordError while inflating.

    Example:
        >>> from burn.record import NamedMpkBytesRecorder, HalfPrecisionSettings
        >>> from burn.foundations.data import TensorData
        >>> recorder = NamedMpkBytesRecorder(HalfPrecisionSettings())
        >>> raw = recorder.record({"step": 3, "m": TensorData([0.5, 1.5], dtype="float32")})
        >>> state = recorder.load(raw)
        >>> state["step"], state["m"].dtype, state["m"].array.tolist()
        (3, burn.float16, [0.5, 1.5])
    """

    encoding: ClassVar[Encoding]
    extension: ClassVar[str] = ""
    compressed: ClassVar[bool] = False

    def __init__(
        self, settings: PrecisionSettings | None = None, *, max_decompressed_bytes: int | None = None
    ) -> None:
        if settings is not None and not isinstance(settings, PrecisionSettings):
            raise TypeError(f"settings must be a PrecisionSettings instance, got {settings!r}")
        self.settings = settings if settings is not None else FullPrecisionSettings()
        self.max_decompressed_bytes = max_decompressed_bytes

    # -- paths --------------------------------------------------------------------------------
    def file_path(self, path: str | os.PathLike[str]) -> Path:
        """`path` with this recorder's extension appended (unless it already ends with it)."""
        path = Path(path)
        if self.extension and not path.name.endswith(self.extension):
            path = path.with_name(path.name + self.extension)
        return path

    # -- writing ------------------------------------------------------------------------------
    def record(self, record: Any, path: str | os.PathLike[str] | None = None) -> Any:
        """Write `record` to ``path + extension`` (returns that `Path`) or, without a path,
        return the bytes. Tensors are converted to the settings' precision one at a time, as
        they are written. A failed or interrupted save leaves any previous file untouched."""
        if path is None:
            prepared = self.encoding.prepare(record, self.settings)
            buffer = io.BytesIO()
            if self.compressed:
                with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as gz:
                    self.encoding.write(prepared, PositionWriter(gz))  # type: ignore[arg-type]
            else:
                self.encoding.write(prepared, PositionWriter(buffer))
            return buffer.getvalue()
        target = self.file_path(path)
        try:
            prepared = self.encoding.prepare(record, self.settings)
            atomic_write(
                target, lambda f: self.encoding.write(prepared, PositionWriter(f)), compress=self.compressed
            )
        except RecordError as err:
            raise err.with_source(str(target)) from err.__cause__
        return target

    # -- reading ------------------------------------------------------------------------------
    def load(self, source: Source, *, template: Any = None, limits: Limits | None = None) -> Any:
        """Read a record from a file path or bytes.

        Args:
            source: a path (the extension is added when the path without it does not exist) or
                bytes / bytearray / memoryview holding the file's contents.
            template: for bin records, the module (or its record) the record was saved from:
                bin files store no param names.
            limits: the bounds on what the file may declare (`burn.Limits`; default: the
                defaults): its size, what it inflates to, nesting, values, tensors and elements.
                Checked before anything is allocated for them.

        Raises:
            RecordError: naming the file and the path inside the record, for anything malformed,
                truncated, of another format, of a newer format version, or over a limit (the
                message names the `Limits` field to raise). A path that is not a regular file
                (a FIFO, a device, a directory) is refused before it is opened.
        """
        return self.load_with_metadata(source, template=template, limits=limits)[1]

    def load_with_metadata(
        self, source: Source, *, template: Any = None, limits: Limits | None = None
    ) -> tuple[Metadata | None, Any]:
        """Like `load`, also returning the file's `Metadata` (None for foreign safetensors)."""
        limits = resolve_limits(limits, "Recorder.load(limits=)")
        if self.max_decompressed_bytes is not None:
            limits = limits.replace(max_decompressed_bytes=self.max_decompressed_bytes)
        buf, origin = self._read_source(source, limits)
        try:
            return self._decode(buf, template, limits)
        except RecordError as err:
            raise err.with_source(origin) from err.__cause__
        except (MemoryError, KeyboardInterrupt):
            raise
        except Exception as exc:  # defense in depth: no other exception may escape a load
            wrapped = RecordError(f"malformed record ({type(exc).__name__}: {exc})", source=origin)
            wrapped.internal = True
            raise wrapped from exc

    def _read_source(self, source: Source, limits: Limits) -> tuple[memoryview, str]:
        if isinstance(source, (bytes, bytearray, memoryview)):
            view = memoryview(source)
            if view.format != "B" or view.ndim != 1:
                view = view.cast("B")
            if limits.exceeds("max_file_bytes", view.nbytes):
                raise RecordError(limits.refusal("max_file_bytes", view.nbytes, "<bytes>"))
            return view, "<bytes>"
        path = Path(source)
        target = self.file_path(path)
        if not target.exists() and path.exists():
            target = path
        return read_file(target, limits), str(target)

    def _decode(self, buf: memoryview, template: Any, limits: Limits) -> tuple[Metadata | None, Any]:
        gzipped = bytes(buf[:2]) == GZIP_MAGIC
        if self.compressed:
            if not gzipped:
                raise RecordError(self._wrong_format(buf, "this is not gzip data"))
            buf = gunzip(buf, limits)
        elif gzipped:
            raise RecordError(self._wrong_format(buf, "this is gzip-compressed data"))
        found = detect_encoding(buf, buf.nbytes)
        if found not in ("unknown", self.encoding.name):
            raise RecordError(self._wrong_format(buf, f"this is not {self.encoding.name} data"))
        return self.encoding.read(buf, template, limits)

    def _wrong_format(self, buf: memoryview, what: str) -> str:
        found = detect_encoding(buf, buf.nbytes)
        hint = ""
        if found == "gzip":
            gz = [recorder_hint(encoding, True) for encoding in ("named-mpk", "bin", "json")]
            hint = f": use {gz[0]}, {gz[1]} or {gz[2]}"
        elif found != "unknown":
            hint = f": it looks like a {found!r} record; use {recorder_hint(found, self.compressed)}"
        return f"{what}, {type(self).__name__} expects {self.describe_format()}{hint}"

    def describe_format(self) -> str:
        return f"{'gzip-compressed ' if self.compressed else ''}{self.encoding.name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.settings == self.settings  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.settings))


class NamedMpkFileRecorder(Recorder):
    """MessagePack with names (``.mpk``), the default: self-describing, loads across module
    structures and by name, tensors viewed in place when loading."""

    encoding = MpkEncoding()
    extension = ".mpk"


class NamedMpkGzFileRecorder(Recorder):
    """Gzip-compressed named MessagePack (``.mpk.gz``)."""

    encoding = MpkEncoding()
    extension = ".mpk.gz"
    compressed = True


class BinFileRecorder(Recorder):
    """Compact binary (``.bin``): no param names, so loading needs the module as template
    (`Module.load_file` passes it)."""

    encoding = BinEncoding()
    extension = ".bin"


class BinGzFileRecorder(Recorder):
    """Gzip-compressed compact binary (``.bin.gz``)."""

    encoding = BinEncoding()
    extension = ".bin.gz"
    compressed = True


class JsonGzFileRecorder(Recorder):
    """Gzip-compressed JSON (``.json.gz``); tensor bytes are base64."""

    encoding = JsonEncoding(indent=None)
    extension = ".json.gz"
    compressed = True


class PrettyJsonFileRecorder(Recorder):
    """Indented JSON (``.json``), for reading and diffing by eye; tensor bytes are base64."""

    encoding = JsonEncoding(indent=2)
    extension = ".json"


class NamedMpkBytesRecorder(Recorder):
    """Named MessagePack in memory: ``record(record)`` gives bytes, ``load(bytes)`` reads them."""

    encoding = MpkEncoding()


class BinBytesRecorder(Recorder):
    """Compact binary in memory (no names: loading needs `template`)."""

    encoding = BinEncoding()


class SafetensorsFileRecorder(Recorder):
    """safetensors (``.safetensors``): dotted param paths as keys, burn metadata, param ids and
    the record's structure in the header's ``__metadata__``. Reads foreign safetensors files too
    (their params get no ids: loading keeps the module's); see `load_pytorch_safetensors` for
    PyTorch state dicts."""

    encoding = SafetensorsEncoding()
    extension = ".safetensors"


ALL_RECORDERS: tuple[type[Recorder], ...] = (
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    JsonGzFileRecorder,
    PrettyJsonFileRecorder,
    NamedMpkBytesRecorder,
    BinBytesRecorder,
    SafetensorsFileRecorder,
)


def default_recorder() -> Recorder:
    """`NamedMpkFileRecorder` at full precision."""
    return NamedMpkFileRecorder(FullPrecisionSettings())
