"""Finding collective engines: the ``burn.collectives`` entry-point group, through the machinery of
`burn.plugins` (discovery, isolation of a broken plugin, duplicates, strict mode).

Discovery is lazy, as for backends: nothing is imported before `engines()`, `find_engine()` or
`burn.distributed.init()` with a world of more than one process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable

import pluggy

from burn.distributed import hooks
from burn.distributed.errors import DistributedError
from burn.errors import PluginError
from burn.plugins import discovery
from burn.plugins.discovery import PluginFailure, PluginSource, check_hooks, describe_exception
from burn.plugins.registry import _named, _strict_error, strict_targets
from burn.plugins.snapshot import Entry, Snapshot, SpecType, build_snapshot
from burn.plugins.specs import BackendInfo, EngineSpec, Kind

_HOOKS: tuple[tuple[Kind, str, SpecType], ...] = (("engine", "burn_collective_engines", EngineSpec),)


class EngineRegistry:
    """The collective engines installed here, by name, with their status.

    Args:
        entry_points: returns the entry points to load (default: the ``burn.collectives`` group).

    Example:
        >>> reg = EngineRegistry(entry_points=lambda: [])
        >>> reg.engines()
        []
    """

    def __init__(self, entry_points: Callable[[], Iterable[discovery.EntryPointLike]] | None = None) -> None:
        self._entry_points = entry_points
        self._lock = threading.RLock()
        self._pm = pluggy.PluginManager(hooks.PROJECT)
        self._pm.add_hookspecs(hooks)
        self._sources: dict[str, PluginSource] = {}
        self._failures: list[PluginFailure] = []
        self._discovered = False
        self._snapshot: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        with self._lock:
            if not self._discovered:
                self._discover()
            if self._snapshot is None:
                self._snapshot = build_snapshot(self._pm, self._sources, self._failures, _HOOKS)
            return self._snapshot

    def _discover(self) -> None:
        eps: list[discovery.EntryPointLike] = []
        try:
            eps += (
                self._entry_points()
                if self._entry_points
                else discovery.iter_entry_points(hooks.ENGINE_ENTRY_POINT_GROUP)
            )
        except Exception as exc:  # unreadable metadata must not break burn
            where = f"the {hooks.ENGINE_ENTRY_POINT_GROUP!r} entry points"
            self._failures.append(
                PluginFailure(
                    "?", "engine", "", None, where, f"could not be listed: {describe_exception(exc)}"
                )
            )
        eps += discovery.env_entry_points(os.environ.get(hooks.ENGINE_PLUGINS_ENV))
        sources, failures = discovery.load_entry_points(
            self._pm, eps, hook_names=hooks.ENGINE_HOOK_NAMES, kind="engine"
        )
        self._sources.update(sources)
        self._failures += failures
        self._discovered = True

    def engines(self, *, strict: bool | None = None) -> list[BackendInfo]:
        """Every engine (status ``available``, ``unavailable`` with the probe's reason, or ``failed``).

        Args:
            strict: None follows ``BURN_STRICT_PLUGINS``; False lists without raising.
        """
        snap = self.snapshot()
        rows = snap.infos()
        if strict is None or strict:
            self.check_strict(snap, strict=bool(strict))
        return rows

    def check_strict(self, snap: Snapshot | None = None, *, strict: bool = False) -> None:
        """Raise `PluginError` for a failed engine plugin named by ``BURN_STRICT_PLUGINS`` (every one
        when `strict`)."""
        targets = frozenset({"*"}) if strict else strict_targets()
        if targets is None:
            return
        snap = snap or self.snapshot()
        found = [f for f in snap.failures if _named((f.name, f.package, f.plugin), targets)]
        found += [
            f
            for f in (e.failure() for e in snap.engines.values() if _named(e.names(), targets))
            if f is not None
        ]
        if found:
            raise _strict_error(found)

    def find(self, name: str) -> Entry:
        """The engine called `name`, ready to build.

        Raises:
            DistributedError: no such engine (the message lists the installed ones), or it cannot run
                here (its probe's reason).
            PluginError: its plugin failed to load, or two plugins provide the name.
        """
        snap = self.snapshot()
        entry = snap.engines.get(name)
        if entry is None:
            failed = [f for f in snap.failures if f.name == name]
            if failed:
                raise PluginError(f"engine {name!r} could not be loaded: {failed[0].message()}") from failed[
                    0
                ].exception
            installed = ", ".join(sorted(snap.engines)) or "none"
            hint = " (pip install 'burn-mpi[mpich]')" if name == "mpi" else ""
            raise DistributedError(
                f"no collective engine named {name!r}{hint}; installed engines: {installed}"
            )
        status, reason, exc = entry.verdict()
        if status == "failed":
            raise PluginError(f"{entry.label}: {reason}") from exc
        if status == "unavailable":
            raise DistributedError(f"{entry.label} is installed but cannot run here: {reason}")
        return entry

    def launched(self) -> Entry | None:
        """The available engine whose launcher started this process (``mpiexec``...), if any."""
        for entry in self.snapshot().engines.values():
            spec = entry.spec
            check = getattr(spec, "launched", None)
            if check is None or entry.verdict()[0] != "available":
                continue
            try:
                if check():
                    return entry
            except Exception:  # a broken check is the plugin's bug: the engine is not picked by itself
                continue
        return None

    def register(self, plugin: object, name: str | None = None) -> str:
        """Register an engine plugin at run time (tests, notebooks).

        Raises:
            PluginError: it implements no engine hook, its hook raises or returns a bad spec, or one of
                its names is already provided; it is then left unregistered.
        """
        with self._lock:
            self.snapshot()
            name = name or str(getattr(plugin, "__name__", f"{type(plugin).__name__}@{id(plugin):x}"))
            try:
                self._pm.register(plugin, name=name)
            except Exception as exc:
                raise PluginError(
                    f"cannot register engine plugin {name!r}: {describe_exception(exc)}"
                ) from exc
            problem = check_hooks(self._pm, plugin, hooks.ENGINE_HOOK_NAMES)
            snap = None if problem else build_snapshot(self._pm, self._sources, self._failures, _HOOKS)
            mine = [f for f in snap.failures if f.plugin == name] if snap else []
            if problem or mine:
                self._pm.unregister(plugin)
                why = problem or "; ".join(f.error for f in mine)
                raise PluginError(f"cannot register engine plugin {name!r}: {why}")
            self._snapshot = snap
            return name

    def unregister(self, plugin: object) -> None:
        """Remove an engine plugin (object or name)."""
        with self._lock:
            name = plugin if isinstance(plugin, str) else self._pm.get_name(plugin)
            if name is None or not self._pm.has_plugin(name):
                raise ValueError(f"engine plugin {plugin!r} is not registered")
            self._pm.unregister(name=name)
            self._snapshot = None


REGISTRY = EngineRegistry()
"""The process-wide engine registry."""


def engines() -> list[BackendInfo]:
    """Every installed collective engine with its status (``burn engines`` prints this).

    Raises:
        PluginError: under ``BURN_STRICT_PLUGINS``, when an engine plugin it names failed.

    Example:
        >>> import burn.distributed as dist
        >>> [(e.name, e.status) for e in dist.engines()]  # doctest: +SKIP
        [('mpi', 'available')]
    """
    return REGISTRY.engines()


def register_engine(plugin: object, name: str | None = None) -> str:
    """Register an engine plugin (an object with a ``burn_collective_engines`` hookimpl) at run time.

    Example:
        >>> import types, burn.plugins as bp
        >>> from burn.plugins.specs import EngineSpec
        >>> mod = types.ModuleType("my_engines")
        >>> mod.burn_collective_engines = bp.hookimpl(lambda: [EngineSpec("mine", factory=...)])
        >>> register_engine(mod)  # doctest: +SKIP
        'my_engines'
    """
    return REGISTRY.register(plugin, name)


def unregister_engine(plugin: object) -> None:
    """Remove an engine plugin registered with `register_engine` (or discovered)."""
    REGISTRY.unregister(plugin)
