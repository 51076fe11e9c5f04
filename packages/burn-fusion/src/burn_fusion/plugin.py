"""The ``burn.backends`` entry point of burn-fusion: registers the decorator ``fusion``.

Imports nothing heavy: `burn_fusion.backend` is imported by the factory, on first use.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp


def _factory(inner: Any) -> Any:
    from burn_fusion.backend import Fusion

    return Fusion(inner)


@bp.hookimpl
def burn_decorators() -> list[bp.DecoratorSpec]:
    return [
        bp.DecoratorSpec(
            name="fusion",
            factory=_factory,
            description="records element-wise ops and runs each group as one generated kernel (opencl)",
            package="burn-fusion",
        )
    ]
