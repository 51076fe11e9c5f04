"""With only burn-core installed (tox env ``core``): burn imports, lists nothing, and says what to install.

These checks only make sense without any backend package, so they skip when burn-ndarray is
importable (every other environment).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from burn.plugins.registry import install_hint

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("burn_ndarray") is not None,
    reason="burn-ndarray is importable: these tests check an environment with only burn-core",
)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    from burn.plugins import registry

    monkeypatch.delenv("BURN_BACKEND", raising=False)
    monkeypatch.setattr(registry, "REGISTRY", registry.PluginRegistry())  # real entry points, discovered anew


def test_import_burn_works_and_lists_no_backend() -> None:
    import burn
    import burn.plugins as bp

    assert burn.__name__ == "burn"
    assert bp.backends() == []


def test_ndarray_error_says_pip_install_burn_ndarray() -> None:
    import burn
    from burn.errors import BackendNotFoundError

    for select in (
        lambda: burn.backend("ndarray"),
        lambda: burn.backend(),
        lambda: burn.plugins.default_backend(),
    ):
        with pytest.raises(BackendNotFoundError, match=re.escape(install_hint("burn-ndarray"))) as info:
            select()
        assert "no burn backend is installed" in str(info.value)


def test_autodiff_error_names_its_package() -> None:
    import burn
    from burn.errors import BackendNotFoundError

    with pytest.raises(BackendNotFoundError, match=re.escape(install_hint("burn-autodiff"))):
        burn.backend("autodiff(ndarray)")


def test_cli_says_what_to_install() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "burn", "backends"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert f"no burn backend is installed: {install_hint('burn-ndarray')}" in proc.stdout
