"""Moved to `burn.foundations.kind`; this path keeps working for existing imports."""

from burn.foundations.kind import Bool, Float, Int, Kind

__all__ = ["Bool", "Float", "Int", "Kind"]
