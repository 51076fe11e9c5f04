"""burn-fusion (issue 15), when installed: issue 35's GELU + layer norm chain on 1024x1024 on
fusion(opencl), opencl and ndarray (with ``**`` and with products); GELU(x·w + b) (and its matmul
and element-wise tail alone), layer norm and softmax on 1024x1024 on fusion(opencl) against opencl
(with OpenCL kernel launches counted), the MLP 784-512-512-10
training step on autodiff(fusion(opencl)) against autodiff(ndarray), and an Adam update of 25M
params (6M with --quick) on fusion(opencl) with its launches per step. Columns: fusion, the
unfused contender, and a third one where it applies. Every timing ends with ``backend.sync()``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from harness import Row, Settings, Table, time_side_by_side

from sections.mlp import build


def _count_launches(fn: Callable[[], object]) -> int:
    """OpenCL kernels enqueued by one call of `fn` (pyopencl.Kernel.__call__ counted)."""
    import pyopencl as cl

    original = cl.Kernel.__call__
    count = [0]

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(self, *args, **kwargs)

    cl.Kernel.__call__ = counted
    try:
        fn()
    finally:
        cl.Kernel.__call__ = original
    return count[0]


def _gelu_linear(x: Any, w: Any, b: Any) -> Any:
    import burn

    return burn.activation.gelu(x.matmul(w) + b)


def _matmul(x: Any, w: Any) -> Any:
    return x.matmul(w)


def _gelu_tail(y: Any, b: Any) -> Any:
    import burn

    return burn.activation.gelu(y + b)


def _softmax(x: Any) -> Any:
    import burn

    return burn.activation.softmax(x, 1)


def _layer_norm(x: Any, gamma: Any, beta: Any) -> Any:
    centered = x - x.mean_dim(1)
    var = (centered * centered).mean_dim(1)
    return centered / (var + 1e-5).sqrt() * gamma + beta


def _gelu_norm(x: Any, gamma: Any, beta: Any) -> Any:
    """Issue 35's chain: GELU (tanh form, written out with ``**``) then a layer norm with ``**``."""
    y = x * 0.5 * (((x + x**3.0 * 0.044715) * 0.7978845608028654).tanh() + 1.0)
    centered = y - y.mean_dim(1)
    return centered * ((centered**2.0).mean_dim(1) + 1e-5) ** -0.5 * gamma + beta


def _gelu_norm_products(x: Any, gamma: Any, beta: Any) -> Any:
    """`_gelu_norm` with the powers written as products and a square root."""
    y = x * 0.5 * (((x + x * x * x * 0.044715) * 0.7978845608028654).tanh() + 1.0)
    centered = y - y.mean_dim(1)
    return centered / ((centered * centered).mean_dim(1) + 1e-5).sqrt() * gamma + beta


def chain_rows(size: int, settings: Settings) -> list[Row]:
    """`_gelu_norm` and `_gelu_norm_products` over size x size on fusion(opencl), opencl, ndarray."""
    import burn

    backends = {
        "burn": burn.backend("fusion(opencl)"),
        "torch": burn.backend("opencl"),
        "numpy": burn.backend("ndarray"),
    }
    rng = np.random.default_rng(0)
    arrays = (
        rng.standard_normal((size, size)).astype(np.float32),
        rng.standard_normal((size,)).astype(np.float32),
        rng.standard_normal((size,)).astype(np.float32),
    )
    rows = []
    for case, fn in (
        (f"GELU + layer norm chain, with ** {size}x{size}", _gelu_norm),
        (f"GELU + layer norm chain, products {size}x{size}", _gelu_norm_products),
    ):
        runs = {}
        for label, backend in backends.items():
            args = [burn.Tensor.from_data(a, backend=backend) for a in arrays]

            def run(args: list[Any] = args, backend: Any = backend, fn: Any = fn) -> None:
                out = fn(*args)
                backend.sync()
                del out

            runs[label] = run
        t = time_side_by_side(runs, settings, warmup=2)  # type: ignore[arg-type]
        rows.append(Row(case, t["burn"], t["torch"], t["numpy"], unit="ms"))
    return rows


def op_rows(size: int, settings: Settings) -> tuple[list[Row], list[str]]:
    import burn

    plain, fused = burn.backend("opencl"), burn.backend("fusion(opencl)")
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((size, size)).astype(np.float32)
    w_np = (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
    v_np = rng.standard_normal((size,)).astype(np.float32)
    rows, notes = [], []
    cases = {
        f"GELU(x·w + b) {size}x{size}": (_gelu_linear, (x_np, w_np, v_np)),
        f"  its matmul x·w alone {size}x{size}": (_matmul, (x_np, w_np)),
        f"  its tail GELU(y + b) alone {size}x{size}": (_gelu_tail, (x_np, v_np)),
        f"layer norm {size}x{size}": (_layer_norm, (x_np, v_np, v_np * 0.5)),
        f"softmax along dim 1 {size}x{size}": (_softmax, (x_np,)),
    }
    for case, (fn, arrays) in cases.items():
        runs = {}
        for label, backend in (("fusion", fused), ("opencl", plain)):
            args = [burn.Tensor.from_data(a, backend=backend) for a in arrays]

            def run(args: list[Any] = args, backend: Any = backend, fn: Any = fn) -> None:
                out = fn(*args)  # held through sync: a value nobody holds is never computed
                backend.sync()
                del out

            runs[label] = run
        t = time_side_by_side({"burn": runs["fusion"], "torch": runs["opencl"]}, settings, warmup=2)
        rows.append(Row(case, t["burn"], t["torch"], None, unit="ms"))
        counts = {label: _count_launches(run) for label, run in runs.items()}
        notes.append(f"{case}: kernel launches fusion(opencl) {counts['fusion']}, opencl {counts['opencl']}")
    return rows, notes


def mlp_row(settings: Settings) -> Row:
    import burn

    fused = burn.backend("autodiff(fusion(opencl))")
    w_nd = build(burn.backend("autodiff(ndarray)"), None, [784, 512, 512, 10], 128)["burn"]
    w_fu = build(fused, None, [784, 512, 512, 10], 128)["burn"]
    w_cl = build(burn.backend("autodiff(opencl)"), None, [784, 512, 512, 10], 128)["burn"]
    assert w_nd is not None and w_fu is not None and w_cl is not None

    def step_fused() -> None:
        w_fu.step()
        fused.sync()

    def step_cl() -> None:
        w_cl.step()
        burn.backend("opencl").sync()

    fns = {"burn": step_fused, "torch": step_cl, "numpy": w_nd.step}
    t = time_side_by_side(fns, settings, warmup=2)  # type: ignore[arg-type]
    return Row("MLP 784-512-512-10 b128 training step", t["burn"], t["torch"], t["numpy"], unit="ms")


def adam_row(n: int, settings: Settings) -> tuple[Row, str]:
    import burn
    from burn.optim.transforms import adam_apply

    rows = {}
    launches = {}
    for label, name in (("fusion", "fusion(opencl)"), ("opencl", "opencl")):
        backend = burn.backend(name)
        param = burn.Tensor.from_data(np.ones(n, np.float32), backend=backend)
        grad = burn.Tensor.from_data(np.full(n, 0.5, np.float32), backend=backend)
        box: dict[str, Any] = {"p": param, "state": None}

        def step(box: dict[str, Any] = box, grad: Any = grad, backend: Any = backend) -> None:
            box["p"], box["state"] = adam_apply(box["p"], grad, box["state"], 0.9, 0.999, 1e-5, False, 1e-3)
            backend.sync()

        step()  # the first step has no moments yet
        rows[label] = step
        launches[label] = _count_launches(step)
    t = time_side_by_side({"burn": rows["fusion"], "torch": rows["opencl"]}, settings, warmup=1)
    note = (
        f"Adam {n / 1e6:.0f}M params: kernel launches per step fusion(opencl) {launches['fusion']}, "
        f"opencl {launches['opencl']}"
    )
    return Row(f"Adam step, {n / 1e6:.0f}M float32 params", t["burn"], t["torch"], None, unit="ms"), note


def run(settings: Settings) -> list[Table]:
    try:
        import burn

        burn.backend("fusion(opencl)")
    except Exception as exc:  # not installed, or no OpenCL platform here
        return [Table(f"burn-fusion: not run ({exc})", [])]
    settings = dataclasses.replace(settings, repeats=min(settings.repeats, 5))
    rows, notes = op_rows(256 if settings.quick else 1024, settings)
    adam, adam_note = adam_row(6_000_000 if settings.quick else 25_000_000, settings)
    return [
        Table(
            "burn-fusion: GELU + layer norm chain (ms)",
            chain_rows(256 if settings.quick else 1024, settings),
            ("fusion(opencl)", "opencl", "ndarray"),
        ),
        Table("burn-fusion element-wise chains (ms)", [*rows, adam], ("fusion(opencl)", "opencl", "-"),
              notes=[*notes, adam_note]),
        Table(
            "burn-fusion MLP training step",
            [mlp_row(settings)],
            ("autodiff(fusion(opencl))", "autodiff(opencl)", "autodiff(ndarray)"),
        ),
    ]
