"""A registry of one plugin group other than the backends': the collective engines of
`burn.distributed` (``burn.collectives``) and the loggers of `burn.train` (``burn.loggers``).

`PluginGroupRegistry` holds what such a registry does the same whatever its group: lazy discovery
(the group's entry points, then the modules an environment variable names), isolation of a plugin
that fails, the listing with strict mode (``BURN_STRICT_PLUGINS``), and registration at run time.
A subclass names its group with class attributes and adds how its entries are used (`find`...).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import ClassVar

import pluggy

from burn.errors import PluginError
from burn.plugins import discovery
from burn.plugins.discovery import PluginFailure, PluginSource, check_hooks, describe_exception
from burn.plugins.hooks import PROJECT
from burn.plugins.registry import _named, _strict_error, strict_targets
from burn.plugins.snapshot import Entry, Snapshot, SpecType, build_snapshot
from burn.plugins.specs import BackendInfo, Kind


class PluginGroupRegistry:
    """The plugins of one entry-point group, discovered once, with what they provide by name.

    A subclass sets:

    - `hookspecs`: the module or class holding the group's pluggy hookspecs;
    - `hook_table`: ``(kind, hook name, spec type)`` for each hook whose specs are indexed;
    - `hook_names`: the hooks a plugin of the group may implement (any other is an error);
    - `entry_point_group`: the entry-point group searched by default;
    - `plugins_env`: the environment variable naming plugin modules to load too;
    - `kind`: the word for what the group provides, in messages and failures (``"engine"``).

    Args:
        entry_points: returns the entry points to load (default: those of `entry_point_group`).

    Example:
        >>> import pluggy, burn.plugins as bp
        >>> from burn.plugins.specs import EngineSpec
        >>> class Spec:
        ...     @pluggy.HookspecMarker("burn")
        ...     def burn_collective_engines(self): ...
        >>> class Engines(PluginGroupRegistry):
        ...     hookspecs = Spec
        ...     hook_table = (("engine", "burn_collective_engines", EngineSpec),)
        ...     hook_names = ("burn_collective_engines",)
        ...     entry_point_group = "my.engines"
        ...     plugins_env = "MY_ENGINE_PLUGINS"
        ...     kind = "engine"
        >>> reg = Engines(entry_points=lambda: [])
        >>> class Mine:
        ...     @bp.hookimpl
        ...     def burn_collective_engines(self):
        ...         return [EngineSpec("mine", factory=lambda **o: ...)]
        >>> reg.register(Mine(), "mine-plugin")
        'mine-plugin'
        >>> [(i.name, i.kind, i.status) for i in reg.infos(strict=False)]
        [('mine', 'engine', 'available')]
    """

    hookspecs: ClassVar[ModuleType | type]
    hook_table: ClassVar[tuple[tuple[Kind, str, SpecType], ...]]
    hook_names: ClassVar[tuple[str, ...]]
    entry_point_group: ClassVar[str]
    plugins_env: ClassVar[str]
    kind: ClassVar[Kind]

    def __init__(self, entry_points: Callable[[], Iterable[discovery.EntryPointLike]] | None = None) -> None:
        self._entry_points = entry_points
        self._lock = threading.RLock()
        self._pm = pluggy.PluginManager(PROJECT)
        self._pm.add_hookspecs(self.hookspecs)
        self._sources: dict[str, PluginSource] = {}
        self._failures: list[PluginFailure] = []
        self._discovered = False
        self._snapshot: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        """Discover (once) and index what the plugins provide."""
        with self._lock:
            if not self._discovered:
                self._discover()
            if self._snapshot is None:
                self._snapshot = self._build()
            return self._snapshot

    def _build(self) -> Snapshot:
        return build_snapshot(self._pm, self._sources, self._failures, self.hook_table)

    def _discover(self) -> None:
        eps: list[discovery.EntryPointLike] = []
        try:
            eps += (
                self._entry_points()
                if self._entry_points
                else discovery.iter_entry_points(self.entry_point_group)
            )
        except Exception as exc:  # unreadable metadata must not break burn
            where = f"the {self.entry_point_group!r} entry points"
            self._failures.append(
                PluginFailure(
                    "?", self.kind, "", None, where, f"could not be listed: {describe_exception(exc)}"
                )
            )
        eps += discovery.env_entry_points(os.environ.get(self.plugins_env))
        sources, failures = discovery.load_entry_points(
            self._pm, eps, hook_names=self.hook_names, kind=self.kind
        )
        self._sources.update(sources)
        self._failures += failures
        self._discovered = True

    def infos(self, *, strict: bool | None = None) -> list[BackendInfo]:
        """Every row (``available``, ``unavailable`` with the probe's reason, or ``failed``).

        Args:
            strict: None follows ``BURN_STRICT_PLUGINS``; False lists without raising.
        """
        snap = self.snapshot()
        rows = snap.infos()
        if strict is None or strict:
            self.check_strict(snap, strict=bool(strict))
        return rows

    def check_strict(self, snap: Snapshot | None = None, *, strict: bool = False) -> None:
        """Raise `PluginError` for a failed plugin of the group named by ``BURN_STRICT_PLUGINS``
        (every one when `strict`)."""
        targets = frozenset({"*"}) if strict else strict_targets()
        if targets is None:
            return
        snap = snap if snap is not None else self.snapshot()
        found = [f for f in snap.failures if _named((f.name, f.package, f.plugin), targets)]
        found += [
            f
            for f in (e.failure() for e in snap.table(self.kind).values() if _named(e.names(), targets))
            if f is not None
        ]
        if found:
            raise _strict_error(found)

    @staticmethod
    def _usable(entry: Entry, unavailable: Callable[[str], Exception]) -> Entry:
        """`entry`, when its probe says it can run here.

        Raises:
            PluginError: its probe failed.
            the exception ``unavailable(reason)`` returns: it cannot run here.
        """
        status, reason, exc = entry.verdict()
        if status == "failed":
            raise PluginError(f"{entry.label}: {reason}") from exc
        if status == "unavailable":
            raise unavailable(reason)
        return entry

    def register(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin of the group at run time (tests, notebooks).

        Raises:
            PluginError: it implements none of the group's hooks (or another hook), its hook raises
                or returns a bad spec, or one of its names is already provided; it is then left
                unregistered.
        """
        with self._lock:
            self.snapshot()
            name = name or str(getattr(plugin, "__name__", f"{type(plugin).__name__}@{id(plugin):x}"))
            try:
                self._pm.register(plugin, name=name)
            except Exception as exc:
                raise PluginError(
                    f"cannot register {self.kind} plugin {name!r}: {describe_exception(exc)}"
                ) from exc
            problem = check_hooks(self._pm, plugin, self.hook_names)
            snap = None if problem else self._build()
            mine = [f for f in snap.failures if f.plugin == name] if snap else []
            if problem or mine:
                self._pm.unregister(plugin)
                why = problem or "; ".join(f.error for f in mine)
                raise PluginError(f"cannot register {self.kind} plugin {name!r}: {why}")
            self._snapshot = snap
            return name

    def unregister(self, plugin: object) -> None:
        """Remove a plugin of the group (object or name).

        Raises:
            ValueError: it is not registered.
        """
        with self._lock:
            name = plugin if isinstance(plugin, str) else self._pm.get_name(plugin)
            if name is None or not self._pm.has_plugin(name):
                raise ValueError(f"{self.kind} plugin {plugin!r} is not registered")
            self._pm.unregister(name=name)
            self._sources.pop(name, None)
            self._snapshot = None
