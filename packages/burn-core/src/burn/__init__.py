"""burn for Python: one `Tensor` type over interchangeable backends, selected by name.

Example:
    >>> import burn
    >>> B = burn.backend("ndarray")  # doctest: +SKIP
    >>> x = burn.Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], backend=B)  # doctest: +SKIP
    >>> burn.activation.relu(x - 2).tolist()  # doctest: +SKIP
    [[0.0, 0.0], [1.0, 2.0]]

`burn.backend` is both the contract package (``burn.backend.Backend``) and, being a callable
module, the selector ``burn.backend("autodiff(ndarray)")``; see `burn.plugins`.
"""

from __future__ import annotations

import importlib
from typing import Any

# `burn.backend` stays the (callable) contract package: never rebind it to a function here.
import burn._moved  # noqa: F401  (old module paths keep importing)
import burn.backend as backend
from burn import activation
from burn._version import __version__
from burn.backend import Backend, Device
from burn.errors import (
    BackendMismatchError,
    BackendNotFoundError,
    BackendUnavailableError,
    BurnError,
    DeviceError,
    DTypeError,
    KindError,
    PluginError,
    ShapeError,
)
from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import (
    DType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.foundations.limits import Limits
from burn.plugins import backends, default_backend, get_num_threads, hookimpl, set_num_threads
from burn.tensor.pad_mode import PadMode
from burn.tensor.tensor import Tensor

# Names of the higher layers, imported on first use so that `import burn` stays light and a
# problem in one layer does not break the tensor API.
_LAZY = {
    "Module": "burn.module",
    "ModuleMapper": "burn.module",
    "ModuleVisitor": "burn.module",
    "Param": "burn.module",
    "ParamId": "burn.module",
    "config": "burn.module",
    "profile": "burn.profiler",
    "compile": "burn.capture.compiler",
    "Profile": "burn.profiler",
}


def __getattr__(name: str) -> Any:
    source = _LAZY.get(name)
    if source is None:
        raise AttributeError(f"module 'burn' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value


__all__ = [
    "Backend",
    "BackendMismatchError",
    "BackendNotFoundError",
    "BackendUnavailableError",
    "Bernoulli",
    "Bool",
    "BurnError",
    "DType",
    "DTypeError",
    "Device",
    "DeviceError",
    "Distribution",
    "Float",
    "Int",
    "Kind",
    "KindError",
    "Limits",
    "Normal",
    "PadMode",
    "PluginError",
    "ShapeError",
    "Tensor",
    "TensorData",
    "Uniform",
    "__version__",
    "activation",
    "backend",
    "compile",
    "backends",
    "bfloat16",
    "bool_",
    "default_backend",
    "float16",
    "float32",
    "float64",
    "get_num_threads",
    "hookimpl",
    "int8",
    "int16",
    "int32",
    "int64",
    "set_num_threads",
    "uint8",
]
