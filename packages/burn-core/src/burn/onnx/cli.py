"""The ``burn onnx`` subcommand: ``burn onnx inspect FILE [FILE...]``."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    """Add ``onnx`` (with its ``inspect`` subcommand) to the ``burn`` command's subparsers."""
    onnx = sub.add_parser("onnx", help="work with ONNX models (burn.onnx)")
    onnx_sub = onnx.add_subparsers(dest="onnx_command", metavar="{inspect}", required=True)
    inspect = onnx_sub.add_parser(
        "inspect",
        help="list an ONNX file's ops with their counts and whether burn runs them",
        description="For each file: opset, inputs, outputs, initializer size, and each op type with "
        "its node count and whether burn.onnx supports it; exit status 1 if a file cannot be read or "
        "holds an unsupported op. Needs the onnx package: pip install 'burn-core[onnx]'.",
    )
    inspect.add_argument("files", nargs="+", metavar="FILE", help=".onnx files")


def run(args: argparse.Namespace) -> int:
    """Run the parsed ``burn onnx ...`` command; returns the exit status."""
    from burn.onnx.inspect import inspect_files

    return inspect_files(args.files)
