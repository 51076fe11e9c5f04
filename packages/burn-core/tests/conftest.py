"""Shared fixtures of burn-core's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def ndarray_registered() -> Iterator[None]:
    """`ndarray` selectable by name for the test, and the plugin registry left as found: the plugin
    is registered only when no entry point did (a source checkout on PYTHONPATH), and unregistered
    only then — unregistering an installed plugin would remove `ndarray` for every later test."""
    import burn.plugins

    burn_ndarray_plugin = pytest.importorskip("burn_ndarray.plugin", reason="burn-ndarray is not installed")
    registered_here = "ndarray" not in {info.name for info in burn.plugins.backends()}
    if registered_here:
        burn.plugins.register(burn_ndarray_plugin)
    try:
        yield
    finally:
        if registered_here:
            burn.plugins.unregister(burn_ndarray_plugin)
