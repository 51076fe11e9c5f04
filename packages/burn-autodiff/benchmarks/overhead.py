"""Autodiff overhead on tiny tensors and a 784-512-512-10 MLP, side by side with PyTorch (CPU).

Run: ``python packages/burn-autodiff/benchmarks/overhead.py`` (with burn-core, burn-ndarray and
burn-autodiff importable, and torch installed). Prints microseconds per iteration (best of
several timeit repeats) and the burn / torch ratio.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import numpy as np


def best_pair_us(
    a: Callable[[], object], b: Callable[[], object], number: int, repeat: int = 15
) -> tuple[float, float]:
    """Best time per call of `a` and of `b` in microseconds, their runs interleaved so that a
    change of load on the machine hits both alike."""
    best_a = best_b = float("inf")
    for _ in range(repeat):
        best_a = min(best_a, timeit.timeit(a, number=number))
        best_b = min(best_b, timeit.timeit(b, number=number))
    return best_a / number * 1e6, best_b / number * 1e6


def main() -> None:
    import torch

    import burn
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray

    torch.set_num_threads(1)
    B = Autodiff(NdArray())
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((2, 2)).astype(np.float32)
    b_np = rng.standard_normal((2, 2)).astype(np.float32)
    a = burn.Tensor.from_data(a_np, backend=B).require_grad()
    b = burn.Tensor.from_data(b_np, backend=B).require_grad()
    ta = torch.tensor(a_np, requires_grad=True)
    tb = torch.tensor(b_np, requires_grad=True)

    rows: list[tuple[str, float, float]] = []

    def bench(label: str, burn_fn: Callable[[], object], torch_fn: Callable[[], object], number: int) -> None:
        rows.append((label, *best_pair_us(burn_fn, torch_fn, number)))

    # forward only, one op on tracked 2x2 tensors
    bench("add fwd (tracked)", lambda: a + b, lambda: ta + tb, 4000)
    bench("mul fwd (tracked)", lambda: a * b, lambda: ta * tb, 4000)
    bench("matmul fwd (tracked)", lambda: a @ b, lambda: ta @ tb, 4000)
    bench("exp fwd (tracked)", lambda: a.exp(), lambda: ta.exp(), 4000)

    # forward + backward of one op (+ the sum making the root scalar), gradients read back
    def burn_fb(op: Callable[[object, object], object]) -> Callable[[], object]:
        def run() -> object:
            grads = op(a, b).sum().backward()
            return a.grad(grads), b.grad(grads)
        return run

    def torch_fb(op: Callable[[object, object], object]) -> Callable[[], object]:
        def run() -> object:
            return torch.autograd.grad(op(ta, tb).sum(), (ta, tb))
        return run

    for label, op in [("add", lambda x, y: x + y), ("mul", lambda x, y: x * y),
                      ("matmul", lambda x, y: x @ y), ("tanh(x*y)", lambda x, y: (x * y).tanh())]:
        bench(f"{label} fwd+bwd", burn_fb(op), torch_fb(op), 1000)

    # a chain of 20 tiny ops, forward + backward: per-op overhead in a real graph
    def chain_burn() -> object:
        x = a
        for _ in range(5):
            x = (x * b + a).tanh() - b
        grads = x.sum().backward()
        return a.grad(grads)

    def chain_torch() -> object:
        x = ta
        for _ in range(5):
            x = (x * tb + ta).tanh() - tb
        return torch.autograd.grad(x.sum(), (ta,))

    bench("chain of 20 ops fwd+bwd", chain_burn, chain_torch, 200)

    # 784-512-512-10 MLP, batch 128, forward + backward (cross-entropy-free: sum of log_softmax)
    sizes = [784, 512, 512, 10]
    pairs = list(zip(sizes, sizes[1:], strict=False))
    ws = [(rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32) for i, o in pairs]
    bs = [np.zeros((o,), np.float32) for o in sizes[1:]]
    xb = rng.standard_normal((128, 784)).astype(np.float32)
    bw = [burn.Tensor.from_data(w, backend=B).require_grad() for w in ws]
    bb = [burn.Tensor.from_data(v, backend=B).require_grad() for v in bs]
    bx = burn.Tensor.from_data(xb, backend=B)
    tw = [torch.tensor(w, requires_grad=True) for w in ws]
    tbias = [torch.tensor(v, requires_grad=True) for v in bs]
    tx = torch.tensor(xb)
    from burn import activation

    def mlp_burn() -> object:
        h = bx
        for i, (w, v) in enumerate(zip(bw, bb, strict=True)):
            h = h @ w + v
            if i < 2:
                h = activation.relu(h)
        loss = activation.log_softmax(h, 1).mean()
        grads = loss.backward()
        return [w.grad(grads) for w in bw]

    def mlp_torch() -> object:
        h = tx
        for i, (w, v) in enumerate(zip(tw, tbias, strict=True)):
            h = h @ w + v
            if i < 2:
                h = torch.relu(h)
        loss = torch.log_softmax(h, 1).mean()
        return torch.autograd.grad(loss, tw)

    bench("MLP 784-512-512-10 b128 fwd+bwd", mlp_burn, mlp_torch, 3)

    print(f"{'benchmark':36} {'burn us':>10} {'torch us':>10} {'ratio':>7}")
    for label, ours, theirs in rows:
        print(f"{label:36} {ours:10.2f} {theirs:10.2f} {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
