"""Closing summary of a tox run: each environment's pytest counts, read from tox's ``--result-json``.

Usage: ``python .ci/summary.py RESULT_JSON``. Prints one row per environment (status, time, and the
passed / failed / skipped / error counts of every pytest command it ran, added up) and a last line
``total: N passed, N failed, N skipped`` (errors counted as failures). Standard library only.
Exit status 0 unless the file cannot be read (the tox run's own status is what counts).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# pytest's closing line, with or without -q: "== 3 passed, 1 skipped in 2.01s ==" / "5 passed in 0.3s"
_CLOSING = re.compile(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s\b")
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")
_KEYS = ("passed", "failed", "skipped", "error")
_WIDTHS = (7, 6, 7, 5)


def pytest_counts(output: str) -> dict[str, int] | None:
    """The counts of the last pytest closing line in `output`, None when it has none.

    Example:
        >>> pytest_counts("....\\n4 passed, 1 skipped, 2 deselected in 0.52s\\n")
        {'passed': 4, 'failed': 0, 'skipped': 1, 'error': 0}
    """
    found = None
    for line in output.splitlines():
        match = _CLOSING.match(line.strip())
        if match:
            found = match.group(1)
    if found is None:
        return None
    counts = dict.fromkeys(_KEYS, 0)
    for number, word in _COUNT.findall(found):
        key = "error" if word.startswith("error") else word
        if key in counts:
            counts[key] += int(number)
    return counts


def summarize(result: dict) -> list[str]:
    """The table's lines for tox's result JSON."""
    head = " ".join(f"{k:>{w}}" for k, w in zip(_KEYS, _WIDTHS, strict=True))
    lines = [f"{'environment':<24} {'status':<6} {'time':>7}  {head}"]
    total = dict.fromkeys(_KEYS, 0)
    for name, env in sorted(result.get("testenvs", {}).items()):
        if not isinstance(env, dict) or name.startswith(".") or "result" not in env:
            continue  # tox's packaging env, or one this run did not select
        runs = env.get("test", [])
        counts = dict.fromkeys(_KEYS, 0)
        for run in runs:
            found = pytest_counts(str(run.get("output", "")))
            for key, value in (found or {}).items():
                counts[key] += value
        outcome = env.get("result", {})
        status = "ok" if outcome.get("success", all(r.get("retcode") == 0 for r in runs)) else "FAIL"
        seconds = outcome.get("duration", sum(float(r.get("elapsed", 0.0)) for r in runs))
        for key in _KEYS:
            total[key] += counts[key]
        cells = " ".join(f"{counts[k]:>{w}}" for k, w in zip(_KEYS, _WIDTHS, strict=True))
        lines.append(f"{name:<24} {status:<6} {float(seconds):>6.0f}s  {cells}")
    failed = total["failed"] + total["error"]  # a collection error fails as a test does
    lines.append(f"total: {total['passed']} passed, {failed} failed, {total['skipped']} skipped")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        result = json.loads(Path(argv[1]).read_text())
    except (OSError, ValueError) as exc:
        print(f"summary: cannot read {argv[1]}: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summarize(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
