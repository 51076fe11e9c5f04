"""ONNX import: ``burn.onnx.load("model.onnx")`` turns an ONNX graph into a burn `Module`
whose float initializers are params and whose forward runs the graph with burn tensor ops, on
any backend, autodiff included. Needs the ``onnx`` package: ``pip install 'burn-core[onnx]'``.

Example:
    >>> import burn, burn.onnx
    >>> model = burn.onnx.load("model.onnx", backend="autodiff(ndarray)")  # doctest: +SKIP
    >>> out = model(burn.Tensor.ones((1, 3, 32, 32), backend=model.backend))  # doctest: +SKIP

``burn.onnx.export(model, example, "model.onnx")`` writes a burn module or function as ONNX
(`burn.onnx.export`). ``burn onnx inspect model.onnx`` lists a file's ops and which of them burn runs.
"""

from __future__ import annotations

from typing import Any

from burn.onnx.errors import OnnxDTypeError, OnnxError, OnnxKindError, OnnxShapeError, UnsupportedOpError
from burn.onnx.inspect import inspect
from burn.onnx.model import OnnxModel, load
from burn.onnx.ops import render_table, supported_ops

__all__ = [
    "ExportError", "OnnxDTypeError", "OnnxError", "OnnxKindError", "OnnxModel", "OnnxShapeError",
    "UnsupportedOpError", "export", "exported_ops", "inspect",
    "load",
    "render_table", "supported_ops",
]


def __getattr__(name: str) -> Any:
    # The exporter imports onnx and the tracer: loaded on first use, as `load`'s dependencies are.
    if name in ("export", "exported_ops", "ExportError"):
        import burn.onnx.exporter as module

        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'burn.onnx' has no attribute {name!r}")
