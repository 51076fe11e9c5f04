"""Finding collective engines: the ``burn.collectives`` entry-point group, through the machinery of
`burn.plugins` (discovery, isolation of a broken plugin, duplicates, strict mode).

Discovery is lazy, as for backends: nothing is imported before `engines()`, `find_engine()` or
`burn.distributed.init()` with a world of more than one process.
"""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar

from burn.distributed import hooks
from burn.distributed.errors import DistributedError
from burn.errors import PluginError
from burn.plugins.group import PluginGroupRegistry
from burn.plugins.snapshot import Entry
from burn.plugins.specs import BackendInfo, EngineSpec


class EngineRegistry(PluginGroupRegistry):
    """The collective engines installed here, by name, with their status.

    Discovery, listing, strict mode and run-time registration are `burn.plugins.group`'s.

    Args:
        entry_points: returns the entry points to load (default: the ``burn.collectives`` group).

    Example:
        >>> reg = EngineRegistry(entry_points=lambda: [])
        >>> reg.engines()
        []
    """

    hookspecs: ClassVar[ModuleType] = hooks
    hook_table = (("engine", "burn_collective_engines", EngineSpec),)
    hook_names = hooks.ENGINE_HOOK_NAMES
    entry_point_group = hooks.ENGINE_ENTRY_POINT_GROUP
    plugins_env = hooks.ENGINE_PLUGINS_ENV
    kind = "engine"

    def engines(self, *, strict: bool | None = None) -> list[BackendInfo]:
        """Every engine (status ``available``, ``unavailable`` with the probe's reason, or ``failed``);
        `strict` as in `infos`."""
        return self.infos(strict=strict)

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
        return self._usable(
            entry,
            lambda reason: DistributedError(f"{entry.label} is installed but cannot run here: {reason}"),
        )

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
