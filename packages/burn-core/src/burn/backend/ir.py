"""The op IR: contract ops as plain, printable records.

A decorator backend that does not run ops at once (``fusion``; later a remote or router backend)
describes what it recorded with these records instead of calling the inner backend: a `TensorIR`
names a value (an id, its shape and dtype), an `OpIR` is one contract op applied to values, and a
`FusedBlock` is a group of element-wise ops handed to a backend as one kernel, optionally ended by
a `ReduceIR` (a reduction along one dim that reads the block's values: the block is then its
*prologue*). The records know nothing of fusion: they are data, `ELEMENTWISE` gathers the
element-wise ops of the contract as their declarations state them (how many tensor inputs and
scalars each takes, what dtype it returns, its C expression) and `REDUCTIONS` names the
reductions along a dim that can end a block.

A `Program` is a whole recorded function (`burn.capture.trace`): its inputs, the params it read
(by module param path), a `CallIR` per contract op called, in order, and its outputs. A `CallIR`
keeps every argument of the call: values as `TensorIR`, devices as `DEVICE`, everything else as
the constant it was (numbers, tuples, slices, dtypes, strings, and the NumPy array of a
``*_from_data``), so a program can be replayed on any backend (`Program.replay`) and translated
(`burn.onnx.export`) without any object of the traced function's.

Example:
    >>> x = TensorIR(0, (2, 3), DType.F32)
    >>> y = TensorIR(1, (2, 3), DType.F32)
    >>> print(OpIR("float_mul_scalar", (x,), (y,), (0.5,)))
    t1 = float_mul_scalar(t0, 0.5)  # float32[2, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from burn.backend.contract import Elementwise, Kind, ResultRule, op_facts
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device

Shape = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TensorIR:
    """A value of the IR: an id unique within its recording, a shape and a dtype.

    Example:
        >>> str(TensorIR(4, (2, 3), DType.F32))
        't4: float32[2, 3]'
    """

    id: int
    shape: Shape
    dtype: DType

    def __str__(self) -> str:
        return f"t{self.id}: {self.dtype.value}{list(self.shape)}"


@dataclass(frozen=True, slots=True)
class OpIR:
    """One contract op: its name (``"float_add"``), input and output values and scalar arguments.

    Example:
        >>> a, b = TensorIR(0, (3,), DType.F32), TensorIR(1, (3,), DType.F32)
        >>> print(OpIR("float_add", (a, b), (TensorIR(2, (3,), DType.F32),)))
        t2 = float_add(t0, t1)  # float32[3]
    """

    op: str
    inputs: tuple[TensorIR, ...]
    outputs: tuple[TensorIR, ...]
    scalars: tuple[float, ...] = ()

    def __str__(self) -> str:
        args = [f"t{t.id}" for t in self.inputs] + [repr(s) for s in self.scalars]
        outs = ", ".join(f"t{t.id}" for t in self.outputs)
        types = ", ".join(f"{t.dtype.value}{list(t.shape)}" for t in self.outputs)
        return f"{outs} = {self.op}({', '.join(args)})  # {types}"


# What the IR knows of an element-wise op is what its declaration in the contract says
# (`burn.backend.contract.Elementwise`: arity, scalars, result dtype rule, input kinds, C
# expression), gathered here by name: reductions, matmul, layout and indexing ops are not
# element-wise, and a recording backend runs them as they come.
ElementwiseSpec = Elementwise
ELEMENTWISE: dict[str, Elementwise] = {
    name: facts.elementwise for name, facts in op_facts().items() if facts.elementwise is not None
}


def written_scalars(op: str, scalars: Sequence[float]) -> tuple[float | None, ...]:
    """Per scalar of an element-wise `op`: its value where generated code writes it as a literal
    (``s0`` among the op's `Elementwise.literals`), else None (a kernel argument).

    Example:
        >>> written_scalars("float_powf_scalar", (2.0,)), written_scalars("float_powf_scalar", (2.5,))
        ((2.0,), (None,))
    """
    literals = ELEMENTWISE[op].literals
    return tuple(s if j == 0 and s in literals else None for j, s in enumerate(scalars))


# Reductions along one dim (keepdim, result dtype = input dtype) that can end a fused block.
REDUCTIONS: frozenset[str] = frozenset({
    "float_sum_dim", "float_mean_dim", "float_prod_dim", "float_max_dim", "float_min_dim",
})


@dataclass(frozen=True, slots=True)
class ReduceIR:
    """A reduction along `dim` ending a `FusedBlock`: `op` (one of `REDUCTIONS`) reads `input`, a
    value of the block with the block's shape, and writes `output` (the same shape with `dim` of
    size 1, the same dtype).

    Example:
        >>> x, r = TensorIR(3, (4, 5), DType.F32), TensorIR(4, (4, 1), DType.F32)
        >>> print(ReduceIR("float_sum_dim", x, 1, r))
        t4 = float_sum_dim(t3, dim=1)  # float32[4, 1]
    """

    op: str
    input: TensorIR
    dim: int
    output: TensorIR

    def __str__(self) -> str:
        out = self.output
        call = f"{self.op}(t{self.input.id}, dim={self.dim})"
        return f"t{out.id} = {call}  # {out.dtype.value}{list(out.shape)}"


def broadcast_shapes(op: str, shapes: Sequence[Shape]) -> Shape:
    """The NumPy broadcast of `shapes`; raises `ValueError` naming `op` when they do not broadcast.

    Example:
        >>> broadcast_shapes("float_add", [(4, 1), (3,)])
        (4, 3)
    """
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for shape in shapes:
        off = rank - len(shape)
        for d, size in enumerate(shape):
            cur = out[off + d]
            if size != cur:
                if cur == 1:
                    out[off + d] = size
                elif size != 1:
                    listed = ", ".join(str(s) for s in shapes)
                    raise ValueError(f"{op}: shapes {listed} do not broadcast")
    return tuple(out)


def result_dtype(op: str, dtypes: Sequence[DType], cast: DType | None = None) -> DType | None:
    """The dtype element-wise `op` returns for inputs of `dtypes`, or None when the IR does not
    decide it (two different floats of one size: a backend's own rule applies).

    Example:
        >>> result_dtype("float_add", [DType.F32, DType.F64]).value
        'float64'
    """
    rule = ELEMENTWISE[op].result
    if rule == "bool":
        return DType.BOOL
    if rule == "cast":
        return cast
    first = dtypes[0]
    if rule == "same":
        return first
    second = dtypes[1]
    if first is second:
        return first
    if first.itemsize == second.itemsize:
        return None
    return first if first.itemsize > second.itemsize else second


@dataclass(frozen=True, slots=True)
class FusedBlock:
    """Element-wise ops that run as one kernel over one iteration shape, optionally ending in a
    reduction along one dim.

    Every op's output broadcasts to `shape`, and a kernel evaluates the ops in order at each
    element of `shape`, reading each of `inputs` through broadcasting. Values not in `outputs`
    never leave the kernel; each of `outputs` is written to a new contiguous buffer of its own
    shape (an output smaller than `shape` is written once per element that broadcasts onto it,
    always with the same value). With `reduce`, the kernel also reduces ``reduce.input`` (a value
    of shape `shape`) along ``reduce.dim`` as the elements are computed, and writes
    ``reduce.output`` after `outputs`: the element-wise ops are the reduction's prologue.

    Attributes:
        shape: the iteration shape.
        inputs: values read from existing tensors, in the order they are handed to the backend.
        ops: the element-wise ops, in program order; each reads inputs or earlier ops' outputs.
        outputs: values the kernel must write, in the order the backend returns them.
        reduce: the reduction ending the block, or None.

    Example:
        >>> x = TensorIR(0, (4,), DType.F32)
        >>> y = TensorIR(1, (4,), DType.F32)
        >>> block = FusedBlock((4,), (x,), (OpIR("float_exp", (x,), (y,)),), (y,))
        >>> block.signature() == FusedBlock((4,), (x,), block.ops, (y,)).signature()
        True
    """

    shape: Shape
    inputs: tuple[TensorIR, ...]
    ops: tuple[OpIR, ...]
    outputs: tuple[TensorIR, ...]
    reduce: ReduceIR | None = None

    def signature(self) -> tuple[Any, ...]:
        """What a generated kernel depends on, with ids renumbered locally: inputs 0.., then each
        op's outputs in order. Shapes, scalar values (but those written as literals,
        `written_scalars`) and the reduced dim are not part of it (kernel arguments)."""
        local: dict[int, int] = {}
        for t in self.inputs:
            local[t.id] = len(local)
        ops = []
        for op in self.ops:
            ins = tuple(local[t.id] for t in op.inputs)
            for t in op.outputs:
                local[t.id] = len(local)
            written = written_scalars(op.op, op.scalars)
            ops.append((op.op, ins, tuple(t.dtype for t in op.outputs), len(op.scalars), written))
        red = self.reduce
        return (
            tuple(t.dtype for t in self.inputs),
            tuple(ops),
            tuple(local[t.id] for t in self.outputs),
            None if red is None else (red.op, local[red.input.id], red.output.dtype),
        )

    def __str__(self) -> str:
        head = (
            f"fused block over {list(self.shape)}: {len(self.ops)} ops, {len(self.inputs)} inputs, "
            f"{len(self.outputs)} outputs"
        )
        lines = [head, "  in  " + ", ".join(str(t) for t in self.inputs)]
        lines.extend(f"  {op}" for op in self.ops)
        lines.append("  out " + ", ".join(f"t{t.id}" for t in self.outputs))
        if self.reduce is not None:
            lines.append(f"  reduce {self.reduce}")
        return "\n".join(lines)


class _Device:
    """The device argument of a recorded call: replay passes its own device there."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEVICE"

    def __reduce__(self) -> str:
        return "DEVICE"


DEVICE = _Device()


@dataclass(frozen=True, slots=True)
class CallIR:
    """One contract op as it was called: every argument, with values as `TensorIR` (a sequence
    of values as a tuple of them), the device as `DEVICE` and the rest as constants.

    Attributes:
        op: the contract op (``"conv2d"``).
        args: the positional arguments after ``self``.
        kwargs: keyword arguments, as ``(name, value)`` pairs.
        outputs: the values returned: one for an op returning a primitive, one per item of a
            tuple result (None for an optional result that was None).

    Example:
        >>> x, y = TensorIR(0, (2, 3), DType.F32), TensorIR(1, (3, 2), DType.F32)
        >>> print(CallIR("float_permute", (x, (1, 0)), (), (y,)))
        t1 = float_permute(t0, (1, 0))  # float32[3, 2]
    """

    op: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    outputs: tuple[TensorIR | None, ...]

    def values(self) -> list[TensorIR]:
        """The values the call reads, in argument order."""
        found: list[TensorIR] = []
        for a in (*self.args, *(v for _, v in self.kwargs)):
            if isinstance(a, TensorIR):
                found.append(a)
            elif isinstance(a, tuple) and a and all(isinstance(t, TensorIR) for t in a):
                found.extend(a)
        return found

    def __str__(self) -> str:
        def show(a: Any) -> str:
            if isinstance(a, TensorIR):
                return f"t{a.id}"
            if isinstance(a, tuple) and a and all(isinstance(t, TensorIR) for t in a):
                return "[" + ", ".join(f"t{t.id}" for t in a) + "]"
            if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, DType):
                return f"<array {a.dtype}{list(a.shape)}>"
            return repr(a)

        args = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs]
        outs = ", ".join("_" if t is None else f"t{t.id}" for t in self.outputs)
        types = ", ".join("_" if t is None else f"{t.dtype.value}{list(t.shape)}" for t in self.outputs)
        return f"{outs} = {self.op}({', '.join(args)})  # {types}"


@dataclass(frozen=True, slots=True)
class Program:
    """A recorded function: contract-op calls from its inputs and params to its outputs.

    Attributes:
        inputs: the values of the function's tensor arguments, in order.
        params: ``(path, value)`` for each module param the function read, by its param path
            (``"layers.0.weight"``), in the order first read.
        calls: the contract ops called, in program order.
        outputs: the values of the function's tensor results, in order.
        host_reads: ops that read a value back to the host during the trace (``float_into_data``
            for ``.item()``...), in order: the result may depend on data, so such a program
            only replays what happened for the traced values.

    Example:
        >>> x, y = TensorIR(0, (3,), DType.F32), TensorIR(1, (3,), DType.F32)
        >>> prog = Program((x,), (), (CallIR("float_exp", (x,), (), (y,)),), (y,))
        >>> print(prog)
        program(t0: float32[3]) -> t1
          t1 = float_exp(t0)  # float32[3]
    """

    inputs: tuple[TensorIR, ...]
    params: tuple[tuple[str, TensorIR], ...]
    calls: tuple[CallIR, ...]
    outputs: tuple[TensorIR, ...]
    host_reads: tuple[str, ...] = ()

    def ops(self) -> list[str]:
        """The distinct contract ops the program calls, sorted."""
        return sorted({c.op for c in self.calls})

    def replay(
        self,
        backend: Backend,
        inputs: Sequence[Any],
        params: dict[str, Any],
        device: Device | None = None,
        on_call: Callable[[CallIR, Any], None] | None = None,
    ) -> list[Any]:
        """Run the program's calls on `backend`'s primitives: `inputs` in the order of
        `Program.inputs`, `params` by path; returns the outputs' primitives. `on_call` sees each
        call with its result.

        Example:
            >>> import burn, numpy as np
            >>> B = burn.backend("ndarray")
            >>> x, y = TensorIR(0, (2,), DType.F32), TensorIR(1, (2,), DType.F32)
            >>> prog = Program((x,), (), (CallIR("float_neg", (x,), (), (y,)),), (y,))
            >>> p = B.float_from_data(burn.TensorData(np.ones(2, np.float32)), B.default_device())
            >>> B.float_into_data(prog.replay(B, [p], {})[0]).to_numpy().tolist()
            [-1.0, -1.0]
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(f"Program.replay: {len(self.inputs)} inputs expected, got {len(inputs)}")
        env: dict[int, Any] = {t.id: v for t, v in zip(self.inputs, inputs, strict=True)}
        for path, t in self.params:
            if path not in params:
                raise KeyError(f"Program.replay: no value for param {path!r}")
            env[t.id] = params[path]
        dev = backend.default_device() if device is None else device

        def value(a: Any) -> Any:
            if isinstance(a, TensorIR):
                return env[a.id]
            if a is DEVICE:
                return dev
            if isinstance(a, tuple) and a and all(isinstance(t, TensorIR) for t in a):
                return [env[t.id] for t in a]
            if hasattr(a, "__array__") and not isinstance(a, DType):
                from burn.foundations.data import TensorData

                return TensorData.from_numpy(a)
            return a

        for call in self.calls:
            fn = getattr(backend, call.op)
            result = fn(*[value(a) for a in call.args], **{k: value(v) for k, v in call.kwargs})
            results = result if isinstance(result, tuple) else (result,)
            for out, r in zip(call.outputs, results, strict=True):
                if out is not None:
                    env[out.id] = r
            if on_call is not None:
                on_call(call, result)
        return [env[t.id] for t in self.outputs]

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        outs = ", ".join(f"t{t.id}" for t in self.outputs)
        lines = [f"program({ins}) -> {outs}"]
        lines.extend(f"  param {path} = {t}" for path, t in self.params)
        lines.extend(f"  {c}" for c in self.calls)
        return "\n".join(lines)


__all__ = [
    "DEVICE", "CallIR", "Program",
    "ELEMENTWISE", "REDUCTIONS", "ElementwiseSpec", "FusedBlock", "Kind", "OpIR", "ReduceIR", "ResultRule",
    "TensorIR",
    "broadcast_shapes", "result_dtype", "written_scalars",
]
