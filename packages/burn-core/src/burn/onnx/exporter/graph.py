"""The ONNX graph an export builds: nodes, initializers, the name of each traced value, and the
shape arithmetic that lets shape constants follow dynamic axes.

A shape constant of the trace is an int, or a `DimExpr` (``mult * size + offset`` of a dynamic
axis) where it changed with that axis between the two traces of `burn.onnx.export`; `Graph.ints`
turns a sequence of them into an int64 tensor: an initializer when every item is an int, else a
``Concat`` of constants and ``Gather(Shape(input), axis)`` read from the input at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from burn.backend.ir import TensorIR
from burn.foundations.dtype import DType

__all__ = ["DimExpr", "ExportError", "Graph", "Size", "onnx_dtype", "onnx_module"]

INT64_MAX = np.iinfo(np.int64).max


class ExportError(ValueError):
    """A traced function cannot be written as ONNX (the message names the op and why)."""


@dataclass(frozen=True, slots=True)
class DimExpr:
    """``mult * <size of dynamic axis symbol> + offset``: a shape constant that follows a
    dynamic axis.

    Example:
        >>> DimExpr("batch", 4, 0)
        DimExpr(symbol='batch', mult=4, offset=0)
    """

    symbol: str
    mult: int
    offset: int


Size = int | DimExpr


def onnx_module() -> Any:
    """The ``onnx`` package; `burn.onnx.OnnxError` with the install hint when it is missing."""
    from burn.onnx.graph import import_onnx

    return import_onnx()


def onnx_dtype(dtype: DType) -> int:
    """The ONNX element type of a burn dtype (``TensorProto.FLOAT`` for float32...)."""
    onnx = onnx_module()
    if dtype is DType.BOOL:
        return int(onnx.TensorProto.BOOL)
    return int(onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype.numpy)))


class Graph:
    """Nodes and initializers of the graph being built, and the ONNX name of each traced value.

    Args:
        dims: for each dynamic axis symbol, the graph input and axis it is read from.
        shapes: each traced value's shape, with `DimExpr` where it follows a dynamic axis.
        opset: the ONNX opset written (17 or later).
    """

    def __init__(
        self, dims: dict[str, tuple[str, int]], shapes: dict[int, tuple[Size, ...]], opset: int = 17
    ) -> None:
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: dict[int, str] = {}
        self.dims = dims
        self.shapes = shapes
        self._count = 0
        self._dim_cache: dict[str, str] = {}
        self._consts: dict[tuple[Any, ...], str] = {}

    # -- names ----------------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def name(self, t: TensorIR) -> str:
        """The ONNX name of traced value `t`."""
        return self.names[t.id]

    def shape(self, t: TensorIR) -> tuple[Size, ...]:
        """`t`'s shape with its dynamic dims as `DimExpr`."""
        return self.shapes.get(t.id, t.shape)

    def static_dims(self, t: TensorIR, op: str, axes: Sequence[int]) -> tuple[int, ...]:
        """The sizes of `t` along `axes`, which `op` needs fixed at export time; ExportError
        when one of them follows a dynamic axis."""
        shape = self.shape(t)
        picked = [shape[a] for a in axes]
        if any(isinstance(d, DimExpr) for d in picked):
            raise ExportError(
                f"{op}: the exported graph needs the size of axes {list(axes)} at export time, and one "
                f"follows a dynamic axis (shape {list(shape)}); export with that axis static"
            )
        return tuple(int(d) for d in picked)  # type: ignore[arg-type]

    # -- nodes ----------------------------------------------------------------------------------
    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> Any:
        """Add a node; returns its output name (a list of names when `n_out` > 1)."""
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        make_node = onnx_module().helper.make_node
        self.nodes.append(make_node(op, list(inputs), outs, name=self.fresh(f"n_{op}"), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, array: np.ndarray, hint: str = "const") -> str:
        """An initializer holding `array` (small constants are shared)."""
        array = np.ascontiguousarray(array)
        key = None
        if array.size <= 16:
            key = (array.dtype.str, array.shape, array.tobytes())
            found = self._consts.get(key)
            if found is not None:
                return found
        name = self.fresh(hint)
        self.initializers.append(onnx_module().numpy_helper.from_array(array, name))
        if key is not None:
            self._consts[key] = name
        return name

    def scalar(self, value: float | bool, dtype: DType) -> str:
        """A rank-0 constant of `dtype` (the operand of a scalar op)."""
        return self.const(np.array(value, dtype=np.dtype(dtype.numpy) if dtype is not DType.BOOL else bool))

    def reduce(self, op: str, x: str, axes: Sequence[int] | None, keepdims: int) -> str:
        """A ``Reduce*`` node over `axes` (all when None): axes are an input from opset 18 on
        (from 13 for ``ReduceSum``), an attribute before."""
        if axes is not None and (op == "ReduceSum" or self.opset >= 18):
            return str(self.node(op, [x, self.const(np.array(list(axes), np.int64))], keepdims=keepdims))
        if axes is None:
            return str(self.node(op, [x], keepdims=keepdims))
        return str(self.node(op, [x], axes=list(axes), keepdims=keepdims))

    # -- shape arithmetic -------------------------------------------------------------------------
    def dim(self, symbol: str) -> str:
        """An int64 ``[1]`` tensor holding the run-time size of dynamic axis `symbol`."""
        found = self._dim_cache.get(symbol)
        if found is None:
            source, axis = self.dims[symbol]
            shape = self.node("Shape", [source])
            found = self._dim_cache[symbol] = self.node(
                "Gather", [shape, self.const(np.array([axis], np.int64))], axis=0
            )
        return found

    def size(self, value: Size) -> str:
        """An int64 ``[1]`` tensor holding `value`."""
        if not isinstance(value, DimExpr):
            return self.const(np.array([value], np.int64))
        out = self.dim(value.symbol)
        if value.mult != 1:
            out = self.node("Mul", [out, self.const(np.array([value.mult], np.int64))])
        if value.offset:
            out = self.node("Add", [out, self.const(np.array([value.offset], np.int64))])
        return out

    def ints(self, values: Sequence[Size]) -> str:
        """An int64 1-D tensor holding `values` (computed at run time where they are dynamic)."""
        if not any(isinstance(v, DimExpr) for v in values):
            return self.const(np.array(list(values), np.int64).reshape(len(values)))
        parts: list[str] = []
        run: list[int] = []
        for v in values:
            if isinstance(v, DimExpr):
                if run:
                    parts.append(self.const(np.array(run, np.int64)))
                    run = []
                parts.append(self.size(v))
            else:
                run.append(int(v))
        if run:
            parts.append(self.const(np.array(run, np.int64)))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def int_scalar(self, value: Size) -> str:
        """A rank-0 int64 tensor holding `value`."""
        if not isinstance(value, DimExpr):
            return self.const(np.array(value, np.int64))
        return self.node("Reshape", [self.size(value), self.const(np.zeros(0, np.int64))])
