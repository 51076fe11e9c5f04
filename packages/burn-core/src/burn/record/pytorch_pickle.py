"""Read the files ``torch.save`` writes (``.pt`` / ``.pth``) without torch and without running
any code from them.

Two layouts exist. The zip archive (the default since PyTorch 1.6) holds ``<name>/data.pkl``, a
pickle of the saved object in which each tensor is a call to ``torch._utils._rebuild_tensor_v2``
on a *persistent id* naming a storage record ``<name>/data/<key>`` (raw little-endian bytes,
stored uncompressed), plus ``<name>/byteorder`` and ``<name>/version``. The legacy layout
(``_use_new_zipfile_serialization=False``) is a run of pickles (a magic number, a protocol
version, system info, the object, the list of storage keys) followed by each storage as an
8-byte element count and its bytes.

Before it is unpickled, each pickle is walked opcode by opcode (`burn.record._pickle_scan`) and
held to `burn.Limits`: its bytes, opcodes, memo entries, and the size and depth of the objects it
builds with shared references counted as copies (a "billion laughs" DAG is refused as the tree it
expands to). What it then declares is checked before anything is read: each tensor's rank and
element count, the span of its storage it needs against the storage's size, the storage's size
against its record in the file, and the file's tensors and elements in all.

A pickle is a program: unpickling calls whatever globals it names. `TorchUnpickler.find_class`
admits only the names a tensor checkpoint needs (tensor and parameter rebuilds, storage types,
dtypes, ``collections.OrderedDict``, ``torch.Size``, sets) and maps each to a function of ours
that only records metadata; any other name raises `RecordError` naming it, before anything is
called. Tensors come back as `TorchTensor` (dtype, shape, where the bytes are) and their bytes
are read from the file only when `TorchTensor.read` is called, one tensor at a time.

Example:
    >>> with open_checkpoint("model.pt") as ckpt:  # doctest: +SKIP
    ...     state = ckpt.state_dict()
    ...     state["fc.weight"].shape, state["fc.weight"].read().array.dtype
    ((10, 64), dtype('float32'))
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import reprlib
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import numpy as np

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.limits import DEFAULT_LIMITS, Limits, resolve_limits
from burn.record._io import DEFLATE_MAX_RATIO, open_regular
from burn.record._pickle_scan import ScanReader, scan_pickle
from burn.record.errors import RecordError

__all__ = [
    "Checkpoint",
    "StateEntry",
    "TorchQuantizedTensor",
    "TorchTensor",
    "TorchUnpickler",
    "open_checkpoint",
]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
READ_CHUNK = 1 << 22
# torch.save stores data.pkl uncompressed; a re-zipped one (tensor metadata: repeated opcodes
# and short strings) deflates well under 32x. A compressed data.pkl declaring more than this
# ratio (or 1 MiB, for small ones) is refused from its declared size, before it is inflated: a
# zip bomb of opcodes would otherwise be inflated and scanned up to the opcode limit.
PICKLE_RATIO = 32
PICKLE_RATIO_FLOOR = 1 << 20
# Members of a checkpoint besides its storages (data.pkl, byteorder, version, .data/...).
_EXTRA_MEMBERS = 64
_INT_MAX = (1 << 63) - 1
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50

_STORAGE_DTYPES = {
    "DoubleStorage": DType.F64,
    "FloatStorage": DType.F32,
    "HalfStorage": DType.F16,
    "BFloat16Storage": DType.BF16,
    "LongStorage": DType.I64,
    "IntStorage": DType.I32,
    "ShortStorage": DType.I16,
    "CharStorage": DType.I8,
    "ByteStorage": DType.U8,
    "BoolStorage": DType.BOOL,
    # The integer storages of quantized tensors (``torch.qint8``, ``quint8``, ``qint32``).
    "QInt8Storage": DType.I8,
    "QUInt8Storage": DType.U8,
    "QInt32Storage": DType.I32,
}
# The quantization schemes `_rebuild_qtensor` reads (PyTorch's ``torch.per_*`` globals):
# affine per tensor (symmetric ones are saved as affine with zero point 0) and per channel.
_QSCHEMES = ("per_tensor_affine", "per_channel_affine")
_TORCH_DTYPES = {
    "float64": DType.F64,
    "double": DType.F64,
    "float32": DType.F32,
    "float": DType.F32,
    "float16": DType.F16,
    "half": DType.F16,
    "bfloat16": DType.BF16,
    "int64": DType.I64,
    "long": DType.I64,
    "int32": DType.I32,
    "int": DType.I32,
    "int16": DType.I16,
    "short": DType.I16,
    "int8": DType.I8,
    "uint8": DType.U8,
    # A quantized Linear's ``_packed_params.dtype`` entry names its weight's quantized dtype.
    "qint8": DType.I8,
    "quint8": DType.U8,
    "qint32": DType.I32,
    "bool": DType.BOOL,
}


# -- what the pickle builds -----------------------------------------------------------------------
class _StorageType(NamedTuple):
    """A storage class named by the pickle (``torch.FloatStorage``); dtype None: untyped bytes."""

    name: str
    dtype: DType | None


class _TorchDType(NamedTuple):
    """A ``torch.<dtype>`` named by the pickle (``_rebuild_tensor_v3`` passes one)."""

    name: str
    dtype: DType


class _Storage(NamedTuple):
    """A storage record: its key, dtype (None: untyped bytes), size in bytes, and the byte offset
    of this view inside the record (legacy storage views)."""

    key: str
    dtype: DType | None
    nbytes: int
    offset: int


class _QScheme(NamedTuple):
    """A ``torch.per_*`` quantization scheme named by the pickle."""

    name: str


class TorchTensor(NamedTuple):
    """A tensor of a checkpoint: its metadata, and the file it is read from on demand.

    Immutable (a tuple), so that a hostile pickle cannot rewrite it after it was checked.

    Attributes:
        dtype: burn's element type.
        shape: the tensor's shape.
        stride: PyTorch's strides, in elements.
        offset: the first element's index in the storage.
        storage: the storage record holding the bytes.
        source: the checkpoint the bytes are read from.
    """

    dtype: DType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    storage: _Storage
    source: Checkpoint

    @property
    def numel(self) -> int:
        count = 1
        for d in self.shape:
            count *= d
        return count

    def read(self) -> TensorData:
        """The values, read from the file now (a fresh, C-contiguous array owned by the caller)."""
        return self.source.read_tensor(self)

    def __repr__(self) -> str:
        return (
            f"TorchTensor(shape={list(self.shape)}, dtype={self.dtype.value}, storage={self.storage.key!r})"
        )


class TorchQuantizedTensor(NamedTuple):
    """A quantized tensor of a checkpoint (``torch.quantize_per_tensor`` / ``_per_channel``,
    `torch.ao.quantization`'s weights): its stored integers and how they map to floats,
    ``(values - zero_point) * scale``.

    Attributes:
        values: the integers (int8 for ``qint8``, uint8 for ``quint8``, int32 for ``qint32``).
        qscheme: ``"per_tensor_affine"`` or ``"per_channel_affine"``.
        scales: the scale (per tensor: a float) or a float64 `TorchTensor` ``[channels]``.
        zero_points: the zero point (per tensor: an int) or an int64 `TorchTensor` ``[channels]``.
        axis: the channel dim (per channel), else 0.
    """

    values: TorchTensor
    qscheme: str
    scales: float | TorchTensor
    zero_points: int | TorchTensor
    axis: int

    @property
    def shape(self) -> tuple[int, ...]:
        return self.values.shape

    def __repr__(self) -> str:
        return (
            f"TorchQuantizedTensor(shape={list(self.shape)}, dtype={self.values.dtype.value}, "
            f"qscheme={self.qscheme})"
        )


def _int(value: Any, what: str) -> int:
    # Below 2^63: every size, stride and offset must fit NumPy's (and PyTorch's) int64.
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _INT_MAX:
        raise RecordError(f"{what} must be a non-negative int below 2^63, got {_short(value)}")
    return value


def _ints(value: Any, what: str, limits: Limits) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)):
        raise RecordError(f"{what} must be a tuple of ints, got {type(value).__name__}")
    if limits.exceeds("max_rank", len(value)):
        raise RecordError(limits.refusal("max_rank", len(value), what))
    return tuple(_int(v, what) for v in value)


# A value of a state dict (`Checkpoint.state_dict`).
StateEntry = (
    TorchTensor | TorchQuantizedTensor | tuple[TorchQuantizedTensor, TorchTensor | None] | _TorchDType
)


# -- the unpickler --------------------------------------------------------------------------------
class TorchUnpickler(pickle.Unpickler):
    """A `pickle.Unpickler` that admits only the globals of a tensor checkpoint.

    `find_class` returns our own functions for PyTorch's tensor rebuilds (they check the
    metadata and return a `TorchTensor`; nothing of torch is imported), markers for storage
    types and dtypes, ``collections.OrderedDict``, and ``tuple`` for ``torch.Size``. Every other
    global raises `RecordError` naming it: it is refused when the pickle names it, before the
    pickle can call it. Persistent ids must be PyTorch's storage ids, resolved by `storage`.

    Args:
        file: the pickle's bytes.
        storage: ``(key, storage type, element count, legacy view) -> _Storage``, or None for a
            pickle that may hold no tensors (the legacy format's header pickles).
        checkpoint: the checkpoint the tensors will be read from.
    """

    def __init__(
        self,
        file: BinaryIO,
        storage: Callable[[str, _StorageType, int, Any], _Storage] | None,
        checkpoint: Checkpoint | None,
    ) -> None:
        super().__init__(file)
        self._storage = storage
        self._checkpoint = checkpoint
        self._limits = checkpoint.limits if checkpoint is not None else DEFAULT_LIMITS
        self._allowed: dict[tuple[str, str], Any] = {
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("torch._utils", "_rebuild_tensor"): self._rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v2"): self._rebuild_tensor_v2,
            ("torch._utils", "_rebuild_tensor_v3"): self._rebuild_tensor_v3,
            ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
            ("torch._utils", "_rebuild_qtensor"): self._rebuild_qtensor,
            ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
            ("torch", "Size"): tuple,
            ("torch", "UntypedStorage"): _StorageType("UntypedStorage", None),
            ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", None),
            ("builtins", "set"): set,
            ("builtins", "frozenset"): frozenset,
            ("__builtin__", "set"): set,
            ("__builtin__", "frozenset"): frozenset,
            ("_codecs", "encode"): _latin1_bytes,
        }

    def find_class(self, module: str, name: str) -> Any:
        found = self._allowed.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        if module == "torch" and name in _QSCHEMES:
            return _QScheme(name)
        if module == "torch" and name in _TORCH_DTYPES:
            return _TorchDType(name, _TORCH_DTYPES[name])
        if module == "torch" and name.endswith("Storage"):
            raise RecordError(f"tensors of torch.{name} are not supported (dtypes: {_dtype_names()})")
        hint = ""
        if not module.startswith("torch"):
            hint = (
                " (a checkpoint of a whole model or of Python objects pickles their classes: "
                "save model.state_dict() with torch.save instead)"
            )
        raise RecordError(
            f"the pickle names the global {module}.{name}, which a tensor checkpoint does not need: "
            f"refused, nothing was run{hint}"
        )

    def persistent_load(self, pid: Any) -> Any:
        if self._storage is None:
            raise RecordError(f"unexpected persistent id {_short(pid)} in a header pickle")
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"):
            raise RecordError(f"persistent id {_short(pid)} is not a PyTorch storage id")
        storage_type, key, _location, numel = pid[1:5]
        view = pid[5] if len(pid) == 6 else None
        if not isinstance(storage_type, _StorageType):
            raise RecordError(f"storage id {_short(pid)} names no storage type")
        if not isinstance(key, str):
            raise RecordError(f"storage key must be a str, got {_short(key)}")
        return self._storage(key, storage_type, _int(numel, "storage size"), view)

    # -- tensor rebuilds: metadata only ---------------------------------------------------------
    def _tensor(self, storage: Any, offset: Any, size: Any, stride: Any, dtype: DType | None) -> TorchTensor:
        if not isinstance(storage, _Storage):
            raise RecordError(f"a tensor's storage must come from a storage id, got {_short(storage)}")
        if self._checkpoint is None:  # pragma: no cover - header pickles have no storages
            raise RecordError("tensor outside the checkpoint's main pickle")
        limits = self._limits
        shape, strides = _ints(size, "tensor size", limits), _ints(stride, "tensor stride", limits)
        start = _int(offset, "storage offset")
        if len(shape) != len(strides):
            raise RecordError(f"tensor size {list(shape)} and stride {list(strides)} differ in rank")
        dtype = dtype if dtype is not None else storage.dtype
        if dtype is None:
            raise RecordError(f"tensor on untyped storage {storage.key!r} has no dtype")
        if storage.dtype is not None and storage.dtype is not dtype:
            raise RecordError(f"tensor of {dtype.value} on a {storage.dtype.value} storage {storage.key!r}")
        count = 1
        span = 1  # the count with empty dims as 1: what NumPy multiplies to validate a shape
        last = start
        for d, s in zip(shape, strides, strict=True):
            count *= d
            span *= max(d, 1)
            last += (d - 1) * s
        if limits.exceeds("max_tensor_elements", span):
            raise RecordError(
                limits.refusal("max_tensor_elements", span, f"tensor of shape {_short(list(shape))}")
            )
        if count and (last + 1) * dtype.itemsize > storage.nbytes:
            raise RecordError(
                f"tensor of shape {list(shape)}, stride {list(strides)} at offset {start} needs "
                f"{(last + 1) * dtype.itemsize} bytes of storage {storage.key!r}, which has {storage.nbytes}"
            )
        self._checkpoint.count_tensor(count)
        return TorchTensor(dtype, shape, strides, start, storage, self._checkpoint)

    def _rebuild_tensor(self, storage: Any, offset: Any, size: Any, stride: Any) -> TorchTensor:
        return self._tensor(storage, offset, size, stride, None)

    def _rebuild_tensor_v2(
        self, storage: Any, offset: Any, size: Any, stride: Any, *_grad_hooks_metadata: Any
    ) -> TorchTensor:
        return self._tensor(storage, offset, size, stride, None)

    def _rebuild_tensor_v3(
        self, storage: Any, offset: Any, size: Any, stride: Any, _grad: Any, _hooks: Any, dtype: Any, *_: Any
    ) -> TorchTensor:
        if not isinstance(dtype, _TorchDType):
            raise RecordError(f"_rebuild_tensor_v3 needs a torch dtype, got {_short(dtype)}")
        return self._tensor(storage, offset, size, stride, dtype.dtype)


    def _rebuild_qtensor(
        self, storage: Any, offset: Any, size: Any, stride: Any, params: Any, *_grad_hooks: Any
    ) -> TorchQuantizedTensor:
        """A quantized tensor: its integers as a tensor on the quantized storage, and its
        quantizer ``(scheme, scale, zero_point)`` or ``(scheme, scales, zero_points, axis)``."""
        values = self._tensor(storage, offset, size, stride, None)
        if not isinstance(params, tuple) or not params or not isinstance(params[0], _QScheme):
            raise RecordError(
                f"a quantized tensor's quantizer must name its scheme, got {_short(params)}"
            )
        scheme = params[0].name
        if scheme == "per_tensor_affine" and len(params) == 3:
            scale, zero_point = params[1], params[2]
            if not isinstance(scale, float) or type(zero_point) is not int:
                raise RecordError(
                    f"per_tensor_affine needs a float scale and an int zero point, got {_short(params)}"
                )
            return TorchQuantizedTensor(values, scheme, scale, zero_point, 0)
        if scheme == "per_channel_affine" and len(params) == 4:
            scales, zero_points, axis = params[1], params[2], params[3]
            rank = len(values.shape)
            if not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis < rank:
                raise RecordError(
                    f"per_channel_affine axis {_short(axis)} is not a dim of {list(values.shape)}"
                )
            channels = (values.shape[axis],)
            for what, t in (("scales", scales), ("zero points", zero_points)):
                if not isinstance(t, TorchTensor) or t.shape != channels:
                    raise RecordError(
                        f"per_channel_affine {what} must be a tensor of shape {list(channels)}, "
                        f"got {_short(t)}"
                    )
            return TorchQuantizedTensor(values, scheme, scales, zero_points, axis)
        raise RecordError(
            f"quantized tensors of scheme {scheme} with {len(params) - 1} parameters are not supported "
            f"(supported: {', '.join(_QSCHEMES)})"
        )


def _rebuild_parameter(data: Any, *_requires_grad_hooks_state: Any) -> Any:
    """``nn.Parameter(data)``: a parameter is its tensor here."""
    if not isinstance(data, TorchTensor):
        raise RecordError(f"a parameter must wrap a tensor, got {_short(data)}")
    return data


def _latin1_bytes(text: Any, encoding: Any = "utf-8") -> bytes:
    """How protocol-2 pickles spell ``bytes``: ``_codecs.encode(str, "latin1")``, nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise RecordError(f"_codecs.encode is admitted only for latin1 bytes, got {_short(encoding)}")
    return text.encode("latin1")


class _ShortRepr(reprlib.Repr):
    """`reprlib` bounded everywhere: a few levels and items, bytes and mappings included (a
    pickle's values can be shared many times over; printing one in full could take forever)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxtuple, self.maxlist, self.maxdict = 3, 6, 6, 4
        self.maxset = self.maxfrozenset = self.maxdeque = 6
        self.maxstring = self.maxother = self.maxlong = 60

    def repr_bytes(self, x: bytes, level: int) -> str:
        return repr(x[: self.maxstring]) + ("..." if len(x) > self.maxstring else "")

    def repr_bytearray(self, x: bytearray, level: int) -> str:
        return f"bytearray({self.repr_bytes(bytes(x[: self.maxstring + 1]), level)})"

    def repr_OrderedDict(self, x: Any, level: int) -> str:  # noqa: N802 - reprlib's naming
        return self.repr_dict(x, level)


_SHORT = _ShortRepr()


def _short(value: Any) -> str:
    try:
        text = _short_exception(value) if isinstance(value, BaseException) else _SHORT.repr(value)
    except Exception:  # a value that cannot even be shown (a 10^5-digit int...)
        return f"<a {type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _short_exception(exc: BaseException) -> str:
    text = str(exc)
    return text[:200]


def _dtype_names() -> str:
    return ", ".join(sorted({d.value for d in _STORAGE_DTYPES.values()}))


# -- the checkpoint -------------------------------------------------------------------------------
class Checkpoint:
    """An open ``torch.save`` file: the unpickled object (tensors as `TorchTensor`) and the
    file its tensors are read from. Use it as a context manager (`open_checkpoint`).

    Attributes:
        path: the file.
        format: ``"zip"`` or ``"legacy"``.
        obj: what was saved (dicts, lists, numbers, strings, `TorchTensor`).
    """

    def __init__(self, path: str | os.PathLike[str], *, limits: Limits | None = None) -> None:
        self.path = str(path)
        self.limits = resolve_limits(limits, "open_checkpoint(limits=)")
        self.format = ""
        self.obj: Any = None
        self._file: BinaryIO | None = None
        self._size = 0
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        self._little = True
        self._storages: dict[str, _Storage] = {}
        self._legacy_offsets: dict[str, int] = {}
        self._tensors = 0
        self._elements = 0

    def count_tensor(self, count: int) -> None:
        """One more tensor of `count` elements, held to ``max_tensors`` and ``max_total_elements``."""
        self._tensors += 1
        self._elements += count
        if self.limits.exceeds("max_tensors", self._tensors):
            raise RecordError(self.limits.refusal("max_tensors", self._tensors, "the checkpoint's tensors"))
        if self.limits.exceeds("max_total_elements", self._elements):
            raise RecordError(
                self.limits.refusal("max_total_elements", self._elements, "the checkpoint's tensors")
            )

    # -- opening ---------------------------------------------------------------------------------
    def open(self) -> Checkpoint:
        raw, self._size = open_regular(self.path, self.limits)  # a FIFO or device: refused here
        self._file = io.BufferedReader(raw)
        try:
            head = self._file.read(512)
            if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
                self.format = "zip"
                self._open_zip()
            elif head[:1] == b"\x80":
                self.format = "legacy"
                self._open_legacy()
            elif head[257:262] == b"ustar":
                raise RecordError(
                    "a tar checkpoint (PyTorch before 0.4) is not supported: load it with that torch "
                    "and save the state_dict again"
                )
            else:
                raise RecordError(
                    "not a file torch.save writes (neither a zip archive nor a pickle); for "
                    ".safetensors files use load_pytorch_safetensors"
                )
        except BaseException as exc:
            self.close()
            if isinstance(exc, RecordError):
                raise exc.with_source(self.path) from exc.__cause__
            if isinstance(exc, Exception):
                raise self._error(exc) from exc
            raise
        return self

    def _error(self, exc: BaseException) -> RecordError:
        """A RecordError for an exception the readers did not expect (garbage input)."""
        what = self.format or "checkpoint"
        err = RecordError(f"corrupt {what} file: {type(exc).__name__}: {_short(exc)}", source=self.path)
        err.internal = True  # every malformed input is meant to be caught where it is understood
        return err

    def _open_zip(self) -> None:
        assert self._file is not None
        entries = _zip_entries(self._file)
        if entries is not None and self.limits.exceeds("max_tensors", entries - _EXTRA_MEMBERS):
            raise RecordError(
                self.limits.refusal(
                    "max_tensors", entries - _EXTRA_MEMBERS, f"a zip archive of {entries} records"
                )
            )
        try:
            self._zip = zipfile.ZipFile(self._file)
            infos = self._zip.infolist()
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"corrupt zip archive: {exc}") from exc
        pickles = [i for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if len(pickles) != 1:
            found = "no" if not pickles else f"{len(pickles)}"
            raise RecordError(f"{found} <name>/data.pkl record in the zip archive (not a torch.save file?)")
        info = pickles[0]
        self._prefix = info.filename[: -len("data.pkl")]
        order = self._member(self._prefix + "byteorder", required=False)
        if order is not None:
            if order.file_size > 16:
                raise RecordError(f"byteorder record of {order.file_size} bytes")
            value = self._read_small(order).decode("ascii", "replace")
            if value not in ("little", "big"):
                raise RecordError(f"byteorder record says {value!r}, expected 'little' or 'big'")
            self._little = value == "little"
        if self.limits.exceeds("max_pickle_bytes", info.file_size):
            raise RecordError(self.limits.refusal("max_pickle_bytes", info.file_size, info.filename))
        ratio_cap = max(PICKLE_RATIO_FLOOR, PICKLE_RATIO * info.compress_size)
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > ratio_cap:
            raise RecordError(
                f"{info.filename} declares {info.file_size} bytes from {info.compress_size} compressed, "
                f"more than a pickle of tensor metadata deflates to ({PICKLE_RATIO}x): refused before "
                "inflating it (a zip bomb?); torch.save stores it uncompressed"
            )
        try:
            with self._zip.open(info) as member:
                scan_pickle(
                    ScanReader(member, info.file_size, self.limits.max_pickle_bytes),
                    self.limits,
                    info.filename,
                )
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"cannot read record {info.filename}: {exc}") from exc
        data = self._read_small(info)
        self.obj = self._unpickle(data, self._zip_storage)

    def _member(self, name: str, *, required: bool = True) -> zipfile.ZipInfo | None:
        assert self._zip is not None
        try:
            return self._zip.getinfo(name)
        except KeyError:
            if required:
                raise RecordError(f"missing record {name} in the zip archive") from None
            return None

    def _read_small(self, info: zipfile.ZipInfo) -> bytes:
        assert self._zip is not None
        try:
            return self._zip.read(info)
        except Exception as exc:
            raise RecordError(f"cannot read record {info.filename}: {exc}") from exc

    def _zip_storage(self, key: str, kind: _StorageType, numel: int, view: Any) -> _Storage:
        if view is not None:
            raise RecordError(f"storage views are not expected in a zip checkpoint (storage {key!r})")
        itemsize = kind.dtype.itemsize if kind.dtype is not None else 1
        storage = _Storage(key, kind.dtype, numel * itemsize, 0)
        if key not in self._storages:  # checked against its record now, before any read
            name = f"data/{key}"
            info = self._member(self._prefix + name)
            assert info is not None
            if info.file_size != storage.nbytes:
                raise RecordError(
                    f"storage record {name} holds {info.file_size} bytes, the pickle says {storage.nbytes}"
                )
        return self._register(storage)

    def _register(self, storage: _Storage) -> _Storage:
        known = self._storages.get(storage.key)
        if known is None:
            self._storages[storage.key] = storage
            return storage
        if known.dtype is not storage.dtype or known.nbytes != storage.nbytes:
            raise RecordError(
                f"storage {storage.key!r} is named twice with different types or sizes "
                f"({known.dtype}, {known.nbytes} bytes vs {storage.dtype}, {storage.nbytes} bytes)"
            )
        return known

    def _unpickle(
        self, data: bytes, storage: Callable[[str, _StorageType, int, Any], _Storage] | None
    ) -> Any:
        """Unpickle `data` (held to the limits by `scan_pickle` first) with `TorchUnpickler`."""
        try:
            return TorchUnpickler(io.BytesIO(data), storage, self).load()
        except RecordError:
            raise
        except Exception as exc:  # garbage makes the unpickler raise almost anything
            raise RecordError(f"corrupt pickle: {type(exc).__name__}: {_short(exc)}") from exc

    def _next_pickle(self) -> bytes:
        """The bytes of the legacy file's next pickle, from where the file is (found and held to
        the limits by `scan_pickle`)."""
        assert self._file is not None
        start = self._file.tell()
        reader = ScanReader(self._file, self._size - start, self.limits.max_pickle_bytes)
        length = scan_pickle(reader, self.limits, f"the pickle at byte {start}")
        self._file.seek(start)
        return self._file.read(length)

    def _open_legacy(self) -> None:
        assert self._file is not None
        self._file.seek(0)
        magic = self._unpickle(self._next_pickle(), None)
        if magic != LEGACY_MAGIC:
            raise RecordError("a pickle, but not a torch.save file (wrong magic number)")
        protocol = self._unpickle(self._next_pickle(), None)
        if protocol != LEGACY_PROTOCOL:
            raise RecordError(f"legacy checkpoint protocol {protocol!r}, expected {LEGACY_PROTOCOL}")
        info = self._unpickle(self._next_pickle(), None)
        if not isinstance(info, dict):
            raise RecordError("legacy checkpoint system info is not a dict")
        self._little = info.get("little_endian", True) is not False
        roots: dict[str, tuple[DType | None, int]] = {}

        def storage(key: str, kind: _StorageType, numel: int, view: Any) -> _Storage:
            itemsize = kind.dtype.itemsize if kind.dtype is not None else 1
            if numel * itemsize > self._size:  # its bytes follow in this file: refused before any read
                raise RecordError(
                    f"storage {key!r} declares {numel * itemsize} bytes, more than the {self._size}-byte file"
                )
            root = roots.setdefault(key, (kind.dtype, numel))
            if root != (kind.dtype, numel):
                raise RecordError(f"storage {key!r} is named twice with different types or sizes")
            if view is None:
                return _Storage(key, kind.dtype, numel * itemsize, 0)
            if not (isinstance(view, tuple) and len(view) == 3):
                raise RecordError(f"storage view {_short(view)} is not (key, offset, size)")
            start, size = _int(view[1], "storage view offset"), _int(view[2], "storage view size")
            if start + size > numel:
                raise RecordError(
                    f"storage view [{start}, {start + size}) outside storage {key!r} of {numel}"
                )
            return _Storage(key, kind.dtype, size * itemsize, start * itemsize)

        self.obj = self._unpickle(self._next_pickle(), storage)
        keys = self._unpickle(self._next_pickle(), None)
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise RecordError("legacy checkpoint storage list is not a list of keys")
        pos = self._file.tell()
        count_format = "<q" if self._little else ">q"
        for key in keys:
            if key not in roots:
                raise RecordError(f"legacy storage {key!r} is listed but no tensor uses it")
            dtype, numel = roots[key]
            self._file.seek(pos)
            head = self._file.read(8)
            if len(head) != 8:
                raise RecordError(f"truncated: storage {key!r} is missing")
            (count,) = struct.unpack(count_format, head)
            if count != numel:
                raise RecordError(f"storage {key!r} holds {count} elements, its tensors expect {numel}")
            self._legacy_offsets[key] = pos + 8
            pos += 8 + count * (dtype.itemsize if dtype is not None else 1)
            if pos > self._size:
                raise RecordError(
                    f"truncated: storage {key!r} ends at byte {pos} of a {self._size}-byte file"
                )
        missing = sorted(set(roots) - set(self._legacy_offsets))
        if missing:
            raise RecordError(f"missing storage record(s) {', '.join(missing[:5])}")

    # -- reading tensors -------------------------------------------------------------------------
    def read_tensor(self, tensor: TorchTensor) -> TensorData:
        """The values of `tensor` (see `TorchTensor.read`); errors name the file."""
        try:
            return self._read_tensor(tensor)
        except RecordError as err:
            raise err.with_source(self.path) from err.__cause__
        except MemoryError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def _read_tensor(self, tensor: TorchTensor) -> TensorData:
        if self._file is None:
            raise RecordError(
                "the checkpoint is closed: read its tensors inside open_checkpoint's with block"
            )
        itemsize = tensor.dtype.itemsize
        numel = tensor.numel
        np_dtype = tensor.dtype.numpy.newbyteorder("<" if self._little else ">")
        if numel == 0:
            return _data(np.zeros(tensor.shape, tensor.dtype.numpy), tensor.dtype)
        last = tensor.offset + sum((d - 1) * s for d, s in zip(tensor.shape, tensor.stride, strict=True))
        begin, end = tensor.offset * itemsize, (last + 1) * itemsize
        raw = self._read_bytes(tensor.storage, begin, end)
        flat = np.frombuffer(raw, dtype=np_dtype)
        contiguous = _contiguous_strides(tensor.shape) == tensor.stride
        if contiguous and flat.size == numel:
            array = flat.reshape(tensor.shape)
        else:  # a view with gaps or broadcast strides: copy it out, so the storage is dropped
            # A size-1 dim's stride is never used (and may be anything below 2^63): 0 keeps it
            # from overflowing NumPy's byte strides.
            strides = tuple(
                s * itemsize if d > 1 else 0 for d, s in zip(tensor.shape, tensor.stride, strict=True)
            )
            view = np.lib.stride_tricks.as_strided(flat, tensor.shape, strides, writeable=False)
            array = np.array(view, order="C")
        if not array.dtype.isnative:
            array = array.astype(tensor.dtype.numpy)
        if tensor.dtype is DType.BOOL and array.view(np.uint8).max() > 1:
            raise RecordError(f"bool tensor on storage {tensor.storage.key!r} holds bytes other than 0 and 1")
        return _data(array, tensor.dtype)

    def _read_bytes(self, storage: _Storage, begin: int, end: int) -> np.ndarray:
        """Bytes ``[begin, end)`` of `storage`'s view, into a fresh buffer (every size is
        checked against the file before anything is allocated)."""
        begin, end = begin + storage.offset, end + storage.offset
        if self.format == "legacy":
            pos = self._legacy_offsets[storage.key] + begin
            self._check_span(pos, end - begin)
            out = np.empty(end - begin, dtype=np.uint8)
            self._read_at(pos, out)
            return out
        name = f"data/{storage.key}"
        info = self._member(self._prefix + name)
        assert info is not None
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size:
                raise RecordError(f"stored record {name} has sizes {info.compress_size} and {info.file_size}")
            pos = self._data_offset(info) + begin
            self._check_span(pos, end - begin)
            out = np.empty(end - begin, dtype=np.uint8)
            self._read_at(pos, out)
            if begin == 0 and end == info.file_size and zlib.crc32(out.data) != info.CRC:
                raise RecordError(f"storage record {name} fails its CRC check (corrupted)")
            return out
        if info.file_size > DEFLATE_MAX_RATIO * info.compress_size + 1024:
            raise RecordError(f"compressed record {name} declares an impossible size {info.file_size}")
        return self._read_compressed(info, name, begin, end)

    def _read_compressed(self, info: zipfile.ZipInfo, name: str, begin: int, end: int) -> np.ndarray:
        """A compressed record (torch writes none; a re-zipped checkpoint may): streamed,
        skipping to `begin`; zipfile checks the CRC when the end is reached."""
        assert self._zip is not None
        out = np.empty(end - begin, dtype=np.uint8)
        try:
            with self._zip.open(info) as member:
                skip = begin
                while skip:
                    skipped = len(member.read(min(skip, READ_CHUNK)))
                    if not skipped:
                        raise RecordError(f"storage record {name} is truncated")
                    skip -= skipped
                done = 0
                while done < out.size:
                    chunk = member.read(min(out.size - done, READ_CHUNK))
                    if not chunk:
                        raise RecordError(f"storage record {name} is truncated")
                    out[done : done + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
                    done += len(chunk)
                if end == info.file_size:
                    member.read(1)
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"cannot read storage record {name}: {exc}") from exc
        return out

    def _check_span(self, pos: int, size: int) -> None:
        if pos + size > self._size:
            raise RecordError(f"truncated: {size} bytes at offset {pos} run past the {self._size}-byte file")

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        """Where a stored record's bytes start: after its local header (whose name and extra
        field, torch's alignment padding, may differ in length from the central directory's)."""
        head = np.empty(_LOCAL_HEADER.size, dtype=np.uint8)
        self._read_at(info.header_offset, head)
        fields = _LOCAL_HEADER.unpack(head.tobytes())
        if fields[0] != _LOCAL_SIGNATURE:
            raise RecordError(f"bad local header for record {info.filename} (corrupted archive)")
        start = info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]
        if start + info.compress_size > self._size:
            raise RecordError(f"record {info.filename} runs past the end of the file (truncated)")
        return start

    def _read_at(self, pos: int, out: np.ndarray) -> None:
        assert self._file is not None
        self._check_span(pos, out.size)
        self._file.seek(pos)
        view = out.data
        done = 0
        while done < out.size:
            n = self._file.readinto(view[done:])  # type: ignore[attr-defined]
            if not n:
                raise RecordError(f"file shrank while reading ({pos + done} of {self._size} bytes)")
            done += n

    # -- selecting the state dict ----------------------------------------------------------------
    def state_dict(self, key: str | Sequence[str] | None = None) -> dict[str, StateEntry]:
        """The state dict in the checkpoint: the saved object itself, the value under `key`
        (a top-level key, or a sequence of keys into nested dicts), or, without `key`, the one
        top-level value that is a state dict (``{"model": ..., "optimizer": ..., "epoch": 3}``).

        Values are `TorchTensor`; a quantized model's state dict also holds `TorchQuantizedTensor`
        values, its quantized Linears' ``(weight, bias)`` pairs under ``*._packed_params.
        _packed_params`` and their dtypes under ``*._packed_params.dtype``
        (`burn.record.pytorch_quantized` turns them into a quantized burn layer's params).

        Raises:
            RecordError: no such key, or no single state dict, listing the top-level keys.
        """
        try:
            return self._state_dict(key)
        except RecordError as err:
            raise err.with_source(self.path) from err.__cause__

    def _state_dict(self, key: str | Sequence[str] | None) -> dict[str, StateEntry]:
        obj = self.obj
        if key is not None:
            path = [key] if isinstance(key, str) else list(key)
            for depth, part in enumerate(path):
                if not isinstance(obj, Mapping) or part not in obj:
                    where = "/".join(map(str, path[:depth])) or "the checkpoint"
                    raise RecordError(f"no key {part!r} in {where}: {_describe_keys(obj)}")
                obj = obj[part]
            if not _is_state_dict(obj, require_all=False):
                raise RecordError(f"key {key!r} holds {_kind(obj)}, not a state dict of tensors")
            bad = [k for k, v in obj.items() if not _is_entry(v)]
            if bad:
                raise RecordError(
                    f"key {key!r} holds values that are not tensors: "
                    + ", ".join(f"{_short(k)} ({_kind(obj[k])})" for k in bad[:8])
                )
            return dict(obj)
        if _is_state_dict(obj):
            return dict(obj)
        if isinstance(obj, Mapping):
            found = [k for k, v in obj.items() if _is_state_dict(v)]
            if len(found) == 1:
                return dict(obj[found[0]])
            why = "several state dicts" if found else "no state dict of tensors at its top level"
            raise RecordError(f"the checkpoint holds {why}: pass key= one of {_describe_keys(obj)}")
        raise RecordError(f"the checkpoint holds {_kind(obj)}, not a state dict")

    def close(self) -> None:
        """Close the file (tensors can no longer be read)."""
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _zip_entries(file: BinaryIO) -> int | None:
    """The record count a zip archive's end-of-central-directory declares (None: not found; the
    zipfile module then reports the archive as corrupt), read before the directory is parsed."""
    find = getattr(zipfile, "_EndRecData", None)
    if find is None:  # pragma: no cover - a Python without it: the directory is parsed unchecked
        return None
    try:
        end = find(file)
    except (OSError, struct.error, ValueError):
        return None
    return int(end[4]) if end else None  # _ECD_ENTRIES_TOTAL


def _data(array: np.ndarray, dtype: DType) -> TensorData:
    data = TensorData.__new__(TensorData)
    data.array = array
    data.dtype = dtype
    return data


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _is_entry(value: Any) -> bool:
    """Whether `value` may be a state dict's value: a tensor, a quantized tensor, a quantized
    Linear's ``(weight, bias)`` pair or its dtype."""
    if isinstance(value, (TorchTensor, TorchQuantizedTensor, _TorchDType)):
        return True
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], TorchQuantizedTensor)
        and (value[1] is None or isinstance(value[1], TorchTensor))
    )


def _is_state_dict(obj: Any, *, require_all: bool = True) -> bool:
    if not isinstance(obj, Mapping) or not obj or not all(isinstance(k, str) for k in obj):
        return False
    if require_all and not all(_is_entry(v) for v in obj.values()):
        return False
    return any(_is_entry(v) and not isinstance(v, _TorchDType) for v in obj.values())


def _kind(obj: Any) -> str:
    if isinstance(obj, TorchTensor):
        return f"a tensor {list(obj.shape)}"
    if _is_state_dict(obj):
        return f"a state dict of {len(obj)} tensors"
    if isinstance(obj, Mapping):
        return f"a dict of {len(obj)} entries"
    if isinstance(obj, (list, tuple)):
        return f"a {type(obj).__name__} of {len(obj)} items"
    return f"a {type(obj).__name__}"


def _describe_keys(obj: Any) -> str:
    if not isinstance(obj, Mapping):
        return f"it is {_kind(obj)}, not a dict"
    items = list(obj.items())
    text = ", ".join(f"{_short(k)} ({_kind(v)})" for k, v in items[:20])
    return text + (f" and {len(items) - 20} more" if len(items) > 20 else "") if items else "(empty dict)"


def open_checkpoint(path: str | os.PathLike[str] | Path, *, limits: Limits | None = None) -> Checkpoint:
    """Open a ``torch.save`` file: its pickle is read (no code run), its tensors stay on disk
    until read. Use as a context manager; the file is closed on exit.

    Args:
        path: the checkpoint (a regular file: a FIFO, device or directory is refused unopened).
        limits: the bounds on what the file may declare (`burn.Limits`; default: the defaults):
            its size, its pickle's bytes, opcodes, memo entries, object nodes and nesting, and its
            tensors' ranks and elements, each and in all. Checked before anything is read.

    Raises:
        RecordError: not a checkpoint, a corrupt or truncated one, a pickle that names a
            global other than a tensor checkpoint's (the error names it), or a limit broken
            (the error names the `Limits` field to raise).

    Example:
        >>> with open_checkpoint("model.pt") as ckpt:  # doctest: +SKIP
        ...     weights = {k: t.read() for k, t in ckpt.state_dict(key="model").items()}
    """
    return Checkpoint(path, limits=limits).open()
