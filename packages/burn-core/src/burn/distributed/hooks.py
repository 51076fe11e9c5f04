"""The hook and entry-point group through which collective engines are found.

An engine package registers a plugin module in the entry-point group ``burn.collectives``; the
module implements `burn_collective_engines` with `burn.plugins.hookimpl` and returns
`burn.plugins.specs.EngineSpec` values. Discovery, failure isolation and strict mode are those of
the backends (`burn.plugins`), applied to this group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from burn.plugins.hooks import PROJECT

if TYPE_CHECKING:
    from burn.plugins.specs import EngineSpec

ENGINE_ENTRY_POINT_GROUP = "burn.collectives"
"""The entry-point group of collective-engine plugins."""

ENGINE_PLUGINS_ENV = "BURN_COLLECTIVE_PLUGINS"
"""Comma-separated plugin modules to load as engine plugins (a source checkout, nothing installed)."""

hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def burn_collective_engines() -> list[EngineSpec]:  # type: ignore[empty-body]
    """Return the collective engines this plugin provides.

    Example:
        >>> import burn.plugins as bp
        >>> from burn.plugins.specs import EngineSpec
        >>> @bp.hookimpl
        ... def burn_collective_engines():
        ...     return [EngineSpec(name="mine", factory=lambda **o: ..., package="burn-mine")]
    """


ENGINE_HOOK_NAMES = ("burn_collective_engines",)
