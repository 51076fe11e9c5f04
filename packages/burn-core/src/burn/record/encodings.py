"""The four encodings behind the recorders: named MessagePack, JSON, bin and safetensors.

Each one turns a plain tree (`_tree.to_plain`) into bytes, converting one tensor at a time as it
writes it, and reads bytes back into a record whose tensors are `TensorData` views into the
buffer it was given (JSON decodes base64, so its tensors are fresh arrays).

Layouts (all integers little-endian unless MessagePack says otherwise):

- named-mpk: one MessagePack map ``{format, format_version, encoding, burn_version, settings,
  float_dtype, int_dtype, item}``; each tensor is ``{"$tensor": {dtype, shape, pad, data}}`` with
  ``data`` (raw bytes) starting on a 64-byte boundary.
- json: the same map as JSON; tensor ``data`` is base64.
- bin: ``b"BURN-BIN"``, u64 header length, a MessagePack header (the same map, where module
  records keep only param ids, a fingerprint of the paths and the tensors, no names; tensors are
  ``{dtype, shape, offset}``), zero padding to 64 bytes, then the tensors' bytes, each 64-aligned.
- safetensors: the standard layout (u64 header length, JSON header, contiguous data); keys are
  dotted param paths; the burn metadata, param ids and the record's structure are strings in
  ``__metadata__`` (``burn.*`` keys), so other tools read the tensors and ignore the rest.

Why safetensors is written and read here rather than with the ``safetensors`` package (which the
tests use as the reference: files written here load with it, files it writes load here, and any
file it accepts loads here with the same tensors): its writers (``safetensors.numpy.save``,
``save_file``) take a dict of every tensor already converted, which at half precision is a second
copy of the model in memory, where records convert one tensor at a time while writing (measured
with tracemalloc in ``test_record_atomic``); its readers either copy every tensor
(``safetensors.numpy.load``) or need a path to memory-map (``safe_open``), where records read any
buffer (bytes recorders, gunzipped files) as zero-copy views; and its errors would still have to
become ``RecordError`` with the file and param path. The format is small (a length, a JSON header,
raw little-endian bytes), and every size in the header is checked against the bytes present before
anything is allocated (`read_safetensors_header`).
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.limits import DEFAULT_LIMITS, Limits
from burn.record import _mpk
from burn.record._io import PositionWriter
from burn.record._json import JsonWriter
from burn.record._tree import (
    Decoder,
    TensorBudget,
    TensorRef,
    b64decode,
    check_param_id,
    fingerprint,
    parse_dtype,
    parse_shape,
    tensor_data,
    to_plain,
)
from burn.record.detect import BIN_MAGIC
from burn.record.errors import RecordError
from burn.record.items import ModuleRecord, ParamRecord
from burn.record.metadata import Metadata
from burn.record.settings import PrecisionSettings

_U64 = struct.Struct("<Q")


class Prepared:
    """A record checked and laid out for writing; tensors are converted only by `write`."""

    __slots__ = ("doc", "refs")

    def __init__(self, doc: dict[str, Any], refs: list[TensorRef]) -> None:
        self.doc = doc
        self.refs = refs


class Encoding:
    """How a record becomes bytes and back."""

    name: str = ""
    named: bool = True

    def prepare(self, record: Any, settings: PrecisionSettings) -> Prepared:
        """Validate `record` and lay it out (raises RecordError before anything is written)."""
        plain, refs = to_plain(record, settings, named=self.named)
        doc = Metadata.for_writing(self.name, settings).to_dict()
        doc["item"] = plain
        return Prepared(doc, refs)

    def write(self, prepared: Prepared, out: PositionWriter) -> None:
        raise NotImplementedError

    def read(
        self, buf: memoryview, template: Any = None, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[Metadata | None, Any]:
        """The metadata and the record in `buf`; everything the bytes declare is held to `limits`."""
        raise NotImplementedError


def _item(doc: Any, encoding: str) -> tuple[Metadata, Any]:
    meta = Metadata.from_dict(doc, encoding)
    if "item" not in doc:
        raise RecordError("record has no 'item'")
    return meta, doc["item"]


def _node_fields(node: Any, path: str, *fields: str) -> list[Any]:
    if not isinstance(node, dict) or any(f not in node for f in fields):
        raise RecordError(f"a $tensor needs {', '.join(fields)}", path=path or None)
    return [node[f] for f in fields]


# -- named MessagePack ------------------------------------------------------------------------------
class MpkEncoding(Encoding):
    name = "named-mpk"

    def write(self, prepared: Prepared, out: PositionWriter) -> None:
        _mpk.write_plain(prepared.doc, out, _mpk.write_inline_tensor)

    def read(
        self, buf: memoryview, template: Any = None, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[Metadata | None, Any]:
        doc, _ = _mpk.unpack(buf, limits=limits)
        meta, item = _item(doc, self.name)
        budget = TensorBudget(limits)

        def tensor(node: Any, path: str) -> TensorData:
            dtype, shape, data = _node_fields(node, path, "dtype", "shape", "data")
            if not isinstance(data, memoryview):
                raise RecordError("tensor data is not binary", path=path or None)
            dtype = parse_dtype(dtype, path)
            dims, count = parse_shape(shape, path, limits)
            budget.add(count, path)
            return tensor_data(data, dtype, dims, count, path)

        return meta, Decoder(tensor, limits=limits).decode(item)


# -- JSON ---------------------------------------------------------------------------------------------
class JsonEncoding(Encoding):
    name = "json"

    def __init__(self, indent: int | None) -> None:
        self.indent = indent

    def write(self, prepared: Prepared, out: PositionWriter) -> None:
        JsonWriter(out, self.indent).write(prepared.doc)

    def read(
        self, buf: memoryview, template: Any = None, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[Metadata | None, Any]:
        doc = parse_json(buf)
        meta, item = _item(doc, self.name)
        budget = TensorBudget(limits)

        def tensor(node: Any, path: str) -> TensorData:
            dtype, shape, data = _node_fields(node, path, "dtype", "shape", "data")
            if not isinstance(data, str):
                raise RecordError("tensor data is not base64 text", path=path or None)
            dtype = parse_dtype(dtype, path)
            dims, count = parse_shape(shape, path, limits)
            budget.add(count, path)
            # base64 is 4/3 the raw size: check before decoding anything.
            if len(data) != 4 * -(-count * dtype.itemsize // 3):
                raise RecordError(
                    f"shape {list(dims)} of {dtype.value} needs {count * dtype.itemsize} bytes, "
                    f"the base64 text holds {len(data) * 3 // 4}",
                    path=path or None,
                )
            return tensor_data(b64decode(data, path), dtype, dims, count, path)

        return meta, Decoder(tensor, limits=limits).decode(item)


def parse_json(buf: memoryview | bytes) -> Any:
    try:
        return json.loads(bytes(buf))
    except RecursionError:
        raise RecordError("JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, int digit limits
        raise RecordError(f"malformed JSON: {exc}") from None


# -- bin ----------------------------------------------------------------------------------------------
class BinEncoding(Encoding):
    """Compact: module records keep ids and tensors in order, no names; loading needs the module
    (or its record) as `template` to put the names back."""

    name = "bin"
    named = False

    def write(self, prepared: Prepared, out: PositionWriter) -> None:
        end = 0
        for ref in prepared.refs:
            ref.offset = _align(end)
            end = ref.offset + ref.nbytes
        header_out = PositionWriter(io.BytesIO())
        _mpk.write_plain(prepared.doc, header_out, _write_bin_ref)
        header = header_out._out.getvalue()  # type: ignore[attr-defined]
        out.write(BIN_MAGIC)
        out.write(_U64.pack(len(header)))
        out.write(header)
        out.write(bytes(_align(out.pos) - out.pos))
        data_start = out.pos
        for ref in prepared.refs:
            out.write(bytes(data_start + ref.offset - out.pos))
            out.write_array(ref.array())

    def read(
        self, buf: memoryview, template: Any = None, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[Metadata | None, Any]:
        size = buf.nbytes
        if size < 16 or bytes(buf[:8]) != BIN_MAGIC:
            raise RecordError("not a burn bin record (bad magic bytes)")
        (header_len,) = _U64.unpack_from(buf, 8)
        if header_len > size - 16:
            raise RecordError(f"header of {header_len} bytes in a {size}-byte record (truncated?)")
        doc, _ = _mpk.unpack(buf, 16, 16 + header_len, limits=limits)
        meta, item = _item(doc, self.name)
        data_start = _align(16 + header_len)
        data_len = max(0, size - data_start)
        budget = TensorBudget(limits)

        def tensor(node: Any, path: str) -> TensorData:
            dtype, shape, offset = _node_fields(node, path, "dtype", "shape", "offset")
            dtype = parse_dtype(dtype, path)
            dims, count = parse_shape(shape, path, limits)
            budget.add(count, path)
            nbytes = count * dtype.itemsize
            if not isinstance(offset, int) or offset < 0 or offset + nbytes > data_len:
                raise RecordError(
                    f"tensor bytes [{offset}, +{nbytes}) lie outside the {data_len}-byte data section "
                    "(truncated?)",
                    path=path or None,
                )
            start = data_start + offset
            return tensor_data(buf[start : start + nbytes], dtype, dims, count, path)

        def module_bin(node: Any, path: str, decoder: Decoder) -> ModuleRecord:
            return _module_from_bin(node, path, decoder, _template_paths(template, path))

        return meta, Decoder(tensor, module_bin, limits).decode(item)


def _align(n: int, to: int = _mpk.ALIGN) -> int:
    return -(-n // to) * to


def _write_bin_ref(ref: TensorRef, out: PositionWriter) -> None:
    _mpk.write_plain(
        {"dtype": ref.dtype.value, "shape": list(ref.shape), "offset": ref.offset}, out, _write_bin_ref
    )


POSITIONAL = object()
"""A bin `template` that names params by position (``#0``, ``#1``...): for inspecting files."""


def _template_paths(template: Any, path: str) -> list[str] | None:
    """The param paths of the module record stored at item path `path`, from the template."""
    from burn.module.base import Module

    if template is POSITIONAL:
        return None
    node = template
    if path:
        node = (
            template.get(path)
            if isinstance(template, Mapping) and not isinstance(template, ModuleRecord)
            else None
        )
    if isinstance(node, Module):
        return [p for p, _ in node.named_params()]
    if isinstance(node, ModuleRecord):
        return list(node)
    if node is not None and not isinstance(node, Mapping) and hasattr(node, "__iter__"):
        paths = list(node)
        if all(isinstance(p, str) for p in paths):
            return paths
    where = f" at {path!r}" if path else ""
    raise RecordError(
        f"bin records store no param names: load with template= the module (or its record){where}",
        path=path or None,
    )


def _module_from_bin(node: Any, path: str, decoder: Decoder, paths: list[str] | None) -> ModuleRecord:
    if not isinstance(node, dict) or not all(k in node for k in ("ids", "fingerprint", "tensors")):
        raise RecordError("malformed nameless module record", path=path or None)
    ids, tensors = node["ids"], node["tensors"]
    if not isinstance(ids, list) or not isinstance(tensors, list) or len(ids) != len(tensors):
        raise RecordError("malformed nameless module record", path=path or None)
    if paths is None:
        paths = [f"#{i}" for i in range(len(ids))]
        node = dict(node, fingerprint=fingerprint(paths))
    if len(ids) != len(paths):
        raise RecordError(
            f"the record holds {len(ids)} params, the template {len(paths)}: bin records only load into "
            "a module of the same structure (use a named recorder to load across structures)",
            path=path or None,
        )
    if node["fingerprint"] != fingerprint(paths):
        raise RecordError(
            "the record was saved from a module with other param paths than the template's: bin records "
            "only load into a module of the same structure (use a named recorder to load across structures)",
            path=path or None,
        )
    params = {}
    for key, pid, tensor in zip(paths, ids, tensors, strict=True):
        full = f"{path}.{key}" if path else key
        check_param_id(pid, full)
        if not (isinstance(tensor, dict) and len(tensor) == 1 and "$tensor" in tensor):
            raise RecordError("expected a $tensor", path=full)
        params[key] = ParamRecord(pid, decoder.tensor(tensor["$tensor"], full))
    return ModuleRecord(params)


# -- safetensors ------------------------------------------------------------------------------------
SAFETENSORS_DTYPES = {
    DType.F64: "F64",
    DType.F32: "F32",
    DType.F16: "F16",
    DType.BF16: "BF16",
    DType.I64: "I64",
    DType.I32: "I32",
    DType.I16: "I16",
    DType.I8: "I8",
    DType.U8: "U8",
    DType.BOOL: "BOOL",
}
_FROM_SAFETENSORS = {v: k for k, v in SAFETENSORS_DTYPES.items()}
MAX_SAFETENSORS_HEADER = 100_000_000  # the limit the safetensors library itself enforces


class SafetensorsEncoding(Encoding):
    name = "safetensors"

    def write(self, prepared: Prepared, out: PositionWriter) -> None:
        used: set[str] = set()
        for ref in prepared.refs:
            key, n = ref.path or "tensor", 1
            while key in used:  # {"a.b": t, "a": {"b": t}} would share a dotted key
                key, n = f"{ref.path}#{n}", n + 1
            used.add(key)
            ref.key = key
        tree = PositionWriter(io.BytesIO())
        _KeyJsonWriter(tree, None).write(prepared.doc["item"])
        metadata = {f"burn.{k}": str(v) for k, v in prepared.doc.items() if k != "item"}
        metadata["burn.tree"] = tree._out.getvalue().decode()  # type: ignore[attr-defined]
        write_safetensors(out, prepared.refs, metadata)

    def read(
        self, buf: memoryview, template: Any = None, limits: Limits = DEFAULT_LIMITS
    ) -> tuple[Metadata | None, Any]:
        entries, metadata, data_start = read_safetensors_header(buf, limits)
        views = {
            key: tensor_data(buf[data_start + begin : data_start + end], dtype, shape, count, key)
            for key, (dtype, shape, count, begin, end) in entries.items()
        }
        if metadata is None or "burn.format" not in metadata:
            # A foreign file (PyTorch, JAX...): a module record by key, without param ids.
            return None, ModuleRecord((key, ParamRecord(None, data)) for key, data in views.items())
        raw: dict[str, Any] = {k[len("burn.") :]: v for k, v in metadata.items() if k.startswith("burn.")}
        version = raw.get("format_version", "")
        digits = version.isascii() and version.isdigit() and len(version) < 10
        raw["format_version"] = int(version) if digits else -1  # safetensors metadata is all strings
        meta = Metadata.from_dict(raw, self.name)
        if "tree" not in raw:
            raise RecordError("safetensors metadata has no burn.tree")

        def tensor(node: Any, path: str) -> TensorData:
            (key,) = _node_fields(node, path, "key")
            if not isinstance(key, str) or key not in views:
                raise RecordError(f"no tensor {key!r} in the file", path=path or None)
            return views[key]

        return meta, Decoder(tensor, limits=limits).decode(parse_json(raw["tree"].encode()))


def write_safetensors(out: PositionWriter, refs: Sequence[TensorRef], metadata: Mapping[str, str]) -> None:
    """The safetensors layout of `refs` (each under its ``key``, converted to its dtype one at a
    time as it is written) with string `metadata` in ``__metadata__``."""
    header: dict[str, Any] = {"__metadata__": dict(metadata)} if metadata else {}
    end = 0
    for ref in refs:
        ref.offset = end
        end += ref.nbytes
        header[ref.key] = {
            "dtype": SAFETENSORS_DTYPES[ref.dtype],
            "shape": list(ref.shape),
            "data_offsets": [ref.offset, ref.offset + ref.nbytes],
        }
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # data starts 8-aligned, as the reference writer does
    out.write(_U64.pack(len(raw)))
    out.write(raw)
    for ref in refs:
        out.write_array(ref.array())


class _KeyJsonWriter(JsonWriter):
    """The structure only: tensors become ``{"key": ...}`` references to safetensors entries."""

    def tensor(self, ref: TensorRef, depth: int) -> None:
        self._w(json.dumps({"key": ref.key}))


def read_safetensors_header(
    buf: memoryview, limits: Limits = DEFAULT_LIMITS
) -> tuple[dict[str, tuple[DType, tuple[int, ...], int, int, int]], dict[str, str] | None, int]:
    """Validated entries ``key -> (dtype, shape, count, begin, end)`` in file order, the
    ``__metadata__`` (or None) and where the data starts. Nothing is allocated from sizes in the
    file: every size is checked against the bytes present and against `limits` first."""
    size = buf.nbytes
    if size < 8:
        raise RecordError("safetensors file shorter than its 8-byte header length")
    (n,) = _U64.unpack_from(buf, 0)
    if n > min(size - 8, MAX_SAFETENSORS_HEADER):
        raise RecordError(f"safetensors header of {n} bytes in a {size}-byte file (truncated?)")
    header = parse_json(buf[8 : 8 + n])
    if not isinstance(header, dict):
        raise RecordError("safetensors header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise RecordError("safetensors __metadata__ must map strings to strings")
    data_start, data_len = 8 + n, size - 8 - n
    entries = {}
    budget = TensorBudget(limits)
    for key, entry in header.items():
        if not isinstance(entry, dict) or not all(f in entry for f in ("dtype", "shape", "data_offsets")):
            raise RecordError("a safetensors entry needs dtype, shape and data_offsets", path=key)
        dtype = _FROM_SAFETENSORS.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None
        if dtype is None:
            raise RecordError(f"unsupported safetensors dtype {entry['dtype']!r}", path=key)
        shape, count = parse_shape(entry["shape"], key, limits)
        budget.add(count, key)
        offsets = entry["data_offsets"]
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= data_len
        ):
            raise RecordError(f"data_offsets {offsets!r} outside the {data_len}-byte data section", path=key)
        begin, end = offsets
        if end - begin != count * dtype.itemsize:
            raise RecordError(
                f"shape {list(shape)} of {dtype.value} needs {count * dtype.itemsize} bytes, "
                f"data_offsets give {end - begin}",
                path=key,
            )
        entries[key] = (dtype, shape, count, begin, end)
    ordered = dict(sorted(entries.items(), key=lambda kv: kv[1][3]))
    last = 0
    for key, (*_, begin, end) in ordered.items():
        if begin < last and end > begin:
            raise RecordError("tensor data overlaps the previous tensor's", path=key)
        last = max(last, end)
    return ordered, metadata, data_start
