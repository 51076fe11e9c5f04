"""The ``burn.backends`` entry point of burn-autodiff: registers the decorator ``autodiff``.

Imports nothing heavy: `burn_autodiff.backend` is imported by the factory, on first use.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp


def _factory(inner: Any, checkpointing: str | None = None) -> Any:
    from burn_autodiff.backend import Autodiff

    return Autodiff(inner, checkpointing=checkpointing)


@bp.hookimpl
def burn_decorators() -> list[bp.DecoratorSpec]:
    return [
        bp.DecoratorSpec(
            name="autodiff",
            factory=_factory,
            description="records float ops and computes gradients, on top of any backend",
            package="burn-autodiff",
        )
    ]
