"""Errors of `burn.onnx`: a file that cannot be read, a graph that cannot run."""

from __future__ import annotations

from collections.abc import Sequence

from burn.errors import BurnError, DTypeError, KindError, ShapeError


class OnnxError(BurnError, ValueError):
    """An ONNX file that cannot be imported: unreadable or malformed bytes, an opset older than
    13 that ONNX's version converter fails on, an attribute, input or element type burn does not
    support, or inputs that do not fit the graph.

    The message starts with the file (``model.onnx: ...``) when there is one; it is also kept as
    the attribute `source`. A node that fails while a model runs gives one naming it, its op and
    the model's opset, also kept as the attributes `node`, `op_type` and `opset` (`node_failure`);
    when burn's own check failed (a shape, a kind, a dtype), the error is also that error's type
    (`OnnxShapeError` is a `ShapeError`).

    Example:
        >>> str(OnnxError("not an ONNX model", source="model.onnx"))
        'model.onnx: not an ONNX model'
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        node: str | None = None,
        op_type: str | None = None,
        opset: int | None = None,
    ) -> None:
        self.source = source
        self.reason = message
        self.node = node
        self.op_type = op_type
        self.opset = opset
        super().__init__(f"{source}: {message}" if source else message)

    def with_source(self, source: str) -> OnnxError:
        """This error with `source` filled in (when it has none yet)."""
        if self.source is not None:
            return self
        err = type(self).__new__(type(self))
        err.__dict__.update(self.__dict__)
        err.source = source
        Exception.__init__(err, f"{source}: {self.reason}")
        return err


class UnsupportedOpError(OnnxError):
    """The graph holds ops burn cannot run: each is named with its node and the opset, and the
    message lists every supported op.

    Attributes:
        ops: ``(op_type, node_name)`` of each unsupported node, in graph order.
        opset: the model's ``ai.onnx`` opset.

    Example:
        >>> err = UnsupportedOpError([("Foo", "foo_1")], 17, ["Add", "Relu"])
        >>> str(err).splitlines()[0]
        "unsupported ONNX op 'Foo' (node 'foo_1', opset 17)"
    """

    def __init__(
        self,
        ops: Sequence[tuple[str, str]],
        opset: int,
        supported: Sequence[str],
        *,
        source: str | None = None,
    ) -> None:
        self.ops = list(ops)
        self.opset = opset
        names = sorted({op for op, _ in self.ops})
        first = "unsupported ONNX op" + ("s" if len(names) > 1 else "")
        listed = "; ".join(f"{op!r} (node {node!r}, opset {opset})" for op, node in self.ops[:20])
        more = f"; and {len(self.ops) - 20} more nodes" if len(self.ops) > 20 else ""
        message = f"{first} {listed}{more}\nsupported ops: {', '.join(sorted(supported))}"
        node, op_type = (self.ops[0][1], self.ops[0][0]) if self.ops else (None, None)
        super().__init__(message, source=source, node=node, op_type=op_type, opset=opset)


class OnnxShapeError(OnnxError, ShapeError):
    """A node (or an input) of an ONNX model failed burn's shape checks: an `OnnxError` and a
    `ShapeError`."""


class OnnxKindError(OnnxError, KindError):
    """A node (or an input) of an ONNX model got a tensor of the wrong kind: an `OnnxError` and a
    `KindError`."""


class OnnxDTypeError(OnnxError, DTypeError):
    """A node of an ONNX model got a dtype it cannot take: an `OnnxError` and a `DTypeError`."""


_KINDS: tuple[tuple[type[BurnError], type[OnnxError]], ...] = (
    (ShapeError, OnnxShapeError),
    (KindError, OnnxKindError),
    (DTypeError, OnnxDTypeError),
)


def onnx_error_type(exc: BaseException) -> type[OnnxError]:
    """The `OnnxError` class for a failure `exc`: the one that is also its burn error type."""
    for base, cls in _KINDS:
        if isinstance(exc, base):
            return cls
    return OnnxError


def node_failure(exc: BaseException, node: str, op_type: str, opset: int, inputs: str) -> OnnxError:
    """The `OnnxError` (of `onnx_error_type`) for node `node` of op `op_type` failing with `exc`
    on `inputs` (as the message shows them), at `opset`.

    Example:
        >>> err = node_failure(KeyError("w"), "mm", "MatMul", 17, "float32[2, 3]")
        >>> str(err), err.node, err.opset
        ("node 'mm' (MatMul, opset 17) on inputs (float32[2, 3]): KeyError: 'w'", 'mm', 17)
    """
    if isinstance(exc, OnnxError):
        reason = exc.reason
    elif isinstance(exc, BurnError):
        reason = str(exc)
    else:
        reason = f"{type(exc).__name__}: {exc}"
    reason = reason.removeprefix(f"node {node!r} ({op_type}): ")  # said once, with the opset
    message = f"node {node!r} ({op_type}, opset {opset}) on inputs ({inputs}): {reason}"
    return onnx_error_type(exc)(message, node=node, op_type=op_type, opset=opset)
