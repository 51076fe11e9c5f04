"""Regenerate (or check) the layer table of the PyTorch-weights guide from the adapters.

Usage: ``python -m burn.record.pytorch_table [--check] docs/guides/pytorch-weights.md``; the table
sits between the markers `burn.record.pytorch_adapters.BEGIN` and `END`. With ``--check`` nothing
is written and the exit status is 1 when the table is out of date.
"""

from __future__ import annotations

import sys

from burn.record.pytorch_adapters import write_table


def main(argv: list[str] | None = None) -> int:
    """Run the command with `argv` (default: ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    files = [a for a in args if a != "--check"]
    if len(files) != 1:
        print("usage: python -m burn.record.pytorch_table [--check] docs/guides/pytorch-weights.md")
        return 2
    fresh = write_table(files[0], check=check)
    if check and not fresh:
        print(f"{files[0]}: the adapter table is out of date")
        return 1
    if not fresh:
        print(f"{files[0]}: adapter table regenerated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
