"""burn-template-backend: a third-party burn backend, written as a template to copy.

The backend (`TemplateBackend`, selected as ``burn.backend("template")``) implements only the
*required* ops of burn's backend contract, with NumPy; burn-core supplies every other op from
them. Start reading at `plugin.py` (how burn finds it), then `backend.py`.
"""

from burn_template.backend import TemplateBackend

__all__ = ["TemplateBackend"]
__version__ = "0.1.0"
