"""Reading an ONNX file into plain Python: nodes with decoded attributes, initializers as NumPy
arrays, the declared inputs and outputs, and the static shapes ONNX shape inference finds.

This is the only module that touches the `onnx` package (imported on first use: it is the
``burn-core[onnx]`` extra); everything downstream sees `Graph`.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from burn.foundations.limits import Limits, resolve_limits
from burn.onnx.errors import OnnxError
from burn.onnx.proto_checks import check_external_data, check_model, external_tensors, read_file

MIN_OPSET = 13
logger = logging.getLogger("burn.onnx")
INSTALL_HINT = "burn.onnx needs the onnx package: pip install 'burn-core[onnx]'"

Dim = int | str | None  # a static size, a symbolic name, or unknown


@dataclass(frozen=True)
class Node:
    """One graph node: ``op_type`` (``"Conv"``; ``"domain.Op"`` outside the default domain),
    its name (made up from the index when the file has none), input and output value names (an
    empty name is an omitted optional input), and attributes as Python values."""

    op_type: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    # The element type of each input where the graph declares it or ONNX inference finds it
    # (None elsewhere): burn computes integers in int64, and an op whose result depends on the
    # width (BitShift of an int8) reads it here.
    input_dtypes: tuple[np.dtype[Any] | None, ...] = ()

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def input_dtype(self, index: int) -> np.dtype[Any] | None:
        """The element type of input `index`, when known."""
        return self.input_dtypes[index] if index < len(self.input_dtypes) else None


@dataclass(frozen=True)
class ValueInfo:
    """A declared graph input or output: name, element type (a NumPy dtype), dims."""

    name: str
    dtype: np.dtype[Any]
    dims: tuple[Dim, ...] | None  # None: rank unknown
    # "tensor"; "untyped" (no element type given: `dtype` is a float32 guess); else the ONNX
    # type's field ("sequence_type", "optional_type", "map_type"...)
    form: str = "tensor"
    # What a "sequence_type" holds (each element) or an "optional_type" holds when it is not
    # empty: a ValueInfo of the same name (None when the file does not say).
    element: ValueInfo | None = None

    def type_name(self) -> str:
        """The declared type alone: ``float32[2, ?]``, ``sequence(int64[3])``, ``optional(...)``."""
        if self.form in ("sequence_type", "optional_type"):
            inner = "?" if self.element is None else self.element.type_name()
            return f"{self.form.removesuffix('_type')}({inner})"
        dims = (
            "?"
            if self.dims is None
            else "[" + ", ".join("?" if d is None else str(d) for d in self.dims) + "]"
        )
        return f"{self.dtype.name}{dims}"

    def describe(self) -> str:
        return f"{self.name}: {self.type_name()}"


@dataclass
class Graph:
    """A parsed ONNX graph (the main graph of the model)."""

    nodes: list[Node]
    initializers: dict[str, np.ndarray]
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    opset: int
    shapes: dict[str, tuple[int, ...]]  # value name -> static shape, where inference found one
    name: str = ""
    producer: str = ""
    # The file's own opset when ONNX's version converter raised it to `opset` (None otherwise)
    converted_from: int | None = None


def import_onnx() -> Any:
    """The `onnx` module, or an `OnnxError` saying how to install it."""
    try:
        import onnx
    except ImportError as exc:
        raise OnnxError(INSTALL_HINT) from exc
    return onnx


def read_model(source: str | os.PathLike[str] | bytes | Any, limits: Limits | None = None) -> tuple[Any, str]:
    """The ``ModelProto`` of a path, of raw bytes, or a ``ModelProto`` itself, and a label for
    messages (the path, ``<bytes>`` or ``<ModelProto>``).

    What the model declares is checked against `limits` before it is expanded or its tensors
    read (`burn.onnx.proto_checks`): a path must be a regular file within ``max_file_bytes``,
    external data regular files next to it.
    """
    onnx = import_onnx()
    limits = resolve_limits(limits, "burn.onnx: limits")
    base_dir = None
    if isinstance(source, onnx.ModelProto):
        model, label = source, "<ModelProto>"
    else:
        if isinstance(source, (bytes, bytearray, memoryview)):
            label = "<bytes>"
            data = bytes(source)
            if limits.exceeds("max_file_bytes", len(data)):
                raise OnnxError(
                    limits.refusal("max_file_bytes", len(data), "the model's bytes"), source=label
                )
        else:
            label = str(Path(source))
            data = read_file(label, limits)
            base_dir = os.path.dirname(os.path.abspath(label))
        try:
            model = onnx.load_model_from_string(data)
        except Exception as exc:  # noqa: BLE001 - protobuf raises several types for bad bytes
            raise OnnxError(f"not a readable ONNX model ({type(exc).__name__}: {exc})", source=label) from exc
        del data
    if not model.graph.node and not model.graph.output:
        # protobuf parses many non-ONNX byte strings into an empty message without complaint
        raise OnnxError("not an ONNX model (no graph: empty or not a protobuf ModelProto)", source=label)
    try:
        check_model(model, limits)
        if base_dir is not None and next(external_tensors(model), None) is not None:
            check_external_data(model, base_dir, limits)
            try:
                from onnx.external_data_helper import load_external_data_for_model

                load_external_data_for_model(model, base_dir)
            except Exception as exc:  # noqa: BLE001 - I/O and bounds errors of the onnx package
                raise OnnxError(f"cannot read the external data ({type(exc).__name__}: {exc})") from exc
    except OnnxError as err:
        raise err.with_source(label) from err.__cause__
    return model, label


def opset_of(model: Any) -> int:
    """The model's ``ai.onnx`` opset version. A model without one whose nodes are all of other
    domains (``ai.onnx.ml``...) gets the installed onnx's latest when burn runs all of those ops,
    and is otherwise refused by naming the ops burn lacks."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    foreign = [
        (f"{n.domain}.{n.op_type}", n.name or f"{n.op_type}_{i}")
        for i, n in enumerate(model.graph.node)
        if n.domain not in ("", "ai.onnx")
    ]
    if foreign:
        from burn.onnx.errors import UnsupportedOpError
        from burn.onnx.ops import supported_ops

        known = set(supported_ops())
        missing = [f for f in foreign if f[0] not in known]
        if not missing:
            # only ops of other domains that burn runs (an ai.onnx.ml pipeline): no ai.onnx op
            # depends on the opset, so take the installed onnx's latest
            return int(import_onnx().defs.onnx_opset_version())
        version = max((int(e.version) for e in model.opset_import), default=0)
        raise UnsupportedOpError(missing, version, supported_ops())
    raise OnnxError("the model imports no ai.onnx opset")


def convert_opset(model: Any, opset: int, label: str) -> Any:
    """`model` converted to opset `MIN_OPSET` by ONNX's version converter (logged), or an
    `OnnxError` saying the conversion failed."""
    try:
        from onnx import version_converter

        converted = version_converter.convert_version(model, MIN_OPSET)
    except Exception as exc:  # noqa: BLE001 - the converter's own errors: no adapter for an op...
        raise OnnxError(
            f"opset {opset} is older than {MIN_OPSET}, the oldest burn.onnx reads, and ONNX's version "
            f"converter could not convert it ({type(exc).__name__}: {str(exc).strip()[:300]})",
            source=label,
        ) from exc
    logger.info("%s: opset %d converted to opset %d (onnx.version_converter)", label, opset, MIN_OPSET)
    return converted


def parse(model: Any, label: str) -> Graph:
    """`Graph` of a ``ModelProto``; checks the opset and runs ONNX shape inference (a model
    inference fails on is still read, with fewer static shapes)."""
    onnx = import_onnx()
    opset = opset_of(model)
    converted_from = None
    if opset < MIN_OPSET:
        model = convert_opset(model, opset, label)
        converted_from, opset = opset, opset_of(model)
    if model.functions:
        # Local functions become plain nodes (check_model bounded what they expand to).
        try:
            from onnx.inliner import inline_local_functions

            model = inline_local_functions(model)
        except ImportError:  # onnx < 1.16: calls stay unsupported ops
            pass
        except Exception as exc:  # noqa: BLE001 - malformed functions
            raise OnnxError(
                f"cannot inline the local functions ({type(exc).__name__}: {exc})", source=label
            ) from exc
    inferred = infer_shapes(model)
    g = model.graph
    from onnx import numpy_helper

    try:
        initializers = {t.name: np.asarray(numpy_helper.to_array(t)) for t in g.initializer}
    except Exception as exc:  # noqa: BLE001 - external data missing, unknown dtypes...
        raise OnnxError(f"cannot read the initializers ({type(exc).__name__}: {exc})", source=label) from exc
    types = _element_types(onnx, (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output))
    types.update({name: array.dtype for name, array in initializers.items()})
    try:
        nodes = _nodes(onnx, g.node, types)
    except OnnxError as err:
        raise err.with_source(label) from err.__cause__
    shapes: dict[str, tuple[int, ...]] = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        info = _value_info(onnx, vi)
        if info.dims is not None and all(isinstance(d, int) and d >= 0 for d in info.dims):
            shapes[info.name] = tuple(int(d) for d in info.dims)  # type: ignore[arg-type]
    for name, array in initializers.items():
        shapes[name] = tuple(array.shape)
    inputs = [_value_info(onnx, vi) for vi in g.input if vi.name not in initializers]
    outputs = [_value_info(onnx, vi) for vi in g.output]
    return Graph(
        nodes, initializers, inputs, outputs, opset, shapes, g.name, model.producer_name, converted_from
    )


def _element_types(onnx: Any, infos: Sequence[Any]) -> dict[str, np.dtype[Any]]:
    types: dict[str, np.dtype[Any]] = {}
    for vi in infos:
        info = _value_info(onnx, vi)
        if info.form == "tensor":
            types[info.name] = info.dtype
    return types


def _nodes(onnx: Any, protos: Sequence[Any], types: dict[str, np.dtype[Any]]) -> list[Node]:
    """The `Node`s of ``NodeProto``s; `types`: the element types known for their inputs."""
    nodes = []
    for i, n in enumerate(protos):
        op = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
        try:
            attrs = {a.name: _attr_value(onnx, a, types) for a in n.attribute}
        except OnnxError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise OnnxError(f"node {n.name or i!r} ({op}): bad attribute ({exc})") from exc
        dtypes = tuple(types.get(name) for name in n.input)
        nodes.append(Node(op, n.name or f"{op}_{i}", tuple(n.input), tuple(n.output), attrs, dtypes))
    return nodes


def infer_shapes(model: Any) -> Any:
    """`model` with the value infos ONNX shape inference finds (or `model` itself when inference
    fails: it is an optimization, the graph runs without its shapes).

    Where the platform forks, inference runs in a forked child that pipes back only the value
    infos: the onnx package's C++ asserts on some malformed graphs (a negative dim reaching a
    ``Slice``) and aborts the whole process, which a hostile file must not do. A child killed
    that way is an `OnnxError`.
    """
    onnx = import_onnx()
    if not hasattr(os, "fork") or sys.platform != "linux":
        try:
            return onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001
            return model
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: infer, send the value infos, leave without any cleanup
        status = 1
        try:
            os.close(read_end)
            faulthandler.disable()  # an abort here is reported by the parent, without a dump
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)  # nor onnx's assertion message
            inferred = onnx.shape_inference.infer_shapes(model).graph
            infos = onnx.GraphProto()
            infos.value_info.extend(inferred.value_info)
            infos.input.extend(inferred.input)
            infos.output.extend(inferred.output)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(infos.SerializeToString())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        name = signal.Signals(os.WTERMSIG(wait_status)).name
        raise OnnxError(f"ONNX shape inference crashed on this graph ({name}): the graph is malformed")
    if os.WEXITSTATUS(wait_status) != 0:
        return model
    result = onnx.ModelProto()
    result.graph.ParseFromString(payload)
    return result


def _value_info(onnx: Any, vi: Any) -> ValueInfo:
    return type_info(onnx, vi.name, vi.type)


def type_info(onnx: Any, name: str, type_proto: Any) -> ValueInfo:
    """The `ValueInfo` named `name` of a ``TypeProto`` (sequences and optionals with their
    element's)."""
    t = type_proto.tensor_type
    which = type_proto.WhichOneof("value")
    form = "tensor" if t.elem_type else "untyped" if which in (None, "tensor_type") else str(which)
    if form in ("sequence_type", "optional_type"):
        inner = getattr(type_proto, form).elem_type
        element = type_info(onnx, name, inner) if inner.WhichOneof("value") else None
        return ValueInfo(name, np.dtype("float32"), None, form, element)
    if form not in ("tensor", "untyped"):
        return ValueInfo(name, np.dtype("float32"), None, form)
    try:
        dtype = (
            np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))
            if t.elem_type
            else np.dtype("float32")
        )
    except Exception:  # noqa: BLE001 - an element type NumPy has no name for
        dtype, form = np.dtype("float32"), "untyped"
    if not t.HasField("shape"):
        return ValueInfo(name, dtype, None, form)
    dims: list[Dim] = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(str(d.dim_param))
        else:
            dims.append(None)
    return ValueInfo(name, dtype, tuple(dims), form)


def _attr_value(onnx: Any, a: Any, types: dict[str, np.dtype[Any]] | None = None) -> Any:
    from onnx import numpy_helper

    kind = a.type
    t = onnx.AttributeProto
    if kind == t.FLOAT:
        return float(a.f)
    if kind == t.INT:
        return int(a.i)
    if kind == t.STRING:
        return a.s.decode("utf-8", errors="replace")
    if kind == t.TENSOR:
        return np.asarray(numpy_helper.to_array(a.t))
    if kind == t.FLOATS:
        return [float(v) for v in a.floats]
    if kind == t.INTS:
        return [int(v) for v in a.ints]
    if kind == t.STRINGS:
        return [s.decode("utf-8", errors="replace") for s in a.strings]
    if kind == t.GRAPH:
        return parse_body(onnx, a.g, types or {})
    if kind == t.GRAPHS:
        return [parse_body(onnx, g, types or {}) for g in a.graphs]
    if kind == t.TYPE_PROTO:  # Optional's `type`
        return type_info(onnx, a.name, a.tp)
    if kind == t.TYPE_PROTOS:
        return [type_info(onnx, a.name, tp) for tp in a.type_protos]
    raise ValueError(f"attribute {a.name!r} has a type burn.onnx does not read ({kind})")


@dataclass(frozen=True)
class Body:
    """A graph-valued attribute (the branches of ``If``, the bodies of ``Loop`` and ``Scan``):
    its nodes, run by the same runner as the main graph, its own initializers, the names of its
    inputs and outputs, and `captures`: the values of enclosing graphs its nodes (or theirs)
    read, which stay alive in the enclosing graph until the node holding the body has run."""

    name: str
    nodes: tuple[Node, ...]
    initializers: dict[str, np.ndarray]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    captures: frozenset[str]

    def __repr__(self) -> str:
        return f"<subgraph {self.name!r}: {len(self.nodes)} nodes>"


def parse_body(onnx: Any, g: Any, outer_types: dict[str, np.dtype[Any]]) -> Body:
    """The `Body` of a ``GraphProto`` attribute; `outer_types`: the element types of the
    enclosing graphs' values (its nodes may read them)."""
    from onnx import numpy_helper

    initializers = {t.name: np.asarray(numpy_helper.to_array(t)) for t in g.initializer}
    types = dict(outer_types)
    types.update(_element_types(onnx, (*g.value_info, *g.input, *g.output)))
    types.update({name: array.dtype for name, array in initializers.items()})
    nodes = _nodes(onnx, g.node, types)
    inputs = tuple(vi.name for vi in g.input)
    local = set(inputs) | set(initializers) | {o for n in nodes for o in n.outputs if o}
    read = {i for n in nodes for i in (*n.inputs, *node_captures(n)) if i}
    read |= {vi.name for vi in g.output}
    return Body(g.name, tuple(nodes), initializers, inputs, tuple(vi.name for vi in g.output),
                frozenset(read - local))


def node_bodies(node: Node) -> list[Body]:
    """The subgraphs `node` holds (none for most ops)."""
    out: list[Body] = []
    for value in node.attrs.values():
        if isinstance(value, Body):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, Body))
    return out


def node_captures(node: Node) -> frozenset[str]:
    """The values of the enclosing graph that `node`'s subgraphs read (besides its inputs)."""
    bodies = node_bodies(node)
    return frozenset().union(*(b.captures for b in bodies)) if bodies else frozenset()


def min_inputs(op_type: str, opset: int) -> int:
    """How many inputs ONNX requires of `op_type` at `opset` (0 when it has no schema: a custom
    domain's op, which is refused as unsupported anyway)."""
    if "." in op_type:
        return 0
    onnx = import_onnx()
    try:
        return int(onnx.defs.get_schema(op_type, opset).min_input)
    except Exception:  # noqa: BLE001 - no schema for this op at this opset
        return 0


def onnx_dtype(onnx_type: int) -> np.dtype[Any]:
    """The NumPy dtype of an ONNX ``TensorProto`` element type (``Cast``'s ``to``)."""
    onnx = import_onnx()
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(onnx_type))
    except Exception as exc:  # noqa: BLE001
        raise OnnxError(f"unknown ONNX element type {onnx_type}") from exc
