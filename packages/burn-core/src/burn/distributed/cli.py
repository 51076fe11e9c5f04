"""The ``burn engines`` and ``burn launch`` commands (hooked into `burn.cli`).

``burn engines [--json]`` lists the collective engines like ``burn backends`` lists backends;
``burn launch -n N script.py [args...]`` runs ``mpiexec -n N <this python> script.py args...``
(the ``mpiexec`` beside this interpreter, as ``burn-mpi[mpich]`` installs it, else the one on PATH).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

COMMANDS = ("engines", "launch")


def add_commands(sub: Any) -> None:
    """Add ``engines`` and ``launch`` to the ``burn`` command's subparsers."""
    listing = sub.add_parser("engines", help="list the installed collective engines (burn.distributed)")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    launch = sub.add_parser(
        "launch",
        help="run a script on N processes with the MPI launcher (mpiexec)",
        description="Run `mpiexec -n N PYTHON SCRIPT ARGS...` with this Python; the script calls "
        "burn.distributed.init() and gets ranks 0..N-1. Exit status: mpiexec's.",
    )
    launch.add_argument("-n", "--nproc", type=int, required=True, metavar="N", help="number of processes")
    launch.add_argument("--mpiexec", default=None, help="the launcher to use (default: found as described)")
    launch.add_argument("script", help="the Python script")
    launch.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")


def run_command(args: argparse.Namespace) -> int:
    """Run ``burn engines`` or ``burn launch``; returns the exit status."""
    if args.command == "engines":
        return _engines(args.json)
    return _launch(args.nproc, args.script, args.script_args, args.mpiexec)


def _engines(as_json: bool) -> int:
    from burn.cli import format_table
    from burn.distributed.registry import REGISTRY

    rows = REGISTRY.engines(strict=False)
    if as_json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    elif not rows:
        print("no collective engine is installed: pip install 'burn-mpi[mpich]' (MPI, from wheels)")
    else:
        print(format_table(rows))
    sys.stdout.flush()
    REGISTRY.check_strict()  # BURN_STRICT_PLUGINS: an engine plugin that failed -> exit 1
    return 0


def find_mpiexec() -> str | None:
    """The ``mpiexec`` beside this interpreter (a venv with ``burn-mpi[mpich]``), else on PATH.

    Example:
        >>> find_mpiexec() is None or find_mpiexec().endswith(("mpiexec", "mpiexec.exe"))
        True
    """
    for name in ("mpiexec", "mpiexec.exe"):
        beside = Path(sys.executable).parent / name
        if beside.is_file():
            return str(beside)
    return shutil.which("mpiexec")


def _launch(nproc: int, script: str, script_args: list[str], launcher: str | None) -> int:
    if nproc < 1:
        print(f"burn launch: -n must be at least 1, got {nproc}", file=sys.stderr)
        return 2
    launcher = launcher or find_mpiexec()
    if launcher is None:
        print(
            "burn launch: no mpiexec found beside this Python or on PATH: pip install 'burn-mpi[mpich]'",
            file=sys.stderr,
        )
        return 2
    cmd = [launcher, "-n", str(nproc), sys.executable, script, *script_args]
    print("running:", subprocess.list2cmdline(cmd), file=sys.stderr, flush=True)
    return subprocess.call(cmd)
