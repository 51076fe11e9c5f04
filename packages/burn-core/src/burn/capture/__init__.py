"""Capture: record what a function does at the level of the backend contract.

`trace` runs a function (a module's forward, a loss, a step) once on `Capture`, a decorator
backend that runs every contract op on the tensors' own backend and records it as a
`burn.backend.ir.CallIR`. The result is a `burn.backend.ir.Program` (inputs, params by module
param path, calls, outputs) holding only value ids, shapes, dtypes and constants, which
`burn.onnx.export` translates to ONNX and which `Program.replay` runs on any backend.

Example:
    >>> import burn
    >>> from burn.capture import trace
    >>> x = burn.Tensor.from_data([[1.0, 2.0]], backend="ndarray")
    >>> print(trace(lambda v: v.transpose() + 1.0, x).program)
    program(t0: float32[1, 2]) -> t2
      t1 = float_swap_dims(t0, 0, 1)  # float32[2, 1]
      t2 = float_add_scalar(t1, 1.0)  # float32[2, 1]
"""

from __future__ import annotations

from burn.capture.backend import Capture, CaptureTensor, HostReadError, result_kinds
from burn.capture.trace import Trace, flatten_tensors, trace

__all__ = ["Capture", "CaptureTensor", "HostReadError", "Trace", "flatten_tensors", "result_kinds", "trace"]
