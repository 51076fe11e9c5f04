"""burn-opencl (issue 7), when installed: GEMM 1024x1024 (256 with --quick) against NumPy and torch,
per-op overhead on tiny tensors, element-wise throughput on 1024x1024 (powers with small exponents
and broadcasts, issues 34 and 35; on opencl, fusion(opencl) and ndarray), and the MLP
784-512-512-10 training step on autodiff(opencl) against torch and autodiff(ndarray). Every
burn-opencl timing ends with ``backend.sync()``."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from harness import Row, Settings, Table, setup_torch, time_side_by_side

from sections.mlp import build


def gemm_rows(size: int, settings: Settings, torch: Any) -> tuple[list[Row], list[str]]:
    import burn

    rows, notes = [], []
    for dtype in ("float32",) if settings.quick else ("float32", "float64"):
        backend = burn.backend("opencl", float_dtype=dtype)
        rng = np.random.default_rng(0)
        a_np, b_np = (rng.standard_normal((size, size)).astype(dtype) for _ in range(2))
        a, b = (burn.Tensor.from_data(m, backend=backend) for m in (a_np, b_np))
        xa, xb = (torch.from_numpy(m.copy()) for m in (a_np, b_np)) if torch else (None, None)

        def run_cl(a: Any = a, b: Any = b, backend: Any = backend) -> None:
            a.matmul(b)
            backend.sync()

        fns = {"burn": run_cl, "torch": (lambda xa=xa, xb=xb: xa @ xb) if torch else None}
        t = time_side_by_side(fns | {"numpy": lambda a_np=a_np, b_np=b_np: a_np @ b_np}, settings, warmup=1)
        rows.append(Row(f"GEMM {size}x{size} {dtype}", t["burn"], t["torch"], t["numpy"], unit="ms"))
        flops = 2.0 * size**3
        rates = ", ".join(f"{k} {flops / v / 1e9:.1f}" for k, v in t.items() if v)
        err = float(np.abs(a.matmul(b).to_numpy() - a_np @ b_np).max())
        notes.append(f"GEMM {dtype} GFLOP/s: {rates} (max abs diff vs NumPy {err:.1e})")
    return rows, notes


def overhead_rows(settings: Settings, torch: Any) -> list[Row]:
    import burn

    backend = burn.backend("opencl")
    x_np = np.ones((4, 4), np.float32)
    x = burn.Tensor.from_data(x_np, backend=backend)
    tx = torch.from_numpy(x_np.copy()) if torch else None
    ops = {
        "add": (lambda: x + x, lambda: tx + tx, lambda: x_np + x_np),
        "exp": (lambda: x.exp(), lambda: tx.exp(), lambda: np.exp(x_np)),
        "sum": (lambda: x.sum(), lambda: tx.sum(), lambda: x_np.sum()),
        "matmul": (lambda: x @ x, lambda: tx @ tx, lambda: x_np @ x_np),
    }
    rows = []
    for name, (fb, ft, fn) in ops.items():

        def burn_op(fb: Any = fb) -> None:  # enqueue 100 ops, then wait for the queue once
            for _ in range(100):
                fb()
            backend.sync()

        t = time_side_by_side({"burn": burn_op}, settings)
        r = time_side_by_side({"torch": ft if torch else None, "numpy": fn}, settings)
        burn_t = t["burn"] / 100 if t["burn"] else None
        rows.append(Row(f"{name} 4x4 (opencl: 100 ops + sync, per op)", burn_t, r["torch"], r["numpy"]))
    return rows


def throughput_rows(size: int, settings: Settings) -> list[Row]:
    """One element-wise op over size x size float32 per row: same-shape multiply, powers (small
    integer and half exponents run as products or sqrt, 2.5 as pow), broadcasts (a trailing bias,
    a per-row column, a middle dim, a 1x1). Columns: opencl, fusion(opencl) (when installed),
    ndarray; every OpenCL timing ends with ``backend.sync()``."""
    import burn

    rng = np.random.default_rng(0)
    x_np = (np.abs(rng.standard_normal((size, size))) + 0.1).astype(np.float32)
    arrays = {
        "x": x_np,
        "b": rng.standard_normal((size,)).astype(np.float32),
        "c": rng.standard_normal((size, 1)).astype(np.float32),
        "x3": x_np.reshape(4, size, size // 4),
        "m": rng.standard_normal((4, 1, size // 4)).astype(np.float32),
        "s": np.ones((1, 1), np.float32),
    }
    cases: dict[str, Any] = {
        "x * x": lambda t: t["x"] * t["x"],
        "x ** 2.0": lambda t: t["x"] ** 2.0,
        "x ** 3.0": lambda t: t["x"] ** 3.0,
        "x ** -0.5": lambda t: t["x"] ** -0.5,
        "x ** 2.5 (pow)": lambda t: t["x"] ** 2.5,
        f"x + b, b [{size}]": lambda t: t["x"] + t["b"],
        f"x + c, c [{size}, 1]": lambda t: t["x"] + t["c"],
        f"x + m, [4, {size}, {size // 4}] + [4, 1, {size // 4}]": lambda t: t["x3"] + t["m"],
        "x + s, s [1, 1]": lambda t: t["x"] + t["s"],
    }
    try:
        burn.backend("fusion(opencl)")
        names = {"burn": "opencl", "torch": "fusion(opencl)", "numpy": "ndarray"}
    except Exception:  # burn-fusion not installed
        names = {"burn": "opencl", "numpy": "ndarray"}
    backends = {label: burn.backend(name) for label, name in names.items()}
    tensors = {
        label: {k: burn.Tensor.from_data(a, backend=backend) for k, a in arrays.items()}
        for label, backend in backends.items()
    }
    rows = []
    for case, fn in cases.items():
        runs: dict[str, Any] = {"torch": None}
        for label, backend in backends.items():

            def run(t: Any = tensors[label], backend: Any = backend, fn: Any = fn) -> None:
                out = fn(t)
                backend.sync()
                del out

            runs[label] = run
        t = time_side_by_side(runs, settings, warmup=2)
        rows.append(Row(f"{case} ({size}x{size})", t["burn"], t["torch"], t["numpy"], unit="ms"))
    return rows


def mlp_row(settings: Settings, torch: Any) -> Row:
    import burn

    cl = burn.backend("autodiff(opencl)")
    w = build(burn.backend("autodiff(ndarray)"), torch, [784, 512, 512, 10], 128)
    w_cl = build(cl, None, [784, 512, 512, 10], 128)["burn"]
    assert w_cl is not None

    def step_cl() -> None:
        w_cl.step()
        cl.sync()

    fns = {"burn": step_cl, "torch": w["torch"].step if w["torch"] else None, "numpy": w["burn"].step}
    t = time_side_by_side(fns, settings, warmup=2)  # type: ignore[arg-type]
    return Row("MLP 784-512-512-10 b128 training step", t["burn"], t["torch"], t["numpy"], unit="ms")


def run(settings: Settings) -> list[Table]:
    try:
        import burn

        backend = burn.backend("opencl")
    except Exception as exc:  # not installed, or no OpenCL platform here
        return [Table(f"burn-opencl: not run ({exc})", [])]
    torch = setup_torch()
    settings = dataclasses.replace(settings, repeats=min(settings.repeats, 5))
    device = f"devices: {', '.join(backend.device_names())}; default {backend.default_device()}"
    rows, notes = gemm_rows(256 if settings.quick else 1024, settings, torch)
    labels = ("opencl", "torch", "numpy")
    return [
        Table("burn-opencl GEMM (ms per product)", rows, labels, notes=[device, *notes]),
        Table("burn-opencl per-op overhead, tiny tensors", overhead_rows(settings, torch), labels),
        Table(
            "burn-opencl element-wise throughput (ms)",
            throughput_rows(256 if settings.quick else 1024, settings),
            ("opencl", "fusion(opencl)", "ndarray"),
        ),
        Table(
            "burn-opencl MLP training step",
            [mlp_row(settings, torch)],
            ("autodiff(opencl)", "torch", "autodiff(ndarray)"),
        ),
    ]
