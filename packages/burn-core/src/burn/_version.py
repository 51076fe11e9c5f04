"""The version of burn-core, kept in this one place (hatch reads it when building)."""

__version__ = "0.1.0"
