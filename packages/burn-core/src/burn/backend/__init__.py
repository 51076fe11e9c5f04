"""The backend contract: `Backend`, `Device`, `Capabilities` and the op registry."""

from burn.backend.base import Backend
from burn.backend.capabilities import FEATURES, Capabilities
from burn.backend.contract import contract_ops, default, implemented_ops, required, required_ops
from burn.backend.device import Device

__all__ = [
    "FEATURES", "Backend", "Capabilities", "Device", "contract_ops", "default",
    "implemented_ops", "required", "required_ops",
]


# `burn.backend` names both this package (the contract: `burn.backend.Backend`) and the public selector
# `burn.backend("ndarray")`. The module itself is made callable so that both work; `burn/__init__.py`
# must therefore not rebind `burn.backend` to the function `burn.plugins.backend`.
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402
from typing import Any as _Any  # noqa: E402


class _SelectorModule(_types.ModuleType):
    def __call__(self, name: str | None = None, **options: _Any) -> Backend:
        """Select a backend by name: see `burn.plugins.backend`."""
        try:  # a dict lookup, not an import statement: this call is on the path of every `burn.backend()`
            registry = _sys.modules["burn.plugins.registry"]
        except KeyError:
            import burn.plugins.registry as registry
        return registry.REGISTRY.backend(name, **options)


_sys.modules[__name__].__class__ = _SelectorModule
