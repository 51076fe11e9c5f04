"""The entry point of the package: burn imports this module during plugin discovery.

Keep it cheap: it must not import the heavy library your backend runs on (here NumPy is cheap,
but a GPU library is not). The factory imports the backend on first use, and the probe says
whether the backend can run on this machine.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp


def _factory(**options: Any) -> Any:
    """Build the backend; `options` are the keyword arguments of ``burn.backend("template", ...)``."""
    from burn_template.backend import TemplateBackend

    return TemplateBackend(**options)


def _probe() -> str | None:
    """None when the backend can run here; otherwise the reason and how to fix it.

    A GPU backend would check for its driver here (without raising). NumPy is a dependency of this
    package, so the template can always run.
    """
    return None


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    """The hook burn calls: the backends this package provides."""
    return [
        bp.BackendSpec(
            name="template",
            factory=_factory,
            probe=_probe,
            description="template backend: the required ops in NumPy",
            package="burn-template-backend",
        )
    ]
