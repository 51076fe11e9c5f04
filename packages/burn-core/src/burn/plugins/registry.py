"""The plugin registry: lazy discovery, selection by name, and the cache of backend instances.

One `PluginRegistry` serves the process (`REGISTRY`); the module functions `backend`, `backends`,
`default_backend`, `register`, `unregister` and `refresh` use it. A lock guards discovery and the
instance cache, so that two threads asking for the same backend get the same object.
"""

from __future__ import annotations

import difflib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from burn.backend import _install_selector
from burn.errors import BackendNotFoundError, BackendUnavailableError, PluginError
from burn.plugins import discovery, hooks
from burn.plugins.discovery import PluginFailure, PluginSource, check_hooks, describe_exception
from burn.plugins.names import BackendName, BackendNameError, parse_name
from burn.plugins.snapshot import Entry, Snapshot, build_snapshot
from burn.plugins.specs import BackendInfo, Kind

if TYPE_CHECKING:
    from burn.backend.base import Backend

DEFAULT_BACKEND = "ndarray"
"""The backend used when neither the caller nor ``BURN_BACKEND`` names one."""

KNOWN_PACKAGES: dict[str, str] = {
    "ndarray": "burn-ndarray",
    "opencl": "burn-opencl",
    "cuda": "burn-cuda",
    "autodiff": "burn-autodiff",
}
"""Which package provides each of burn's own backend and decorator names (for install hints)."""


def checkout_package_dir(package: str) -> Path | None:
    """The folder of `package` in the source checkout burn-core itself runs from, or None.

    burn-core runs from a checkout when it was installed editable (``pip install -e
    packages/burn-core``) or is used through ``PYTHONPATH``: its ``burn`` package is then
    ``<checkout>/packages/burn-core/src/burn``, and the other packages sit beside it. An install
    from an index lives in site-packages.
    """
    here = Path(__file__).resolve().parents[1]  # .../burn
    if here.parent.name != "src" or here.parents[1].name != "burn-core":
        return None
    folder = here.parents[2] / package
    return folder if (folder / "pyproject.toml").is_file() else None


def install_hint(package: str) -> str:
    """How to install `package`, fitting how burn-core itself was installed.

    From a source checkout (burn-core installed editable, or on ``PYTHONPATH``) the package is a
    folder of that checkout, not something an index has: ``pip install -e packages/burn-opencl``
    (relative to the current directory when it is inside the checkout). Otherwise: ``pip install
    burn-opencl``.

    Example:
        >>> install_hint("burn-opencl") in ("pip install burn-opencl", "pip install -e packages/burn-opencl")
        True
    """
    folder = checkout_package_dir(package)
    if folder is None:
        return f"pip install {package}"
    try:
        rel = os.path.relpath(folder)
    except ValueError:  # another drive (Windows)
        rel = str(folder)
    return f"pip install -e {str(folder) if rel.startswith('..') else Path(rel).as_posix()}"


_TRUE = frozenset({"1", "true", "yes", "on", "all", "*"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
EVERY_PLUGIN: frozenset[str] = frozenset({"*"})
"""What `strict_targets` returns when every plugin is held to strict mode."""


def strict_targets(value: str | None = None) -> frozenset[str] | None:
    """Which plugins ``BURN_STRICT_PLUGINS`` (or `value`) is strict about.

    ``1`` / ``true`` / ``yes`` / ``on`` / ``all``: every plugin (`EVERY_PLUGIN`); unset, empty,
    ``0`` / ``false`` / ``no`` / ``off``: none (None); anything else is a comma-separated list of
    backend, decorator, entry-point or package names, so that a plugin's author is strict about
    their own plugin without another package's failure blocking them. Names compare
    case-insensitively, with ``_`` and ``-`` alike.

    Example:
        >>> sorted(strict_targets("torch, burn_torch"))
        ['burn-torch', 'torch']
        >>> strict_targets("1") == EVERY_PLUGIN, strict_targets("off")
        (True, None)
    """
    raw = os.environ.get("BURN_STRICT_PLUGINS", "") if value is None else value
    text = raw.strip().lower()
    if text in _FALSE:
        return None
    if text in _TRUE:
        return EVERY_PLUGIN
    names = frozenset(_norm(t) for t in text.split(",") if t.strip())
    return names or None


def strict_mode() -> bool:
    """Whether ``BURN_STRICT_PLUGINS`` asks for plugin failures (all, or those of the plugins it
    names) to raise instead of being listed."""
    return strict_targets() is not None


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _named(names: Iterable[str | None], targets: frozenset[str]) -> bool:
    if targets is EVERY_PLUGIN or targets == EVERY_PLUGIN:
        return True
    wanted = set()
    for name in names:
        if name:
            wanted.add(_norm(name))
            wanted.add(_norm(name.rpartition(":")[2]))  # a plugin name "burn-torch:torch"
    return bool(wanted & targets)


def _freeze(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("unhashable", repr(value))
    # the type keeps 1, 1.0 and True apart, which hash alike but are different options
    return (type(value).__qualname__, value)


def options_key(options: Mapping[str, Any]) -> tuple[Any, ...]:
    """A hashable, order-independent key for backend options."""
    return tuple(sorted((k, _freeze(v)) for k, v in options.items()))


class PluginRegistry:
    """Discovers plugins, lists them, and builds backends by name (cached).

    Args:
        entry_points: returns the entry points to load; by default `burn.plugins.discovery.
            iter_entry_points` (looked up at discovery time, so tests can monkeypatch it).

    Example:
        >>> reg = PluginRegistry(entry_points=lambda: [])
        >>> reg.backends()
        []
    """

    def __init__(self, entry_points: Callable[[], Iterable[discovery.EntryPointLike]] | None = None) -> None:
        self._entry_points = entry_points
        self._lock = threading.RLock()
        self._pm = self._new_manager()
        self._discovered = False
        self._sources: dict[str, PluginSource] = {}
        self._load_failures: list[PluginFailure] = []
        self._runtime: set[str] = set()  # plugin names registered with `register`
        self._snapshot: Snapshot | None = None
        # Instance caches. `_fast` maps what the caller passed (raw name, or (raw name, options key))
        # to the instance, so a repeated call is one dict lookup; `bases` is keyed by base name +
        # options; `decorated` by decorator name + id of the inner instance (kept alive by the cache).
        self._fast: dict[Any, Backend] = {}
        self._bases: dict[tuple[str, tuple[Any, ...]], Backend] = {}
        self._decorated: dict[tuple[str, int], Backend] = {}
        self._origin: dict[int, frozenset[str]] = {}  # id(instance) -> plugins it was built from
        self._default_warned = False  # the default backend is not ndarray: said once

    @staticmethod
    def _new_manager() -> pluggy.PluginManager:
        pm = pluggy.PluginManager(hooks.PROJECT)
        pm.add_hookspecs(hooks)
        return pm

    # -- discovery --------------------------------------------------------------------------------
    def _discover(self) -> None:
        find = self._entry_points or discovery.iter_entry_points
        entry_points: list[discovery.EntryPointLike] = []
        try:
            entry_points += find()
        except Exception as exc:  # unreadable metadata in site-packages must not break burn
            where = f"the {hooks.ENTRY_POINT_GROUP!r} entry points"
            error = f"could not be listed: {describe_exception(exc)}"
            self._load_failures.append(PluginFailure("?", "backend", "", None, where, error, exception=exc))
        entry_points += discovery.env_entry_points(os.environ.get("BURN_PLUGINS"))
        sources, failures = discovery.load_entry_points(self._pm, entry_points)
        self._sources.update(sources)
        self._load_failures += failures
        self._discovered = True

    def snapshot(self, *, strict: bool | None = None) -> Snapshot:
        """Discover (once) and index what the plugins provide.

        Raises:
            PluginError: in strict mode (``BURN_STRICT_PLUGINS=1`` or ``strict=True``), when any plugin
                failed to load, a hook raised, or two plugins provide the same name.
        """
        with self._lock:
            if not self._discovered:
                self._discover()
            if self._snapshot is None:
                self._snapshot = build_snapshot(self._pm, self._sources, self._load_failures)
            snap = self._snapshot
        if strict is None or strict:
            self.check_strict(snap, None if strict is None else EVERY_PLUGIN)
        return snap

    def strict_failures(
        self, snap: Snapshot | None = None, targets: frozenset[str] | None = None
    ) -> list[PluginFailure]:
        """The failures strict mode raises for: those of the plugins `targets` names (default:
        ``BURN_STRICT_PLUGINS``), a probe that raised counted like a plugin that failed to import.

        Runs the probes of those plugins (once per process). A name in `targets` that no installed
        plugin answers to is a failure too: being strict about a plugin that is not there.
        """
        targets = strict_targets() if targets is None else targets
        if targets is None:
            return []
        snap = snap if snap is not None else self.snapshot(strict=False)
        with self._lock:
            found = [f for f in snap.failures if _named((f.name, f.package, f.plugin), targets)]
            entries = [
                e for e in (*snap.backends.values(), *snap.decorators.values()) if _named(e.names(), targets)
            ]
            found += [f for f in (e.failure() for e in entries) if f is not None]
            if targets != EVERY_PLUGIN:
                known: set[str] = set()
                for e in (*snap.backends.values(), *snap.decorators.values()):
                    known |= {_norm(n) for n in e.names() if n} | {_norm(e.plugin.rpartition(":")[2])}
                for f in snap.failures:
                    known |= {_norm(n) for n in (f.name, f.package, f.plugin.rpartition(":")[2]) if n}
                for name in sorted(targets - known):
                    found.append(
                        PluginFailure(
                            name,
                            "backend",
                            "",
                            None,
                            "BURN_STRICT_PLUGINS",
                            f"names {name!r}, but no installed plugin has that backend, decorator, "
                            f"entry-point or package name (installed: {_names(snap.backends)}; decorators: "
                            f"{_names(snap.decorators)})",
                        )
                    )
        return found

    def check_strict(self, snap: Snapshot | None = None, targets: frozenset[str] | None = None) -> None:
        """Raise `PluginError` for the first of `strict_failures` (nothing when not strict)."""
        failures = self.strict_failures(snap, targets)
        if failures:
            raise _strict_error(failures)

    def backends(self, *, strict: bool | None = None) -> list[BackendInfo]:
        """Every discovered backend and decorator, and every plugin that failed, with its status.

        Args:
            strict: None follows ``BURN_STRICT_PLUGINS``; False lists without raising (``burn
                backends`` prints the table first, then reports strict failures).
        """
        snap = self.snapshot(strict=False)
        with self._lock:
            rows = snap.infos()
        if strict is None or strict:
            self.check_strict(snap, None if strict is None else EVERY_PLUGIN)
        return rows

    # -- selection --------------------------------------------------------------------------------
    def backend(self, name: str | None = None, **options: Any) -> Backend:
        """A ready backend by name (see `burn.plugins.backend`); cached per name and options."""
        from_env = fallback = False
        if name is None:
            env = os.environ.get("BURN_BACKEND", "").strip()
            name, from_env = (env, True) if env else (DEFAULT_BACKEND, False)
            fallback = not env
        # The default has keys of its own: it may be another backend when ndarray is not installed.
        key: Any = (name, options_key(options)) if options else name
        if fallback:
            key = (None, key)
        try:
            inst = self._fast.get(key)
        except TypeError:
            raise TypeError(f"a backend name must be a str, got {type(name).__name__}: {name!r}") from None
        if inst is not None:
            return inst
        try:
            parsed = parse_name(name)
        except BackendNameError as exc:
            if from_env:
                raise BackendNameError(
                    f"{exc}\n(the name comes from the BURN_BACKEND environment variable)"
                ) from None
            raise
        with self._lock:
            inst = self._fast.get(key)
            if inst is None:
                snap = self.snapshot()
                if fallback:
                    parsed = self._default_name(snap, parsed)
                inst = self._build(snap, parsed, options, str(parsed) if from_env or fallback else name)
                self._fast[key] = inst
        return inst

    def _default_name(self, snap: Snapshot, parsed: BackendName) -> BackendName:
        """`parsed` (ndarray), or, when no plugin provides it at all, the first installed backend
        that can run here (burn's own in the order of `KNOWN_PACKAGES`, then by name), with a
        warning, once. A broken or duplicated ndarray is not replaced: its error is the news."""
        base = parsed.base
        if base in snap.backends or snap.duplicates.get(("backend", base)):
            return parsed
        if any(f.name == base for f in snap.failures):
            return parsed
        order = [n for n in KNOWN_PACKAGES if n in snap.backends] + sorted(
            n for n in snap.backends if n not in KNOWN_PACKAGES
        )
        for name in order:
            if snap.backends[name].verdict()[0] != "available":
                continue
            if not self._default_warned:  # once per discovery, whatever options the calls pass
                self._default_warned = True
                warnings.warn(
                    f"the default backend {base!r} is not installed ({install_hint(KNOWN_PACKAGES[base])}); "
                    f"using {name!r}, the first installed backend that can run here. Pass a name to "
                    f"burn.backend() or set BURN_BACKEND={name} to choose one and silence this warning.",
                    UserWarning,
                    stacklevel=4,
                )
            return BackendName((), name)
        return parsed

    def resolve(self, name: str) -> list[Entry]:
        """The specs a name resolves to (decorators from the outermost, then the base), building nothing.

        Raises:
            the errors of `backend`, except those of probes and factories.
        """
        parsed = parse_name(name)
        snap = self.snapshot()
        with self._lock:
            decorators = [self._lookup(snap, d, "decorator", name) for d in parsed.decorators]
            return [*decorators, self._lookup(snap, parsed.base, "backend", name)]

    def _build(self, snap: Snapshot, parsed: BackendName, options: dict[str, Any], asked: str) -> Backend:
        # Resolve every name first, so a typo in a decorator fails before the base is built.
        deco_entries = [self._lookup(snap, d, "decorator", asked) for d in parsed.decorators]
        inst = self._build_base(self._lookup(snap, parsed.base, "backend", asked), options)
        for entry in reversed(deco_entries):
            inst = self._decorate(entry, inst)
        return inst

    def _build_base(self, entry: Entry, options: dict[str, Any]) -> Backend:
        name = entry.spec.name
        key = (name, options_key(options))
        inst = self._bases.get(key)
        if inst is not None:
            return inst
        status, reason, exc = entry.verdict()
        if status == "unavailable":
            raise BackendUnavailableError(f"{entry.label} is installed but cannot run here: {reason}")
        if status == "failed":
            raise PluginError(f"{entry.label}: {reason}") from exc
        inst = _checked(entry, entry.spec.factory(**options))
        # Equal options spelled differently (none vs the defaults, "float32" vs burn.float32) must give
        # the same instance, or tensors built through the two spellings could not be mixed.
        try:
            canonical = (name, options_key(inst.options()))
        except Exception:
            canonical = key
        inst = self._bases.setdefault(canonical, inst)
        self._bases[key] = inst
        self._origin[id(inst)] = frozenset({entry.plugin})
        return inst

    def _decorate(self, entry: Entry, inner: Backend) -> Backend:
        key = (entry.spec.name, id(inner))
        inst = self._decorated.get(key)
        if inst is None:
            inst = _checked(entry, entry.spec.factory(inner))
            self._decorated[key] = inst
            self._origin[id(inst)] = self._origin.get(id(inner), frozenset()) | {entry.plugin}
        return inst

    def _lookup(self, snap: Snapshot, name: str, kind: Kind, asked: str) -> Entry:
        entry = snap.table(kind).get(name)
        if entry is not None:
            return entry
        in_name = f" in {asked!r}" if asked != name else ""
        dups = snap.duplicates.get((kind, name))
        if dups:
            raise PluginError(
                f"{kind} {name!r}{in_name} is provided by more than one plugin: "
                f"{' and '.join(e.label for e in dups)}; uninstall one of them"
            )
        failed = [f for f in snap.failures if f.name == name]
        if failed:
            raise PluginError(
                f"{kind} {name!r}{in_name} could not be loaded: {failed[0].message()}"
            ) from failed[0].exception
        other: Kind = "decorator" if kind == "backend" else "backend"
        if name in snap.table(other):
            if kind == "backend":
                raise BackendNotFoundError(
                    f"{name!r}{in_name} is a decorator, not a backend: it wraps one, "
                    f"as in '{name}({_example_base(snap)})'"
                )
            raise BackendNotFoundError(
                f"{name!r}{in_name} is a backend, not a decorator; decorators: {_names(snap.decorators)}"
            )
        raise BackendNotFoundError(_not_found(snap, name, kind, in_name))

    # -- run-time registration --------------------------------------------------------------------
    def register(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (module, class or instance with hookimpls): see `register`."""
        with self._lock:
            self.snapshot(strict=False)  # discover first, so clashes with installed plugins show now
            existing = self._pm.get_name(plugin)
            if existing is not None:
                return existing
            name = name or _default_plugin_name(plugin)
            if self._pm.has_plugin(name):
                name = f"{name}@{id(plugin):x}"
            try:
                self._pm.register(plugin, name=name)
            except Exception as exc:
                raise PluginError(f"cannot register plugin {name!r}: {describe_exception(exc)}") from exc
            problem = check_hooks(self._pm, plugin)
            snap = None if problem else build_snapshot(self._pm, self._sources, self._load_failures)
            mine = [f for f in snap.failures if f.plugin == name] if snap else []
            if problem or mine:
                self._pm.unregister(plugin)
                why = problem or "; ".join(f.error for f in mine)
                packages = sorted({f.package for f in mine if f.package})
                pkg = f" (package {', '.join(packages)})" if packages else ""
                raise PluginError(f"cannot register plugin {name!r}{pkg}: {why}") from (
                    mine[0].exception if mine else None
                )
            self._runtime.add(name)
            self._snapshot = snap
            return name

    def unregister(self, plugin: object) -> None:
        """Remove a plugin (the object or its name) and forget the backends built from it."""
        with self._lock:
            name = plugin if isinstance(plugin, str) else self._pm.get_name(plugin)
            if name is None or not self._pm.has_plugin(name):
                raise ValueError(f"plugin {plugin!r} is not registered")
            self._pm.unregister(name=name)
            self._runtime.discard(name)
            self._sources.pop(name, None)
            self._snapshot = None
            self._forget({name})

    def call_hook(self, name: str, **kwargs: Any) -> Any:
        """Call the hook `name` of every registered plugin (discovered or registered at run time)
        with `kwargs`: pluggy's result, a list or, for a ``firstresult`` hook, the first answer.

        Example:
            >>> PluginRegistry(entry_points=lambda: []).call_hook("burn_get_num_threads") is None
            True
        """
        with self._lock:
            hook = getattr(self._pm.hook, name)
        return hook(**kwargs)

    def refresh(self) -> None:
        """Forget what was discovered and every cached instance; the next call discovers again.

        Plugins registered with `register` stay registered. Instances built earlier stay usable, but
        `backend()` builds new ones.
        """
        with self._lock:
            for name, _plugin in self._pm.list_name_plugin():
                if name not in self._runtime:
                    self._pm.unregister(name=name)
            self._sources = {n: s for n, s in self._sources.items() if n in self._runtime}
            self._load_failures = []
            self._discovered = False
            self._snapshot = None
            self._default_warned = False
            self._fast, self._bases, self._decorated, self._origin = {}, {}, {}, {}

    def _forget(self, plugins: set[str]) -> None:
        """Drop cached instances built from any of `plugins` (and decorators built over them)."""
        dead = {i for i, origin in self._origin.items() if origin & plugins}
        self._fast = {k: v for k, v in self._fast.items() if id(v) not in dead}
        self._bases = {k: v for k, v in self._bases.items() if id(v) not in dead}
        self._decorated = {k: v for k, v in self._decorated.items() if id(v) not in dead}
        for i in dead:
            del self._origin[i]


# -- helpers --------------------------------------------------------------------------------------
def _checked(entry: Entry, inst: object) -> Backend:
    from burn.backend.base import Backend

    if not isinstance(inst, Backend):
        raise PluginError(
            f"the factory of {entry.label} returned {type(inst).__name__}, not a burn.backend.Backend"
        )
    # A backend's name is how devices, errors and the conformance suite know it. (Decorators
    # name their instances after the inner backend, "autodiff(ndarray)", and may be aliases.)
    if entry.kind == "backend" and inst.name != entry.spec.name:
        raise PluginError(
            f"the factory of {entry.label} built {type(inst).__name__} whose name is {inst.name!r}: "
            f"the spec's name and the backend class's name must be the same"
        )
    return inst


def _default_plugin_name(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) else f"{type(plugin).__name__}@{id(plugin):x}"


def _names(table: Mapping[str, Entry]) -> str:
    return ", ".join(sorted(table)) or "none"


def _example_base(snap: Snapshot) -> str:
    return "ndarray" if "ndarray" in snap.backends or not snap.backends else sorted(snap.backends)[0]


def _not_found(snap: Snapshot, name: str, kind: Kind, in_name: str) -> str:
    installed = (
        f"installed backends: {_names(snap.backends)}; decorators: {_names(snap.decorators)}"
        if snap.backends or snap.decorators
        else "no burn backend is installed"
    )
    lines = [f"no {kind} named {name!r}{in_name} ({installed})."]
    close = difflib.get_close_matches(name, list(snap.table(kind)), n=1)
    if close:
        lines.append(f"Did you mean {close[0]!r}?")
    package = KNOWN_PACKAGES.get(name)
    if package:
        lines.append(f"The {name!r} {kind} is in the package {package}: {install_hint(package)}")
    if snap.failures:
        lines.append(
            f"{len(snap.failures)} plugin(s) failed to load: see burn.backends() or `burn backends`."
        )
    return " ".join(lines)


def _strict_error(failures: list[PluginFailure]) -> PluginError:
    first = failures[0]
    more = (
        f" (and {len(failures) - 1} more plugin failure(s): see `burn backends`)" if len(failures) > 1 else ""
    )
    if first.where == "BURN_STRICT_PLUGINS":  # it names a plugin that is not installed
        return PluginError(f"BURN_STRICT_PLUGINS {first.error}{more}")
    return _chain(
        PluginError(f"BURN_STRICT_PLUGINS is set and a plugin failed: {first.message()}{more}"),
        first.exception,
    )


def _chain(err: PluginError, cause: BaseException | None) -> PluginError:
    err.__cause__ = cause
    return err


REGISTRY = PluginRegistry()
# `burn.backend(...)` selects through this module's REGISTRY (looked up at each call: tests swap it)
_install_selector(sys.modules[__name__])
"""The process-wide registry behind `burn.backend()` and friends."""


def backend(name: str | None = None, **options: Any) -> Backend:
    """A ready backend, selected by name: ``"ndarray"``, ``"opencl"``, ``"autodiff(ndarray)"``...

    The name defaults to the ``BURN_BACKEND`` environment variable, then ``"ndarray"``. Options go to
    the base backend (``float_dtype="float64"``, ``device=...``), whatever decorators wrap it. The
    same name and options give the same instance, and ``autodiff(ndarray)`` wraps the very instance
    ``burn.backend("ndarray")`` returns. Plugins are discovered on the first call.

    Raises:
        BackendNameError: the name does not follow the grammar ``name`` / ``decorator(name)``.
        BackendNotFoundError: no installed plugin provides the name; the message lists what is
            installed and, for burn's own backends, the ``pip install`` that provides it.
        BackendUnavailableError: the backend is installed but its probe says it cannot run here.
        PluginError: the plugin providing the name failed (import, hook or probe raised, or two
            packages provide it), or strict mode (``BURN_STRICT_PLUGINS=1``) found any failure.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray", float_dtype="float64")  # doctest: +SKIP
        >>> B is burn.backend("ndarray", float_dtype="float64")  # doctest: +SKIP
        True
        >>> burn.backend("autodiff(ndarray)", float_dtype="float64").inner is B  # doctest: +SKIP
        True
    """
    return REGISTRY.backend(name, **options)


def default_backend() -> Backend:
    """The backend used where none is given: ``BURN_BACKEND``, else ``"ndarray"``.

    Example:
        >>> import burn
        >>> burn.default_backend() is burn.backend()  # doctest: +SKIP
        True
    """
    return REGISTRY.backend(None)


def backends() -> list[BackendInfo]:
    """Every discovered backend and decorator, and every plugin that failed, with its status.

    Probes run here (once per process), so an ``unavailable`` row carries the probe's reason.

    Raises:
        PluginError: in strict mode (``BURN_STRICT_PLUGINS=1``), when any row would be ``failed``.

    Example:
        >>> import burn
        >>> [(b.name, b.status) for b in burn.backends()]  # doctest: +SKIP
        [('ndarray', 'available'), ('opencl', 'unavailable'), ('autodiff', 'available')]
    """
    return REGISTRY.backends()


def register(plugin: object, name: str | None = None) -> str:
    """Register a plugin at run time (tests, notebooks): a module, class or object with hookimpls.

    Discovers the installed plugins first, so a name clash shows at once. Registering an object that
    is already registered does nothing.

    Returns:
        the plugin's name in the registry.

    Raises:
        PluginError: the object implements no burn hook (or an unknown one), a hook raised, a spec is
            malformed, or a name it provides is already provided by another plugin; the object is
            then left unregistered.

    Example:
        >>> import types, burn.plugins as bp
        >>> mod = types.ModuleType("my_plugin")
        >>> mod.burn_backends = bp.hookimpl(lambda: [bp.BackendSpec("mine", factory=lambda **o: ...)])
        >>> bp.register(mod)  # doctest: +SKIP
        'my_plugin'
        >>> bp.unregister(mod)  # doctest: +SKIP
    """
    return REGISTRY.register(plugin, name)


def unregister(plugin: object) -> None:
    """Remove a plugin registered with `register` (or discovered), by object or name.

    Cached backends built from it are forgotten: the next `burn.backend()` of its names fails or
    finds another provider. Instances already handed out stay usable.

    Raises:
        ValueError: the plugin is not registered.
    """
    REGISTRY.unregister(plugin)


def refresh() -> None:
    """Discover installed plugins again (e.g. after ``pip install`` in a running notebook).

    Plugins registered with `register` stay; cached instances are forgotten.
    """
    REGISTRY.refresh()
