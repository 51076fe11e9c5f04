"""What the registered plugins provide right now: their specs by name, and what went wrong.

A `Snapshot` is built from the plugin manager by calling each plugin's hooks one at a time, so that
a hook that raises is recorded against its own plugin and the others still count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from burn.plugins.discovery import PluginFailure, PluginSource, describe_exception
from burn.plugins.names import is_identifier
from burn.plugins.specs import BackendInfo, BackendSpec, DecoratorSpec, EngineSpec, Kind, LoggerSpec, Status

if TYPE_CHECKING:
    import pluggy


class Entry:
    """One usable spec with its provenance; caches its probe's verdict."""

    __slots__ = ("_verdict", "kind", "package", "plugin", "source", "spec", "version")

    def __init__(
        self, spec: BackendSpec | DecoratorSpec | EngineSpec | LoggerSpec, kind: Kind, source: PluginSource
    ) -> None:
        self.spec = spec
        self.kind = kind
        self.source = source
        self.plugin = source.plugin_name
        self.package = spec.package or source.package
        self.version = source.version
        self._verdict: tuple[Status, str, BaseException | None] | None = None

    @property
    def label(self) -> str:
        """``backend 'ndarray' (package burn-ndarray 0.1.0)``."""
        pkg = " ".join(p for p in (self.package, self.version) if p)
        return f"{self.kind} {self.spec.name!r}" + (
            f" (package {pkg})" if pkg else f" (plugin {self.plugin})"
        )

    def verdict(self) -> tuple[Status, str, BaseException | None]:
        """(status, reason, exception): runs the probe once; a probe that raises gives "failed"."""
        if self._verdict is None:
            self._verdict = self._run_probe()
        return self._verdict

    def _run_probe(self) -> tuple[Status, str, BaseException | None]:
        probe = getattr(self.spec, "probe", None)
        if probe is None:
            return ("available", "", None)
        try:
            reason = probe()
        except Exception as exc:  # a broken probe is the plugin's bug: isolate it
            return ("failed", f"its probe raised {describe_exception(exc)}", exc)
        return ("available", "", None) if not reason else ("unavailable", str(reason), None)

    def info(self) -> BackendInfo:
        status, reason, _ = self.verdict()
        return BackendInfo(self.spec.name, self.kind, self.package, self.version, status, reason)

    def failure(self) -> PluginFailure | None:
        """The verdict as a `PluginFailure` when the probe raised (strict mode treats it like an
        import failure), else None. Runs the probe once, like `verdict`."""
        status, reason, exc = self.verdict()
        if status != "failed":
            return None
        return PluginFailure(
            self.spec.name, self.kind, self.package, self.version, self.label, reason, self.plugin, exc
        )

    def names(self) -> set[str]:
        """What ``BURN_STRICT_PLUGINS=<names>`` may call it: its name, package, entry point, plugin."""
        return {self.spec.name, self.package, self.source.ep_name, self.plugin}


@dataclass
class Snapshot:
    """Usable specs by kind and name, the failures, and the names provided twice."""

    backends: dict[str, Entry] = field(default_factory=dict)
    decorators: dict[str, Entry] = field(default_factory=dict)
    failures: list[PluginFailure] = field(default_factory=list)
    duplicates: dict[tuple[Kind, str], list[Entry]] = field(default_factory=dict)
    engines: dict[str, Entry] = field(default_factory=dict)  # a snapshot of burn.distributed's group
    loggers: dict[str, Entry] = field(default_factory=dict)  # a snapshot of burn.train's logger group

    def table(self, kind: Kind) -> dict[str, Entry]:
        if kind == "engine":
            return self.engines
        if kind == "logger":
            return self.loggers
        return self.backends if kind == "backend" else self.decorators

    def infos(self) -> list[BackendInfo]:
        """Every row for `burn.backends()`: backends, then decorators, each sorted by name."""
        tables = (self.backends, self.decorators, self.engines, self.loggers)
        entries = [entry for table in tables for entry in table.values()]
        rows = [e.info() for e in entries]
        rows += [
            BackendInfo(f.name, f.kind, f.package, f.version, "failed", f.message()) for f in self.failures
        ]
        return sorted(rows, key=lambda r: (r.kind != "backend", r.name, r.package))


SpecType = type[BackendSpec] | type[DecoratorSpec] | type[EngineSpec] | type[LoggerSpec]

_HOOKS: tuple[tuple[Kind, str, SpecType], ...] = (
    ("backend", "burn_backends", BackendSpec),
    ("decorator", "burn_decorators", DecoratorSpec),
)


def build_snapshot(
    pm: pluggy.PluginManager,
    sources: dict[str, PluginSource],
    load_failures: list[PluginFailure],
    hooks: Sequence[tuple[Kind, str, SpecType]] = _HOOKS,
) -> Snapshot:
    """Call every plugin's hooks and index the specs by name, recording every failure.

    `hooks` are (kind, hook name, spec type): the backends' and decorators' by default.
    """
    snap = Snapshot(failures=list(load_failures))
    found: dict[tuple[Kind, str], list[Entry]] = {}
    for kind, hook_name, spec_type in hooks:
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            source = sources.get(impl.plugin_name) or PluginSource(impl.plugin_name)
            try:
                result = impl.function()
            except Exception as exc:
                snap.failures.append(
                    _failure(source, kind, f"{hook_name}() raised {describe_exception(exc)}", exc)
                )
                continue
            # a common slip: `return spec`
            if isinstance(result, (BackendSpec, DecoratorSpec, EngineSpec, LoggerSpec)):
                snap.failures.append(
                    _failure(
                        source,
                        kind,
                        f"{hook_name}() returned a single {type(result).__name__} {result.name!r}, "
                        f"not a list: return [spec]",
                        None,
                        result.name if isinstance(result.name, str) else "",
                        result.package,
                    )
                )
                continue
            for item in _as_list(result):
                problem = _check_spec(item, spec_type, hook_name)
                if problem:
                    snap.failures.append(
                        _failure(
                            source,
                            kind,
                            problem,
                            None,
                            getattr(item, "name", ""),
                            getattr(item, "package", ""),
                        )
                    )
                    continue
                found.setdefault((kind, item.name), []).append(Entry(item, kind, source))
    for (kind, name), entries in found.items():
        if len(entries) == 1:
            snap.table(kind)[name] = entries[0]
            continue
        snap.duplicates[(kind, name)] = entries
        for entry in entries:
            others = ", ".join(o.label for o in entries if o is not entry)
            snap.failures.append(
                PluginFailure(
                    name,
                    kind,
                    entry.package,
                    entry.version,
                    entry.label,
                    f"the name {name!r} is also provided by {others}: uninstall one of them",
                    entry.plugin,
                )
            )
    return snap


def _as_list(result: Any) -> list[Any]:
    if result is None:
        return []
    try:
        return list(result)
    except TypeError:
        return [result]  # reported by _check_spec as the wrong type


def _check_spec(item: Any, spec_type: SpecType, hook_name: str) -> str:
    if not isinstance(item, spec_type):
        expected = f"burn.plugins.{spec_type.__name__}"
        return f"{hook_name}() returned {type(item).__name__} {item!r:.60}, expected {expected}"
    if not isinstance(item.name, str) or not is_identifier(item.name):
        return f"{hook_name}() returned a spec with the invalid name {item.name!r} (letters, digits, _, -)"
    if not callable(item.factory):
        return f"{hook_name}() returned {item.name!r} whose factory is not callable"
    probe = getattr(item, "probe", None)
    if probe is not None and not callable(probe):
        return f"{hook_name}() returned {item.name!r} whose probe is not callable"
    if isinstance(item, BackendSpec):
        return _check_class_name(item, hook_name)
    return ""


def _check_class_name(spec: BackendSpec, hook_name: str) -> str:
    """A backend class used as the factory must carry the spec's name: devices, errors and the
    conformance suite go by ``backend.name``. (A factory function is checked when it builds.)"""
    from burn.backend.base import Backend

    factory = spec.factory
    if not (isinstance(factory, type) and issubclass(factory, Backend)):
        return ""
    name = getattr(factory, "name", None)
    if isinstance(name, str) and name != spec.name:
        return (
            f"{hook_name}() returned the spec {spec.name!r} whose factory {factory.__name__} has "
            f"name = {name!r}: the spec's name and the backend class's name must be the same"
        )
    return ""


def _failure(
    source: PluginSource,
    kind: Kind,
    error: str,
    exc: BaseException | None,
    name: str = "",
    package: str = "",
) -> PluginFailure:
    # A plugin registered at run time has no distribution: name the package its spec declares.
    where = source.describe()
    if not source.package and isinstance(package, str) and package:
        where += f" (package {package})"
    return PluginFailure(
        name or source.ep_name or source.plugin_name,
        kind,
        source.package or (package if isinstance(package, str) else ""),
        source.version,
        where,
        error,
        source.plugin_name,
        exc,
    )
