"""``burn.onnx.export``: write a module or function as an ONNX model, from one trace of it.

The function is traced at the contract level (`burn.capture.trace`) in inference mode, each
recorded op is written as standard ONNX nodes by its entry in the table (`table`, filled by
`ops_tensor` and `ops_module`), the params become initializers named as PyTorch names them (or by their module
param path: `param_names`), and the model is checked with ``onnx.checker`` before it is written (atomically:
a failed export never leaves a partial file, nor changes an existing one).

Example:
    >>> import burn, burn.onnx
    >>> from burn import nn
    >>> model = nn.LinearConfig(4, 2).init(burn.backend("ndarray").default_device())
    >>> x = burn.Tensor.zeros((3, 4), backend="ndarray")
    >>> burn.onnx.export(model, x, "linear.onnx", dynamic_axes={"input_0": [0]})  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from burn.capture import HostReadError, trace
from burn.capture.trace import Trace
from burn.errors import BackendMismatchError
from burn.module.base import Module
from burn.onnx.exporter.dynamic import second_sizes, symbolic
from burn.onnx.exporter.graph import DimExpr, ExportError, Graph, Size, onnx_dtype, onnx_module
from burn.onnx.exporter.table import exported_ops, lookup
from burn.tensor.tensor import Tensor

__all__ = ["ExportError", "export", "exported_ops", "param_name"]

DynamicAxes = Mapping[str, Sequence[int] | Mapping[int, str]]

_HOST_READ_WHY = (
    ": an ONNX graph cannot depend on a value read during export (the exported graph would bake "
    "in what was read); compute it with tensor ops, or pass it as an input"
)


def param_name(path: str) -> str:
    """The initializer name of the param at module path `path` (kept as the path itself, so the
    ONNX file and burn's records name weights alike).

    Example:
        >>> param_name("blocks.0.attn.query.weight")
        'blocks.0.attn.query.weight'
    """
    return path


def export(
    module_or_fn: Module | Callable[..., Any],
    example_inputs: Tensor | Sequence[Tensor],
    path: str | os.PathLike[str],
    *,
    dynamic_axes: DynamicAxes | None = None,
    opset: int = 17,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    param_names: str = "auto",
) -> Path:
    """Write `module_or_fn` as an ONNX model at `path`, traced once on `example_inputs`.

    A module is exported in evaluation mode (batch norm on its running statistics, no dropout)
    and, on an autodiff backend, through its inner backend (`Module.valid`). Its params become
    initializers named by their param paths. The function's tensor results (a tensor or tuples,
    lists and dicts of them) are the graph's outputs.

    Args:
        module_or_fn: a `burn.module.Module`, or a function of tensors (a module among its
            arguments is not supported: close over it, or export the module).
        example_inputs: a tensor, or a sequence of tensors, to trace with.
        path: the file to write (its directory must exist).
        dynamic_axes: per input (or output) name, the axes whose size may change at run time: a
            list of axes (named ``<input>_dim<axis>``) or ``{axis: name}`` (the same name for the
            same size in several inputs). Shape constants that follow them (reshapes,
            expansions, slices, filled tensors) are computed from the input's shape in the graph.
        opset: the ONNX opset (17 or later).
        input_names: graph input names (default ``input_0``, ``input_1``, ...).
        output_names: graph output names (default ``output_0``, ...).
        param_names: how initializers are named. ``"pytorch"``: the PyTorch state-dict keys and
            layouts of the equivalent ``torch.nn`` model (`burn.record.pytorch_state_dict`: a
            Linear weight is stored ``[out, in]`` under ``<path>.weight`` and transposed in the
            graph; attention's packed ``in_proj_weight`` is sliced in the graph), as
            ``torch.onnx.export`` names them; a layer with no PyTorch counterpart is an error.
            ``"burn"``: burn's param paths and layouts. ``"auto"`` (default): ``"pytorch"``
            where every layer of the module has a PyTorch counterpart, else ``"burn"``.

    Returns:
        The path written.

    Raises:
        ExportError: an op with no ONNX form (named), a host read inside the function, a shape
            that depends on a dynamic axis in a way a graph cannot express, bad names or axes,
            or a path that cannot be written.

    Example:
        >>> import burn, burn.onnx
        >>> from burn import nn
        >>> dev = burn.backend("ndarray").default_device()
        >>> model = nn.LinearConfig(4, 2).init(dev)
        >>> x = burn.Tensor.zeros((3, 4), device=dev)
        >>> burn.onnx.export(model, x, "linear.onnx", dynamic_axes={"input_0": [0]})  # doctest: +SKIP
        PosixPath('linear.onnx')
    """
    onnx = onnx_module()
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    if param_names not in ("auto", "pytorch", "burn"):
        raise ExportError(f"export: param_names must be 'auto', 'pytorch' or 'burn', got {param_names!r}")
    if not isinstance(opset, int) or opset < 17:
        raise ExportError(f"export: opset must be an int >= 17, got {opset!r}")
    out_path = _check_path(path)
    inputs = [example_inputs] if isinstance(example_inputs, Tensor) else list(example_inputs)
    if not inputs or not all(isinstance(t, Tensor) for t in inputs):
        raise ExportError("export: example_inputs must be a tensor or a non-empty sequence of tensors")
    target: Any = module_or_fn
    if isinstance(target, Module):
        if any(p.val().backend.ad_enabled for _, p in target.named_params()):
            target = target.valid()
        target = target.eval()
    elif not callable(target):
        got = type(target).__name__
        raise ExportError(f"export: module_or_fn must be a burn Module or a function, got {got}")
    inputs = [t.inner() if t.backend.ad_enabled else t for t in inputs]
    sources = _torch_sources(target, param_names)
    in_names = _names("input", input_names, len(inputs))

    first = _trace(target, inputs)
    missing = sorted({c.op for c in first.program.calls if lookup(c.op) is None})
    if missing:
        raise ExportError(
            f"{missing[0]}: no ONNX form for contract op(s) {', '.join(missing)} "
            f"(burn.onnx.export writes {len(exported_ops())} ops; see burn.onnx.exported_ops())"
        )
    out_names = _names("output", output_names, len(first.program.outputs))
    uses, sizes = _dynamic_dims(dynamic_axes, in_names, out_names, inputs)
    calls = list(first.program.calls)
    shapes: dict[int, tuple[Size, ...]] = {}
    if sizes:
        sizes2 = second_sizes(sizes)
        second = _trace(target, [_resized(t, i, uses, sizes2) for i, t in enumerate(inputs)])
        calls, shapes = symbolic(first.program, second.program, sizes, sizes2)

    g = Graph({s: (in_names[i], axis) for s, (i, axis) in reversed(uses)}, shapes, opset)
    prog = first.program
    graph_inputs = []
    for name, t in zip(in_names, prog.inputs, strict=True):
        g.names[t.id] = name
        graph_inputs.append(helper.make_tensor_value_info(name, onnx_dtype(t.dtype), _dims(g.shape(t))))
    initializers = _param_initializers(g, numpy_helper, prog, first, target, sources)
    for call in calls:
        write = lookup(call.op)
        assert write is not None
        results = write(g, call)
        for out, name in zip(call.outputs, results, strict=False):
            if out is not None:
                g.names[out.id] = name
    graph_outputs = []
    for name, t in zip(out_names, prog.outputs, strict=True):
        g.nodes.append(helper.make_node("Identity", [g.name(t)], [name], name=f"n_output_{name}"))
        graph_outputs.append(helper.make_tensor_value_info(name, onnx_dtype(t.dtype), _dims(g.shape(t))))
    graph = helper.make_graph(
        g.nodes, "burn_export", graph_inputs, graph_outputs, initializer=initializers + g.initializers
    )
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="burn")
    # the oldest IR version the opset allows: the file then loads in the most runtimes
    model.ir_version = helper.find_min_ir_version_for(opsets)
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as e:  # a bug of a table entry, never the user's
        raise ExportError(f"export: the written graph fails onnx.checker: {e}") from e
    data = model.SerializeToString()
    from burn.record._io import atomic_write

    try:
        atomic_write(out_path, lambda f: _write_all(f, data))
    except OSError as e:
        raise ExportError(f"export: cannot write {str(out_path)!r}: {e.strerror or e}") from e
    return out_path


def _torch_sources(target: Any, param_names: str) -> dict[str, Any] | None:
    """Each param path -> its `Source` in the PyTorch state dict, or None for burn's names."""
    if param_names == "burn" or not isinstance(target, Module):
        return None
    from burn.record.errors import RecordError
    from burn.record.pytorch_adapters import torch_sources

    try:
        return torch_sources(target)
    except RecordError as e:
        if param_names == "pytorch":
            raise ExportError(f"export: param_names='pytorch': {e}") from e
        return None


def _param_initializers(
    g: Graph, numpy_helper: Any, prog: Any, first: Trace, target: Any, sources: dict[str, Any] | None
) -> list[Any]:
    """The params' initializers, and the ONNX name of each param value read by the trace.

    With PyTorch names, a param stored transposed or as a row block of a packed tensor (Linear's
    weight, attention's ``in_proj_weight``) is the initializer in PyTorch's layout followed by a
    Slice / Transpose node, which runtimes fold once when the session is built."""
    if sources is None:
        out = []
        for p_path, t in prog.params:
            name = param_name(p_path)
            g.names[t.id] = name
            out.append(numpy_helper.from_array(first.params[p_path].to_data().to_numpy(), name))
        return out
    from burn.record.pytorch_adapters import put

    arrays = {path: p.val().to_data().to_numpy() for path, p in target.named_params()}
    groups: dict[str, list[tuple[Any, np.ndarray, str]]] = {}
    for path, array in arrays.items():
        groups.setdefault(sources[path].key, []).append((sources[path], array, path))
    read = {p_path for p_path, _ in prog.params}
    out, rows = [], {}
    for key, pieces in groups.items():
        if not any(path in read for _, _, path in pieces):
            continue
        packed = np.ascontiguousarray(put(pieces, key))
        rows[key] = packed.shape[0] if packed.ndim else 0
        out.append(numpy_helper.from_array(packed, key))
    for p_path, t in prog.params:
        source = sources[p_path]
        name = source.key
        if source.part is not None:
            index, count = source.part
            size = rows[source.key] // count
            starts, ends = np.array([index * size], np.int64), np.array([(index + 1) * size], np.int64)
            name = g.node("Slice", [name, g.const(starts), g.const(ends), g.const(np.array([0], np.int64))])
        if source.transpose and len(t.shape) == 2:
            name = g.node("Transpose", [name], perm=[1, 0])
        g.names[t.id] = name
    return out


def _write_all(f: Any, data: bytes) -> None:
    f.write(data)


def _trace(target: Any, inputs: list[Tensor]) -> Trace:
    try:
        return trace(target, *inputs, host_reads="error", why=_HOST_READ_WHY)
    except (HostReadError, BackendMismatchError) as e:
        raise ExportError(str(e)) from e


def _check_path(path: Any) -> Path:
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise ExportError(f"export: path must be a str or os.PathLike, got {type(path).__name__}") from None
    if p.is_dir():
        raise ExportError(f"export: path {str(p)!r} is a directory, not a file")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ExportError(f"export: the directory of {str(p)!r} does not exist")
    return p


def _names(prefix: str, given: Sequence[str] | None, n: int) -> list[str]:
    if given is None:
        return [f"{prefix}_{i}" for i in range(n)]
    names = list(given)
    if len(names) != n or len(set(names)) != n or not all(isinstance(s, str) and s for s in names):
        raise ExportError(f"export: {prefix}_names must be {n} distinct non-empty strings, got {names!r}")
    return names


def _dynamic_dims(
    axes: DynamicAxes | None, in_names: list[str], out_names: list[str], inputs: list[Tensor]
) -> tuple[list[tuple[str, tuple[int, int]]], dict[str, int]]:
    """The dynamic axes as ``(symbol, (input index, axis))``, and each symbol's size in the example."""
    uses: list[tuple[str, tuple[int, int]]] = []
    sizes: dict[str, int] = {}
    for name, spec in (axes or {}).items():
        if name in out_names:
            continue  # output dims follow from the inputs'
        if name not in in_names:
            known = in_names + out_names
            raise ExportError(f"export: dynamic_axes names {name!r}, not an input or output ({known})")
        i = in_names.index(name)
        shape = inputs[i].shape
        named = dict(spec) if isinstance(spec, Mapping) else {a: f"{name}_dim{a}" for a in spec}
        for axis, symbol in named.items():
            if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
                raise ExportError(
                    f"export: dynamic axis {axis!r} of {name!r} is out of range for shape {shape}"
                )
            axis %= len(shape)
            if symbol in sizes and sizes[symbol] != shape[axis]:
                raise ExportError(
                    f"export: dynamic axis {symbol!r} has size {sizes[symbol]} and {shape[axis]} in the "
                    "examples"
                )
            sizes.setdefault(symbol, shape[axis])
            uses.append((symbol, (i, axis)))
    return uses, sizes


def _resized(t: Tensor, index: int, uses: list[tuple[str, tuple[int, int]]], sizes: dict[str, int]) -> Tensor:
    """Example input `index` with each of its dynamic axes at the second trace's size (its
    entries repeated cyclically, so that values stay valid, e.g. token ids)."""
    array = t.to_data().to_numpy()
    for symbol, (i, axis) in uses:
        if i == index:
            array = np.take(array, np.arange(sizes[symbol]) % array.shape[axis], axis=axis)
    return Tensor.from_data(np.ascontiguousarray(array), t.device, dtype=t.dtype)


def _dims(shape: tuple[Size, ...]) -> list[int | str | None]:
    out: list[int | str | None] = []
    for d in shape:
        if isinstance(d, DimExpr):
            out.append(d.symbol if (d.mult, d.offset) == (1, 0) else None)
        else:
            out.append(int(d))
    return out
