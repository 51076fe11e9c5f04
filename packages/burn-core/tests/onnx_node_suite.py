"""ONNX's own node test suite (every node case of the installed ``onnx`` wheel) run through
``burn.onnx.load`` on ndarray and compared as onnx's backend runner compares: same number of
outputs, same shape, same dtype, ``np.testing.assert_allclose(rtol=1e-3, atol=1e-7)`` (the
case's own tolerances; bfloat16 at two ULPs, strings exactly).

Each case gets one outcome:

- ``pass``: every output matches;
- ``unsupported``: the load refused an op (`UnsupportedOpError`);
- ``error``: any other explicit refusal (an `OnnxError` or another burn error);
- ``wrong``: it ran and an output differs in shape, dtype or values (a silent wrong answer);
- ``crash``: a raw exception (not a burn error): a bug;
- ``timeout``: over the time bound (a SIGALRM timer, in-process: no case is skipped).

Run ``python packages/burn-core/tests/onnx_node_suite.py [-v] [--backend NAME] [PATTERN]`` for
the table per op and the totals (``--backend``: any backend name, default ndarray;
``--write-passing`` rewrites the backend's passing list, ``onnx_node_passing.txt`` for ndarray and
``onnx_node_passing_<name>.txt`` for another, and its per-op counts, ``onnx_node_counts.txt``);
`run_suite` is what ``test_onnx_node_suite.py`` calls.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

OUTCOMES = ("pass", "unsupported", "error", "wrong", "crash", "timeout")
TIME_LIMIT_S = 20.0
HERE = Path(__file__).resolve().parent
PASSING = HERE / "onnx_node_passing.txt"  # the cases that pass: none may regress
KNOWN_WRONG = HERE / "onnx_node_known_wrong.txt"  # the wrong answers still tolerated (none)


def passing_list(backend: str = "ndarray") -> Path:
    """The file listing the cases that pass on `backend` (``onnx_node_passing.txt`` for ndarray)."""
    if backend == "ndarray":
        return PASSING
    return HERE / f"onnx_node_passing_{''.join(c if c.isalnum() else '_' for c in backend)}.txt"


def read_list(path: Path) -> list[str]:
    """The case names of a list file (one a line; blank lines and ``#`` comments ignored)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


@dataclass(frozen=True)
class Result:
    name: str
    op: str
    outcome: str
    detail: str
    seconds: float


class _Timeout(BaseException):
    """Raised by the alarm inside a case that ran over its time bound (a BaseException, so the
    importer's own ``except Exception`` does not turn it into an error)."""


@contextlib.contextmanager
def _time_bound(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield  # no alarms off the main thread: the case runs unbounded
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Timeout(f"over {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def node_cases(pattern: str = "") -> list[Any]:
    """The node cases of the installed onnx wheel (``TestCase`` objects), sorted by name."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators' own overflow warnings
        cases = load_model_tests(kind="node")
    return sorted((c for c in cases if pattern in c.name), key=lambda c: c.name)


def _case_data(case: Any) -> tuple[Any, list[tuple[list[Any], list[Any]]]]:
    """The model and its (inputs, expected outputs) data sets, in memory or from the case's folder."""
    import glob
    import os

    import onnx
    from onnx import numpy_helper

    if case.model is not None:
        # Some in-memory cases hold TensorProtos (those of types NumPy lacks), as onnx's runner reads them.
        def arrays(values: Any) -> list[Any]:
            return [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]

        return case.model, [(arrays(i), arrays(o)) for i, o in case.data_sets]

    model = onnx.load(os.path.join(case.model_dir, "model.onnx"))
    sets = []
    for folder in sorted(glob.glob(os.path.join(case.model_dir, "test_data_set*"))):
        def read(prefix: str, folder: str = folder) -> list[Any]:
            arrays = []
            for path in sorted(glob.glob(os.path.join(folder, f"{prefix}_*.pb")),
                               key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
                tensor = onnx.TensorProto()
                with open(path, "rb") as f:
                    tensor.ParseFromString(f.read())
                arrays.append(numpy_helper.to_array(tensor))
            return arrays

        sets.append((read("input"), read("output")))
    return model, sets


def _op_of(model: Any) -> str:
    """The case's op types (as burn's op table names them: ``ai.onnx.ml.Scaler`` outside the
    default domain), joined by ``+`` when there are several."""
    ops = [n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}" for n in model.graph.node]
    return "+".join(dict.fromkeys(ops)) if ops else "?"


def compare(ref: Sequence[Any], out: Sequence[Any]) -> str | None:
    """Why `out` differs from `ref` as onnx's runner judges it, or None when it matches."""
    if len(out) != len(ref):
        return f"{len(out)} outputs, expected {len(ref)}"
    for i, (r, o) in enumerate(zip(ref, out, strict=True)):
        if isinstance(r, (list, tuple)):
            if not isinstance(o, (list, tuple)):
                return f"output {i}: {type(o).__name__}, expected a sequence"
            why = compare(list(r), list(o))
            if why:
                return f"output {i}: {why}"
            continue
        r = np.asarray(r)
        o = np.asarray(o)
        if o.shape != r.shape:
            return f"output {i}: shape {list(o.shape)}, expected {list(r.shape)}"
        if r.dtype == object:
            if not np.array_equal(o, r):
                return f"output {i}: strings differ"
            continue
        if o.dtype != r.dtype:
            return f"output {i}: dtype {o.dtype}, expected {r.dtype}"
        rtol = 1e-3
        if o.dtype.name == "bfloat16":
            rtol, o, r = 2**-6, o.astype(np.float32), r.astype(np.float32)
        try:
            np.testing.assert_allclose(o, r, rtol=rtol, atol=1e-7)
        except AssertionError as exc:
            lines = [ln for ln in str(exc).splitlines() if ln.strip()]
            return f"output {i}: values differ ({'; '.join(lines[1:3]).strip()})"
        except TypeError as exc:  # dtypes NumPy cannot compare numerically (float8...)
            if not np.array_equal(o.astype(np.float32), r.astype(np.float32), equal_nan=True):
                return f"output {i}: values differ ({exc})"
    return None


def _to_host(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_to_host(v) for v in value]
    if hasattr(value, "to_numpy"):
        return np.asarray(value.to_numpy())
    return value


def run_case(case: Any, backend: str = "ndarray", time_limit: float = TIME_LIMIT_S) -> Result:
    """One node case through ``burn.onnx.load`` on `backend`, classified (see the module doc)."""
    import burn.onnx
    from burn.errors import BurnError

    start = time.perf_counter()
    model_proto, sets = _case_data(case)
    op = _op_of(model_proto)

    def done(outcome: str, detail: str = "") -> Result:
        return Result(case.name, op, outcome, detail.splitlines()[0][:300] if detail else "",
                      time.perf_counter() - start)

    init = {t.name for t in model_proto.graph.initializer}
    names = [i.name for i in model_proto.graph.input if i.name not in init]
    try:
        with _time_bound(time_limit), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = burn.onnx.load(model_proto, backend=backend)
            for inputs, expected in sets:
                out = model.run(dict(zip(names, inputs, strict=False)))
                outs = [_to_host(out[name]) for name in model.output_names]
                why = compare(expected, outs)
                if why:
                    return done("wrong", why)
    except _Timeout as exc:
        return done("timeout", str(exc))
    except burn.onnx.UnsupportedOpError as exc:
        return done("unsupported", str(exc))
    except BurnError as exc:
        return done("error", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - a raw exception is what this class counts
        return done("crash", f"{type(exc).__name__}: {exc}")
    return done("pass")


def run_suite(pattern: str = "", backend: str = "ndarray", time_limit: float = TIME_LIMIT_S) -> list[Result]:
    """Every node case (whose name contains `pattern`), in name order."""
    logging.getLogger("burn.onnx").setLevel(logging.WARNING)
    return [run_case(case, backend, time_limit) for case in node_cases(pattern)]


def counts_file(backend: str = "ndarray") -> Path:
    """The file of per-op pass counts on `backend` (``onnx_node_counts.txt`` for ndarray): the
    import guide's op table shows them (``python -m burn.onnx.table --counts FILE``)."""
    return passing_list(backend).with_name(passing_list(backend).name.replace("_passing", "_counts"))


def op_counts(results: Sequence[Result]) -> dict[str, tuple[int, int]]:
    """op -> (cases passed, cases) over the cases whose graph uses the op (a case of several op
    types counts for each)."""
    passed: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for r in results:
        for op in r.op.split("+"):
            total[op] += 1
            passed[op] += r.outcome == "pass"
    return {op: (passed[op], total[op]) for op in sorted(total)}


def write_counts(results: Sequence[Result], path: Path, backend: str) -> None:
    head = (f"# ONNX node test suite on {backend}: op, cases passed, cases using the op (written by\n"
            "# onnx_node_suite.py --write-passing; the import guide's op table shows them)\n")
    path.write_text(head + "".join(f"{op} {p} {t}\n" for op, (p, t) in op_counts(results).items()))


def summary(results: Sequence[Result]) -> dict[str, int]:
    counts = collections.Counter(r.outcome for r in results)
    return {k: counts.get(k, 0) for k in OUTCOMES}


def report(results: Sequence[Result], verbose: bool = False) -> str:
    """The table per op (one row each: counts per outcome) and the totals."""
    by_op: dict[str, list[Result]] = collections.defaultdict(list)
    for r in results:
        by_op[r.op].append(r)
    width = min(max([len(op) for op in by_op] + [2]), 40)
    head = f"{'op':<{width}} " + " ".join(f"{k:>11}" for k in OUTCOMES)
    lines = [head, "-" * len(head)]
    for op in sorted(by_op):
        counts = summary(by_op[op])
        lines.append(f"{op[:width]:<{width}} " + " ".join(f"{counts[k] or '':>11}" for k in OUTCOMES))
        if verbose:
            failed = [r for r in by_op[op] if r.outcome != "pass"]
            lines.extend(f"    {r.outcome:<11} {r.name}: {r.detail}" for r in failed)
    total = summary(results)
    lines.append("-" * len(head))
    lines.append(f"{'total':<{width}} " + " ".join(f"{total[k]:>11}" for k in OUTCOMES))
    lines.append(
        f"{total['pass']} / {len(results)} cases pass; {total['wrong']} wrong, {total['crash']} crash"
    )
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``[-v] [--write-passing] [--backend NAME] [PATTERN]``: the table (``-v``: each case that
    does not pass, with why) on backend NAME (default ndarray); ``--write-passing`` rewrites the
    backend's `passing_list` from this run (all cases only)."""
    if "-h" in argv or "--help" in argv:
        print(main.__doc__)
        return 0
    args = list(argv)
    backend = "ndarray"
    if "--backend" in args:
        i = args.index("--backend")
        if i + 1 >= len(args):
            print("--backend needs a backend name (ndarray, opencl, ...)", file=sys.stderr)
            return 2
        backend = args[i + 1]
        del args[i : i + 2]
    verbose = "-v" in args
    write = "--write-passing" in args
    args = [a for a in args if a not in ("-v", "--write-passing")]
    start = time.perf_counter()
    results = run_suite(args[0] if args else "", backend)
    print(report(results, verbose))
    print(f"{time.perf_counter() - start:.1f} s")
    if write:
        if args:
            print("--write-passing needs the whole suite (no PATTERN)", file=sys.stderr)
            return 2
        target = passing_list(backend)
        target.write_text("".join(f"{r.name}\n" for r in sorted(results, key=lambda r: r.name)
                                  if r.outcome == "pass"))
        write_counts(results, counts_file(backend), backend)
        print(f"wrote {target} and {counts_file(backend)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
