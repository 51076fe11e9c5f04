"""What an ONNX file declares, checked against `burn.Limits` before anything is built from it.

`read_model` reads a file only once it is known to be a regular file within
``max_file_bytes`` (opening a FIFO would block, a device never ends). `check_model` then walks the
parsed ``ModelProto`` once, without expanding anything: local functions are counted through a
memo (a function called twice counts its nodes twice without being walked twice), so a graph of
nested functions that would expand to 2^40 nodes is refused by arithmetic, in microseconds,
before ONNX shape inference or inlining ever expands it; a function calling itself, directly or
through others, is refused as a cycle. Tensors (initializers, ``Constant`` values, external data)
are checked from their declared element type and dims before NumPy allocates for them.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from burn.foundations.limits import Limits
from burn.onnx.errors import OnnxError

# Element types with no numeric array (TensorProto.DataType values): refused by name.
_REFUSED_TYPES = {0: "UNDEFINED", 8: "STRING", 14: "COMPLEX64", 15: "COMPLEX128"}


def type_name(elem_type: int) -> str:
    """The ONNX name of a ``TensorProto`` element type (``"STRING"``), or its number."""
    try:
        from onnx import TensorProto

        return str(TensorProto.DataType.Name(elem_type))
    except (ImportError, ValueError):
        return f"element type {elem_type}"


def loadable(elem_type: int) -> bool:
    """Whether burn.onnx turns tensors of this element type into arrays (numbers and bools,
    float8 and int4 included; not strings nor complex numbers)."""
    if elem_type in _REFUSED_TYPES:
        return False
    try:
        from onnx.helper import tensor_dtype_to_np_dtype

        tensor_dtype_to_np_dtype(elem_type)
    except Exception:  # noqa: BLE001 - an element type this onnx version does not know
        return False
    return True


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_file(path: str, limits: Limits, what: str = "") -> bytes:
    """The bytes of the regular file `path`, refused with an `OnnxError` naming it when it is
    missing, not a regular file (checked before opening: opening a FIFO blocks) or over
    ``max_file_bytes``. `what` prefixes the message (``"external data 'w.bin'"``)."""
    prefix = f"{what}: " if what else ""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise OnnxError(f"{prefix}no such file", source=path) from None
    except OSError as exc:
        raise OnnxError(f"{prefix}cannot read it ({exc.strerror or exc})", source=path) from exc
    if not stat.S_ISREG(st.st_mode):
        raise OnnxError(f"{prefix}not a regular file ({_file_kind(st.st_mode)})", source=path)
    if limits.exceeds("max_file_bytes", st.st_size):
        raise OnnxError(limits.refusal("max_file_bytes", st.st_size, prefix + "the file"), source=path)
    try:
        with open(path, "rb") as f:
            # The path may have been swapped since the stat: check what was opened.
            opened = os.fstat(f.fileno())
            if not stat.S_ISREG(opened.st_mode) or limits.exceeds("max_file_bytes", opened.st_size):
                raise OnnxError(f"{prefix}changed while being opened", source=path)
            return f.read(opened.st_size)
    except OSError as exc:
        raise OnnxError(f"{prefix}cannot read it ({exc.strerror or exc})", source=path) from exc


def check_tensor(tensor: Any, limits: Limits, what: str) -> int:
    """Refuse a ``TensorProto`` whose element type burn cannot load or whose declared dims are
    negative or over the limits; returns its element count."""
    if not loadable(tensor.data_type):
        raise OnnxError(
            f"{what} has element type {type_name(tensor.data_type)}, which burn.onnx cannot load "
            f"(numeric and bool tensors only)"
        )
    dims = [int(d) for d in tensor.dims]
    if limits.exceeds("max_rank", len(dims)):
        raise OnnxError(limits.refusal("max_rank", len(dims), what))
    if any(d < 0 for d in dims):
        raise OnnxError(f"{what} declares negative dims {dims}")
    elements = math.prod(dims)
    if limits.exceeds("max_tensor_elements", elements):
        raise OnnxError(limits.refusal("max_tensor_elements", elements, f"{what} of dims {dims}"))
    return elements


def check_dims(info: Any, limits: Limits, what: str) -> None:
    """Refuse a declared value (a ``ValueInfoProto``) with negative dims or too many of them."""
    t = info.type.tensor_type
    if not t.HasField("shape"):
        return
    dims = [d.dim_value for d in t.shape.dim if d.HasField("dim_value")]
    if limits.exceeds("max_rank", len(t.shape.dim)):
        raise OnnxError(limits.refusal("max_rank", len(t.shape.dim), f"{what} {info.name!r}"))
    if any(d < 0 for d in dims):
        raise OnnxError(f"{what} {info.name!r} declares a negative dim ({', '.join(map(str, dims))})")


def _subgraphs(node: Any) -> Iterator[Any]:
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


def _tensors(node: Any) -> Iterator[Any]:
    for a in node.attribute:
        if a.HasField("t"):
            yield a.t
        yield from a.tensors


def _key(node_or_function: Any, op_type: str) -> tuple[str, str, str]:
    return (node_or_function.domain, op_type, getattr(node_or_function, "overload", ""))


def _label(key: tuple[str, str, str]) -> str:
    domain, name, overload = key
    return f"{domain}.{name}" + (f":{overload}" if overload else "") if domain else name


@dataclass
class _Walk:
    """One walk of a model: the expanded node count of each function (a memo), the chain of
    functions being expanded (to see cycles and depth) and the tensors met."""

    functions: dict[tuple[str, str, str], Any]
    limits: Limits
    memo: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    chain: list[tuple[str, str, str]] = field(default_factory=list)
    elements: int = 0
    tensors: int = 0
    root: str = ""  # the main-graph node the chain of functions started from

    def tensor(self, tensor: Any, what: str) -> None:
        self.elements += check_tensor(tensor, self.limits, what)
        self.tensors += 1
        if self.limits.exceeds("max_tensors", self.tensors):
            raise OnnxError(self.limits.refusal("max_tensors", self.tensors, "the model's tensors"))
        if self.limits.exceeds("max_total_elements", self.elements):
            raise OnnxError(
                self.limits.refusal("max_total_elements", self.elements, "the model's tensors together")
            )

    def nodes(self, nodes: Any, graph_depth: int, where: str) -> tuple[int, int]:
        """Node count of `nodes` with their functions and subgraphs expanded, and the deepest
        nesting of functions under them."""
        if self.limits.exceeds("max_depth", graph_depth):
            raise OnnxError(self.limits.refusal("max_depth", graph_depth, f"subgraphs nested in {where}"))
        total = deepest = 0
        for i, node in enumerate(nodes):
            name = node.name or f"{node.op_type}_{i}"
            for tensor in _tensors(node):
                self.tensor(tensor, f"the tensor attribute of node {name!r} ({node.op_type}) in {where}")
            key = _key(node, node.op_type)
            function = self.functions.get(key)
            if function is None:
                total += 1
            else:
                count, depth = self.function(key, function, name)
                total += count
                deepest = max(deepest, depth)
            for sub in _subgraphs(node):
                for tensor in sub.initializer:
                    self.tensor(tensor, f"initializer {tensor.name!r} of a subgraph of node {name!r}")
                count, depth = self.nodes(sub.node, graph_depth + 1, f"node {name!r} ({node.op_type})")
                total += count
                deepest = max(deepest, depth)
        return total, deepest

    def function(self, key: tuple[str, str, str], function: Any, caller: str) -> tuple[int, int]:
        if key in self.chain:
            cycle = " -> ".join(_label(k) for k in (*self.chain[self.chain.index(key) :], key))
            raise OnnxError(f"local function {_label(key)!r} calls itself ({cycle}): recursion is refused")
        if not self.chain:
            self.root = caller
        if key not in self.memo:
            level = len(self.chain) + 1
            if self.limits.exceeds("max_function_depth", level):
                raise OnnxError(self.limits.refusal("max_function_depth", level, self._chain_text(key)))
            self.chain.append(key)
            count, depth = self.nodes(function.node, 0, f"local function {_label(key)!r}")
            self.chain.pop()
            self.memo[key] = (count, depth + 1)
        count, depth = self.memo[key]
        level = len(self.chain) + depth
        if self.limits.exceeds("max_function_depth", level):
            raise OnnxError(self.limits.refusal("max_function_depth", level, self._chain_text(key)))
        return count, depth

    def _chain_text(self, key: tuple[str, str, str]) -> str:
        names = [_label(k) for k in (*self.chain, key)]
        if len(names) > 6:
            names = [*names[:3], "...", *names[-2:]]
        return f"local functions called by node {self.root!r} ({' -> '.join(names)})"


def check_model(model: Any, limits: Limits) -> int:
    """Refuse a ``ModelProto`` over `limits`: its local functions nested deeper than
    ``max_function_depth`` or calling themselves, more than ``max_graph_nodes`` nodes with
    functions and subgraphs expanded, subgraphs nested deeper than ``max_depth``, and tensors of
    element types burn cannot load or over the element limits (from their declared dims, before
    anything is read). Returns the expanded node count. Raises `OnnxError` without a source (the
    caller adds the file)."""
    functions = {_key(f, f.name): f for f in model.functions}
    walk = _Walk(functions, limits)
    g = model.graph
    for tensor in g.initializer:
        walk.tensor(tensor, f"initializer {tensor.name!r}")
    for sparse in g.sparse_initializer:
        raise OnnxError(f"sparse initializer {sparse.values.name!r} is not supported")
    for info in g.input:
        check_dims(info, limits, "input")
    for info in g.output:
        check_dims(info, limits, "output")
    try:
        count, _ = walk.nodes(g.node, 0, "the main graph")
    except RecursionError as exc:  # only with limits raised far past their defaults
        raise OnnxError("the model nests functions or subgraphs too deeply to walk") from exc
    if limits.exceeds("max_graph_nodes", count):
        raise OnnxError(
            limits.refusal("max_graph_nodes", count, "the graph with its functions and subgraphs expanded")
        )
    return count


def external_tensors(model: Any) -> Iterator[Any]:
    """The tensors of `model` (initializers and attributes, subgraphs and functions included)
    whose data is in an external file."""
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    for tensor in _get_all_tensors(model):
        if uses_external_data(tensor):
            yield tensor


def check_external_data(model: Any, base_dir: str, limits: Limits) -> None:
    """Refuse external data outside `base_dir`, in anything but a regular file, or declaring
    more bytes than its file holds, before any of it is read."""
    for tensor in external_tensors(model):
        entries = {e.key: e.value for e in tensor.external_data}
        location = entries.get("location", "")
        what = f"external data of initializer {tensor.name!r} ({location!r})"
        if not location or os.path.isabs(location) or ".." in location.replace("\\", "/").split("/"):
            raise OnnxError(f"{what}: the location must be a file name relative to the model's folder")
        path = os.path.join(base_dir, location)
        try:
            st = os.stat(path)
        except OSError:
            raise OnnxError(f"{what}: no such file next to the model ({path})") from None
        if not stat.S_ISREG(st.st_mode):
            raise OnnxError(f"{what}: not a regular file ({_file_kind(st.st_mode)})")
        try:
            offset = int(entries.get("offset", 0))
            length = int(entries["length"]) if "length" in entries else st.st_size - offset
        except ValueError:
            raise OnnxError(f"{what}: offset and length must be integers") from None
        if offset < 0 or length < 0 or offset + length > st.st_size:
            raise OnnxError(f"{what}: offset {offset} and length {length} do not fit its {st.st_size} bytes")
