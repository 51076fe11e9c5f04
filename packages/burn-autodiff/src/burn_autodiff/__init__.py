"""burn-autodiff: the ``autodiff`` backend decorator, making any burn backend differentiable.

    >>> import burn  # doctest: +SKIP
    >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
    >>> x = burn.Tensor.from_data([1.0, 2.0, 3.0], backend=B).require_grad()  # doctest: +SKIP
    >>> grads = (x * x).sum().backward()  # doctest: +SKIP
    >>> x.grad(grads).tolist()  # doctest: +SKIP
    [2.0, 4.0, 6.0]

`Autodiff(inner, checkpointing="balanced")` builds a backend with gradient checkpointing.

The names below load on first access, so that burn's plugin discovery, which imports
`burn_autodiff.plugin` (and with it this package), does not import the engine and its rules.

The ops are laid out by op family (`burn_autodiff.ops`); the modules of the former layout
(``burn_autodiff.rules``, ``burn_autodiff.ops_module``...) still import, standing for the family
modules their names moved to (`burn._moved`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import burn._moved
from burn_autodiff._version import __version__

if TYPE_CHECKING:
    from burn_autodiff.backend import Autodiff
    from burn_autodiff.errors import AutodiffError
    from burn_autodiff.gradients import Gradients
    from burn_autodiff.node import ADTensor, Node

__all__ = ["ADTensor", "Autodiff", "AutodiffError", "Gradients", "Node", "__version__"]

_OPS = "burn_autodiff.ops."
_MODULE = ("conv", "pool", "sampling", "embedding", "loss", "rnn")  # the families of the old ops_module
burn._moved.register({
    "burn_autodiff.rules": tuple(_OPS + f for f in ("_grad", "float", "activation", *_MODULE)),
    "burn_autodiff.ops_float": (_OPS + "float", _OPS + "optim"),
    "burn_autodiff.ops_math": _OPS + "float",
    "burn_autodiff.ops_layout": _OPS + "float",
    "burn_autodiff.ops_activation": _OPS + "activation",
    "burn_autodiff.ops_module": tuple(_OPS + f for f in (*_MODULE, "activation", "composed")),
    "burn_autodiff.ops_module_3d": (_OPS + "conv", _OPS + "pool"),
    "burn_autodiff.ops_module_extra": (_OPS + "conv", _OPS + "sampling"),
    "burn_autodiff.ops_composed": _OPS + "composed",
})

_LAZY = {
    "Autodiff": "burn_autodiff.backend",
    "AutodiffError": "burn_autodiff.errors",
    "Gradients": "burn_autodiff.gradients",
    "ADTensor": "burn_autodiff.node",
    "Node": "burn_autodiff.node",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'burn_autodiff' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
