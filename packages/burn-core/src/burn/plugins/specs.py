"""What plugins hand to burn (`BackendSpec`, `DecoratorSpec`) and what burn lists (`BackendInfo`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from burn.backend.base import Backend

Kind = Literal["backend", "decorator", "engine", "logger"]
Status = Literal["available", "unavailable", "failed"]


@dataclass(frozen=True)
class BackendSpec:
    """A backend a plugin provides.

    Attributes:
        name: the name users select it by (``burn.backend("ndarray")``): letters, digits, ``_``, ``-``.
        factory: ``(**options) -> Backend``. It should import the heavy library (pyopencl, cupy) only
            when called, so that discovery stays cheap.
        probe: ``() -> None`` when the backend can run here, else a reason (and how to fix it), e.g.
            ``"no OpenCL platform found: pip install pocl-binary-distribution"``. None: always usable.
        description: one line shown by ``burn backends``.
        package: the distribution providing it (``"burn-ndarray"``); filled from the entry point's
            distribution when empty.

    Example:
        >>> spec = BackendSpec(name="ndarray", factory=lambda **o: None, description="NumPy on the CPU",
        ...                    package="burn-ndarray")
        >>> spec.name, spec.probe is None
        ('ndarray', True)
    """

    name: str
    factory: Callable[..., Backend]
    probe: Callable[[], str | None] | None = None
    description: str = ""
    package: str = ""


@dataclass(frozen=True)
class DecoratorSpec:
    """A backend decorator a plugin provides: a backend that wraps any other (``autodiff``).

    Attributes:
        name: the name used in the grammar ``name(inner)``, e.g. ``"autodiff"``.
        factory: ``(inner: Backend, **options) -> Backend``. burn passes the inner backend only:
            options given to ``burn.backend`` go to the base backend.
        description: one line shown by ``burn backends``.
        package: the distribution providing it; filled from the entry point's distribution when empty.

    Example:
        >>> spec = DecoratorSpec(name="autodiff", factory=lambda inner, **o: inner, package="burn-autodiff")
        >>> spec.name
        'autodiff'
    """

    name: str
    factory: Callable[..., Backend]
    description: str = ""
    package: str = ""


@dataclass(frozen=True)
class EngineSpec:
    """A collective engine a plugin provides (`burn.distributed`): MPI, NCCL...

    Engines live in their own entry-point group, ``burn.collectives``, and hook,
    ``burn_collective_engines`` (see `burn.distributed.engine.CollectiveEngine` for the contract).

    Attributes:
        name: the name `burn.distributed.init(engine=...)` selects it by, e.g. ``"mpi"``.
        factory: ``(**options) -> CollectiveEngine``; imports the heavy library (mpi4py) when called.
        probe: ``() -> None`` when the engine can run here, else the reason (and how to fix it).
        description: one line shown by ``burn engines``.
        package: the distribution providing it; filled from the entry point's distribution when empty.
        launched: ``() -> bool``: whether this process was started by the engine's launcher (for
            MPI: an ``mpiexec`` environment), so that `init()` picks the engine by itself.

    Example:
        >>> spec = EngineSpec(name="mpi", factory=lambda **o: None, package="burn-mpi")
        >>> spec.name, spec.probe is None
        ('mpi', True)
    """

    name: str
    factory: Callable[..., Any]
    probe: Callable[[], str | None] | None = None
    description: str = ""
    package: str = ""
    launched: Callable[[], bool] | None = None


@dataclass(frozen=True)
class LoggerSpec:
    """A training logger a plugin provides (`burn.train.Learner`'s ``loggers=["name"]``).

    Loggers live in their own entry-point group, ``burn.loggers``, and hook, ``burn_loggers``
    (see `burn.train.loggers.registry`; the contract is `burn.train.loggers.Logger`).

    Attributes:
        name: the name `Learner(loggers=[...])` selects it by, e.g. ``"wandb"``.
        factory: ``(**options) -> burn.train.loggers.Logger``; imports the tracker's library when called.
        probe: ``() -> None`` when the logger can run here, else the reason (and what to install).
        description: one line shown in listings.
        package: the distribution providing it; filled from the entry point's distribution when empty.

    Example:
        >>> spec = LoggerSpec(name="mine", factory=lambda **o: None, package="burn-mine")
        >>> spec.name, spec.probe is None
        ('mine', True)
    """

    name: str
    factory: Callable[..., Any]
    probe: Callable[[], str | None] | None = None
    description: str = ""
    package: str = ""


@dataclass(frozen=True)
class BackendInfo:
    """One row of `burn.backends()`: a discovered backend or decorator, or a plugin that failed.

    Attributes:
        name: the backend's name; for a plugin that failed to load, its entry point's name.
        kind: ``"backend"``, ``"decorator"``, (``burn engines``) ``"engine"`` or ``"logger"``.
        package: the distribution it comes from (``""`` when unknown).
        version: that distribution's version, or None when unknown (e.g. registered at run time).
        status: ``"available"`` (ready to use), ``"unavailable"`` (installed, its probe says it cannot
            run here) or ``"failed"`` (the plugin failed to load, its hook or probe raised, or its name
            is provided twice).
        reason: why it is unavailable or failed; ``""`` when available.

    Example:
        >>> info = BackendInfo("cuda", "backend", "burn-cuda", "0.1.0", "unavailable", "no NVIDIA GPU")
        >>> info.status
        'unavailable'
    """

    name: str
    kind: Kind
    package: str
    version: str | None
    status: Status
    reason: str = ""

    @property
    def available(self) -> bool:
        """Whether `burn.backend(name)` can build it here."""
        return self.status == "available"
