"""`covers`: the marker by which a conformance test names the contract ops it checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

MARKER = "covers"


def covers(*ops: str) -> pytest.MarkDecorator:
    """Mark a test as checking the contract ops `ops` (names from `burn.backend.contract_ops()`).

    Unknown names fail at import time, so a typo cannot hide an untested op.

    Example:
        >>> from burn.testing import covers
        >>> @covers("float_add", "int_add")
        ... def test_add(backend): ...
    """
    from burn.backend import contract_ops

    known = contract_ops()
    unknown = sorted(set(ops) - known.keys())
    if unknown:
        raise ValueError(f"covers(): not ops of the backend contract: {', '.join(unknown)}")
    if not ops:
        raise ValueError("covers() needs at least one op name")
    return getattr(pytest.mark, MARKER)(*ops)


def covered_ops(obj: Any) -> set[str]:
    """The ops named by `covers` marks on a test function or class (without collecting it)."""
    marks: Iterable[Any] = getattr(obj, "pytestmark", ())
    found: set[str] = set()
    for mark in marks:
        if getattr(mark, "name", None) == MARKER:
            found.update(mark.args)
    return found
