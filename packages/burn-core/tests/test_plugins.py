"""The plugin registry: name grammar, selection, caching, isolation of broken plugins, strict mode.

Plugins here are fake modules registered at run time, and fake entry points handed to a private
`PluginRegistry`; `test_plugins_entry_points.py` covers real entry points in subprocesses.
"""

from __future__ import annotations

import re
import threading
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import burn.plugins as bp
from burn.backend import Backend, Device
from burn.errors import BackendNotFoundError, BackendUnavailableError, PluginError
from burn.plugins import discovery, registry
from burn.plugins.names import BackendName, BackendNameError, parse_name


# -- fakes ----------------------------------------------------------------------------------------
class FakeBackend(Backend):
    name = "fake"

    def __init__(
        self, float_dtype: str = "float32", int_dtype: str = "int64", tag: str | None = None
    ) -> None:
        super().__init__(float_dtype=float_dtype, int_dtype=int_dtype)
        self.tag = tag

    def devices(self) -> list[Device]:
        return [Device("fake", "cpu", owner=self)]

    def options(self) -> dict[str, Any]:
        return {**super().options(), "tag": self.tag}


class Wrapper(Backend):
    """A decorator backend, like autodiff: wraps any backend."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(float_dtype=inner.float_dtype, int_dtype=inner.int_dtype)
        self._inner = inner
        self.name = f"wrap({inner.name})"  # type: ignore[misc]

    @property
    def inner(self) -> Backend:
        return self._inner

    def devices(self) -> list[Device]:
        return [d.with_owner(self) for d in self._inner.devices()]

    def options(self) -> dict[str, Any]:
        return self._inner.options()


_NAMED: dict[str, type[FakeBackend]] = {"fake": FakeBackend}


def named(name: str) -> type[FakeBackend]:
    """A FakeBackend subclass whose `name` is `name` (a spec's name must be its class's name)."""
    if name not in _NAMED:
        _NAMED[name] = type(f"Fake_{name}", (FakeBackend,), {"name": name})
    return _NAMED[name]


def backend_plugin(
    name: str = "fake",
    *,
    factory: Callable[..., Any] | None = None,
    probe: Callable[[], str | None] | None = None,
    package: str = "burn-fake",
    module: str | None = None,
) -> types.ModuleType:
    """A plugin module providing one backend, as a backend package's plugin.py would."""
    mod = types.ModuleType(module or f"fake_plugin_{name}")
    spec = bp.BackendSpec(
        name=name,
        factory=factory or named(name),
        probe=probe,
        description=f"the {name} test backend",
        package=package,
    )

    @bp.hookimpl
    def burn_backends() -> list[bp.BackendSpec]:
        return [spec]

    mod.burn_backends = burn_backends  # type: ignore[attr-defined]
    return mod


def decorator_plugin(name: str = "wrap", package: str = "burn-wrap") -> types.ModuleType:
    mod = types.ModuleType(f"fake_decorator_{name}")

    @bp.hookimpl
    def burn_decorators() -> list[bp.DecoratorSpec]:
        return [bp.DecoratorSpec(name=name, factory=lambda inner, **o: Wrapper(inner), package=package)]

    mod.burn_decorators = burn_decorators  # type: ignore[attr-defined]
    return mod


class FakeDist:
    def __init__(self, name: str, version: str) -> None:
        self.name, self.version = name, version


class FakeEntryPoint:
    """Stands in for importlib.metadata.EntryPoint: `load` returns (or raises) what it is given."""

    def __init__(
        self, name: str, value: str, target: object, package: str = "", version: str = "1.2.3"
    ) -> None:
        self.name, self.value, self._target = name, value, target
        self.dist = FakeDist(package, version) if package else None
        self.loads = 0

    def load(self) -> object:
        self.loads += 1
        if isinstance(self._target, BaseException):
            raise self._target
        return self._target


@pytest.fixture
def entry_points() -> list[FakeEntryPoint]:
    return []


@pytest.fixture
def reg(entry_points: list[FakeEntryPoint], monkeypatch: pytest.MonkeyPatch) -> registry.PluginRegistry:
    """A private registry, installed as the process registry (so `burn.backend` uses it too)."""
    monkeypatch.delenv("BURN_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("BURN_BACKEND", raising=False)
    r = registry.PluginRegistry(entry_points=lambda: entry_points)
    monkeypatch.setattr(registry, "REGISTRY", r)
    return r


def row(reg: registry.PluginRegistry, name: str) -> bp.BackendInfo:
    (found,) = [r for r in reg.backends() if r.name == name]
    return found


# -- name grammar ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "decorators", "base"),
    [
        ("ndarray", (), "ndarray"),
        ("  ndarray\t", (), "ndarray"),
        ("autodiff(ndarray)", ("autodiff",), "ndarray"),
        (" autodiff ( ndarray ) ", ("autodiff",), "ndarray"),
        ("a(b(my_backend-2))", ("a", "b"), "my_backend-2"),
    ],
)
def test_parse_name(text: str, decorators: tuple[str, ...], base: str) -> None:
    parsed = parse_name(text)
    assert parsed == BackendName(decorators, base)
    assert parse_name(str(parsed)) == parsed
    assert " " not in str(parsed)


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("autodiff(ndarray", 16, "expected ')'"),
        ("ndarray)", 7, "expected the end"),
        ("autodiff()", 9, "expected a backend name"),
        ("autodiff(a, b)", 10, "exactly one backend"),
        ("(ndarray)", 0, "expected a backend name"),
        ("nd array", 3, "expected the end"),
        ("ndarray?x=1", 7, "expected the end"),
    ],
)
def test_parse_name_errors_point_at_the_position(text: str, position: int, expected: str) -> None:
    with pytest.raises(BackendNameError) as info:
        parse_name(text)
    message = str(info.value)
    assert expected in message
    assert f"position {position}" in message
    assert repr(text) in message
    caret_line = message.splitlines()[2]
    assert caret_line.index("^") - 4 == position


def test_parse_name_rejects_empty_and_non_strings() -> None:
    with pytest.raises(BackendNameError, match="empty backend name"):
        parse_name("   ")
    with pytest.raises(TypeError, match="must be a str"):
        parse_name(3)  # type: ignore[arg-type]
    assert issubclass(BackendNameError, ValueError)


# -- selection and caching ------------------------------------------------------------------------
def test_backend_by_name_is_cached(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    b = bp.backend("fake")
    assert isinstance(b, FakeBackend)
    assert bp.backend("fake") is b
    assert bp.backend(" fake ") is b  # normalized name
    assert bp.backend("fake", float_dtype="float32") is b  # the defaults spelled out: same backend
    b64 = bp.backend("fake", float_dtype="float64")
    assert b64 is not b and b64.float_dtype.value == "float64"
    assert bp.backend("fake", float_dtype="float64") is b64
    assert bp.backend("fake", tag="x") is not bp.backend("fake", tag="y")


def test_decorator_wraps_the_cached_base_instance(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    bp.register(decorator_plugin())
    wrapped = bp.backend("wrap(fake)")
    assert isinstance(wrapped, Wrapper)
    assert wrapped.inner is bp.backend("fake")
    assert bp.backend(" wrap( fake ) ") is wrapped
    # options go to the base backend
    w64 = bp.backend("wrap(fake)", float_dtype="float64")
    assert w64.inner is bp.backend("fake", float_dtype="float64")
    assert w64 is not wrapped
    # decorators nest
    twice = bp.backend("wrap(wrap(fake))")
    assert twice.inner is wrapped


def test_selection_order_name_then_env_then_ndarray(
    reg: registry.PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    bp.register(backend_plugin())
    bp.register(backend_plugin("other"))
    monkeypatch.setenv("BURN_BACKEND", "other")
    assert bp.default_backend() is bp.backend("other")
    assert bp.backend() is bp.backend("other")
    assert bp.backend("fake") is not bp.backend("other")
    monkeypatch.setenv("BURN_BACKEND", "wrap(")
    with pytest.raises(BackendNameError, match="BURN_BACKEND"):
        bp.default_backend()


def test_without_ndarray_the_default_is_an_installed_backend_said_once(
    reg: registry.PluginRegistry,
) -> None:
    bp.register(backend_plugin("gpu", probe=lambda: "no GPU here"))  # installed, cannot run here
    bp.register(backend_plugin("other"))
    bp.register(backend_plugin())
    hint = re.escape(registry.install_hint("burn-ndarray"))
    with pytest.warns(
        UserWarning, match=rf"default backend 'ndarray' is not installed \({hint}\); using 'fake'"
    ):
        default = bp.default_backend()
    assert default is bp.backend("fake")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: neither a second call nor other options warn again
        assert bp.backend() is default and burn_backend_module()() is default
        assert bp.backend(None, float_dtype="float64").float_dtype.value == "float64"
    with pytest.raises(BackendNotFoundError, match="no backend named 'ndarray'"):
        bp.backend("ndarray")  # asking for it by name still says it is missing


def test_default_is_ndarray_when_installed_and_not_replaced_when_broken(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    bp.register(backend_plugin())
    bp.register(backend_plugin("ndarray", package="burn-ndarray"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bp.default_backend().name == "ndarray"
    broken = registry.PluginRegistry(
        entry_points=lambda: [
            FakeEntryPoint("ndarray", "burn_ndarray.plugin", ImportError("no numpy"), "burn-ndarray")
        ]
    )
    broken.register(backend_plugin())
    with pytest.raises(PluginError, match="backend 'ndarray' could not be loaded.*no numpy"):
        broken.backend()


def burn_backend_module() -> Callable[..., Any]:
    import burn

    return burn.backend  # the callable module: the same registry


def test_thread_safe_single_instance(reg: registry.PluginRegistry) -> None:
    calls = []

    def slow_factory(**options: Any) -> FakeBackend:
        calls.append(1)
        time.sleep(0.02)  # widen the race window
        return FakeBackend(**options)

    bp.register(backend_plugin(factory=slow_factory))
    results: list[Backend] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(bp.backend("fake"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(r is results[0] for r in results)
    assert len(calls) == 1


def test_factory_must_return_a_backend(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin(factory=lambda **o: object()))
    with pytest.raises(PluginError, match=r"factory of backend 'fake' \(package burn-fake\) returned object"):
        bp.backend("fake")


def test_factory_errors_propagate_unchanged(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    with pytest.raises(ValueError, match="float_dtype must be a float type"):
        bp.backend("fake", float_dtype="int32")
    with pytest.raises(TypeError):
        bp.backend("fake", no_such_option=1)


def test_non_string_name(reg: registry.PluginRegistry) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        bp.backend(["fake"])  # type: ignore[arg-type]


# -- errors for names that cannot be served ---------------------------------------------------------
def test_unknown_name_lists_installed_and_suggests(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    bp.register(decorator_plugin())
    with pytest.raises(BackendNotFoundError) as info:
        bp.backend("fak")
    msg = str(info.value)
    assert "no backend named 'fak'" in msg
    assert "installed backends: fake; decorators: wrap" in msg
    assert "Did you mean 'fake'?" in msg
    assert "pip install" not in msg


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("ndarray", "burn-ndarray"),
        ("opencl", "burn-opencl"),
        ("cuda", "burn-cuda"),
        ("autodiff(fake)", "burn-autodiff"),
        ("autodiff(cuda)", "burn-autodiff"),
    ],
)
def test_known_names_say_which_package(reg: registry.PluginRegistry, name: str, package: str) -> None:
    bp.register(backend_plugin())
    with pytest.raises(BackendNotFoundError, match=re.escape(registry.install_hint(package)) + "$"):
        bp.backend(name)


def test_install_hints_fit_how_burn_was_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    checkout = Path(registry.__file__).resolve().parents[4]
    if (checkout / "packages" / "burn-opencl" / "pyproject.toml").is_file():  # burn-core from a checkout
        monkeypatch.chdir(checkout)
        assert registry.install_hint("burn-opencl") == "pip install -e packages/burn-opencl"
        monkeypatch.chdir(tmp_path)  # outside the checkout: the absolute folder
        expected = f"pip install -e {checkout / 'packages' / 'burn-opencl'}"
        assert registry.install_hint("burn-opencl") == expected
    assert registry.install_hint("burn-nonexistent") == "pip install burn-nonexistent"
    monkeypatch.setattr(registry, "checkout_package_dir", lambda package: None)  # from an index
    assert registry.install_hint("burn-opencl") == "pip install burn-opencl"


def test_nothing_installed(reg: registry.PluginRegistry) -> None:
    assert bp.backends() == []
    hint = re.escape(registry.install_hint("burn-ndarray"))
    with pytest.raises(BackendNotFoundError, match=r"no burn backend is installed.*" + hint):
        bp.backend("ndarray")


def test_decorator_and_backend_positions(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    bp.register(decorator_plugin())
    with pytest.raises(BackendNotFoundError, match=r"'wrap' is a decorator, not a backend.*'wrap\(fake\)'"):
        bp.backend("wrap")
    with pytest.raises(
        BackendNotFoundError, match="'fake' in 'fake\\(fake\\)' is a backend, not a decorator"
    ):
        bp.backend("fake(fake)")


def test_unknown_decorator_fails_before_building_the_base(reg: registry.PluginRegistry) -> None:
    built = []
    bp.register(backend_plugin(factory=lambda **o: built.append(1) or FakeBackend(**o)))
    with pytest.raises(BackendNotFoundError, match="no decorator named 'autodiff'"):
        bp.backend("autodiff(fake)")
    assert built == []


def test_probe_unavailable(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin("gpu", probe=lambda: "no GPU here: install a driver", package="burn-gpu"))
    bp.register(backend_plugin())
    with pytest.raises(
        BackendUnavailableError, match=r"backend 'gpu' \(package burn-gpu\).*no GPU here: install a driver"
    ):
        bp.backend("gpu")
    gpu = row(reg, "gpu")
    assert (gpu.status, gpu.reason, gpu.kind, gpu.package) == (
        "unavailable",
        "no GPU here: install a driver",
        "backend",
        "burn-gpu",
    )
    assert not gpu.available
    assert row(reg, "fake").available


def test_probe_runs_once_and_empty_reason_means_available(reg: registry.PluginRegistry) -> None:
    calls = []
    bp.register(backend_plugin(probe=lambda: calls.append(1) or None))
    bp.backends()
    bp.backends()
    bp.backend("fake")
    assert calls == [1]
    assert row(reg, "fake").status == "available"


# -- isolation of broken plugins --------------------------------------------------------------------
def _raise(exc: BaseException) -> Any:
    raise exc


def test_probe_that_raises_is_isolated(reg: registry.PluginRegistry) -> None:
    bp.register(
        backend_plugin("flaky", probe=lambda: _raise(RuntimeError("driver crashed")), package="burn-flaky")
    )
    bp.register(backend_plugin())
    flaky = row(reg, "flaky")
    assert flaky.status == "failed"
    assert "probe raised RuntimeError: driver crashed" in flaky.reason
    with pytest.raises(PluginError, match=r"backend 'flaky' \(package burn-flaky\).*driver crashed") as info:
        bp.backend("flaky")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert isinstance(bp.backend("fake"), FakeBackend)


def test_entry_point_that_raises_on_import(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    entry_points += [
        FakeEntryPoint(
            "broken", "burn_broken.plugin", ImportError("No module named 'cupy'"), "burn-broken", "0.9.1"
        ),
        FakeEntryPoint("fake", "fake_plugin", backend_plugin(), "burn-fake", "2.0.0"),
    ]
    rows = {r.name: r for r in bp.backends()}
    assert rows["fake"].status == "available" and rows["fake"].version == "2.0.0"
    broken = rows["broken"]
    assert (broken.status, broken.package, broken.version) == ("failed", "burn-broken", "0.9.1")
    assert "entry point broken = burn_broken.plugin" in broken.reason
    assert "ImportError: No module named 'cupy'" in broken.reason
    with pytest.raises(
        PluginError,
        match=r"could not be loaded: entry point broken = burn_broken.plugin \(package "
        r"burn-broken 0.9.1\): failed to import: ImportError",
    ):
        bp.backend("broken")
    assert isinstance(bp.backend("fake"), FakeBackend)


def test_entry_point_calling_sys_exit_is_isolated(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    entry_points.append(FakeEntryPoint("quits", "quits", SystemExit(3), "burn-quits"))
    assert row(reg, "quits").status == "failed"


def test_hook_that_raises_is_isolated(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    bad = types.ModuleType("bad_hooks")
    bad.burn_backends = bp.hookimpl(lambda: _raise(KeyError("boom")))  # type: ignore[attr-defined]
    entry_points += [
        FakeEntryPoint("bad", "bad_hooks", bad, "burn-bad"),
        FakeEntryPoint("fake", "fake_plugin", backend_plugin(), "burn-fake"),
    ]
    bad_row = row(reg, "bad")
    assert bad_row.status == "failed" and bad_row.package == "burn-bad"
    assert "burn_backends() raised KeyError: 'boom'" in bad_row.reason
    assert bp.backend("fake").name == "fake"


def test_plugin_without_hooks_or_with_unknown_hooks(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    typo = types.ModuleType("typo")
    typo.burn_backend = bp.hookimpl(lambda: [])  # type: ignore[attr-defined]
    entry_points += [
        FakeEntryPoint("empty", "empty", types.ModuleType("empty"), "burn-empty"),
        FakeEntryPoint("typo", "typo", typo, "burn-typo"),
    ]
    rows = {r.name: r for r in bp.backends()}
    assert "implements none of burn's hooks" in rows["empty"].reason
    assert "unknown hook(s) burn_backend" in rows["typo"].reason


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ([42], "returned int 42, expected burn.plugins.BackendSpec"),
        ([bp.DecoratorSpec("d", factory=Wrapper)], "expected burn.plugins.BackendSpec"),
        ([bp.BackendSpec("bad name", factory=FakeBackend)], "invalid name 'bad name'"),
        ([bp.BackendSpec("nofactory", factory=None)], "factory is not callable"),  # type: ignore[arg-type]
    ],
)
def test_malformed_specs_are_failures(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint], result: Any, problem: str
) -> None:
    mod = types.ModuleType("malformed")
    mod.burn_backends = bp.hookimpl(lambda: [*result, bp.BackendSpec("good", factory=named("good"))])  # type: ignore[attr-defined]
    entry_points.append(FakeEntryPoint("malformed", "malformed", mod, "burn-malformed"))
    failed = [r for r in bp.backends() if r.status == "failed"]
    assert len(failed) == 1 and problem in failed[0].reason
    assert isinstance(bp.backend("good"), FakeBackend)  # the plugin's valid spec still counts


def test_hook_returning_a_single_spec_is_an_error_naming_the_package(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    mod = types.ModuleType("single")
    mod.burn_backends = bp.hookimpl(  # type: ignore[attr-defined]
        lambda: bp.BackendSpec("single", factory=named("single"), package="burn-single")
    )
    problem = "burn_backends() returned a single BackendSpec 'single', not a list: return [spec]"
    with pytest.raises(PluginError, match=r"cannot register plugin 'single' \(package burn-single\)"):
        bp.register(mod)
    with pytest.raises(PluginError, match=re.escape(problem)):
        bp.register(mod)
    entry_points.append(FakeEntryPoint("single", "burn_single.plugin", mod, "burn-single", "0.2.0"))
    bp.refresh()  # discovered again, now with the entry point
    (info,) = bp.backends()
    assert (info.name, info.package, info.status) == ("single", "burn-single", "failed")
    assert "entry point single = burn_single.plugin (package burn-single 0.2.0)" in info.reason
    assert problem in info.reason
    with pytest.raises(PluginError, match="burn-single 0.2.0.*returned a single BackendSpec"):
        bp.backend("single")


def test_spec_name_must_be_the_backend_class_name(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    # the factory is the class: found when the hook is called, listed as a failure of the package
    mod = types.ModuleType("misnamed")
    mod.burn_backends = bp.hookimpl(lambda: [bp.BackendSpec("torchy", factory=FakeBackend)])  # type: ignore[attr-defined]
    entry_points.append(FakeEntryPoint("torchy", "burn_torchy.plugin", mod, "burn-torchy", "1.0"))
    # the factory is a function: found when it builds
    bp.register(backend_plugin("builder", factory=lambda **o: FakeBackend(**o), package="burn-builder"))
    (row,) = [r for r in bp.backends() if r.name == "torchy"]
    assert row.status == "failed" and row.package == "burn-torchy"
    assert "factory FakeBackend has name = 'fake'" in row.reason
    with pytest.raises(PluginError, match=r"burn-torchy 1.0.*spec's name and the backend class's name"):
        bp.backend("torchy")
    with pytest.raises(
        PluginError,
        match=r"backend 'builder' \(package burn-builder\) built FakeBackend whose name is 'fake'",
    ):
        bp.backend("builder")
    assert isinstance(bp.backend("fake") if bp.register(backend_plugin()) else None, FakeBackend)


def test_duplicate_names_name_both_packages(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    entry_points += [
        FakeEntryPoint("fake", "one", backend_plugin(package="", module="one"), "burn-fake-one", "1.0"),
        FakeEntryPoint("fake", "two", backend_plugin(package="", module="two"), "burn-fake-two", "2.0"),
        FakeEntryPoint("other", "other", backend_plugin("other"), "burn-other"),
    ]
    with pytest.raises(PluginError, match="burn-fake-one 1.0.*burn-fake-two 2.0"):
        bp.backend("fake")
    dups = [r for r in bp.backends() if r.name == "fake"]
    assert {r.package for r in dups} == {"burn-fake-one", "burn-fake-two"}
    assert all(r.status == "failed" and "also provided by" in r.reason for r in dups)
    assert isinstance(bp.backend("other"), FakeBackend)


def test_register_rejects_duplicates_and_broken_plugins(reg: registry.PluginRegistry) -> None:
    bp.register(backend_plugin())
    with pytest.raises(PluginError, match=r"'fake' is also provided by backend 'fake' \(package burn-fake\)"):
        bp.register(backend_plugin(module="again", package="burn-again"))
    broken = types.ModuleType("broken_hook")
    broken.burn_backends = bp.hookimpl(lambda: _raise(ValueError("nope")))  # type: ignore[attr-defined]
    with pytest.raises(PluginError, match="burn_backends\\(\\) raised ValueError: nope"):
        bp.register(broken)
    with pytest.raises(PluginError, match="implements none of burn's hooks"):
        bp.register(types.ModuleType("nothing"))
    assert [r.name for r in bp.backends()] == ["fake"]  # none of the rejected ones stayed


# -- strict mode ------------------------------------------------------------------------------------
def test_strict_mode_raises_naming_entry_point_and_package(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    entry_points += [
        FakeEntryPoint("broken", "burn_broken.plugin", ImportError("no cupy"), "burn-broken", "0.9.1"),
        FakeEntryPoint("fake", "fake_plugin", backend_plugin(), "burn-fake"),
    ]
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "1")
    for call in (bp.backends, lambda: bp.backend("fake")):
        with pytest.raises(
            PluginError, match=r"entry point broken = burn_broken.plugin \(package burn-broken 0.9.1\)"
        ):
            call()
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "0")
    assert isinstance(bp.backend("fake"), FakeBackend)


def test_strict_mode_and_raising_probes(
    reg: registry.PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    bp.register(backend_plugin("flaky", probe=lambda: _raise(OSError("bad driver")), package="burn-flaky"))
    bp.register(backend_plugin("gpu", probe=lambda: "no GPU", package="burn-gpu"))
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "true")
    with pytest.raises(
        PluginError,
        match=r"BURN_STRICT_PLUGINS is set and a plugin failed: backend 'flaky' \(package burn-flaky\): "
        r"its probe raised OSError",
    ):
        bp.backends()
    # a raising probe counts like a plugin that failed to import: strict about every plugin, it
    # blocks selecting another one too; strict about "gpu" only, it does not
    with pytest.raises(PluginError, match="its probe raised OSError"):
        bp.backend("gpu")
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "gpu")
    # an unavailable backend is not a plugin failure, strict or not
    with pytest.raises(BackendUnavailableError, match="no GPU"):
        bp.backend("gpu")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", None),
        ("0", None),
        (" off ", None),
        ("1", registry.EVERY_PLUGIN),
        ("TRUE", registry.EVERY_PLUGIN),
        ("all", registry.EVERY_PLUGIN),
        ("torch", frozenset({"torch"})),
        ("Torch, burn_torch ,", frozenset({"torch", "burn-torch"})),
    ],
)
def test_strict_targets(value: str, expected: frozenset[str] | None) -> None:
    assert registry.strict_targets(value) == expected


def test_strict_about_named_plugins_only(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    entry_points += [
        FakeEntryPoint("broken", "burn_broken.plugin", ImportError("no cupy"), "burn-broken", "0.9.1"),
        FakeEntryPoint("fake", "burn_fake.plugin", backend_plugin(), "burn-fake"),
        FakeEntryPoint(
            "flaky",
            "burn_flaky.plugin",
            backend_plugin("flaky", probe=lambda: _raise(OSError("bad driver")), package=""),
            "burn-flaky",
        ),
    ]
    # strict about my own plugin: the others' failures are listed, never raised
    for mine in ("fake", "burn-fake", "burn_fake", "FAKE"):
        monkeypatch.setenv("BURN_STRICT_PLUGINS", mine)
        assert {r.name: r.status for r in bp.backends()} == {
            "broken": "failed",
            "fake": "available",
            "flaky": "failed",
        }
        assert isinstance(bp.backend("fake"), FakeBackend)
    # an import failure and a raising probe are alike: each raises when its plugin is named
    for name, error in [
        (
            "broken",
            r"entry point broken = burn_broken.plugin \(package burn-broken 0.9.1\): failed to import",
        ),
        ("burn-broken", "ImportError: no cupy"),
        ("flaky", r"backend 'flaky' \(package burn-flaky 1.2.3\): its probe raised OSError: bad driver"),
        ("burn_flaky", "its probe raised OSError"),
        ("fake,flaky", "its probe raised OSError"),
    ]:
        monkeypatch.setenv("BURN_STRICT_PLUGINS", name)
        bp.refresh()  # backend("fake") was cached by a non-strict call; strictness is checked when built
        for call in (bp.backends, lambda: bp.backend("fake")):
            with pytest.raises(
                PluginError, match="BURN_STRICT_PLUGINS is set and a plugin failed: .*" + error
            ):
                call()
    # strict about a plugin that is not installed at all: that is an error too (a typo, a failed install)
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "fake,torch")
    with pytest.raises(
        PluginError,
        match=r"BURN_STRICT_PLUGINS names 'torch', but no installed plugin .*installed: fake, flaky",
    ):
        bp.backends()
    monkeypatch.setenv("BURN_STRICT_PLUGINS", "1")
    bp.refresh()
    with pytest.raises(PluginError, match=r"burn-broken.*\(and 1 more plugin failure\(s\)"):
        bp.backend("fake")
    assert len(reg.backends(strict=False)) == 3  # listing without raising, as `burn backends` does


# -- discovery is lazy; register / unregister / refresh --------------------------------------------
def test_discovery_waits_for_the_first_call(
    entry_points: list[FakeEntryPoint], reg: registry.PluginRegistry
) -> None:
    ep = FakeEntryPoint("fake", "fake_plugin", backend_plugin(), "burn-fake")
    entry_points.append(ep)
    assert ep.loads == 0
    bp.backend("fake")
    bp.backends()
    bp.backend("fake", float_dtype="float64")
    assert ep.loads == 1


def test_unregister_forgets_instances_built_from_the_plugin(reg: registry.PluginRegistry) -> None:
    fake, wrap = backend_plugin(), decorator_plugin()
    bp.register(fake)
    bp.register(wrap)
    b, w = bp.backend("fake"), bp.backend("wrap(fake)")
    bp.unregister(wrap)
    assert bp.backend("fake") is b  # untouched: it does not depend on `wrap`
    with pytest.raises(BackendNotFoundError, match="no decorator named 'wrap'"):
        bp.backend("wrap(fake)")
    bp.register(wrap)
    assert bp.backend("wrap(fake)") is not w
    bp.unregister("fake_plugin_fake")  # by name
    with pytest.raises(BackendNotFoundError):
        bp.backend("fake")
    with pytest.raises(ValueError, match="not registered"):
        bp.unregister(fake)


def test_register_twice_is_a_no_op(reg: registry.PluginRegistry) -> None:
    mod = backend_plugin()
    assert bp.register(mod) == "fake_plugin_fake"
    assert bp.register(mod) == "fake_plugin_fake"
    assert (
        bp.register(backend_plugin("x", module="fake_plugin_fake")) != "fake_plugin_fake"
    )  # same module name


def test_class_based_plugin(reg: registry.PluginRegistry) -> None:
    class Plugin:
        @bp.hookimpl
        def burn_backends(self) -> list[bp.BackendSpec]:
            return [bp.BackendSpec("classy", factory=named("classy"))]

    bp.register(Plugin())
    assert isinstance(bp.backend("classy"), FakeBackend)


def test_runtime_plugin_learns_its_package_from_a_matching_entry_point(
    reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]
) -> None:
    mod = backend_plugin(package="")
    entry_points.append(FakeEntryPoint("fake", "fake_plugin", mod, "burn-fake", "3.1"))
    bp.register(mod)  # e.g. a conftest registering a plugin that is also installed
    assert [(r.name, r.package, r.version) for r in bp.backends()] == [("fake", "burn-fake", "3.1")]


def test_refresh_discovers_again(reg: registry.PluginRegistry, entry_points: list[FakeEntryPoint]) -> None:
    runtime = backend_plugin("runtime")
    bp.register(runtime)
    assert [r.name for r in bp.backends()] == ["runtime"]
    entry_points.append(FakeEntryPoint("fake", "fake_plugin", backend_plugin(), "burn-fake"))
    assert [r.name for r in bp.backends()] == ["runtime"]  # discovered once
    before = bp.backend("runtime")
    bp.refresh()
    assert [r.name for r in bp.backends()] == ["fake", "runtime"]
    assert bp.backend("runtime") is not before


def test_listing_order_and_decorator_rows(reg: registry.PluginRegistry) -> None:
    bp.register(decorator_plugin())
    bp.register(backend_plugin("zeta"))
    bp.register(backend_plugin("alpha"))
    rows = bp.backends()
    assert [(r.name, r.kind) for r in rows] == [
        ("alpha", "backend"),
        ("zeta", "backend"),
        ("wrap", "decorator"),
    ]
    assert rows[2] == bp.BackendInfo("wrap", "decorator", "burn-wrap", None, "available", "")


def test_listing_entry_points_that_cannot_be_listed(reg: registry.PluginRegistry) -> None:
    def broken() -> list[FakeEntryPoint]:
        raise OSError("unreadable METADATA")

    r = registry.PluginRegistry(entry_points=broken)
    (only,) = r.backends()
    assert only.status == "failed" and "unreadable METADATA" in only.reason
    r.register(backend_plugin())  # run-time plugins still work
    assert isinstance(r.backend("fake"), FakeBackend)


def test_default_entry_points_come_from_the_burn_backends_group(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setattr(discovery, "iter_entry_points", lambda: seen.append(1) or [])
    r = registry.PluginRegistry()
    assert r.backends() == [] and seen == [1]
    assert bp.ENTRY_POINT_GROUP == "burn.backends"


def test_resolve_builds_nothing(reg: registry.PluginRegistry) -> None:
    built = []
    bp.register(backend_plugin(factory=lambda **o: built.append(1) or FakeBackend(**o)))
    bp.register(decorator_plugin())
    entries = reg.resolve("wrap(fake)")
    assert [(e.kind, e.spec.name) for e in entries] == [("decorator", "wrap"), ("backend", "fake")]
    assert built == []


# -- the public names on `burn` ----------------------------------------------------------------------
def test_burn_backend_is_both_the_contract_package_and_the_selector(reg: registry.PluginRegistry) -> None:
    import burn
    import burn.backend.base as base_module

    bp.register(backend_plugin())
    assert burn.backend.Backend is Backend is base_module.Backend
    assert callable(burn.backend)
    assert burn.backend("fake") is bp.backend("fake")
    assert burn.backend("fake", float_dtype="float64") is bp.backend("fake", float_dtype="float64")


def test_burn_exports_the_plugin_api() -> None:
    import burn

    assert burn.backends is bp.backends
    assert burn.default_backend is bp.default_backend
    assert burn.hookimpl is bp.hookimpl


def test_burn_plugins_env_loads_plugin_modules(
    reg: registry.PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "envplug_mod", backend_plugin("envplug", module="envplug_mod"))
    monkeypatch.setenv("BURN_PLUGINS", " envplug_mod , no_such_module_xyz,")
    rows = {r.name: r for r in bp.backends()}
    assert rows["envplug"].status == "available" and rows["envplug"].package == "burn-fake"
    missing = rows["no_such_module_xyz"]
    assert missing.status == "failed"
    assert missing.reason.startswith(
        "plugin module no_such_module_xyz (from BURN_PLUGINS): failed to import: "
    )
    assert "ModuleNotFoundError" in missing.reason
    assert isinstance(bp.backend("envplug"), FakeBackend)
