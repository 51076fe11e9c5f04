"""Errors of the autodiff backend."""

from __future__ import annotations

from burn.errors import BurnError


class AutodiffError(BurnError, RuntimeError):
    """A misuse of the gradient graph: backward without a graph, a graph already consumed by a
    previous backward, gradients asked from a `Gradients` that cannot hold them."""
