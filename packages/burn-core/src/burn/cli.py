"""The ``burn`` command: version, installed backends, the conformance suite, record inspection.

Usage::

    burn --version
    burn backends [--json]                          # exit 1 under BURN_STRICT_PLUGINS if a plugin failed
    burn conformance NAME [pytest arguments...]    # e.g. burn conformance "autodiff(ndarray)" -x -q
                                                   # (fails when NAME cannot run here, unless
                                                   # --burn-allow-unavailable is passed)
    burn record inspect FILE [FILE...]              # metadata and param tree of record files
    burn onnx inspect FILE [FILE...]                # an ONNX file's ops and which burn runs
    burn engines [--json]                           # collective engines (burn.distributed)
    burn launch -n N script.py [args...]            # mpiexec -n N python script.py args...
    burn ops [OP...] [--backend NAME] [--json | --markdown]   # what each default op is built from

Also runs as ``python -m burn``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict

from burn._version import __version__
from burn.errors import BurnError
from burn.plugins.specs import BackendInfo

_EPILOG = "Backends are separate packages: pip install burn-ndarray (NumPy, CPU), burn-opencl, burn-cuda."


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="burn",
        description="burn for Python: tensors and models over pluggable backends.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"burn {__version__} (burn-core)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = sub.add_parser("backends", help="list the installed backends and decorators with their status")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    conf = sub.add_parser(
        "conformance",
        help="run the conformance suite on a backend",
        description="Run `pytest --pyargs burn.testing --burn-backend NAME`; other arguments go to pytest. "
        "A backend that is installed but cannot run here is an error (exit status 1, with its probe's "
        "reason) unless --burn-allow-unavailable is passed, which skips the suite.",
    )
    conf.add_argument(
        "name", help="backend name, e.g. ndarray, 'autodiff(ndarray)', 'ndarray?float_dtype=float64'"
    )
    conf.add_argument("pytest_args", nargs=argparse.REMAINDER, help="arguments passed on to pytest")
    ops = sub.add_parser(
        "ops",
        help="show which ops each default op of the backend contract is built from",
        description="For plugin authors: each default op with the ops its code calls (overriding one "
        "of those speeds up the default); with OP names, what each is built from, the required ops it "
        "rests on and the defaults that use it. --backend marks the ops a backend implements itself.",
    )
    ops.add_argument(
        "ops", nargs="*", metavar="OP", help="contract ops to explain, e.g. max_pool2d float_max_dim"
    )
    ops.add_argument("--backend", metavar="NAME", help="mark the ops this backend overrides (e.g. ndarray)")
    fmt = ops.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print every op's sources as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print the plugin guide's table of default ops")
    from burn.distributed.cli import add_commands

    add_commands(sub)  # engines, launch
    rec = sub.add_parser("record", help="work with record files (saved models and optimizer state)")
    rec_sub = rec.add_subparsers(dest="record_command", metavar="{inspect}", required=True)
    inspect = rec_sub.add_parser(
        "inspect",
        help="show a record file's metadata and param tree (shapes, dtypes, sizes)",
        description="Show each record file's metadata and param tree (any burn format, or a foreign "
        "safetensors file); exit status 1 if one could not be read.",
    )
    inspect.add_argument("files", nargs="+", metavar="FILE", help="record files")
    inspect.add_argument(
        "--max-decompressed-bytes", type=int, default=None, help="cap on the gunzipped size of .gz files"
    )
    from burn.onnx.cli import add_parser as add_onnx_parser

    add_onnx_parser(sub)
    return parser


def format_table(rows: Sequence[BackendInfo]) -> str:
    """The ``burn backends`` table: name, kind, package, version, then the status or its reason.

    Example:
        >>> print(format_table([BackendInfo("ndarray", "backend", "burn-ndarray", "0.1.0", "available")]))
        NAME     KIND     PACKAGE       VERSION  STATUS
        ndarray  backend  burn-ndarray  0.1.0    available
    """
    header = ("NAME", "KIND", "PACKAGE", "VERSION", "STATUS")
    body = [
        (
            r.name,
            r.kind,
            r.package or "?",
            r.version or "-",
            f"{r.status}: {r.reason}" if r.reason else r.status,
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)), row[-1]])
        for row in (header, *body)
    ]
    return "\n".join(lines)


def _backends(as_json: bool) -> int:
    from burn.plugins import registry

    # List first, whatever BURN_STRICT_PLUGINS says: the table is what explains a strict failure.
    rows = registry.REGISTRY.backends(strict=False)
    if as_json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    elif not rows:
        print(f"no burn backend is installed: {registry.install_hint('burn-ndarray')} (NumPy, on the CPU)")
    else:
        print(format_table(rows))
    sys.stdout.flush()
    registry.REGISTRY.check_strict()  # BURN_STRICT_PLUGINS: a failure of a plugin it names -> exit 1
    return 0


def _pytest_plugin_installed() -> bool:
    # Installed burn-core registers the suite as a pytest11 entry point; loading it a second time
    # with -p would make pytest fail, and from a source checkout it has to be named with -p.
    from importlib.metadata import entry_points

    return any(ep.value.strip() == "burn.testing.plugin" for ep in entry_points(group="pytest11"))


def _conformance(name: str, pytest_args: list[str]) -> int:
    import importlib.util

    from burn.plugins import registry

    if importlib.util.find_spec("pytest") is None:
        print("burn conformance needs pytest: pip install 'burn-core[test]'", file=sys.stderr)
        return 2
    registry.REGISTRY.resolve(name.partition("?")[0])  # an unknown or malformed name fails here, clearly
    import pytest

    from burn.testing.plugin import ALLOW_UNAVAILABLE, unavailable_reason

    try:
        reason = unavailable_reason(name)
    except pytest.UsageError as exc:  # a plugin that failed to load, or a probe that raised
        print(f"burn: error: {exc}", file=sys.stderr)
        return 1
    if reason is not None and ALLOW_UNAVAILABLE not in pytest_args:
        # A suite that skips every test is green: refuse, unless skipping is asked for.
        print(
            f"burn: error: {reason}\nThe conformance suite did not run; pass {ALLOW_UNAVAILABLE} "
            "to skip it instead (e.g. on a CI runner without the hardware).",
            file=sys.stderr,
        )
        return 1
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "burn.testing", "--burn-backend", name, *pytest_args]
    if not _pytest_plugin_installed():
        cmd[3:3] = ["-p", "burn.testing.plugin"]
    print("running:", subprocess.list2cmdline(cmd), file=sys.stderr, flush=True)
    return subprocess.call(cmd)


def _ops(names: list[str], backend: str | None, *, as_json: bool, markdown: bool) -> int:
    from burn.backend import implemented_ops
    from burn.backend.op_sources import format_report, markdown_table, op_sources, used_by

    overridden = None
    if backend is not None:
        from burn.plugins import backend as select_backend

        inst = select_backend(backend)
        while inst.inner is not inst:  # a decorator: the ops that run are its base backend's
            inst = inst.inner
        overridden = implemented_ops(type(inst))
    if markdown:
        print(markdown_table())
        return 0
    if as_json:
        rows = [
            {**asdict(src), "used_by": used_by(name)}
            | ({} if overridden is None else {"overridden": name in overridden})
            for name, src in op_sources().items()
            if not names or name in names
        ]
        print(json.dumps(rows, indent=2))
        return 0
    try:
        print(format_report(names, overridden))
    except KeyError as exc:
        print(f"burn: error: {exc.args[0]}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``burn`` command; returns the exit status.

    Example:
        >>> main(["backends", "--json"])  # doctest: +SKIP
        0
    """
    args = _parser().parse_args(argv)
    try:
        if args.command == "backends":
            return _backends(args.json)
        if args.command == "conformance":
            return _conformance(args.name, args.pytest_args)
        if args.command in ("engines", "launch"):
            from burn.distributed.cli import run_command

            return run_command(args)
        if args.command == "ops":
            return _ops(args.ops, args.backend, as_json=args.json, markdown=args.markdown)
        if args.command == "onnx":
            from burn.onnx.cli import run as run_onnx

            return run_onnx(args)
        if args.command == "record":
            from burn.record.inspect import inspect_files

            return inspect_files(args.files, max_decompressed_bytes=args.max_decompressed_bytes)
    except BurnError as exc:
        print(f"burn: error: {exc}", file=sys.stderr)
        return 1
    _parser().print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
