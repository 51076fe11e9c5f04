"""The pytest plugin of the conformance suite: ``--burn-backend`` and the fixtures.

Registered as the ``pytest11`` entry point ``burn``; before burn-core is installed, load it with
``-p burn.testing.plugin``. It only acts on tests that use its ``backend`` fixture, so it is inert
in projects that do not.

``--burn-plugin MODULE`` (repeatable) registers a plugin module that is not installed (a backend
under development): ``--burn-plugin burn_ndarray.plugin --burn-backend ndarray``.

``--burn-compile`` runs the suite in compile mode (`burn.testing.compile_mode`): every module call
and gradient check also goes through `burn.compile`, and must give the eager results.

``--burn-backend NAME`` (repeatable) takes a name for `burn.backend`, optionally followed by
options: ``"ndarray?float_dtype=float64"`` or ``"autodiff(ndarray)?float_dtype=float64&int_dtype=int32"``
(``true``/``false`` and integers are converted, anything else stays a string).

A green run must mean the suite ran, so the session stops at once, with a usage error (exit
status 4), when:

- the suite is collected without any ``--burn-backend`` (the message lists the installed backends);
- a name is malformed or unknown (with the registry's "did you mean");
- a backend is installed but its probe says it cannot run here (no GPU, no OpenCL platform): the
  probe's reason is shown. ``--burn-allow-unavailable`` makes that an explicit choice instead:
  every test of that backend is then skipped with the reason (CI without the hardware).

The suite's node ids, as pytest prints them when it runs from elsewhere
(``suite/test_sort.py::test_float_sort[ndarray-...]``), work as arguments from any folder: a failure
is re-run as printed (and mutmut re-runs the tests that reach a mutant that way).

Fixtures:
    backend: the backend under test (parametrized over every ``--burn-backend``; skipped with the
        probe's reason when it cannot run here and ``--burn-allow-unavailable`` is given).
    device: ``backend.default_device()``.
    float_dtype / int_dtype / numeric_dtype / any_dtype: parametrized over every float / int /
        float-or-int / any dtype burn has; a dtype the backend does not declare is skipped with the
        capability as reason.
    rng: a NumPy generator seeded from the test's id (inputs are reproducible per test).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import pytest

NO_BACKEND = (
    "no backend under test: pass --burn-backend NAME (e.g. --burn-backend ndarray) "
    "to run the burn conformance suite"
)
ALLOW_UNAVAILABLE = "--burn-allow-unavailable"
# --burn-backend values skipped under --burn-allow-unavailable, with the probe's reason
_UNAVAILABLE = pytest.StashKey[dict[str, str]]()


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
    group.addoption(
        "--burn-compile",
        action="store_true",
        default=False,
        dest="burn_compile",
        help="compile mode: every module call and gradient check of the suite also runs through "
        "burn.compile and must equal the eager result (bitwise on ndarray; burn.testing.compile_mode)",
    )
    group.addoption(
        ALLOW_UNAVAILABLE,
        action="store_true",
        default=False,
        dest="burn_allow_unavailable",
        help="skip the suite (with the probe's reason) for a --burn-backend that is installed but "
        "cannot run here, instead of failing: for CI runners without the hardware",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    # The suite's node ids are relative to this package when it is run with --pyargs from elsewhere
    # (``suite/test_sort.py::test_float_sort[ndarray-...]``), as pytest prints them: make them work
    # as arguments too, so a failure can be re-run as printed (mutmut re-runs tests that way).
    args[:] = [suite_node_arg(arg, Path(early_config.invocation_params.dir)) for arg in args]


def suite_node_arg(arg: str, cwd: Path) -> str:
    """`arg` with a leading ``suite/`` made absolute when it names a file of the suite, not of `cwd`.

    Example:
        >>> suite_node_arg("suite/test_sort.py::test_float_sort", Path("/tmp")).endswith(
        ...     "burn/testing/suite/test_sort.py::test_float_sort")
        True
    """
    path, sep, rest = arg.partition("::")
    if not path.startswith(("suite/", "suite" + os.sep)) or (cwd / path).exists():
        return arg
    mine = Path(__file__).resolve().parent / path
    return f"{mine}{sep}{rest}" if mine.is_file() else arg


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
    allow = bool(config.getoption("burn_allow_unavailable", default=False))
    unavailable: dict[str, str] = {}
    for spec in config.getoption("burn_backends", default=[]) or []:
        reason = unavailable_reason(spec)
        if reason is None:
            continue
        if not allow:
            raise pytest.UsageError(
                f"--burn-backend {spec}: {reason}\n(the suite did not run; pass {ALLOW_UNAVAILABLE} "
                "to skip it instead, e.g. on a CI runner without the hardware)"
            )
        unavailable[spec] = reason
    config.stash[_UNAVAILABLE] = unavailable
    if config.getoption("burn_compile", default=False):
        from burn.testing import compile_mode

        compile_mode.enable()


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.getoption("burn_compile", default=False):
        from burn.testing import compile_mode

        compile_mode.disable()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if config.getoption("burn_compile", default=False):
        from burn.testing import compile_mode

        terminalreporter.write_line(f"burn compile mode: {compile_mode.summary()}")


def unavailable_reason(spec: str) -> str | None:
    """Why the backend of a ``--burn-backend`` value cannot run here, or None when it can.

    Builds nothing: the name is resolved and the base backend's probe is asked.

    Raises:
        pytest.UsageError: the value is malformed, or names no installed backend or decorator (the
            message has the registry's "did you mean"), or its plugin failed to load.

    Example:
        >>> unavailable_reason("ndarray?float_dtype=float64") is None  # doctest: +SKIP
        True
    """
    from burn.errors import BurnError
    from burn.plugins import registry

    name, _ = parse_backend_arg(spec)
    try:
        base = registry.REGISTRY.resolve(name)[-1]
    except (BurnError, ValueError) as exc:
        raise pytest.UsageError(f"--burn-backend {spec}: {exc}") from exc
    status, reason, _exc = base.verdict()
    if status == "failed":
        raise pytest.UsageError(f"--burn-backend {spec}: {base.label}: {reason}")
    if status == "unavailable":
        return f"{base.label} is installed but cannot run here: {reason}"
    return None


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    names = config.getoption("burn_backends", default=[])
    if not names:
        return None
    lines = [f"burn backends under test: {', '.join(names)}"]
    if config.getoption("burn_compile", default=False):
        lines.append("burn compile mode: module calls and gradient checks also compiled, compared with eager")
    for spec, reason in config.stash.get(_UNAVAILABLE, {}).items():
        lines.append(f"burn backend {spec} SKIPPED ({ALLOW_UNAVAILABLE}): {reason}")
    return lines


def pytest_collection_finish(session: pytest.Session) -> None:
    # Without --burn-backend every conformance test would be skipped and the run would be green:
    # stop instead and say what to pass (only when suite tests were collected and would run).
    config = session.config
    if config.getoption("burn_backends", default=[]) or config.getoption("collectonly", default=False):
        return
    if any(_uses_our_backend(item) for item in session.items):
        pytest.exit(_no_backend_message(), returncode=pytest.ExitCode.USAGE_ERROR)


def _uses_our_backend(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    defs: Any = getattr(info, "name2fixturedefs", {}).get("backend") if info is not None else None
    return bool(defs) and getattr(defs[-1].func, "__module__", None) == __name__


def _no_backend_message() -> str:
    try:
        from burn.plugins import backends

        rows = [r for r in backends() if r.kind == "backend"]
    except Exception as exc:  # a broken plugin must not hide the advice itself
        rows, listing = [], f" (listing the installed backends failed: {exc})"
    else:
        listing = (
            "; installed backends: "
            + ", ".join(f"{r.name} ({r.status})" if r.status != "available" else r.name for r in rows)
            if rows
            else "; no burn backend is installed: pip install burn-ndarray"
        )
    example = next((r.name for r in rows if r.status == "available"), "ndarray")
    return (
        f"{NO_BACKEND}{listing}. Example: pytest --pyargs burn.testing --burn-backend {example} "
        f"(or: burn conformance {example})"
    )


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
        if not request.config.getoption("burn_allow_unavailable", default=False):
            raise
        pytest.skip(f"backend {spec!r} cannot run here ({ALLOW_UNAVAILABLE}): {exc}")


@pytest.fixture
def device(backend: Any) -> Any:
    """The backend's default device."""
    return backend.default_device()


# Dtype names, not DType members: the fixture params stay plain strings in test ids and reprs.
_FLOATS = ["float64", "float32", "float16", "bfloat16"]
_INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _dtype_param(request: pytest.FixtureRequest, backend: Any) -> Any:
    from burn.foundations.dtype import DType
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
