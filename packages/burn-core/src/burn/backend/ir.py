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

Example:
    >>> x = TensorIR(0, (2, 3), DType.F32)
    >>> y = TensorIR(1, (2, 3), DType.F32)
    >>> print(OpIR("float_mul_scalar", (x,), (y,), (0.5,)))
    t1 = float_mul_scalar(t0, 0.5)  # float32[2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from burn.backend.contract import Elementwise, Kind, ResultRule, op_facts
from burn.foundations.dtype import DType

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


__all__ = [
    "ELEMENTWISE", "REDUCTIONS", "ElementwiseSpec", "FusedBlock", "Kind", "OpIR", "ReduceIR", "ResultRule",
    "TensorIR",
    "broadcast_shapes", "result_dtype", "written_scalars",
]
