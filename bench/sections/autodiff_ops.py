"""Per-op cost with grad: burn autodiff(ndarray) vs torch (requires_grad) on tiny tensors: tracked
forward ops, forward + backward of one op, and a chain of 20 ops forward + backward. The NumPy
column is the untracked forward op (no graph at all), for scale."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from harness import Fn, Row, Settings, Table, setup_torch, timed_row

Op = Callable[[Any, Any], Any]

OPS: dict[str, Op] = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "matmul": lambda x, y: x @ y,
    "tanh(x*y)": lambda x, y: (x * y).tanh(),
}


def chain(x: Any, y: Any) -> Any:
    """20 tiny ops."""
    h = x
    for _ in range(5):
        h = (h * y + x).tanh() - y
    return h


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("autodiff(ndarray)"), setup_torch()
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    a = burn.Tensor.from_data(a_np, backend=backend).require_grad()
    b = burn.Tensor.from_data(b_np, backend=backend).require_grad()
    ta = torch.tensor(a_np, requires_grad=True) if torch else None
    tb = torch.tensor(b_np, requires_grad=True) if torch else None

    def burn_fb(op: Op) -> Fn:
        def fb() -> object:
            grads = op(a, b).sum().backward()
            return a.grad(grads), b.grad(grads)

        return fb

    def torch_fb(op: Op) -> Fn | None:
        return (lambda: torch.autograd.grad(op(ta, tb).sum(), (ta, tb))) if torch else None

    def numpy_fwd(op: Op) -> Fn:
        return lambda: op(a_np, b_np) if op is not OPS["tanh(x*y)"] else np.tanh(a_np * b_np)

    forward: list[Row] = []
    both: list[Row] = []
    for name, op in OPS.items():
        fns = {"burn": lambda op=op: op(a, b), "torch": (lambda op=op: op(ta, tb)) if torch else None}
        forward.append(timed_row(f"{name} fwd (tracked) 4x4", fns | {"numpy": numpy_fwd(op)}, settings, "us"))
        fns = {"burn": burn_fb(op), "torch": torch_fb(op), "numpy": None}
        both.append(timed_row(f"{name} fwd+bwd 4x4", fns, settings, "us"))
    both.append(
        timed_row(
            "chain of 20 ops fwd+bwd 4x4", {"burn": burn_fb(chain), "torch": torch_fb(chain)}, settings, "us"
        )
    )
    return [
        Table("per-op overhead with grad: tracked forward (numpy = untracked op)", forward),
        Table("per-op overhead with grad: forward + backward (grads read back)", both),
    ]
