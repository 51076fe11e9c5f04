"""Fixtures: `fusion(opencl)` beside plain `opencl`, and a counter of OpenCL kernel launches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import burn_fusion.plugin
import pytest

import burn
import burn.plugins as bp
import burn_autodiff.plugin
import burn_opencl.plugin

# Make the names work when the packages are only on PYTHONPATH (a no-op when installed).
for _plugin in (burn_opencl.plugin, burn_autodiff.plugin, burn_fusion.plugin):
    bp.register(_plugin)


def _opencl_or_skip() -> Any:
    reason = burn_opencl.plugin._probe()
    if reason is not None:
        pytest.skip(f"opencl unavailable: {reason}")
    return burn.plugins.backend("opencl")


@pytest.fixture
def cl_backend() -> Any:
    return _opencl_or_skip()


@pytest.fixture
def fused() -> Any:
    _opencl_or_skip()
    backend = burn.plugins.backend("fusion(opencl)")
    backend.sync()
    backend.stats.reset()
    return backend


class Launches:
    """Counts every OpenCL kernel enqueued while installed (`pyopencl.Kernel.__call__`)."""

    def __init__(self) -> None:
        self.count = 0

    def take(self) -> int:
        count, self.count = self.count, 0
        return count


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> Iterator[Launches]:
    import pyopencl as cl

    counter = Launches()
    original = cl.Kernel.__call__

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        counter.count += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cl.Kernel, "__call__", counted)
    yield counter
