"""Errors of `burn.onnx`: a file that cannot be read, a graph that cannot run."""

from __future__ import annotations

from collections.abc import Sequence

from burn.errors import BurnError


class OnnxError(BurnError, ValueError):
    """An ONNX file that cannot be imported: unreadable or malformed bytes, an opset older than
    13 that ONNX's version converter fails on, an attribute, input or element type burn does not
    support, or inputs that do not fit the graph.

    The message starts with the file (``model.onnx: ...``) when there is one; it is also kept as
    the attribute `source`.

    Example:
        >>> str(OnnxError("not an ONNX model", source="model.onnx"))
        'model.onnx: not an ONNX model'
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        self.reason = message
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
        super().__init__(message, source=source)
