"""The first-compile notice of burn-opencl: one line on stderr (logger ``burn.compile``) when a process
builds programs its cache does not hold, naming the cache folder, and nothing when they all come from
the cache. Processes run on an empty pocl cache of their own (``POCL_CACHE_DIR``); the rules for
pyopencl's own cache and other drivers are checked on recorded build descriptions."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import burn.backend.compile_notice as notice
from burn_opencl import build_cache
from burn_opencl.build_cache import BuildWatch, entry_times

NOTICE = "burn-opencl: compiling OpenCL programs on first use"
RUN = """
    import numpy as np
    import burn
    B = burn.backend("opencl")
    x = burn.Tensor.from_data(np.arange(12, dtype=np.float32).reshape(3, 4), device=B.default_device())
    print((x * 2 + 1).sum().to_numpy().item())
"""


def _python(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "POCL_CACHE_DIR": str(tmp_path / "kcache"),
        "BURN_OPENCL_CACHE_DIR": str(tmp_path / "programs"),
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def test_a_cold_cache_says_so_once_and_a_warm_one_says_nothing(B: Any, tmp_path: Path) -> None:
    if B.runtime().cl_device.platform.name.strip() != build_cache.POCL_PLATFORM:
        pytest.skip("the subprocess case drives pocl's cache (POCL_CACHE_DIR)")
    cold = _python(tmp_path, RUN)
    assert cold.returncode == 0 and cold.stdout.strip() == "144.0", cold.stderr
    lines = [line for line in cold.stderr.splitlines() if NOTICE in line]
    assert len(lines) == 1, cold.stderr
    assert f"cached in {tmp_path / 'programs'}; BURN_OPENCL_CACHE_DIR moves it" in lines[0]
    assert list((tmp_path / "programs").glob("*/*.bin"))  # the binaries the warm run builds from
    warm = _python(tmp_path, RUN)
    assert warm.returncode == 0 and warm.stdout == cold.stdout, warm.stderr
    assert NOTICE not in warm.stderr


def test_a_warm_process_builds_from_the_binaries(B: Any, tmp_path: Path) -> None:
    code = """
    import pyopencl
    made = {"source": 0, "binary": 0}
    Program = pyopencl.Program

    def counted(ctx, *args):  # Program(ctx, source) or Program(ctx, devices, binaries)
        if not isinstance(args[0], str):
            made["binary"] += 1
        elif "burn_probe" not in args[0]:  # the device probe (burn_opencl._pocl), once a process
            made["source"] += 1
        return Program(ctx, *args)

    pyopencl.Program = counted
    """ + RUN + """
    print(made["source"], made["binary"])
    """
    cold = _python(tmp_path, code)
    assert cold.returncode == 0, cold.stderr
    source, binary = map(int, cold.stdout.splitlines()[1].split())
    assert source >= 2 and binary == 0
    warm = _python(tmp_path, code)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.splitlines()[1].split() == ["0", str(source)]  # every program from its binary


@pytest.mark.no_device
def test_program_cache_keys_by_device_options_and_source(tmp_path: Path) -> None:
    class Platform:
        name, version = "P", "1"

    class Device:
        name, version, driver_version, platform = "D", "2", "3", Platform

    class Other(Device):
        driver_version = "4"

    cache = build_cache.ProgramCache(tmp_path, Device)
    cache.store("kernel", ("-a",), b"bin")
    assert cache.load("kernel", ("-a",)) == b"bin"
    assert cache.load("kernel", ("-b",)) is None
    assert cache.load("kernel2", ("-a",)) is None
    assert build_cache.ProgramCache(tmp_path, Other).load("kernel", ("-a",)) is None  # new driver
    assert not list(tmp_path.glob("*/*.tmp"))


@pytest.mark.no_device
def test_an_empty_setting_turns_the_program_cache_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BURN_OPENCL_CACHE_DIR", "")
    assert build_cache.program_cache_dir() is None
    monkeypatch.setenv("BURN_OPENCL_CACHE_DIR", str(tmp_path))
    assert build_cache.program_cache_dir() == tmp_path
    monkeypatch.delenv("BURN_OPENCL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert build_cache.program_cache_dir() == tmp_path / "burn-opencl"


class Built:
    """What pyopencl leaves on a built program: (description, was_cached, seconds)."""

    def __init__(self, description: str, was_cached: bool) -> None:
        self._build_duration_info = (description, was_cached, 0.1)


@pytest.mark.no_device
def test_the_rules_for_each_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    monkeypatch.setattr(notice, "_said", set())  # a process that has not said it yet
    watch = BuildWatch("Some Vendor OpenCL")
    assert not watch.built(Built("cache retrieval", True))  # pyopencl's cache hit
    assert not watch.built(Built("uncached source build (assuming cached by ICD)", False))  # unknown driver
    assert not watch.built(object())  # a pyopencl without the record: unknown
    with caplog.at_level("WARNING", logger="burn.compile"):
        assert watch.built(Built("source build resulting from a binary cache miss", False))
        assert not watch.built(Built("source build resulting from a binary cache miss", False))  # once
    (record,) = caplog.records
    assert str(build_cache.pyopencl_cache_dir()) in record.getMessage()
    assert "XDG_CACHE_HOME moves it" in record.getMessage()

    monkeypatch.setattr(notice, "_said", set())
    monkeypatch.setenv("POCL_CACHE_DIR", str(tmp_path / "kcache"))
    pocl = BuildWatch(build_cache.POCL_PLATFORM)
    icd = Built("uncached source build (assuming cached by ICD)", False)
    assert not pocl.built(icd)  # nothing written into the driver's cache: loaded
    (tmp_path / "kcache" / "AB").mkdir(parents=True)  # a compile's new entry
    (tmp_path / "kcache" / "tempfile_x").write_text("")  # pocl's scratch file: not an entry
    assert set(entry_times(tmp_path / "kcache")) == {"AB"}
    assert pocl.built(icd)
