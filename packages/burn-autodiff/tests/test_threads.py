"""Two threads training two models at once on one backend get the results of running them one
after the other: all graph state is per graph (no global tape)."""

from __future__ import annotations

import sys
import threading

import numpy as np
from conftest import host, leaf, tensor

from burn import activation
from burn_autodiff import Autodiff


def train(B: Autodiff, seed: int, steps: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = tensor(B, rng.standard_normal((8, 4)))
    y = tensor(B, rng.standard_normal((8, 2)))
    params = [leaf(B, rng.standard_normal((4, 5))), leaf(B, np.zeros(5)),
              leaf(B, rng.standard_normal((5, 2))), leaf(B, np.zeros(2))]
    for _ in range(steps):
        w1, b1, w2, b2 = params
        h = activation.gelu(x @ w1 + b1)
        loss = ((h @ w2 + b2 - y) ** 2).mean()
        grads = loss.backward()
        params = [leaf(B, host(p) - 0.05 * host(p.grad(grads))) for p in params]
    return [host(p) for p in params]


def test_two_threads_match_sequential_runs(B: Autodiff) -> None:
    steps = 150
    expected = {seed: train(B, seed, steps) for seed in (1, 2)}
    results: dict[int, list[np.ndarray]] = {}
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            results[seed] = train(B, seed, steps)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible to interleave graphs
    try:
        threads = [threading.Thread(target=worker, args=(seed,)) for seed in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    for seed in (1, 2):
        for got, want in zip(results[seed], expected[seed], strict=True):
            np.testing.assert_array_equal(got, want)
