"""burn-template-backend: a third-party burn backend, written as a template to copy.

The backend (`TemplateBackend`, selected as ``burn.backend("template")``) implements only the
*required* ops of burn's backend contract, with NumPy; burn-core supplies every other op from
them. Start reading at `plugin.py` (how burn finds it), then `backend.py`.

Importing this package is cheap on purpose: burn imports ``burn_template.plugin`` (and so this
``__init__``) while it discovers plugins, for every ``burn backends`` and every first
``burn.backend(...)``, whichever backend is asked for. `TemplateBackend` is therefore loaded on
first access (PEP 562 module ``__getattr__``), not here: a backend over torch, CuPy or JAX would
otherwise import that library at discovery.

Example:
    >>> import burn_template
    >>> burn_template.TemplateBackend().name  # doctest: +SKIP
    'template'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn_template.backend import TemplateBackend

__all__ = ["TemplateBackend"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "TemplateBackend":
        from burn_template.backend import TemplateBackend

        return TemplateBackend
    raise AttributeError(f"module 'burn_template' has no attribute {name!r}")
