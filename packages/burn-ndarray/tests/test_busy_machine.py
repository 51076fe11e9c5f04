"""`burn_ndarray.runtime.busy`: NumPy's BLAS on one thread while other processes hold the cores,
back to the count once they are free; nothing at one thread, with ``BURN_NDARRAY_BLAS=system``,
or within a period of the last look."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_ndarray.runtime import busy, gemm


@pytest.fixture
def blas_count(monkeypatch: pytest.MonkeyPatch, threads: Any) -> Iterator[Any]:
    """NumPy's OpenBLAS count functions, burn at 2 threads, two cores; the count restored after."""
    functions = gemm._functions()
    if not functions:
        pytest.skip("needs NumPy's OpenBLAS")
    before = functions["get"]()
    threads(2)
    monkeypatch.setattr(busy, "_cores", lambda: 2)
    monkeypatch.setattr(busy, "_state", {"at": -busy.PERIOD, "cpu": 0.0})
    monkeypatch.delenv("BURN_NDARRAY_BLAS", raising=False)
    functions["set"](2)
    yield functions
    functions["set"](before)


def _look(monkeypatch: pytest.MonkeyPatch, load: float) -> None:
    monkeypatch.setattr(busy.os, "getloadavg", lambda: (load, load, load))
    busy._state["at"] = -busy.PERIOD  # due now
    busy.follow()


def test_free_cores() -> None:
    assert busy.free_cores(load=2.0, own=2.0, cores=2) == 2.0
    assert busy.free_cores(load=3.0, own=1.0, cores=2) == 0.0
    assert busy.free_cores(load=1.5, own=1.0, cores=4) == 3.5
    assert busy.free_cores(load=0.5, own=1.0, cores=2) == 2.0  # own use above the lagging average


def test_one_blas_thread_while_busy_back_when_quiet(blas_count: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _look(monkeypatch, load=9.0)
    assert blas_count["get"]() == 1
    _look(monkeypatch, load=0.2)
    assert blas_count["get"]() == 2


def test_float_matmul_looks_at_most_once_a_period(blas_count: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(busy.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    a = np.ones((128, 128), np.float32)  # a large product: small ones never look
    NdArray().float_matmul(a, a)
    assert blas_count["get"]() == 1
    monkeypatch.setattr(busy.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    NdArray().float_matmul(a, a)  # within the period: no new look
    assert blas_count["get"]() == 1


def test_nothing_at_one_thread_or_when_the_user_manages_the_blas(
    blas_count: Any, monkeypatch: pytest.MonkeyPatch, threads: Any
) -> None:
    monkeypatch.setenv("BURN_NDARRAY_BLAS", "system")
    _look(monkeypatch, load=9.0)
    assert blas_count["get"]() == 2
    monkeypatch.delenv("BURN_NDARRAY_BLAS")
    threads(1)
    _look(monkeypatch, load=9.0)
    assert blas_count["get"]() == 2
