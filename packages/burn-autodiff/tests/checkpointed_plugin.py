"""A test-only plugin: the decorator ``autodiff_balanced``, autodiff with balanced checkpointing,
so the conformance suite's gradient tests can run on a checkpointing backend by name."""

from __future__ import annotations

from typing import Any

import burn.plugins as bp


def _factory(inner: Any, **options: Any) -> Any:
    from burn_autodiff import Autodiff

    return Autodiff(inner, checkpointing="balanced")


@bp.hookimpl
def burn_decorators() -> list[bp.DecoratorSpec]:
    return [bp.DecoratorSpec(name="autodiff_balanced", factory=_factory, package="burn-autodiff (tests)")]
