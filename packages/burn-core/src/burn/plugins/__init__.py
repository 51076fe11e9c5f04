"""burn's plugin system: backends are separate packages found through entry points, selected by name.

A backend package registers a plugin module in the ``burn.backends`` entry-point group; the module
implements the pluggy hooks `burn_backends` (and, for decorators, `burn_decorators`) with
`hookimpl`. burn loads the plugins on the first `backend()` / `backends()` call, never at
``import burn``, and isolates plugins that fail (see `backends()`; ``BURN_STRICT_PLUGINS=1`` makes
failures raise instead, ``BURN_STRICT_PLUGINS=name,...`` only those of the plugins named).

Example:
    >>> import burn.plugins as bp
    >>> @bp.hookimpl
    ... def burn_backends():
    ...     return [bp.BackendSpec(name="mine", factory=lambda **options: ..., package="burn-mine")]
"""

from burn.plugins.hooks import ENTRY_POINT_GROUP, PROJECT, hookimpl, hookspec
from burn.plugins.names import BackendName, BackendNameError, parse_name
from burn.plugins.registry import (
    DEFAULT_BACKEND,
    KNOWN_PACKAGES,
    PluginRegistry,
    backend,
    backends,
    default_backend,
    refresh,
    register,
    strict_mode,
    strict_targets,
    unregister,
)
from burn.plugins.specs import BackendInfo, BackendSpec, DecoratorSpec
from burn.plugins.threads import get_num_threads, set_num_threads

__all__ = [
    "DEFAULT_BACKEND",
    "ENTRY_POINT_GROUP",
    "KNOWN_PACKAGES",
    "PROJECT",
    "BackendInfo",
    "BackendName",
    "BackendNameError",
    "BackendSpec",
    "DecoratorSpec",
    "PluginRegistry",
    "backend",
    "backends",
    "default_backend",
    "get_num_threads",
    "hookimpl",
    "hookspec",
    "parse_name",
    "refresh",
    "register",
    "set_num_threads",
    "strict_mode",
    "strict_targets",
    "unregister",
]
