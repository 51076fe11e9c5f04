"""The pluggy markers and hook specifications of burn's plugin system (project name ``burn``).

A backend package implements `burn_backends`; a decorator package (burn-autodiff) implements
`burn_decorators`. Both hooks take no arguments and return a list of specs. A backend with thread
pools of its own also implements `burn_set_num_threads` / `burn_get_num_threads`, which
`burn.set_num_threads` / `burn.get_num_threads` call on every installed plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from burn.plugins.specs import BackendSpec, DecoratorSpec

PROJECT = "burn"
"""The pluggy project name: markers of another project are ignored by burn."""

ENTRY_POINT_GROUP = "burn.backends"
"""The entry-point group every burn plugin package registers its plugin module in."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def burn_backends() -> list[BackendSpec]:  # type: ignore[empty-body]
    """Return the backends this plugin provides.

    Example:
        >>> import burn.plugins as bp
        >>> @bp.hookimpl
        ... def burn_backends():
        ...     return [bp.BackendSpec(name="mine", factory=lambda **o: ..., package="burn-mine")]
    """


@hookspec
def burn_decorators() -> list[DecoratorSpec]:  # type: ignore[empty-body]
    """Return the backend decorators (backends that wrap another one) this plugin provides.

    Example:
        >>> import burn.plugins as bp
        >>> @bp.hookimpl
        ... def burn_decorators():
        ...     return [bp.DecoratorSpec(name="traced", factory=lambda inner, **o: inner)]
    """


@hookspec
def burn_set_num_threads(count: int) -> None:
    """Use `count` threads in every pool this plugin's backends run work on (its own pools, and
    the libraries it calls into that keep pools: BLAS, numba).

    Called by `burn.set_num_threads` with a positive int. Optional: a backend without CPU pools
    does not implement it.

    Example:
        >>> import burn.plugins as bp
        >>> @bp.hookimpl
        ... def burn_set_num_threads(count):
        ...     pass  # resize the pools here
    """


@hookspec(firstresult=True)
def burn_get_num_threads() -> int | None:  # type: ignore[empty-body]
    """The thread count this plugin's backends use, or None if they keep no CPU pool.

    `burn.get_num_threads` takes the first answer that is not None.

    Example:
        >>> import burn.plugins as bp
        >>> @bp.hookimpl
        ... def burn_get_num_threads():
        ...     return 4
    """


HOOK_NAMES = ("burn_backends", "burn_decorators", "burn_set_num_threads", "burn_get_num_threads")
