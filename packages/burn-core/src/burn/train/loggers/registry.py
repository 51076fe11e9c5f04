"""Finding loggers by name: the ``burn.loggers`` entry-point group, through the machinery of
`burn.plugins` (discovery, isolation of a broken plugin, duplicates, strict mode).

A package ships a logger by registering a plugin module in the group, in its pyproject.toml::

    [project.entry-points."burn.loggers"]
    wandb = "burn_wandb.plugin"

where the module implements the hook `burn_loggers` with `burn.plugins.hookimpl` and returns
`burn.plugins.specs.LoggerSpec` values; ``Learner(loggers=["wandb"])`` then builds it by name.
burn-core's own loggers (``csv``, ``tensorboard``, ``mlflow``) are a plugin of this registry too.
Discovery is lazy: nothing is imported before a logger is asked for by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from burn.errors import PluginError
from burn.plugins import discovery
from burn.plugins.discovery import PluginSource
from burn.plugins.group import PluginGroupRegistry
from burn.plugins.hooks import PROJECT
from burn.plugins.snapshot import Entry, SpecType
from burn.plugins.specs import BackendInfo, Kind, LoggerSpec

if TYPE_CHECKING:
    from burn.train.loggers.base import Logger

LOGGER_ENTRY_POINT_GROUP = "burn.loggers"
"""The entry-point group of logger plugins."""

LOGGER_PLUGINS_ENV = "BURN_LOGGER_PLUGINS"
"""Comma-separated plugin modules to load as logger plugins (a source checkout, nothing installed)."""

hookspec = pluggy.HookspecMarker(PROJECT)


class _Hooks:
    @hookspec
    def burn_loggers(self) -> list[LoggerSpec]:  # type: ignore[empty-body]
        """Return the loggers this plugin provides.

        Example:
            >>> import burn.plugins as bp
            >>> @bp.hookimpl
            ... def burn_loggers():
            ...     return [LoggerSpec(name="mine", factory=lambda **o: ..., package="burn-mine")]
        """


LOGGER_HOOK_NAMES = ("burn_loggers",)
_HOOKS: tuple[tuple[Kind, str, SpecType], ...] = (("logger", "burn_loggers", LoggerSpec),)
BUILTIN_PLUGIN = "burn-core:loggers"


class LoggerRegistry(PluginGroupRegistry):
    """The loggers installed here, by name, with their status.

    Discovery, listing, strict mode and run-time registration are `burn.plugins.group`'s.

    Args:
        entry_points: returns the entry points to load (default: the ``burn.loggers`` group).
        builtin: register burn-core's own loggers (``csv``, ``tensorboard``, ``mlflow``).

    Example:
        >>> reg = LoggerRegistry(entry_points=lambda: [])
        >>> sorted(info.name for info in reg.loggers(strict=False))
        ['csv', 'mlflow', 'tensorboard']
    """

    hookspecs = _Hooks
    hook_table = _HOOKS
    hook_names = LOGGER_HOOK_NAMES
    entry_point_group = LOGGER_ENTRY_POINT_GROUP
    plugins_env = LOGGER_PLUGINS_ENV
    kind = "logger"

    def __init__(
        self,
        entry_points: Callable[[], Iterable[discovery.EntryPointLike]] | None = None,
        *,
        builtin: bool = True,
    ) -> None:
        super().__init__(entry_points)
        self._builtin = builtin

    def _discover(self) -> None:
        if self._builtin:
            from burn.train.loggers import builtin

            self._pm.register(builtin, name=BUILTIN_PLUGIN)
            self._sources[BUILTIN_PLUGIN] = PluginSource(BUILTIN_PLUGIN, "burn-core")
        super()._discover()

    def loggers(self, *, strict: bool | None = None) -> list[BackendInfo]:
        """Every logger (``available``, ``unavailable`` with the probe's reason, or ``failed``);
        `strict` as in `infos`."""
        return self.infos(strict=strict)

    def find(self, name: str) -> Entry:
        """The logger called `name`, ready to build.

        Raises:
            ValueError: no such logger; the message lists the installed ones (and a close name).
            ImportError: the logger is installed but cannot run here (its probe's reason: what to
                install).
            PluginError: its plugin failed to load, or two plugins provide the name.
        """
        if not isinstance(name, str):
            raise TypeError(f"a logger name must be a str, got {type(name).__name__}: {name!r}")
        snap = self.snapshot()
        entry = snap.loggers.get(name)
        if entry is None:
            dups = snap.duplicates.get(("logger", name))
            if dups:
                raise PluginError(
                    f"logger {name!r} is provided by more than one plugin: "
                    f"{' and '.join(e.label for e in dups)}; uninstall one of them"
                )
            failed = [f for f in snap.failures if f.name == name]
            if failed:
                raise PluginError(f"logger {name!r} could not be loaded: {failed[0].message()}") from failed[
                    0
                ].exception
            installed = ", ".join(sorted(snap.loggers)) or "none"
            close = difflib.get_close_matches(name, list(snap.loggers), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"no logger named {name!r} (installed loggers: {installed}){hint}")
        return self._usable(entry, lambda reason: ImportError(f"{entry.label} cannot run here: {reason}"))

    def build(self, name: str, **options: Any) -> Logger:
        """A new logger by name, built with `options` (e.g. ``log_dir=``).

        Raises:
            the errors of `find`; TypeError when the factory returns no `burn.train.loggers.Logger`.
        """
        from burn.train.loggers.base import Logger

        entry = self.find(name)
        logger = entry.spec.factory(**options)
        if not isinstance(logger, Logger):
            raise PluginError(
                f"the factory of {entry.label} returned {type(logger).__name__}, not a burn.train.Logger"
            )
        return logger


REGISTRY = LoggerRegistry()
"""The process-wide logger registry."""


def loggers() -> list[BackendInfo]:
    """Every logger known here (burn-core's and the ``burn.loggers`` plugins') with its status.

    Example:
        >>> sorted((i.name, i.kind) for i in loggers())[:1]
        [('csv', 'logger')]
    """
    return REGISTRY.loggers()


def create_logger(name: str, **options: Any) -> Logger:
    """Build the logger called `name` (``"csv"``, ``"tensorboard"``, ``"mlflow"`` or a plugin's).

    Example:
        >>> type(create_logger("csv", plot=False)).__name__
        'CsvLogger'
    """
    return REGISTRY.build(name, **options)


def register_logger(plugin: object, name: str | None = None) -> str:
    """Register a logger plugin (an object with a ``burn_loggers`` hookimpl) at run time.

    Example:
        >>> import types, burn.plugins as bp
        >>> from burn.train.loggers import Logger
        >>> mod = types.ModuleType("my_loggers")
        >>> mod.burn_loggers = bp.hookimpl(lambda: [LoggerSpec("mine", factory=Logger)])
        >>> register_logger(mod)
        'my_loggers'
        >>> unregister_logger(mod)
    """
    return REGISTRY.register(plugin, name)


def unregister_logger(plugin: object) -> None:
    """Remove a logger plugin registered with `register_logger` (or discovered)."""
    REGISTRY.unregister(plugin)
