"""The format-independent layer: records <-> "plain" trees that every encoding can write.

A plain tree holds only dicts with str keys, lists, str, int, float, bool, None, bytes and
`TensorRef` leaves. Everything else is spelled with single-key tagged maps:

- ``{"$tensor": {...}}``       a tensor (its fields depend on the encoding)
- ``{"$param": {"id", "tensor"}}``  a `ParamRecord`
- ``{"$module": {path: $param}}``   a `ModuleRecord` (named encodings)
- ``{"$module_bin": {"ids", "fingerprint", "tensors"}}``  a `ModuleRecord` without names (bin)
- ``{"$tuple": [...]}``, ``{"$dict": [[key, value], ...]}`` (dicts with non-str keys),
  ``{"$bytes": base64}`` and ``{"$float": "nan" | "inf" | "-inf"}`` (JSON only)

User dict keys that start with ``$`` get one more ``$`` when written, so a tag is never ambiguous.
Tensors are not converted here: a `TensorRef` keeps the source tensor and its saved dtype, and the
encoding converts it (`items.saved_array`) only when it writes that tensor.
"""

from __future__ import annotations

import base64
import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.limits import DEFAULT_LIMITS, Limits
from burn.record.errors import RecordError
from burn.record.items import ModuleRecord, ParamRecord, TensorLike, is_tensor, saved_array, tensor_meta
from burn.record.settings import PrecisionSettings

_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_DTYPES = {d.value: d for d in DType}


class TensorRef:
    """A tensor waiting to be written: the source, the dtype it is saved in, its shape and path."""

    __slots__ = ("value", "dtype", "shape", "path", "nbytes", "offset", "key")

    def __init__(self, value: TensorLike, dtype: DType, shape: tuple[int, ...], path: str) -> None:
        self.value = value
        self.dtype = dtype
        self.shape = shape
        self.path = path
        count = 1
        for d in shape:
            count *= d
        self.nbytes = count * dtype.itemsize
        self.offset = 0  # set by layouts with a separate data section (bin, safetensors)
        self.key = path

    def array(self) -> np.ndarray:
        """The converted contents (allocated now, dropped by the caller after writing)."""
        array = saved_array(self.value, self.dtype, self.path)
        if array.shape != self.shape:  # a tensor that changed under us would corrupt the layout
            raise RecordError(
                f"tensor shape changed while saving: {array.shape} vs {self.shape}", path=self.path
            )
        return array


def join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def escape_key(key: str) -> str:
    return "$" + key if key.startswith("$") else key


def fingerprint(paths: list[str]) -> int:
    """A 32-bit checksum of the param paths: bin records have no names, so this is how a load
    into a module of another structure is detected."""
    return zlib.crc32("\n".join(paths).encode())


# -- record -> plain --------------------------------------------------------------------------
def to_plain(record: Any, settings: PrecisionSettings, *, named: bool = True) -> tuple[Any, list[TensorRef]]:
    """The plain tree of `record` and its tensors in writing order (nothing is converted yet)."""
    refs: list[TensorRef] = []

    def tensor(value: TensorLike, path: str) -> TensorRef:
        src_dtype, shape = tensor_meta(value)
        ref = TensorRef(value, settings.saved_dtype(src_dtype), shape, path)
        refs.append(ref)
        return ref

    def param(rec: ParamRecord, path: str) -> dict[str, Any]:
        if rec.id is not None and not isinstance(rec.id, str):
            raise RecordError(f"ParamRecord.id must be a str or None, got {type(rec.id).__name__}", path=path)
        return {"$param": {"id": rec.id, "tensor": {"$tensor": tensor(rec.tensor, path)}}}

    # Nothing deeper than the default limits would read back is written.
    max_depth = DEFAULT_LIMITS.max_depth

    def walk(value: Any, path: str, depth: int) -> Any:
        if depth > max_depth:
            raise RecordError(f"record nested deeper than {max_depth} levels", path=path)
        if value is None or isinstance(value, (bool, str, float)):
            return value
        if isinstance(value, int):
            if not _INT_MIN <= value <= _INT_MAX:
                raise RecordError(f"int {value} does not fit in 64 bits", path=path)
            return int(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, ModuleRecord):
            if named:
                return {"$module": {key: param(rec, join(path, key)) for key, rec in value.items()}}
            return {
                "$module_bin": {
                    "ids": [rec.id for rec in value.values()],
                    "fingerprint": fingerprint(list(value)),
                    "tensors": [
                        {"$tensor": tensor(rec.tensor, join(path, key))} for key, rec in value.items()
                    ],
                }
            }
        if isinstance(value, ParamRecord):
            return param(value, path)
        if is_tensor(value):
            return {"$tensor": tensor(value, path)}
        if isinstance(value, dict):
            if all(isinstance(key, str) for key in value):
                return {
                    escape_key(key): walk(item, join(path, key), depth + 1) for key, item in value.items()
                }
            return {
                "$dict": [
                    [walk(key, join(path, key), depth + 1), walk(item, join(path, key), depth + 1)]
                    for key, item in value.items()
                ]
            }
        if isinstance(value, list):
            return [walk(item, join(path, i), depth + 1) for i, item in enumerate(value)]
        if isinstance(value, tuple):
            return {"$tuple": [walk(item, join(path, i), depth + 1) for i, item in enumerate(value)]}
        if isinstance(value, np.generic):
            return walk(value.item(), path, depth)
        raise RecordError(
            f"cannot record a value of type {type(value).__name__}: records hold tensors, params, "
            "dict, list, tuple, int, float, str, bool, bytes and None",
            path=path or None,
        )

    return walk(record, "", 0), refs


# -- plain -> record --------------------------------------------------------------------------
TensorDecoder = Callable[[Any, str], TensorData]
ModuleBinDecoder = Callable[[Any, str, "Decoder"], ModuleRecord]


class Decoder:
    """Turns a decoded plain tree back into a record; the encoding supplies the tensor decoder
    (and, for bin, the decoder of nameless module records). Nesting is held to
    ``limits.max_depth``."""

    def __init__(
        self,
        tensor: TensorDecoder,
        module_bin: ModuleBinDecoder | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.tensor = tensor
        self.module_bin = module_bin
        self.limits = limits

    def decode(self, obj: Any, path: str = "", depth: int = 0) -> Any:
        if self.limits.exceeds("max_depth", depth):
            raise RecordError(
                self.limits.refusal("max_depth", depth, "record nested too deeply"), path=path or None
            )
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, (memoryview, bytes, bytearray)):
            return bytes(obj)
        if isinstance(obj, list):
            return [self.decode(item, join(path, i), depth + 1) for i, item in enumerate(obj)]
        if isinstance(obj, dict):
            if len(obj) == 1:
                ((key, value),) = obj.items()
                if isinstance(key, str) and key.startswith("$") and not key.startswith("$$"):
                    return self._tagged(key, value, path, depth)
            out = {}
            for key, value in obj.items():
                if not isinstance(key, str):
                    raise RecordError(f"map key {key!r} is not a string", path=path or None)
                if key.startswith("$"):
                    if not key.startswith("$$"):
                        raise RecordError(f"unexpected tag {key!r} in a map", path=path or None)
                    key = key[1:]
                out[key] = self.decode(value, join(path, key), depth + 1)
            return out
        raise RecordError(f"unexpected value of type {type(obj).__name__}", path=path or None)

    def _tagged(self, tag: str, value: Any, path: str, depth: int) -> Any:
        where = path or None
        if tag == "$tensor":
            return self.tensor(value, path)
        if tag == "$param":
            return self.param(value, path)
        if tag == "$module":
            if not isinstance(value, dict):
                raise RecordError("$module must map param paths to params", path=where)
            params = {}
            for key, node in value.items():
                if not isinstance(key, str):
                    raise RecordError(f"param path {key!r} is not a string", path=where)
                if not (isinstance(node, dict) and len(node) == 1 and "$param" in node):
                    raise RecordError("expected a $param entry", path=join(path, key))
                params[key] = self.param(node["$param"], join(path, key))
            return ModuleRecord(params)
        if tag == "$module_bin":
            if self.module_bin is None:
                raise RecordError("nameless module record outside a bin record", path=where)
            return self.module_bin(value, path, self)
        if tag == "$tuple":
            if not isinstance(value, list):
                raise RecordError("$tuple must hold a list", path=where)
            return tuple(self.decode(item, join(path, i), depth + 1) for i, item in enumerate(value))
        if tag == "$dict":
            if not isinstance(value, list):
                raise RecordError("$dict must hold a list of [key, value] pairs", path=where)
            out: dict[Any, Any] = {}
            for pair in value:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise RecordError("$dict must hold a list of [key, value] pairs", path=where)
                key = self.decode(pair[0], path, depth + 1)
                try:
                    out[key] = self.decode(pair[1], join(path, key), depth + 1)
                except TypeError:
                    raise RecordError(f"unhashable dict key {key!r}", path=where) from None
            return out
        if tag == "$bytes":
            if not isinstance(value, str):
                raise RecordError("$bytes must hold base64 text", path=where)
            return b64decode(value, path)
        if tag == "$float":
            if value not in _SPECIAL_FLOATS:
                raise RecordError(f"invalid $float {value!r}", path=where)
            return _SPECIAL_FLOATS[value]
        raise RecordError(f"unknown tag {tag!r} (written by a newer burn?)", path=where)

    def param(self, node: Any, path: str) -> ParamRecord:
        if not isinstance(node, dict) or "tensor" not in node:
            raise RecordError("a $param needs 'id' and 'tensor'", path=path or None)
        pid = node.get("id")
        check_param_id(pid, path)
        tensor = node["tensor"]
        if not (isinstance(tensor, dict) and len(tensor) == 1 and "$tensor" in tensor):
            raise RecordError("a $param's tensor must be a $tensor", path=path or None)
        return ParamRecord(pid, self.tensor(tensor["$tensor"], path))


class TensorBudget:
    """Counts the tensors of one file and their elements against ``max_tensors`` and
    ``max_total_elements`` (each tensor's own size is checked by `parse_shape`)."""

    __slots__ = ("limits", "tensors", "elements")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.tensors = 0
        self.elements = 0

    def add(self, count: int, path: str) -> None:
        """One more tensor of `count` elements, at item path `path`."""
        self.tensors += 1
        self.elements += count
        if self.limits.exceeds("max_tensors", self.tensors):
            raise RecordError(
                self.limits.refusal("max_tensors", self.tensors, "the file's tensors"), path=path or None
            )
        if self.limits.exceeds("max_total_elements", self.elements):
            raise RecordError(
                self.limits.refusal("max_total_elements", self.elements, "the file's tensors"),
                path=path or None,
            )


def check_param_id(pid: Any, path: str) -> None:
    if pid is None:
        return
    if not isinstance(pid, str) or not 0 < len(pid) <= 16:
        raise RecordError(f"invalid param id {pid!r}", path=path or None)
    try:
        int(pid, 16)
    except ValueError:
        raise RecordError(f"invalid param id {pid!r}", path=path or None) from None


def b64decode(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise RecordError("invalid base64 data", path=path or None) from None


# -- tensor contents ----------------------------------------------------------------------------
def parse_dtype(name: Any, path: str) -> DType:
    dtype = _DTYPES.get(name) if isinstance(name, str) else None
    if dtype is None:
        raise RecordError(f"unknown dtype {name!r}", path=path or None)
    return dtype


def parse_shape(shape: Any, path: str, limits: Limits = DEFAULT_LIMITS) -> tuple[tuple[int, ...], int]:
    """A validated shape and its element count, held to ``limits.max_rank`` and
    ``limits.max_tensor_elements`` (Python ints: no overflow). The element count is checked with
    empty dims counted as 1, so that no dim of an empty tensor overflows NumPy either."""
    if not isinstance(shape, list):
        raise RecordError(f"invalid shape {_shape_text(shape)}", path=path or None)
    if limits.exceeds("max_rank", len(shape)):
        raise RecordError(limits.refusal("max_rank", len(shape), "tensor shape"), path=path or None)
    count = 1
    span = 1  # the count with 0-dims as 1: what NumPy multiplies to validate a shape
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise RecordError(f"invalid shape {_shape_text(shape)}", path=path or None)
        count *= d
        span *= max(d, 1)
    if limits.exceeds("max_tensor_elements", span):
        raise RecordError(
            limits.refusal("max_tensor_elements", span, f"tensor of shape {_shape_text(shape)}"),
            path=path or None,
        )
    return tuple(shape), count


def _shape_text(shape: Any) -> str:
    text = repr(shape) if isinstance(shape, list) and len(shape) <= 16 else f"<{type(shape).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


def tensor_data(
    buffer: memoryview | bytes, dtype: DType, shape: tuple[int, ...], count: int, path: str
) -> TensorData:
    """A `TensorData` viewing `buffer` (no copy), checked against the bytes actually present."""
    size = buffer.nbytes if isinstance(buffer, memoryview) else len(buffer)
    if count * dtype.itemsize != size:
        raise RecordError(
            f"shape {list(shape)} of {dtype.value} needs {count * dtype.itemsize} bytes, "
            f"the record has {size}",
            path=path or None,
        )
    array = np.frombuffer(buffer, dtype=dtype.numpy.newbyteorder("<"), count=count)
    if dtype is DType.BOOL and count and array.view(np.uint8).max() > 1:
        raise RecordError("bool tensor holds bytes other than 0 and 1", path=path or None)
    if not array.dtype.isnative:  # pragma: no cover - big-endian hosts only
        array = array.astype(dtype.numpy)
    elif not array.flags.aligned:  # foreign layouts (safetensors) may misalign; ops want aligned
        array = array.copy()
    data = TensorData.__new__(TensorData)
    data.array = array.reshape(shape)
    data.dtype = dtype
    return data
