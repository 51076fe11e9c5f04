"""`burn.set_num_threads` reaches every plugin implementing the thread hooks; core keeps no pool."""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest

import burn
import burn.plugins as bp
from burn.plugins import threads as core_threads


def _pool_plugin(name: str, log: list[tuple[str, int]], answer: int | None) -> types.ModuleType:
    mod = types.ModuleType(name)

    def burn_set_num_threads(count: int) -> None:
        log.append((name, count))

    def burn_get_num_threads() -> int | None:
        return answer

    mod.burn_set_num_threads = bp.hookimpl(burn_set_num_threads)  # type: ignore[attr-defined]
    mod.burn_get_num_threads = bp.hookimpl(burn_get_num_threads)  # type: ignore[attr-defined]
    return mod


@pytest.fixture
def two_pools() -> Iterator[list[tuple[str, int]]]:
    log: list[tuple[str, int]] = []
    plugins = [_pool_plugin("pool_a", log, None), _pool_plugin("pool_b", log, None)]
    before = burn.get_num_threads()
    saved = core_threads._count
    for p in plugins:
        bp.register(p)
    try:
        yield log
    finally:
        for p in plugins:
            bp.unregister(p)
        burn.set_num_threads(before)
        core_threads._count = saved


def test_set_num_threads_calls_every_plugin(two_pools: list[tuple[str, int]]) -> None:
    burn.set_num_threads(3)
    assert ("pool_a", 3) in two_pools and ("pool_b", 3) in two_pools
    assert burn.get_num_threads() == 3


def test_bad_count_reaches_no_plugin(two_pools: list[tuple[str, int]]) -> None:
    with pytest.raises(ValueError, match="positive int, got 0"):
        burn.set_num_threads(0)
    assert two_pools == []


def test_get_num_threads_asks_the_plugins() -> None:
    plugin = _pool_plugin("pool_c", [], 7)
    bp.register(plugin)
    try:
        assert burn.get_num_threads() == 7
    finally:
        bp.unregister(plugin)


def test_a_plugin_with_only_thread_hooks_registers() -> None:
    plugin = _pool_plugin("pool_d", [], None)
    assert bp.register(plugin) == "pool_d"
    bp.unregister(plugin)
