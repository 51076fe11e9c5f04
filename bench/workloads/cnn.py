"""Small CNN on 1x28x28 inputs: conv3x3(1->32) + ReLU + maxpool2, conv3x3(32->64) + ReLU + maxpool2,
Linear(1600->128) + ReLU, Linear(128->10); cross-entropy and Adam."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from workloads.common import Workload, burn_trained, torch_trained, uniform_init
from workloads.numpy_adam import NumpyAdam

C1, C2, HIDDEN, CLASSES, FLAT = 32, 64, 128, 10, 64 * 5 * 5


def init_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Conv weights [out, in, kh, kw]; Linear weights [in, out] (burn's layout)."""
    rng = np.random.default_rng(seed)
    return {
        "conv1.w": uniform_init(rng, (C1, 1, 3, 3), 9),
        "conv1.b": uniform_init(rng, (C1,), 9),
        "conv2.w": uniform_init(rng, (C2, C1, 3, 3), C1 * 9),
        "conv2.b": uniform_init(rng, (C2,), C1 * 9),
        "fc1.w": uniform_init(rng, (FLAT, HIDDEN), FLAT),
        "fc1.b": uniform_init(rng, (HIDDEN,), FLAT),
        "fc2.w": uniform_init(rng, (HIDDEN, CLASSES), HIDDEN),
        "fc2.b": uniform_init(rng, (CLASSES,), HIDDEN),
    }


def burn_cnn(
    backend: Any, w: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray, autocast: str | None = None
) -> Workload:
    """burn: `nn.Conv2d`, `nn.MaxPool2d`, `nn.Linear` in a `Module`; `CrossEntropyLoss`; Adam."""
    from burn import Tensor, activation, nn
    from burn.module import Module, Param

    class Cnn(Module):
        conv1: nn.Conv2d
        conv2: nn.Conv2d
        pool: nn.MaxPool2d
        fc1: nn.Linear
        fc2: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            x = self.pool(activation.relu(self.conv1(x)))
            x = self.pool(activation.relu(self.conv2(x)))
            x = x.reshape((x.shape[0], FLAT))
            return self.fc2(activation.relu(self.fc1(x)))

    device = backend.default_device()

    def param(name: str) -> Param:
        return Param.from_tensor(Tensor.from_data(w[name], device=device))

    model = Cnn(
        nn.Conv2d(param("conv1.w"), param("conv1.b")),
        nn.Conv2d(param("conv2.w"), param("conv2.b")),
        nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init(),
        nn.Linear(param("fc1.w"), param("fc1.b")),
        nn.Linear(param("fc2.w"), param("fc2.b")),
    )
    return burn_trained(backend, model, x_np, y_np, autocast=autocast)


def torch_cnn(
    torch: Any, w: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray, device: str = "cpu",
    autocast: str | None = None,
) -> Workload:
    """PyTorch eager with the same layers and weights."""
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, C1, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(C1, C2, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(FLAT, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, CLASSES),
    )
    with torch.no_grad():
        for layer, name in ((model[0], "conv1"), (model[3], "conv2"), (model[7], "fc1"), (model[9], "fc2")):
            weight = w[f"{name}.w"]
            layer.weight.copy_(torch.from_numpy(weight.T.copy() if weight.ndim == 2 else weight))
            layer.bias.copy_(torch.from_numpy(w[f"{name}.b"]))
    return torch_trained(torch, model, x_np, y_np, device, autocast=autocast)


# --- the NumPy floor: NHWC inside, convolution as as_strided windows + one GEMM ---------------


def _im2col(x: np.ndarray, k: int) -> np.ndarray:
    """[N, H, W, C] -> [N*OH*OW, k*k*C] windows of a valid k x k convolution (one copy)."""
    n, h, w, c = x.shape
    oh, ow = h - k + 1, w - k + 1
    s = x.strides
    windows = as_strided(x, (n, oh, ow, k, k, c), (s[0], s[1], s[2], s[1], s[2], s[3]))
    return windows.reshape(n * oh * ow, k * k * c)


def _col2im(dcols: np.ndarray, shape: tuple[int, ...], k: int) -> np.ndarray:
    """Adjoint of `_im2col`: sum window gradients back into an [N, H, W, C] gradient."""
    n, h, w, c = shape
    oh, ow = h - k + 1, w - k + 1
    d = dcols.reshape(n, oh, ow, k, k, c)
    dx = np.zeros(shape, dtype=dcols.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, i : i + oh, j : j + ow, :] += d[:, :, :, i, j, :]
    return dx


def _pool(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 max pool, stride 2 (odd edges dropped): returns the output and the max mask."""
    n, h, w, c = x.shape
    h2, w2 = h // 2, w // 2
    xr = x[:, : 2 * h2, : 2 * w2, :].reshape(n, h2, 2, w2, 2, c)
    out = xr.max(axis=(2, 4))
    return out, xr == out[:, :, None, :, None, :]


def _unpool(d: np.ndarray, mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    n, h2, w2, c = d.shape
    dx = np.zeros(shape, dtype=d.dtype)
    dx[:, : 2 * h2, : 2 * w2, :] = (mask * d[:, :, None, :, None, :]).reshape(n, 2 * h2, 2 * w2, c)
    return dx


def numpy_cnn(w: dict[str, np.ndarray], x_nchw: np.ndarray, y: np.ndarray) -> Workload:
    """The floor: forward and backward by hand; params kept in GEMM-ready layouts."""
    k1 = np.ascontiguousarray(w["conv1.w"].transpose(0, 2, 3, 1).reshape(C1, -1))
    k2 = np.ascontiguousarray(w["conv2.w"].transpose(0, 2, 3, 1).reshape(C2, -1))
    # fc1 rows follow NCHW flattening (c, h, w); the floor flattens NHWC (h, w, c)
    f1 = np.ascontiguousarray(w["fc1.w"].reshape(C2, 5, 5, HIDDEN).transpose(1, 2, 0, 3).reshape(FLAT, -1))
    params = [k1, w["conv1.b"].copy(), k2, w["conv2.b"].copy(), f1, w["fc1.b"].copy()]
    params += [w["fc2.w"].copy(), w["fc2.b"].copy()]
    k1, b1, k2, b2, f1, c1, f2, c2 = params
    x = np.ascontiguousarray(x_nchw.transpose(0, 2, 3, 1))
    n = x.shape[0]
    rows = np.arange(n)
    optimizer = NumpyAdam(params)

    def forward() -> tuple[dict[str, Any], float]:
        cols1 = _im2col(x, 3)
        a1 = np.maximum(cols1 @ k1.T + b1, 0.0).reshape(n, 26, 26, C1)
        p1, m1 = _pool(a1)
        cols2 = _im2col(p1, 3)
        a2 = np.maximum(cols2 @ k2.T + b2, 0.0).reshape(n, 11, 11, C2)
        p2, m2 = _pool(a2)
        flat = p2.reshape(n, FLAT)
        h = np.maximum(flat @ f1 + c1, 0.0)
        logits = h @ f2 + c2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - shifted[rows, y]))
        saved = dict(cols1=cols1, a1=a1, m1=m1, p1=p1, cols2=cols2, a2=a2, m2=m2, flat=flat, h=h, p=e / s)
        return saved, loss

    def fwd_bwd() -> list[np.ndarray]:
        t, _ = forward()
        d = t["p"]
        d[rows, y] -= 1.0
        d /= n
        g_f2, g_c2 = t["h"].T @ d, d.sum(axis=0)
        d = d @ f2.T
        d *= t["h"] > 0
        g_f1, g_c1 = t["flat"].T @ d, d.sum(axis=0)
        d = _unpool((d @ f1.T).reshape(n, 5, 5, C2), t["m2"], t["a2"].shape)
        d *= t["a2"] > 0
        d2 = d.reshape(-1, C2)
        g_k2, g_b2 = d2.T @ t["cols2"], d2.sum(axis=0)
        d = _unpool(_col2im(d2 @ k2, t["p1"].shape, 3), t["m1"], t["a1"].shape)
        d *= t["a1"] > 0
        d1 = d.reshape(-1, C1)
        g_k1, g_b1 = d1.T @ t["cols1"], d1.sum(axis=0)
        return [g_k1, g_b1, g_k2, g_b2, g_f1, g_c1, g_f2, g_c2]

    return Workload(lambda: optimizer.step(fwd_bwd()), fwd_bwd, lambda: forward()[1])
