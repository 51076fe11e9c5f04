"""Regenerate (or check) the supported-op table of the import guide from the op table.

Usage: ``python -m burn.onnx.table [--check] [--counts FILE] docs/guides/import-models.md``; the
table sits between the markers `burn.onnx.ops.BEGIN` and `END`. ``--counts`` adds each op's
pass count in ONNX's node test suite from FILE (``packages/burn-core/tests/onnx_node_counts.txt``,
which ``onnx_node_suite.py --write-passing`` writes). With ``--check`` nothing is written and the
exit status is 1 when the table is out of date.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from burn.onnx.ops import BEGIN, END, read_counts, render_table


def write_table(
    path: str | Path, check: bool = False, counts: Mapping[str, tuple[int, int]] | None = None
) -> bool:
    """Replace the generated table of the Markdown file `path` (with the node suite's `counts`
    per op, `read_counts`); returns True when it was already up to date (with `check`, nothing
    is written).

    Raises:
        ValueError: the markers are missing.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{path}: the markers {BEGIN!r} and {END!r} are missing")
    new = text[: start + len(BEGIN)] + "\n" + render_table(counts) + "\n" + text[stop:]
    if new == text:
        return True
    if not check:
        path.write_text(new, encoding="utf-8")
    return False


USAGE = "usage: python -m burn.onnx.table [--check] [--counts FILE] docs/guides/import-models.md"


def main(argv: list[str] | None = None) -> int:
    """Run the command with `argv` (default: ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    counts = None
    if "--counts" in args:
        i = args.index("--counts")
        if i + 1 >= len(args):
            print(USAGE)
            return 2
        counts_path = Path(args[i + 1])
        try:
            counts = read_counts(counts_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{counts_path}: {exc}")
            return 2
        del args[i : i + 2]
    if len(args) != 1:
        print(USAGE)
        return 2
    fresh = write_table(args[0], check=check, counts=counts)
    if check and not fresh:
        print(f"{args[0]}: the ONNX op table is out of date")
        return 1
    if not fresh:
        print(f"{args[0]}: ONNX op table regenerated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
