"""`load` and `OnnxModel`: an ONNX graph as a burn `Module`.

Loading reads the file (`burn.onnx.graph`), refuses unsupported ops (all of them named at
once), turns the float initializers into `Param`s, and folds at load time every node whose
inputs are all known: constants, integer initializers, and the shapes ONNX shape inference
finds static (so ``Shape -> Gather -> Concat -> Reshape`` chains become concrete targets and a
causal mask built from ``Range``/``Less``/``Trilu`` becomes one constant). What is left runs on
each call, op by op, with burn tensor ops: on any backend, under autodiff too.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import BurnError
from burn.foundations.kind import Float
from burn.foundations.limits import Limits, resolve_limits
from burn.module.base import Module
from burn.module.param import Param
from burn.onnx.errors import (
    OnnxError,
    OnnxKindError,
    OnnxShapeError,
    UnsupportedOpError,
    node_failure,
    onnx_error_type,
)
from burn.onnx.graph import Body, Graph, Node, ValueInfo, node_bodies, node_captures, parse, read_model
from burn.onnx.graph_checks import check_graph
from burn.onnx.narrow_dtypes import is_narrow
from burn.onnx.ops import REGISTRY, supported_ops
from burn.onnx.output_size import SHAPED_BY_VALUES, check_output
from burn.onnx.patterns import FUSED, rewrite
from burn.onnx.runtime import Ctx, is_tensor, kind_of_numpy

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.foundations.dtype import DType
    from burn.tensor.tensor import Tensor

# Initializer inputs that hold statistics, not weights: loaded as params that never train.
_FROZEN_INPUTS = {"BatchNormalization": (3, 4)}


@dataclass(frozen=True)
class Program:
    """What a call runs: the nodes left after folding, the host constants they read, the
    declared inputs and the output names. Shared by every copy of a model (`map`, `to_device`)."""

    nodes: tuple[Node, ...]
    constants: dict[str, np.ndarray]
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[str, ...]
    opset: int
    folded: int
    source: str
    limits: Limits
    output_infos: tuple[ValueInfo, ...] = ()
    converted_from: int | None = None  # the file's opset, when converted to `opset` at load
    # The nodes' calls resolved at load (`plan`), each freeing the values it reads last: worked
    # out once, not per node per call. Empty: `run` plans them on each call.
    steps: tuple[Step, ...] = ()


@dataclass(frozen=True)
class Step:
    """One node of the main graph with what running it needs, looked up once at load rather
    than on every call: the op's implementations, the names it reads, writes and frees, and
    whether it needs the generic path (`_run_node`: ops taking sequences, ops whose output size
    their input values set, host-only ops). Any other op whose inputs can never be sequences
    (``Conv``, ``Relu``, ``Add``...) is `direct`: called straight, in NumPy when all its inputs
    are host arrays."""

    node: Node
    run: Any  # the OpFn of the node's op, when `direct`
    host: Any  # its HostFn, when it has one: a direct step whose inputs are all on the host runs it
    direct: bool
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    dead: tuple[str, ...]


def plan(nodes: Sequence[Node], keep: Sequence[str], sequence_values: set[str]) -> tuple[Step, ...]:
    """The steps that run `nodes`. ``Identity`` nodes are resolved here rather than run: a later
    reader of an Identity's output reads its input (the same value, as the op would pass it on),
    except for the outputs in `keep` (the graph's) and those a subgraph reads by name. Each
    step frees the values it is the last to read (`keep` excepted). `sequence_values`: the names
    that may hold a sequence or an empty optional from outside `nodes` (the graph's sequence and
    optional inputs); the outputs of the ops that take sequences (and so may make them) are
    added on the way.

    Example:
        >>> from burn.onnx.graph import Node
        >>> nodes = [Node("Identity", "i", ("x",), ("x1",)), Node("Relu", "a", ("x1",), ("y",)),
        ...          Node("SequenceConstruct", "b", ("y",), ("s",))]
        >>> [(s.node.op_type, s.inputs, s.direct, s.dead) for s in plan(nodes, ["s"], set())]
        [('Relu', ('x',), True, ('x',)), ('SequenceConstruct', ('y',), False, ('y',))]
    """
    kept = set(keep)
    fixed = kept | {name for node in nodes for name in node_captures(node)}  # names that must exist
    alias: dict[str, str] = {}
    runs: list[tuple[Node, tuple[str, ...]]] = []
    for node in nodes:
        inputs = tuple(alias.get(i, i) for i in node.inputs)
        out = node.outputs[0] if len(node.outputs) == 1 else ""
        if node.op_type == "Identity" and len(inputs) == 1 and inputs[0] and out and out not in fixed:
            alias[out] = inputs[0]  # (ViT exports: 120 of 441 nodes)
            continue
        runs.append((node, inputs))
    dead = _last_reads([(*inputs, *node_captures(node)) for node, inputs in runs], kept)
    may_hold_sequence = set(sequence_values)
    steps = []
    for (node, inputs), freed in zip(runs, dead, strict=True):
        info = REGISTRY.get(node.op_type) or FUSED[node.op_type]
        direct = (
            info.run is not None
            and not info.sequences
            and node.op_type not in SHAPED_BY_VALUES
            and not any(i in may_hold_sequence for i in inputs if i)
        )
        if info.sequences:
            may_hold_sequence.update(o for o in node.outputs if o)
        steps.append(Step(node, info.run, info.host, direct, inputs, tuple(node.outputs), freed))
    return tuple(steps)


def check_supported(graph: Graph, source: str) -> None:
    """Raise `UnsupportedOpError` naming every node burn cannot run."""
    supported = supported_ops()  # (also imports the implementations: they fill REGISTRY)

    def walk(nodes: Sequence[Node]) -> Iterator[Node]:  # the nodes of the subgraphs too
        for n in nodes:
            yield n
            for body in node_bodies(n):
                yield from walk(body.nodes)

    bad = [(n.op_type, n.name) for n in walk(graph.nodes) if n.op_type not in REGISTRY]
    if bad:
        raise UnsupportedOpError(bad, graph.opset, supported, source=source)


class _ShapeOnly:
    """Stands for a value whose static shape is all a ``Shape``/``Size`` fold reads (no memory,
    however large the shape)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def _check_fold(graph: Graph, node: Node, values: Sequence[Any], limits: Limits) -> None:
    """Refuse folding `node` when its output would be over the limits: from the op's own sizes
    where it can grow its inputs (`output_size`), else from the shapes inference found."""
    check_output(node, values, limits, folding=True)
    shapes = [graph.shapes.get(name) for name in node.outputs if name]
    if shapes and all(s is not None for s in shapes):
        elements = max(math.prod(s) for s in shapes if s is not None)
        itemsize = max((np.asarray(v).dtype.itemsize for v in values if isinstance(v, np.ndarray)), default=4)
        if limits.exceeds("max_folded_bytes", elements * itemsize):
            shape = list(shapes[0] or ())
            what = f"node {node.name!r} ({node.op_type}), folded to a constant of inferred shape {shape}"
            raise OnnxError(limits.refusal("max_folded_bytes", elements * itemsize, what))


def fold(
    graph: Graph, params: set[str], source: str, limits: Limits | None = None
) -> tuple[list[Node], dict[str, np.ndarray], int]:
    """The nodes that must run at call time and the host constants they need; every node whose
    inputs are known on the host (and which has a NumPy implementation) is evaluated here.

    A fold whose output would be over ``limits.max_folded_bytes`` (or ``max_tensor_elements``)
    is refused before it is computed, naming the node; each result is checked again after."""
    limits = resolve_limits(limits)
    known: dict[str, np.ndarray] = {k: v for k, v in graph.initializers.items() if k not in params}
    kept: list[Node] = []
    folded = 0
    for node in graph.nodes:
        info = REGISTRY[node.op_type]
        names = [i for i in node.inputs if i]
        values: list[Any] | None = None
        if node.op_type in ("Shape", "Size") and names and names[0] not in known and names[0] in graph.shapes:
            values = [_ShapeOnly(graph.shapes[names[0]])]
        elif info.host is not None and all(i in known for i in names):
            values = [known[i] if i else None for i in node.inputs]
        if values is None:
            kept.append(node)
            continue
        computed = node.op_type != "Constant"  # a Constant's value is the file's, already checked
        try:
            if computed:
                _check_fold(graph, node, values, limits)
        except OnnxError as err:
            raise err.with_source(source) from err.__cause__
        try:
            outs = info.host(node, values)  # type: ignore[misc]
            arrays = [np.asarray(value) for value in outs]
        except Exception as exc:  # noqa: BLE001 - any failure here is a malformed graph
            what = exc.reason if isinstance(exc, OnnxError) else f"{type(exc).__name__}: {exc}"
            raise onnx_error_type(exc)(
                f"node {node.name!r} ({node.op_type}, opset {graph.opset}): cannot evaluate it on its "
                f"constant inputs: {what.removeprefix(f'node {node.name!r} ({node.op_type}): ')}",
                source=source, node=node.name, op_type=node.op_type, opset=graph.opset,
            ) from exc
        size = sum(int(a.nbytes) for a in arrays)
        if computed and limits.exceeds("max_folded_bytes", size):
            what = f"node {node.name!r} ({node.op_type}), folded to a constant"
            raise OnnxError(limits.refusal("max_folded_bytes", size, what), source=source)
        for name, value in zip(node.outputs, arrays, strict=False):
            if name:
                known[name] = value
        folded += 1
    # Keep only the nodes (and constants) the outputs depend on.
    needed = {o.name for o in graph.outputs}
    live: list[Node] = []
    for node in reversed(kept):
        if any(o in needed for o in node.outputs):
            live.append(node)
            needed.update(i for i in (*node.inputs, *node_captures(node)) if i)
    live.reverse()
    constants = {k: v for k, v in known.items() if k in needed}
    return live, constants, folded


class OnnxModel(Module):
    """A burn module running an ONNX graph: its float initializers are `Param`s in `weights`
    (keyed by their ONNX names), so it trains, saves, loads and moves between backends like any
    module; calling it runs the graph with burn tensor ops.

    Build one with `burn.onnx.load`. Call it with the graph's inputs in order (or by name), as
    burn tensors or NumPy arrays; it returns one tensor, or a tuple for several outputs.
    `run` takes and returns dicts keyed by the ONNX names.

    Example:
        >>> model = burn.onnx.load("mlp.onnx", backend="autodiff(ndarray)")  # doctest: +SKIP
        >>> y = model(burn.Tensor.ones((2, 4), backend=model.backend))  # doctest: +SKIP
        >>> model.input_names, model.output_names, model.num_params()  # doctest: +SKIP
        (['input'], ['output'], 58)
    """

    def __init__(
        self,
        weights: dict[str, Param],
        program: Program,
        float_dtype: DType,
        home: tuple[Backend, Device] | None = None,
    ) -> None:
        self.weights = weights
        self.program = program
        self.float_dtype = float_dtype
        # Where a call runs when neither an input tensor nor a param says (a graph without
        # params fed NumPy arrays): the backend and device `load` was given.
        self._home = home
        self._constants_on_device: dict[Any, Any] = {}

    # -- description ------------------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        """The graph's inputs (initializers excluded), in call order."""
        return [i.name for i in self.program.inputs]

    @property
    def output_names(self) -> list[str]:
        return list(self.program.outputs)

    @property
    def backend(self) -> Backend | None:
        """The backend the params live on (None for a model without params)."""
        for param in self.weights.values():
            owner = param.device.owner
            if owner is not None:
                return owner  # type: ignore[no-any-return]
        return self._home[0] if self._home is not None else None

    def to_device(self, device: Device) -> OnnxModel:
        """The model with its params on `device`; a model without params runs there too."""
        out = super().to_device(device)
        if device.owner is not None:
            out = copy.copy(out) if out is self else out
            object.__setattr__(out, "_home", (device.owner, device))
        return out

    # -- calling ----------------------------------------------------------------------------------
    def forward(self, *inputs: Any, **named: Any) -> Any:
        """Run the graph: inputs by position (in `input_names` order) or by name; returns the
        only output, or a tuple of the outputs in order."""
        if len(inputs) > len(self.program.inputs):
            raise OnnxError(
                f"the graph takes {len(self.program.inputs)} inputs ({', '.join(self.input_names)}), "
                f"got {len(inputs)}",
                source=self.program.source,
            )
        feeds = dict(zip(self.input_names, inputs, strict=False))
        for name, value in named.items():
            if name in feeds:
                raise TypeError(f"input {name!r} given twice (by position and by name)")
            feeds[name] = value
        out = self.run(feeds)
        values = [out[name] for name in self.program.outputs]
        return values[0] if len(values) == 1 else tuple(values)

    def run(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        """Run the graph on the inputs `feeds` (name -> tensor or NumPy array); returns every
        output by name: tensors, except the outputs declared with an element type narrower than
        any burn dtype (float8, float4, int4/uint4, int2/uint2), which are NumPy arrays of that
        ``ml_dtypes`` type (inputs of those types are given the same way). A sequence input or
        output is a list of those; an optional one is its value, or None when it is empty.

        Raises:
            OnnxError: a missing or unknown input.
            OnnxKindError, OnnxShapeError: an input of the wrong kind, rank or static size (also a
                `KindError` / `ShapeError`).
            OnnxError: a node failed; it names the node, its op and the opset (attributes
                `node`, `op_type`, `opset`), and is an `OnnxShapeError`, `OnnxKindError` or
                `OnnxDTypeError` when burn's own check of a shape, kind or dtype failed.
        """
        program = self.program
        declared = {i.name for i in program.inputs}
        unknown = sorted(set(feeds) - declared)
        missing = [i.name for i in program.inputs if i.name not in feeds]
        if unknown or missing:
            raise OnnxError(
                f"inputs {'missing: ' + ', '.join(missing) if missing else ''}"
                f"{'; ' if unknown and missing else ''}{'unknown: ' + ', '.join(unknown) if unknown else ''}"
                f" (the graph takes {', '.join(i.describe() for i in program.inputs)})",
                source=program.source,
            )
        ctx = self._context(feeds)
        env: dict[str, Any] = dict(program.constants)
        for name, param in self.weights.items():
            env[name] = param.val()
        for info in program.inputs:
            try:
                env[info.name] = _check_input(ctx, info, feeds[info.name])
            except OnnxError as exc:
                if program.converted_from is None:
                    raise
                # the converter may have rewritten the inputs (Scan lost its batch axis at 9)
                raise type(exc)(
                    f"{exc.reason} (the graph's inputs are those of opset {program.opset}, which ONNX's "
                    f"version converter made from the file's opset {program.converted_from})",
                    source=program.source,
                ) from exc
        run_steps(ctx, program, program.steps or _plan_of(program), env)
        missing = [name for name in program.outputs if name not in env]
        if missing:
            raise OnnxError(f"the graph's outputs {missing} were not produced", source=program.source)
        infos = {o.name: o for o in program.output_infos}
        return {name: _output(ctx, infos.get(name), env[name], program.source) for name in program.outputs}

    def _context(self, feeds: Mapping[str, Any]) -> Ctx:
        first = next((v for v in feeds.values() if is_tensor(v)), None)
        if first is None:
            first = next((p.val() for p in self.weights.values()), None)
        if first is None and self._home is not None:
            backend, device = self._home
        elif first is None:
            from burn.plugins import default_backend

            backend = default_backend()
            device = backend.default_device()
        else:
            backend, device = first.backend, first.device
        dtype = self.float_dtype if backend.capabilities.supports(self.float_dtype) else backend.float_dtype
        ctx = Ctx(backend, device, dtype, self._constants_on_device, self.program.constants)
        program = self.program

        def run_body(body: Body, feeds: Mapping[str, Any]) -> list[Any]:
            # A subgraph sees every value of the graphs around it, then its own.
            outer = ctx.scope
            env = {**outer, **body.initializers, **feeds}
            try:
                run_nodes(ctx, program, body.nodes, env)
            finally:
                ctx.scope = outer
            missing = [name for name in body.outputs if name not in env]
            if missing:
                raise OnnxError(f"subgraph {body.name!r}: its outputs {missing} were not produced",
                                source=program.source)
            return [env[name] for name in body.outputs]

        ctx.run_body = run_body
        return ctx


def run_nodes(
    ctx: Ctx,
    program: Program,
    nodes: Sequence[Node],
    env: dict[str, Any],
    dead: Sequence[Sequence[str]] | None = None,
) -> None:
    """Run `nodes` in order over the values `env` (name -> value), adding their outputs to it:
    the main graph and every subgraph (``If`` / ``Loop`` / ``Scan`` bodies, whose ops reach this
    through `Ctx.run_body`). With `dead` (`dead_values`: per node, the values it reads last),
    those values are dropped once it has run."""
    for index, node in enumerate(nodes):
        try:
            inputs = [env[i] if i else None for i in node.inputs]
        except KeyError as exc:
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}) reads {exc.args[0]!r}, which no node produces",
                source=program.source,
            ) from None
        ctx.scope = env
        outs = _run_node(ctx, node, inputs, program)
        for name, value in zip(node.outputs, outs, strict=False):
            if name:
                env[name] = value
        if dead is not None:
            for name in dead[index]:
                env.pop(name, None)  # free intermediate tensors as soon as they are dead


def run_steps(ctx: Ctx, program: Program, steps: Sequence[Step], env: dict[str, Any]) -> None:
    """Run the main graph's planned `steps` over `env`, as `run_nodes` does with the same results:
    a direct step calls its op at once (burn's errors still named with the node, as
    `_run_node` names them), any other goes through `_run_node`; dead values are dropped as
    each step ends."""
    for step in steps:
        try:
            inputs = [env[i] if i else None for i in step.inputs]
        except KeyError as exc:
            node = step.node
            raise OnnxError(
                f"node {node.name!r} ({node.op_type}) reads {exc.args[0]!r}, which no node produces",
                source=program.source,
            ) from None
        ctx.scope = env
        if step.direct:
            try:
                if step.host is not None and not any(map(is_tensor, inputs)):
                    outs = step.host(step.node, inputs)  # a shape computation left to run time
                else:
                    outs = step.run(ctx, step.node, inputs)
            except Exception as exc:  # noqa: BLE001 - named as `_run_node` names it
                err = _failure(exc, step.node, inputs, program)
                if err is None:
                    raise
                raise err from exc
        else:
            outs = _run_node(ctx, step.node, inputs, program)
        for name, value in zip(step.outputs, outs, strict=False):
            if name:
                env[name] = value
        for name in step.dead:
            env.pop(name, None)  # free intermediate tensors as soon as they are dead


def _plan_of(program: Program) -> tuple[Step, ...]:
    """The steps of a `Program` built without them (by hand, or before `plan` existed)."""
    sequences = {i.name for i in program.inputs if i.form in ("sequence_type", "optional_type")}
    return plan(program.nodes, program.outputs, sequences)


def dead_values(nodes: Sequence[Node], keep: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Per node, the values it is the last to read (its inputs and its subgraphs' captures), but
    those in `keep` (the graph's outputs): what `run_nodes` may free after it.

    Example:
        >>> from burn.onnx.graph import Node
        >>> nodes = [Node("Relu", "a", ("x",), ("y",)), Node("Neg", "b", ("y",), ("z",))]
        >>> dead_values(nodes, ["z"])
        (('x',), ('y',))
    """
    return _last_reads([(*node.inputs, *node_captures(node)) for node in nodes], set(keep))


def _last_reads(reads: Sequence[Sequence[str]], kept: set[str]) -> tuple[tuple[str, ...], ...]:
    """Per entry of `reads` (the names one node reads), the names no later entry reads, but `kept`."""
    last_use: dict[str, int] = {}
    for index, names in enumerate(reads):
        for name in names:
            if name:
                last_use[name] = index
    dead: list[list[str]] = [[] for _ in reads]
    for name, index in last_use.items():
        if name not in kept:
            dead[index].append(name)
    return tuple(tuple(names) for names in dead)


_VALUE_FORMS = ("tensor", "untyped", "sequence_type", "optional_type")


def _check_declared_type(info: ValueInfo, what: str) -> None:
    """Refuse a graph input or output of a type burn.onnx cannot hold: strings, maps, sparse
    tensors, sequences of sequences (tensors, sequences of tensors and optionals of either are
    taken)."""
    if info.form not in _VALUE_FORMS:
        form = info.form.removesuffix("_type")
        raise OnnxError(
            f"{what} {info.name!r} is a {form}: burn.onnx takes tensors, sequences of tensors and optionals"
        )
    element = info.element
    if info.form == "sequence_type" and element is not None and element.form not in ("tensor", "untyped"):
        raise OnnxError(
            f"{what} {info.name!r} is a {info.type_name()}: burn.onnx takes sequences of tensors only"
        )
    if info.form == "optional_type" and element is not None and element.form == "optional_type":
        raise OnnxError(f"{what} {info.name!r} is a {info.type_name()}: an optional of an optional")
    if element is not None:
        _check_declared_type(element, what)
    elif info.dtype.kind in "OSU":
        raise OnnxError(f"{what} {info.name!r} is a string tensor: burn has no string dtype")


def _declared_tensors(info: ValueInfo) -> list[ValueInfo]:
    """The tensor types inside a declared type (itself for a tensor; the elements of a sequence
    or an optional)."""
    if info.form in ("sequence_type", "optional_type"):
        return [] if info.element is None else _declared_tensors(info.element)
    return [info]


def _output(ctx: Ctx, info: ValueInfo | None, value: Any, source: str) -> Any:
    """An output as its declared type: a sequence is a list of its elements, an empty optional
    None, and a tensor a tensor of its declared element type (`_tensor_output`)."""
    form = "untyped" if info is None else info.form
    if isinstance(value, list) or form == "sequence_type":
        if not isinstance(value, list) or form not in ("sequence_type", "optional_type", "untyped"):
            what = "a sequence" if isinstance(value, list) else "empty" if value is None else "a tensor"
            declared = "?" if info is None else info.type_name()
            raise OnnxError(f"output {getattr(info, 'name', '?')!r} is declared {declared} but is {what}",
                            source=source)
        element = None if info is None or info.element is None else info.element
        if element is not None and element.form == "sequence_type":  # an optional's sequence
            element = element.element
        return [_output(ctx, element, v, source) for v in value]
    if value is None:
        if form not in ("optional_type", "untyped"):
            raise OnnxError(f"output {getattr(info, 'name', '?')!r} was not computed (an empty optional)",
                            source=source)
        return None
    if info is not None and info.form == "optional_type":
        info = info.element
    return _tensor_output(ctx, info, value, source)


def _tensor_output(ctx: Ctx, info: ValueInfo | None, value: Any, source: str) -> Tensor | np.ndarray:
    """An output as a tensor of its declared element type: the ops compute integers in int64 and
    floats in the model's float dtype, so an ``int8``, ``float16`` or ``float64`` output is cast
    back (integer casts wrap as ONNX's do); ``float32`` outputs stay in the model's float dtype,
    which `load`'s ``float_dtype`` chooses. A declared type the backend has no dtype for is
    refused, naming it, rather than returned as another type."""
    from burn.foundations.dtype import DType, to_numpy_dtype
    from burn.tensor.tensor import Tensor

    if info is None or info.form == "untyped":
        if not is_tensor(value) and is_narrow(np.asarray(value).dtype):
            return np.asarray(value)  # float8, int4...: no burn dtype holds them
        return ctx.tensor(value)
    if is_narrow(info.dtype):
        if is_tensor(value) or np.asarray(value).dtype != info.dtype:
            raise OnnxError(
                f"output {info.name!r} is declared {info.dtype.name} but computed as "
                f"{describe_value(value)}: burn.onnx returns {info.dtype.name} values only from a Cast",
                source=source,
            )
        return value  # type: ignore[no-any-return]  # a host array: burn has no such dtype
    target = _output_dtype(ctx.backend, info, source)
    if target is DType.F32:
        target = ctx.float_dtype  # float32 outputs follow the model's float dtype (load's float_dtype)
    if is_tensor(value):
        return value if value.dtype is target else value.cast(target)  # type: ignore[no-any-return]
    array = np.asarray(value)
    if array.dtype.kind in "iub" and target.is_float or array.dtype.kind == "f" and not target.is_float:
        return ctx.tensor(array).cast(target)  # (a graph whose declared type disagrees with its values)
    return Tensor.from_data(array.astype(to_numpy_dtype(target)),
                            ctx.device, dtype=target, backend=ctx.backend)


def _output_dtype(backend: Backend, info: ValueInfo, source: str) -> DType:
    """The burn dtype of a declared output, or an `OnnxError` naming the element type `backend`
    has no dtype for (uint16, float8...)."""
    from burn.foundations.dtype import DType

    try:
        target = DType.from_any(info.dtype)
    except ValueError:
        target = None
    if target is None or not backend.capabilities.supports(target):
        raise OnnxError(
            f"output {info.name!r} is declared {info.dtype.name}, an element type backend "
            f"{backend.name!r} has no dtype for: burn.onnx does not return it as another type",
            source=source,
        )
    return target


def _check_input(ctx: Ctx, info: ValueInfo, value: Any) -> Any:
    """An input as the graph holds it: a tensor checked against its declared kind and shape, a
    sequence as a list of those, an empty optional as None."""
    if info.form == "sequence_type":
        if not isinstance(value, (list, tuple)):
            raise OnnxKindError(
                f"input {info.name!r} must be a sequence ({info.describe()}): a list of tensors or arrays, "
                f"got {type(value).__name__}"
            )
        return [_check_element(ctx, info.element, info.name, v) for v in value]
    if info.form == "optional_type":
        return None if value is None else _check_element(ctx, info.element, info.name, value)
    return _check_tensor_input(ctx, info, value)


def _check_element(ctx: Ctx, info: ValueInfo | None, name: str, value: Any) -> Any:
    """An element of a sequence or optional input; without a declared type, tensors are taken
    as they are and arrays with their own kind."""
    if info is not None:
        return _check_input(ctx, info, value)
    if isinstance(value, (list, tuple)):
        return [_check_element(ctx, None, name, v) for v in value]
    t = value if is_tensor(value) else ctx.tensor(np.asarray(value))
    if t.backend is not ctx.backend:
        from burn.errors import BackendMismatchError

        raise BackendMismatchError(
            f"input {name!r} holds a tensor on backend {t.backend.name!r}, "
            f"the model runs on {ctx.backend.name!r}"
        )
    return t


def _check_tensor_input(ctx: Ctx, info: ValueInfo, value: Any) -> Any:
    if info.form == "tensor" and is_narrow(info.dtype):
        # float8, int4...: no burn dtype holds them; they stay on the host with their type
        array = value.to_numpy() if is_tensor(value) else np.asarray(value)
        if array.dtype != info.dtype:
            raise OnnxKindError(f"input {info.name!r} must be a {info.dtype.name} array ({info.describe()}), "
                                f"got {array.dtype.name}")
        return array
    want = kind_of_numpy(np.empty(0, info.dtype))
    t = value if is_tensor(value) else ctx.tensor(np.asarray(value), want)
    if t.backend is not ctx.backend:
        from burn.errors import BackendMismatchError

        raise BackendMismatchError(
            f"input {info.name!r} is on backend {t.backend.name!r}, the model's params on "
            f"{ctx.backend.name!r}: move one of them (model.to_device(...) or tensor.to_device(...))"
        )
    if t.kind is not want:
        raise OnnxKindError(
            f"input {info.name!r} must be a {want.name} tensor ({info.describe()}), got {t.kind.name}: "
            f"convert it with .{want.name.lower()}()"
        )
    if info.dims is not None:
        shape = tuple(t.shape)
        bad = len(shape) != len(info.dims) or any(
            isinstance(d, int) and d != n for d, n in zip(info.dims, shape, strict=False)
        )
        if bad:
            raise OnnxShapeError(f"input {info.name!r} must have shape {info.describe()}, got {list(shape)}")
    return t


def describe_value(value: Any) -> str:
    """A value of the graph in messages: ``float32[2, 3]`` (``host int64[2]`` for host arrays)."""
    if value is None:
        return "None"
    if is_tensor(value):
        return f"{value.dtype.value}{list(value.shape)}"
    if isinstance(value, list):
        return f"sequence({', '.join(map(describe_value, value[:4]))}{', ...' if len(value) > 4 else ''})"
    array = np.asarray(value)
    return f"host {array.dtype.name}{list(array.shape)}"


def _run_node(ctx: Ctx, node: Node, inputs: Sequence[Any], program: Program) -> list[Any]:
    """The outputs of `node` on `inputs`. An op whose output size its input values set is checked
    against the model's limits first (`check_output`); burn's own errors (`ShapeError`,
    `KindError`, `OnnxError`...) keep their type with a note naming the node and its inputs, any
    other failure becomes an `OnnxError` naming them, chained to the original."""
    info = REGISTRY.get(node.op_type) or FUSED[node.op_type]
    try:
        if not info.sequences:
            for index, value in enumerate(inputs):
                if isinstance(value, list):
                    raise OnnxError(
                        f"node {node.name!r} ({node.op_type}): input {index} is a sequence; "
                        f"{node.op_type} takes tensors"
                    )
        all_host = not any(map(is_tensor, inputs))
        if node.op_type in SHAPED_BY_VALUES:
            folding = info.run is None or (info.host is not None and all_host)
            check_output(node, inputs, program.limits, folding=folding)
        if info.host is not None and all_host:
            return info.host(node, inputs)
        if info.run is None:
            assert info.host is not None
            return info.host(node, [None if v is None else ctx.host(v) for v in inputs])
        return info.run(ctx, node, inputs)
    except Exception as exc:  # noqa: BLE001 - burn's checks, or a graph the checks at load let through
        err = _failure(exc, node, inputs, program)
        if err is None:
            raise
        raise err from exc


def _failure(exc: Exception, node: Node, inputs: Sequence[Any], program: Program) -> Exception | None:
    """The error the caller sees for `exc`, raised by `node` on `inputs`: named with the node, its
    op, the opset and its inputs (`node_failure`), of the same error family; None for an
    `OnnxError` of a node inside a subgraph of this one, already named (re-raised as it is)."""
    if isinstance(exc, OnnxError) and exc.node is not None and exc.opset is not None:
        return None
    err = node_failure(exc, node.name, node.op_type, program.opset, _inputs(inputs))
    return err.with_source(program.source)


def _inputs(inputs: Sequence[Any]) -> str:
    return ", ".join(map(describe_value, inputs))


def load(
    source: str | os.PathLike[str] | bytes | Any,
    device: Device | None = None,
    *,
    backend: Backend | str | None = None,
    float_dtype: DType | str | None = None,
    limits: Limits | None = None,
    fuse: bool = True,
) -> OnnxModel:
    """An ONNX model as a burn module.

    Args:
        source: the ``.onnx`` file (external data next to it is read too), its bytes, or an
            ``onnx.ModelProto``.
        device: where the params go (default: the backend's default device).
        backend: a backend or a backend name (``"autodiff(ndarray)"`` to fine-tune); default:
            `device`'s owner, else `burn.default_backend()`.
        float_dtype: the dtype of the params and float computations (default: the backend's).
        limits: the bounds (`burn.Limits`) on what the file may declare: its size, tensors,
            nodes with local functions and subgraphs expanded, nesting of functions, and each
            constant folded at load time; the model keeps them for its runs, whose ops' outputs
            are held to them too (default: ``burn.Limits()``).
        fuse: run the chains of nodes that exporters write for one operation (the erf and tanh
            GELU, scaled dot-product attention) as burn's fused op (`burn.onnx.patterns`);
            False runs every node as the file wrote it.

    Returns:
        An `OnnxModel`: float initializers are trainable params (BatchNormalization running
        statistics are params that do not require grad); integer ones are constants.

    Raises:
        OnnxError: the file cannot be read (the message names it), is not a regular file, is
            over `limits` (the message names the limit to raise), the opset is older than 13 and
            ONNX's version converter fails on it (an older one it converts is logged),
            the graph is malformed (a node reading a value nothing produces, negative pads or
            strides...), a node cannot be evaluated, an input or output is not a numeric tensor,
            or an output's declared type is one the backend has no dtype for.
        UnsupportedOpError: ops burn does not run (each named with its node and the opset).

    Example:
        >>> import burn.onnx
        >>> model = burn.onnx.load("resnet.onnx", backend="ndarray")  # doctest: +SKIP
        >>> logits = model(images)  # doctest: +SKIP
    """
    from burn.foundations.dtype import DType
    from burn.tensor._creation import resolve_backend
    from burn.tensor.tensor import Tensor

    limits = resolve_limits(limits, "burn.onnx.load: limits")
    proto, label = read_model(source, limits)
    try:
        graph = parse(proto, label)
        check_supported(graph, label)
        for value, what in [(v, "input") for v in graph.inputs] + [(v, "output") for v in graph.outputs]:
            _check_declared_type(value, what)
        check_graph(graph)
    except OnnxError as err:
        raise err.with_source(label) from err.__cause__
    b, dev = resolve_backend("burn.onnx.load", device, backend)
    for out in graph.outputs:
        for declared in _declared_tensors(out):
            if declared.form == "tensor" and not is_narrow(declared.dtype):
                _output_dtype(b, declared, label)  # refused at load, not on the first call
    dtype = DType.from_any(float_dtype) if float_dtype is not None else b.float_dtype
    frozen = {
        node.inputs[i]
        for node in graph.nodes
        for i in _FROZEN_INPUTS.get(node.op_type, ())
        if i < len(node.inputs)
    }
    float_names = {k for k, v in graph.initializers.items() if kind_of_numpy(v) is Float}
    nodes, constants, folded = fold(graph, float_names, label, limits)
    if fuse:
        nodes, constants, _ = rewrite(nodes, constants, [o.name for o in graph.outputs])
    used = {i for n in nodes for i in n.inputs} | {o.name for o in graph.outputs}
    params: dict[str, Param] = {}
    for name in sorted(float_names & used, key=list(graph.initializers).index):
        array = graph.initializers[name]
        try:
            tensor = Tensor.from_data(array, dev, dtype=dtype, backend=b)
        except Exception as exc:  # noqa: BLE001 - an element type the backend cannot take...
            what = str(exc) if isinstance(exc, BurnError) else f"{type(exc).__name__}: {exc}"
            raise onnx_error_type(exc)(
                f"initializer {name!r} ({array.dtype.name}{list(array.shape)}) cannot become a param: {what}",
                source=label,
            ) from exc
        params[name] = Param.from_tensor(tensor, require_grad=name not in frozen)
    sequences = {i.name for i in graph.inputs if i.form in ("sequence_type", "optional_type")}
    program = Program(
        tuple(nodes),
        constants,
        tuple(graph.inputs),
        tuple(o.name for o in graph.outputs),
        graph.opset,
        folded,
        label,
        limits,
        tuple(graph.outputs),
        graph.converted_from,
        plan(nodes, [o.name for o in graph.outputs], sequences),
    )
    return OnnxModel(params, program, dtype, (b, dev))
