"""Dynamic axes: which shape constants of a trace follow an axis whose size changes.

`burn.onnx.export` traces the function twice, the second time with every dynamic axis one size
larger (`second_sizes`), and `symbolic` compares the two programs call by call: a constant that
is equal in both stays a constant; an int that changed is written as ``mult * size + offset`` of
the axis (`DimExpr`), which the exporter computes from the input's shape at run time. Anything
else that changed (a float, a tensor of data, the ops themselves) means the function depends on
the size in a way a graph cannot express, and is an error naming the op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ir import CallIR, Program, TensorIR
from burn.onnx.exporter.graph import DimExpr, ExportError, Size

__all__ = ["second_sizes", "symbolic"]


def second_sizes(sizes: dict[str, int]) -> dict[str, int]:
    """The sizes of the second trace: each axis grown by a different amount (1, 2, ...), so that
    a constant that follows one axis cannot be mistaken for another's.

    Example:
        >>> second_sizes({"batch": 2, "seq": 2})
        {'batch': 3, 'seq': 4}
    """
    return {s: n + 1 + i for i, (s, n) in enumerate(sizes.items())}


def symbolic(
    p1: Program, p2: Program, sizes1: dict[str, int], sizes2: dict[str, int]
) -> tuple[list[CallIR], dict[int, tuple[Size, ...]]]:
    """The calls of `p1` with its dynamic shape constants as `DimExpr`, and each value's shape
    with `DimExpr` dims, from the same function traced at `sizes1` (`p1`) and `sizes2` (`p2`).

    Raises:
        ExportError: the two traces differ other than in shape constants.
    """
    symbols = [(s, sizes1[s], sizes2[s]) for s in sizes1]
    what = ", ".join(f"{s} {sizes1[s]} -> {sizes2[s]}" for s in sizes1)
    if len(p1.calls) != len(p2.calls) or any(a.op != b.op for a, b in zip(p1.calls, p2.calls, strict=False)):
        first = next(
            (i for i, (a, b) in enumerate(zip(p1.calls, p2.calls, strict=False)) if a.op != b.op),
            min(len(p1.calls), len(p2.calls)),
        )
        here = p1.calls[first].op if first < len(p1.calls) else "(end)"
        there = p2.calls[first].op if first < len(p2.calls) else "(end)"
        raise ExportError(
            f"{here}: the traced function calls different ops when the dynamic axes change size "
            f"({what}; call #{first}: {here} vs {there}): a Python loop or branch on that size "
            "cannot follow it in a graph; export with that axis static"
        )

    def unify(op: str, a: Any, b: Any) -> Any:
        if isinstance(a, TensorIR) or a is None or isinstance(a, bool | str):
            if isinstance(a, bool | str) and a != b:
                raise _differs(op, a, b, what)
            return a
        if isinstance(a, int) and isinstance(b, int):
            return a if a == b else _dim(op, a, b, symbols, what)
        if isinstance(a, float):
            if a != b:
                raise _differs(op, a, b, what)
            return a
        if isinstance(a, slice):
            return slice(unify(op, a.start, b.start), unify(op, a.stop, b.stop), unify(op, a.step, b.step))
        if isinstance(a, tuple):
            if not isinstance(b, tuple) or len(a) != len(b):
                raise _differs(op, a, b, what)
            return tuple(unify(op, x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, np.ndarray):
            if not (isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)):
                raise ExportError(
                    f"{op}: a tensor the traced function builds from data ({a.dtype}{list(a.shape)}) "
                    f"changes with the dynamic axes ({what}); export with that axis static"
                )
            return a
        if a != b:
            raise _differs(op, a, b, what)
        return a

    calls = [
        CallIR(
            a.op,
            tuple(unify(a.op, x, y) for x, y in zip(a.args, b.args, strict=True)),
            tuple((k, unify(a.op, x, y)) for (k, x), (_, y) in zip(a.kwargs, b.kwargs, strict=True)),
            a.outputs,
        )
        for a, b in zip(p1.calls, p2.calls, strict=True)
    ]
    shapes: dict[int, tuple[Size, ...]] = {}
    for t1, t2 in zip(_values(p1), _values(p2), strict=True):
        if t1.shape != t2.shape:
            pairs = zip(t1.shape, t2.shape, strict=True)
            shapes[t1.id] = tuple(x if x == y else _dim("shape", x, y, symbols, what) for x, y in pairs)
    return calls, shapes


def _values(p: Program) -> list[TensorIR]:
    out = list(p.inputs) + [t for _, t in p.params]
    for c in p.calls:
        out.extend(t for t in c.outputs if t is not None)
    return out


def _dim(op: str, a: int, b: int, symbols: list[tuple[str, int, int]], what: str) -> DimExpr:
    for sym, n1, n2 in symbols:
        if a % n1 == 0 and a // n1 >= 1 and b == (a // n1) * n2:
            return DimExpr(sym, a // n1, 0)
    for sym, n1, n2 in symbols:
        if b - a == n2 - n1:
            return DimExpr(sym, 1, a - n1)
    raise ExportError(
        f"{op}: the shape constant {a} changes to {b} when the dynamic axes change ({what}), not as "
        "a multiple or an offset of one of them; export with that axis static"
    )


def _differs(op: str, a: Any, b: Any, what: str) -> ExportError:
    return ExportError(
        f"{op}: the argument {a!r} changes to {b!r} when the dynamic axes change ({what}); a graph "
        "cannot follow it; export with that axis static"
    )
