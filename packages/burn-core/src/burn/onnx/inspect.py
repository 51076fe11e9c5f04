"""``burn onnx inspect``: what a file holds (opset, inputs, outputs, params) and, op by op,
whether burn runs it."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from burn.foundations.limits import Limits
from burn.onnx.errors import OnnxError
from burn.onnx.graph import ValueInfo, opset_of, parse, read_model
from burn.onnx.ops import REGISTRY, supported_ops


@dataclass
class Report:
    """The inspection of one file: `ops` maps each op type to its node count."""

    source: str
    opset: int
    producer: str
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    ops: dict[str, int]
    num_params: int
    unsupported: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unsupported

    def format(self) -> str:
        """The report as text: a header, then one line per op type."""
        lines = [
            f"{self.source}: opset {self.opset}"
            + (f", produced by {self.producer}" if self.producer else ""),
            "  inputs:  " + (", ".join(i.describe() for i in self.inputs) or "-"),
            "  outputs: " + (", ".join(o.describe() for o in self.outputs) or "-"),
            f"  initializers: {self.num_params:,} values",
            f"  {sum(self.ops.values())} nodes, {len(self.ops)} op types:",
        ]
        width = max((len(op) for op in self.ops), default=2)
        for op, count in sorted(self.ops.items(), key=lambda kv: (-kv[1], kv[0])):
            status = "supported" if op in REGISTRY else "NOT SUPPORTED"
            lines.append(f"    {op.ljust(width)}  {count:>5}  {status}")
        if self.unsupported:
            lines.append(
                f"  not supported: {', '.join(self.unsupported)} -> burn.onnx.load would refuse this file"
            )
        else:
            lines.append("  every op is supported")
        return "\n".join(lines)


def inspect(source: str | os.PathLike[str] | bytes | Any, *, limits: Limits | None = None) -> Report:
    """Read an ONNX file and report its ops and which are supported (nothing is built).

    Example:
        >>> print(burn.onnx.inspect("mlp.onnx").format())  # doctest: +SKIP
        mlp.onnx: opset 17, produced by pytorch
          ...
            Gemm      2  supported
            Relu      1  supported
          every op is supported

    Args:
        source: the ``.onnx`` file, its bytes, or an ``onnx.ModelProto``.
        limits: the bounds (`burn.Limits`) on what the file may declare, as for `burn.onnx.load`.

    Raises:
        OnnxError: the file cannot be read, is over `limits`, or its opset is older than 13 and
            ONNX's version converter fails on it.
    """
    proto, label = read_model(source, limits)
    try:
        opset = opset_of(proto)  # the file's own (parse converts an old one to 13)
        graph = parse(proto, label)
    except OnnxError as err:
        raise err.with_source(label) from err.__cause__
    ops = Counter(n.op_type for n in graph.nodes)
    supported = set(supported_ops())
    return Report(
        label,
        opset,
        graph.producer,
        graph.inputs,
        graph.outputs,
        dict(ops),
        sum(int(v.size) for v in graph.initializers.values()),
        sorted(op for op in ops if op not in supported),
    )


def inspect_files(files: Sequence[str]) -> int:
    """The ``burn onnx inspect`` command: a report per file; exit status 1 when a file cannot
    be read or holds an unsupported op."""
    status = 0
    for i, path in enumerate(files):
        if i:
            print()
        try:
            report = inspect(path)
        except OnnxError as exc:
            print(f"burn: error: {exc}", file=sys.stderr)
            status = 1
            continue
        print(report.format())
        if not report.ok:
            status = 1
    return status
