"""`burn.set_num_threads` / ``BURN_NUM_THREADS`` reach burn-ndarray's pool and NumPy's BLAS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from threadpoolctl import threadpool_info

import burn
from burn_ndarray.runtime import blas


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def restore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The counts restored after the test, and ndarray's plugin registered where no entry point
    did (a source checkout on PYTHONPATH). The BLAS is left alone here (its part is checked in
    fresh processes, `_in_fresh_process`)."""
    import burn.plugins
    import burn_ndarray.plugin

    monkeypatch.setattr(blas, "set_threads", lambda count: None)

    here = "ndarray" not in {info.name for info in burn.plugins.backends()}
    if here:
        burn.plugins.register(burn_ndarray.plugin)
    before = burn_ndarray.get_num_threads()
    yield
    burn_ndarray.set_num_threads(before)
    if here:
        burn.plugins.unregister(burn_ndarray.plugin)


def _in_fresh_process(body: str) -> None:
    """Run `body` (asserts) in a new interpreter: OpenBLAS set from the main thread stops taking
    sets from other threads for the rest of the process (see `blas.set_threads`), which would leak
    into every later test of this one."""
    code = "import numpy as np, burn, burn_ndarray, burn.plugins, burn_ndarray.plugin\n" + textwrap.dedent(
        """
        from threadpoolctl import threadpool_info
        from burn_ndarray.runtime import blas, threads
        if "ndarray" not in {info.name for info in burn.plugins.backends()}:
            burn.plugins.register(burn_ndarray.plugin)
        def _blas_threads():
            return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
        """
    ) + textwrap.dedent(body)
    env = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(not _blas_threads(), reason="threadpoolctl finds no BLAS library")
def test_burn_set_num_threads_sets_pool_and_blas() -> None:
    _in_fresh_process(
        """
        burn.set_num_threads(1)
        assert burn.get_num_threads() == 1
        assert burn_ndarray.get_num_threads() == 1
        assert threads._pool is None  # one thread: no pool started
        assert _blas_threads() and set(_blas_threads()) == {1}
        np.ones((64, 64)) @ np.ones((64, 64))  # a GEMM does not bring the BLAS threads back
        assert set(_blas_threads()) == {1}
        burn.set_num_threads(2)
        assert burn.get_num_threads() == burn_ndarray.get_num_threads() == 2
        assert set(_blas_threads()) == {2}
        assert threads.parts(1 << 30, 1) == 2  # large ops split in two
        """
    )


@pytest.mark.skipif(not _blas_threads(), reason="threadpoolctl finds no BLAS library")
def test_burn_ndarray_set_num_threads_sets_blas_too() -> None:
    _in_fresh_process(
        """
        burn_ndarray.set_num_threads(1)
        assert set(_blas_threads()) == {1}
        assert burn.get_num_threads() == 1  # the backend's own setter is what burn reports
        """
    )


@pytest.mark.skipif(not _blas_threads(), reason="threadpoolctl finds no BLAS library")
def test_single_threaded_restores_the_set_count() -> None:
    _in_fresh_process(
        """
        burn.set_num_threads(1)
        burn.set_num_threads(2)
        with blas.single_threaded():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {2}
        """
    )


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_set_num_threads_rejects_non_positive_ints(bad: object, restore: None) -> None:
    before = burn.get_num_threads()
    with pytest.raises(ValueError, match="positive int"):
        burn.set_num_threads(bad)  # type: ignore[arg-type]
    assert burn.get_num_threads() == before


def test_burn_num_threads_env_is_honoured_in_a_new_process() -> None:
    code = textwrap.dedent(
        """
        import json
        import numpy as np
        import burn, burn_ndarray
        from threadpoolctl import threadpool_info
        B = burn.backend("ndarray")
        x = burn.Tensor.from_data(np.ones((8, 8), dtype="float32"), backend=B)
        (x @ x).tolist()
        print(json.dumps({
            "burn": burn.get_num_threads(),
            "ndarray": burn_ndarray.get_num_threads(),
            "blas": [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"],
        }))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}
    env["BURN_NUM_THREADS"] = "1"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["burn"] == 1
    assert seen["ndarray"] == 1
    # (this process may hold more BLAS libraries than the child: numba loads SciPy's OpenBLAS)
    assert seen["blas"] and all(n == 1 for n in seen["blas"])


def test_numba_pool_follows_the_count(restore: None) -> None:
    from burn_ndarray.runtime import tbb

    if not tbb.ready():
        pytest.skip("numba's TBB pool does not run here")
    import numba

    burn.set_num_threads(1)
    assert numba.get_num_threads() == 1
    burn.set_num_threads(2)
    assert numba.get_num_threads() == min(2, numba.config.NUMBA_NUM_THREADS)
