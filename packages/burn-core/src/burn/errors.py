"""Errors raised by burn. Each names what was wrong: the op, shapes, dtypes, devices, names."""

from __future__ import annotations


class BurnError(Exception):
    """Base class of burn's errors."""


class ShapeError(BurnError, ValueError):
    """Shapes (or dims) that an op cannot work with."""


class KindError(BurnError, TypeError):
    """A tensor of the wrong kind (Float, Int, Bool) for an op."""


class DTypeError(BurnError, TypeError):
    """An element type an op or backend does not accept."""


class DeviceError(BurnError, ValueError):
    """Tensors on different devices, or a device the backend does not have."""


class BackendMismatchError(BurnError, TypeError):
    """Tensors of two different backends in one op (never copied silently)."""


class BackendNotFoundError(BurnError, LookupError):
    """No installed backend has the requested name."""


class BackendUnavailableError(BurnError, RuntimeError):
    """The backend is installed but cannot run here (its probe says why)."""


class PluginError(BurnError, RuntimeError):
    """A plugin failed to load or register (raised in strict mode, listed otherwise)."""


class ConfigError(BurnError, ValueError):
    """A config with a missing, mistyped or unknown field (the message names the field)."""
