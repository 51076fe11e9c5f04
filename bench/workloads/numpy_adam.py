"""The floor's optimizer: Adam in place on NumPy arrays, one scratch buffer per param (no
allocation per step)."""

from __future__ import annotations

import math

import numpy as np

from workloads.common import BETA_1, BETA_2, EPS, LR


class NumpyAdam:
    """Adam over `params` (updated in place), with burn's and torch's update rule."""

    def __init__(self, params: list[np.ndarray], lr: float = LR) -> None:
        self.params = params
        self.lr = lr
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.tmp = [np.empty_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        bc2_sqrt = math.sqrt(1.0 - BETA_2**self.t)
        step_size = self.lr * bc2_sqrt / (1.0 - BETA_1**self.t)
        for p, g, m, v, t in zip(self.params, grads, self.m, self.v, self.tmp, strict=True):
            m *= BETA_1
            np.multiply(g, 1.0 - BETA_1, out=t)
            m += t
            v *= BETA_2
            np.multiply(g, g, out=t)
            t *= 1.0 - BETA_2
            v += t
            np.sqrt(v, out=t)
            t += EPS * bc2_sqrt
            np.divide(m, t, out=t)
            t *= step_size
            p -= t
