"""The pytest plugin of the conformance suite: ``--burn-backend`` and the fixtures.

Registered as the ``pytest11`` entry point ``burn``; before burn-core is installed, load it with
``-p burn.testing.plugin``. It only acts on tests that use its ``backend`` fixture, so it is inert
in projects that do not.

``--burn-plugin MODULE`` (repeatable) registers a plugin module that is not installed (a backend
under development): ``--burn-plugin burn_ndarray.plugin --burn-backend ndarray``.

``--burn-backend NAME`` (repeatable) takes a name for `burn.backend`, optionally followed by
options: ``"ndarray?float_dtype=float64"`` or ``"autodiff(ndarray)?float_dtype=float64&int_dtype=int32"``
(``true``/``false`` and integers are converted, anything else stays a string).

Fixtures:
    backend: the backend under test (parametrized over every ``--burn-backend``; skipped with the
        reason when none is given or the backend cannot run here).
    device: ``backend.default_device()``.
    float_dtype / int_dtype / numeric_dtype / any_dtype: parametrized over every float / int /
        float-or-int / any dtype burn has; a dtype the backend does not declare is skipped with the
        capability as reason.
    rng: a NumPy generator seeded from the test's id (inputs are reproducible per test).
"""

from __future__ import annotations

import zlib
from typing import Any

import pytest

NO_BACKEND = (
    "no backend under test: pass --burn-backend NAME (e.g. --burn-backend ndarray) "
    "to run the burn conformance suite"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("burn", "burn conformance suite")
    group.addoption(
        "--burn-backend",
        action="append",
        default=[],
        dest="burn_backends",
        metavar="NAME",
        help="backend to run the conformance suite on, e.g. ndarray, 'autodiff(ndarray)', "
        "'ndarray?float_dtype=float64' (repeatable)",
    )
    group.addoption(
        "--burn-plugin",
        action="append",
        default=[],
        dest="burn_plugins",
        metavar="MODULE",
        help="import MODULE and register it with burn.plugins.register before the suite runs: "
        "tests a backend that is not installed, e.g. --burn-plugin burn_ndarray.plugin (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "covers(*ops): backend contract ops a conformance test checks")
    modules = config.getoption("burn_plugins", default=[]) or []
    if modules:
        import importlib

        import burn.plugins as bp

        for name in modules:
            try:
                module = importlib.import_module(name)
            except ImportError as exc:
                raise pytest.UsageError(f"--burn-plugin {name}: cannot import it: {exc}") from exc
            try:
                bp.register(module)  # already registered (installed): nothing happens
            except Exception as exc:
                raise pytest.UsageError(f"--burn-plugin {name}: {exc}") from exc


def pytest_report_header(config: pytest.Config) -> str | None:
    names = config.getoption("burn_backends", default=[])
    return f"burn backends under test: {', '.join(names)}" if names else None


def parse_backend_arg(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name?key=value&key=value"`` into the name and its options.

    Example:
        >>> parse_backend_arg("ndarray?float_dtype=float64")
        ('ndarray', {'float_dtype': 'float64'})
    """
    name, _, query = text.partition("?")
    options: dict[str, Any] = {}
    for item in filter(None, query.split("&")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise pytest.UsageError(f"--burn-backend {text!r}: option {item!r} is not key=value")
        options[key.strip()] = _convert(value.strip())
    return name.strip(), options


def _convert(value: str) -> Any:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    try:
        return int(value)
    except ValueError:
        return value


def _is_ours(metafunc: pytest.Metafunc) -> bool:
    # Only parametrize tests whose `backend` fixture is this plugin's: a project with its own
    # `backend` fixture must not see its tests multiplied by --burn-backend.
    defs = getattr(metafunc, "_arg2fixturedefs", {}).get("backend")
    if not defs:
        return False
    func = defs[-1].func
    return getattr(func, "__module__", None) == __name__


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames or not _is_ours(metafunc):
        return
    names: list[str] = metafunc.config.getoption("burn_backends", default=[]) or []
    params: list[str | None] = list(names) if names else [None]
    ids = [n if n is not None else "no-backend" for n in params]
    metafunc.parametrize("backend", params, ids=ids, indirect=True, scope="session")


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> Any:
    """The backend under test, built with `burn.backend` from a ``--burn-backend`` value."""
    spec = getattr(request, "param", None)
    if spec is None:
        pytest.skip(NO_BACKEND)
    from burn.errors import BackendUnavailableError
    from burn.plugins import backend as select_backend

    name, options = parse_backend_arg(spec)
    try:
        return select_backend(name, **options)
    except BackendUnavailableError as exc:
        pytest.skip(f"backend {spec!r} cannot run here: {exc}")


@pytest.fixture
def device(backend: Any) -> Any:
    """The backend's default device."""
    return backend.default_device()


# Dtype names, not DType members: the fixture params stay plain strings in test ids and reprs.
_FLOATS = ["float64", "float32", "float16", "bfloat16"]
_INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _dtype_param(request: pytest.FixtureRequest, backend: Any) -> Any:
    from burn.tensor.dtype import DType
    from burn.testing.helpers import require_dtype

    dtype = DType(request.param)
    require_dtype(backend, dtype)
    return dtype


@pytest.fixture(params=_FLOATS)
def float_dtype(request: pytest.FixtureRequest, backend: Any) -> Any:
    """Each float dtype (float64, float32, float16, bfloat16) the backend declares."""
    return _dtype_param(request, backend)


@pytest.fixture(params=_INTS)
def int_dtype(request: pytest.FixtureRequest, backend: Any) -> Any:
    """Each int dtype (int64, int32, int16, int8, uint8) the backend declares."""
    return _dtype_param(request, backend)


@pytest.fixture(params=[*_FLOATS, *_INTS])
def numeric_dtype(request: pytest.FixtureRequest, backend: Any) -> Any:
    """Each float or int dtype the backend declares (ops Bool tensors do not have)."""
    return _dtype_param(request, backend)


@pytest.fixture(params=[*_FLOATS, *_INTS, "bool"])
def any_dtype(request: pytest.FixtureRequest, backend: Any) -> Any:
    """Each dtype the backend declares, of every kind."""
    return _dtype_param(request, backend)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> Any:
    """NumPy generator seeded from the test id: inputs differ per test, never between runs."""
    import numpy as np

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
