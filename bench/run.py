"""Run the benchmark suite: burn vs PyTorch (CPU) vs a hand-written NumPy floor, side by side.

Usage: ``python bench/run.py [--quick] [--only ops,mlp,...] [--threads N]``; prints a Markdown
header (date, machine, versions, load average) and one table per section with times, the ratios
burn/torch and burn/numpy, and peak memory. Sections: see ``--list``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import sys
import time


def parse() -> argparse.Namespace:
    from sections import SECTIONS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short smoke run (under ~2 minutes)")
    parser.add_argument("--only", default="", help=f"comma-separated sections out of: {', '.join(SECTIONS)}")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for every library")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    args = parser.parse_args()
    args.sections = [s for s in args.only.split(",") if s] or list(SECTIONS)
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    if args.list:
        print("\n".join(SECTIONS))
        sys.exit(0)
    return args


def main() -> None:
    args = parse()
    from harness import pin_threads

    pin_threads(args.threads)  # before NumPy, torch and pyopencl are imported
    from harness import Settings, load_average, machine

    settings = Settings.make(args.quick)
    command = " ".join(["python", "bench/run.py", *sys.argv[1:]])
    print(f"# burn benchmarks: {datetime.datetime.now():%Y-%m-%d %H:%M}\n")
    print(f"- command: `{command}`\n- machine: {machine()}\n- load average at start: {load_average()}\n")
    start = time.perf_counter()
    for name in args.sections:
        section = importlib.import_module(f"sections.{name}")
        t0 = time.perf_counter()
        for table in section.run(settings):
            print(table.markdown(), flush=True)
            print()
        print(
            f"_{name}: {time.perf_counter() - t0:.0f} s, load average after: {load_average()}_\n", flush=True
        )
    print(f"total: {time.perf_counter() - start:.0f} s; load average at end: {load_average()}")


if __name__ == "__main__":
    main()
