"""Regenerate (or check) the supported-op table of the import guide from the op table.

Usage: ``python -m burn.onnx.table [--check] docs/guides/import-models.md``; the table sits
between the markers `burn.onnx.ops.BEGIN` and `END`. With ``--check`` nothing is written and the
exit status is 1 when the table is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from burn.onnx.ops import BEGIN, END, render_table


def write_table(path: str | Path, check: bool = False) -> bool:
    """Replace the generated table of the Markdown file `path`; returns True when it was
    already up to date (with `check`, nothing is written).

    Raises:
        ValueError: the markers are missing.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{path}: the markers {BEGIN!r} and {END!r} are missing")
    new = text[: start + len(BEGIN)] + "\n" + render_table() + "\n" + text[stop:]
    if new == text:
        return True
    if not check:
        path.write_text(new, encoding="utf-8")
    return False


def main(argv: list[str] | None = None) -> int:
    """Run the command with `argv` (default: ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    files = [a for a in args if a != "--check"]
    if len(files) != 1:
        print("usage: python -m burn.onnx.table [--check] docs/guides/import-models.md")
        return 2
    fresh = write_table(files[0], check=check)
    if check and not fresh:
        print(f"{files[0]}: the ONNX op table is out of date")
        return 1
    if not fresh:
        print(f"{files[0]}: ONNX op table regenerated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
