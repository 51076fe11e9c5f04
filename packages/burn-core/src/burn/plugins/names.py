"""The backend name grammar: ``base`` or ``decorator(inner)``, nested, e.g. ``autodiff(ndarray)``.

::

    name  := ident | ident "(" name ")"      whitespace allowed around every token
    ident := [A-Za-z_][A-Za-z0-9_-]*
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from burn.errors import BurnError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


class BackendNameError(BurnError, ValueError):
    """A backend name that does not follow the grammar ``name`` or ``decorator(name)``."""


@dataclass(frozen=True, slots=True)
class BackendName:
    """A parsed backend name: decorators from the outermost in, then the base backend.

    Example:
        >>> n = parse_name(" autodiff( ndarray ) ")
        >>> n.decorators, n.base, str(n)
        (('autodiff',), 'ndarray', 'autodiff(ndarray)')
    """

    decorators: tuple[str, ...]
    base: str

    def __str__(self) -> str:
        return "".join(d + "(" for d in self.decorators) + self.base + ")" * len(self.decorators)

    @property
    def inner(self) -> BackendName:
        """The name without its outermost decorator (the name itself when it has none)."""
        return BackendName(self.decorators[1:], self.base) if self.decorators else self


def is_identifier(name: str) -> bool:
    """Whether `name` can name a backend or decorator (``ndarray``, ``my_backend``, ``burn-x``)."""
    return _IDENT.fullmatch(name) is not None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _error(text: str, pos: int, what: str) -> BackendNameError:
    found = repr(text[pos]) if pos < len(text) else "the end"
    return BackendNameError(
        f"invalid backend name {text!r}: expected {what} at position {pos}, found {found}\n"
        f"    {text}\n    {' ' * pos}^\n"
        "backend names look like 'ndarray' or 'autodiff(ndarray)'"
    )


def parse_name(text: str) -> BackendName:
    """Parse a backend name, tolerating whitespace around tokens.

    Raises:
        BackendNameError: the name is empty or malformed; the message points at the position.

    Example:
        >>> parse_name("autodiff(autodiff(ndarray))").decorators
        ('autodiff', 'autodiff')
        >>> try:
        ...     parse_name("autodiff(ndarray")
        ... except BackendNameError as e:
        ...     print(str(e).splitlines()[0])
        invalid backend name 'autodiff(ndarray': expected ')' (a decorator wraps exactly one backend) \
at position 16, found the end
    """
    if not isinstance(text, str):
        raise TypeError(f"a backend name must be a str, got {type(text).__name__}: {text!r}")
    if not text.strip():
        raise BackendNameError(f"empty backend name {text!r}: give one like 'ndarray' or 'autodiff(ndarray)'")
    idents: list[str] = []
    pos = _skip_space(text, 0)
    while True:
        m = _IDENT.match(text, pos)
        if m is None:
            raise _error(text, pos, "a backend name (letters, digits, '_', '-')")
        idents.append(m.group())
        pos = _skip_space(text, m.end())
        if pos < len(text) and text[pos] == "(":
            pos = _skip_space(text, pos + 1)
            continue
        break
    for _ in range(len(idents) - 1):
        if pos >= len(text) or text[pos] != ")":
            raise _error(text, pos, "')' (a decorator wraps exactly one backend)")
        pos = _skip_space(text, pos + 1)
    if pos != len(text):
        raise _error(text, pos, "the end of the name")
    return BackendName(tuple(idents[:-1]), idents[-1])
