"""`RecordError`: everything that can go wrong reading or writing a record."""

from __future__ import annotations

from burn.errors import BurnError


class RecordError(BurnError, ValueError):
    """A record that cannot be written, read or loaded: malformed or truncated bytes, an unknown
    format or newer format version, a value that cannot be recorded, or a record that does not fit
    the module it is loaded into.

    The message names the file (or ``<bytes>``) and, where there is one, the path inside the record
    (``layers.0.weight``); both are also kept as attributes.

    Attributes:
        source: the file the record came from or goes to, ``"<bytes>"`` in memory, or None.
        path: the param or item path inside the record, or None.
        internal: True when the error wraps an unexpected exception of the reader (a bug to
            report: every malformed input is meant to be caught where it is understood).

    Example:
        >>> err = RecordError("truncated tensor data", source="model.mpk", path="linear.weight")
        >>> str(err)
        'model.mpk: linear.weight: truncated tensor data'
    """

    internal: bool = False

    def __init__(self, message: str, *, source: str | None = None, path: str | None = None) -> None:
        self.source = source
        self.path = path
        self.reason = message
        prefix = "".join(f"{part}: " for part in (source, path) if part)
        super().__init__(prefix + message)

    def with_source(self, source: str) -> RecordError:
        """This error with `source` filled in (when it has none yet)."""
        if self.source is not None:
            return self
        err = RecordError(self.reason, source=source, path=self.path)
        err.internal = self.internal
        err.__cause__ = self.__cause__
        return err
