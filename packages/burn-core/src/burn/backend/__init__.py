"""The backend contract: `Backend`, `Device`, `Capabilities` and the op registry."""

from burn.backend.base import Backend
from burn.backend.capabilities import FEATURES, Capabilities
from burn.backend.contract import contract_ops, default, implemented_ops, required, required_ops
from burn.backend.device import Device
from burn.backend.random_state import RandomState

__all__ = [
    "FEATURES", "Backend", "Capabilities", "Device", "RandomState", "contract_ops", "default",
    "implemented_ops", "required", "required_ops",
]


# `burn.backend` names both this package (the contract: `burn.backend.Backend`) and the public selector
# `burn.backend("ndarray")`. The module itself is made callable so that both work; `burn/__init__.py`
# must therefore not rebind `burn.backend` to the function `burn.plugins.backend`. The selector is
# the plugin registry's, which installs it here when it is imported (`import burn` does): the
# contract never imports the layer above it.
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402
from typing import Any as _Any  # noqa: E402

_registry: list[_Any] = []  # the module burn.plugins.registry, once imported


def _install_selector(registry: _Any) -> None:
    """Make ``burn.backend(name, **options)`` select through `registry` (a module with a
    ``REGISTRY``: `burn.plugins.registry` installs itself when imported)."""
    _registry[:] = [registry]


class _SelectorModule(_types.ModuleType):
    def __call__(self, name: str | None = None, **options: _Any) -> Backend:
        """Select a backend by name: see `burn.plugins.backend`."""
        selected: Backend = _registry[0].REGISTRY.backend(name, **options)
        return selected


_sys.modules[__name__].__class__ = _SelectorModule
