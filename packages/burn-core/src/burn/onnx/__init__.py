"""ONNX import: ``burn.onnx.load("model.onnx")`` turns an ONNX graph into a burn `Module`
whose float initializers are params and whose forward runs the graph with burn tensor ops, on
any backend, autodiff included. Needs the ``onnx`` package: ``pip install 'burn-core[onnx]'``.

Example:
    >>> import burn, burn.onnx
    >>> model = burn.onnx.load("model.onnx", backend="autodiff(ndarray)")  # doctest: +SKIP
    >>> out = model(burn.Tensor.ones((1, 3, 32, 32), backend=model.backend))  # doctest: +SKIP

``burn onnx inspect model.onnx`` lists a file's ops and which of them burn runs.
"""

from __future__ import annotations

from burn.onnx.errors import OnnxError, UnsupportedOpError
from burn.onnx.inspect import inspect
from burn.onnx.model import OnnxModel, load
from burn.onnx.ops import render_table, supported_ops

__all__ = ["OnnxError", "OnnxModel", "UnsupportedOpError", "inspect", "load", "render_table", "supported_ops"]
