"""Finding plugin modules through the ``burn.backends`` entry-point group and loading them.

Nothing here runs at ``import burn``: the registry calls `load_entry_points` on the first
``burn.backend()`` / ``burn.backends()``. A plugin that fails to import or register is recorded as a
`PluginFailure`; it never stops the other plugins from loading.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from burn.plugins.hooks import ENTRY_POINT_GROUP, HOOK_NAMES
from burn.plugins.specs import Kind

if TYPE_CHECKING:
    import pluggy


class EntryPointLike(Protocol):
    """What discovery needs of an `importlib.metadata.EntryPoint` (tests pass fakes)."""

    name: str
    value: str

    def load(self) -> Any: ...


@dataclass(frozen=True)
class PluginSource:
    """Where a registered plugin object came from."""

    plugin_name: str
    package: str = ""
    version: str | None = None
    ep_name: str = ""  # the entry point ("ndarray" = "burn_ndarray.plugin"); "" when registered at run time
    ep_value: str = ""

    def describe(self) -> str:
        """How failure messages name the plugin."""
        if not self.ep_name:
            return f"plugin {self.plugin_name} (registered at run time)"
        return where(self.ep_name, self.ep_value, self.package, self.version)


@dataclass(frozen=True)
class PluginFailure:
    """A plugin (or one of its specs) that could not be used, with the error that says why."""

    name: str  # the backend name when known, else the entry point's (or plugin's) name
    kind: Kind
    package: str
    version: str | None
    where: str  # e.g. "entry point ndarray = burn_ndarray.plugin (package burn-ndarray 0.1.0)"
    error: str  # e.g. "ImportError: No module named 'numpy'"
    plugin: str = ""  # the plugin's name in the plugin manager, when it got that far
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    def message(self) -> str:
        return f"{self.where}: {self.error}"


def describe_exception(exc: BaseException) -> str:
    """``"ImportError: the message"``, on one line."""
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def iter_entry_points(group: str = ENTRY_POINT_GROUP) -> Iterable[EntryPointLike]:
    """The entry points of `group` (``burn.backends``) in the environment (tests monkeypatch this)."""
    from importlib.metadata import entry_points

    return entry_points(group=group)


class ModuleEntryPoint:
    """A plugin module named in ``BURN_PLUGINS`` (a source checkout, not installed), loaded like an
    entry point."""

    def __init__(self, module: str) -> None:
        self.name = self.value = module
        self.dist = None

    def load(self) -> Any:
        import importlib

        return importlib.import_module(self.value)


def env_entry_points(value: str | None) -> list[ModuleEntryPoint]:
    """The plugin modules listed in ``BURN_PLUGINS`` (comma-separated module names).

    Example:
        >>> [ep.value for ep in env_entry_points("burn_ndarray.plugin, burn_autodiff.plugin")]
        ['burn_ndarray.plugin', 'burn_autodiff.plugin']
    """
    return [ModuleEntryPoint(m.strip()) for m in (value or "").split(",") if m.strip()]


def _distribution(ep: EntryPointLike) -> tuple[str, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "", None
    try:
        return str(dist.name), str(dist.version)
    except Exception:  # broken metadata must not stop discovery
        return "", None


def where(ep_name: str, ep_value: str, package: str, version: str | None) -> str:
    """How a failure message names an entry point and its package."""
    if ep_name == ep_value and not package:  # a module named in BURN_PLUGINS
        return f"plugin module {ep_value} (from BURN_PLUGINS)"
    pkg = " ".join(p for p in (package, version) if p)
    return f"entry point {ep_name} = {ep_value}" + (f" (package {pkg})" if pkg else "")


def load_entry_points(
    pm: pluggy.PluginManager,
    entry_points: Iterable[EntryPointLike],
    *,
    hook_names: tuple[str, ...] = HOOK_NAMES,
    kind: Kind = "backend",
) -> tuple[dict[str, PluginSource], list[PluginFailure]]:
    """Import every entry point's object and register it with `pm`, isolating failures.

    `hook_names` are the hooks a plugin of this group may implement and `kind` labels its failures
    (the collective engines of `burn.distributed` are another group with hooks of their own).

    Returns:
        the source of each registered plugin (by plugin name), and the failures.
    """
    sources: dict[str, PluginSource] = {}
    failures: list[PluginFailure] = []
    for ep in entry_points:
        result = _load_one(pm, ep, hook_names, kind)
        if isinstance(result, PluginFailure):
            failures.append(result)
        else:
            sources[result.plugin_name] = result
    return sources, failures


def _load_one(
    pm: pluggy.PluginManager, ep: EntryPointLike, hook_names: tuple[str, ...], kind: Kind
) -> PluginSource | PluginFailure:
    package, version = _distribution(ep)

    def fail(error: str, exc: BaseException | None = None) -> PluginFailure:
        return PluginFailure(
            ep.name,
            kind,
            package,
            version,
            where(ep.name, ep.value, package, version),
            error,
            exception=exc,
        )

    try:
        plugin = ep.load()
    except (Exception, SystemExit) as exc:  # a plugin calling sys.exit at import is still isolated
        return fail(f"failed to import: {describe_exception(exc)}", exc)
    existing = pm.get_name(plugin)
    if existing is not None:  # already registered at run time: keep it, and learn its package
        return PluginSource(existing, package, version, ep.name, ep.value)
    name = f"{package or '?'}:{ep.name}"
    if pm.has_plugin(name):
        return fail(f"another entry point already registered the plugin name {name!r}")
    try:
        pm.register(plugin, name=name)
    except Exception as exc:
        return fail(f"failed to register: {describe_exception(exc)}", exc)
    problem = check_hooks(pm, plugin, hook_names)
    if problem:
        pm.unregister(plugin)
        return fail(problem)
    return PluginSource(name, package, version, ep.name, ep.value)


def check_hooks(pm: pluggy.PluginManager, plugin: object, hook_names: tuple[str, ...] = HOOK_NAMES) -> str:
    """A reason when `plugin` implements no burn hook or a hook burn does not know, else ``""``."""
    callers = pm.get_hookcallers(plugin) or []
    unknown = sorted(hc.name for hc in callers if hc.name not in hook_names)
    if unknown:
        return f"implements unknown hook(s) {', '.join(unknown)}; burn's hooks are {', '.join(hook_names)}"
    if not callers:
        return f"implements none of burn's hooks ({', '.join(hook_names)}) marked with burn.plugins.hookimpl"
    return ""
