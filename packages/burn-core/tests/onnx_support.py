"""Models of the ONNX import tests, built in PyTorch with random weights and exported with
``torch.onnx.export`` (TorchScript exporter, opset 17) into bytes: nothing is downloaded.

Each builder returns ``(onnx_bytes, inputs)`` with the inputs as NumPy arrays.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the test models are exported from it)")
pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the reference)")

nn = torch.nn
OPSET = 17


def export(
    model: Any, args: tuple[Any, ...], names: list[str], dynamic: dict[str, Any] | None = None, **options: Any
) -> bytes:
    model.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(
            model,
            args,
            buf,
            opset_version=OPSET,
            dynamo=False,
            input_names=names,
            dynamic_axes=dynamic,
            **options,
        )
    return buf.getvalue()


def reference(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's outputs."""
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(session.get_inputs(), inputs, strict=True)}
    return [np.asarray(o) for o in session.run(None, feeds)]


# -- the models -------------------------------------------------------------------------------------
def mlp(seed: int = 0) -> tuple[bytes, list[np.ndarray]]:
    """Gemm, Relu, Tanh on a 2-D batch; MatMul + Add on a 3-D one."""
    torch.manual_seed(seed)

    class Mlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l1, self.l2, self.l3 = nn.Linear(6, 16), nn.Linear(16, 16), nn.Linear(16, 3)

        def forward(self, x: Any, seq: Any) -> Any:
            y = self.l3(torch.tanh(self.l2(torch.relu(self.l1(x)))))
            z = self.l3(torch.relu(self.l2(torch.relu(self.l1(seq)))))
            return y, z

    x = torch.randn(5, 6)
    seq = torch.randn(2, 4, 6)
    return export(Mlp(), (x, seq), ["x", "seq"]), [x.numpy(), seq.numpy()]


def resnet(seed: int = 0) -> tuple[bytes, list[np.ndarray]]:
    """Conv, BatchNormalization, Relu, MaxPool, GlobalAveragePool, Add, Flatten, Gemm (batch norm
    kept as its own op: exported without constant folding)."""
    torch.manual_seed(seed)

    class Block(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x: Any) -> Any:
            return torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem, self.bn = nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.blocks = nn.Sequential(Block(8), Block(8))
            self.gap, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(8, 5)

        def forward(self, x: Any) -> Any:
            x = self.blocks(self.pool(torch.relu(self.bn(self.stem(x)))))
            return self.fc(torch.flatten(self.gap(x), 1))

    model = ResNet()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):  # statistics that are not the identity
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    x = torch.randn(2, 3, 16, 16)
    data = export(
        model, (x,), ["image"], training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False
    )
    return data, [x.numpy()]


class _Gpt(nn.Module):
    """A two-layer GPT-style decoder: token and position embeddings, causal self-attention,
    GELU MLP. `manual_norm` writes layer norm out (ReduceMean, Sub, Pow, Sqrt, Div), the
    causal mask comes from Range + Less (first layer) and ones + Trilu + Equal (second)."""

    def __init__(
        self, vocab: int = 40, dim: int = 16, heads: int = 2, block: int = 12, manual_norm: bool = False
    ) -> None:
        super().__init__()
        self.heads, self.manual = heads, manual_norm
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(block, dim) * 0.1)
        self.layers = nn.ModuleList(
            nn.ModuleDict(
                {
                    "ln1": nn.LayerNorm(dim),
                    "qkv": nn.Linear(dim, 3 * dim),
                    "proj": nn.Linear(dim, dim),
                    "ln2": nn.LayerNorm(dim),
                    "fc1": nn.Linear(dim, 4 * dim),
                    "fc2": nn.Linear(4 * dim, dim),
                }
            )
            for _ in range(2)
        )
        self.ln_f, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def norm(self, ln: Any, x: Any) -> Any:
        if not self.manual:
            return ln(x)
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * ln.weight + ln.bias

    def forward(self, idx: Any) -> Any:
        b, t = idx.shape
        x = self.tok(idx) + self.pos[:t]  # Slice of a param
        for n, layer in enumerate(self.layers):
            h = self.norm(layer["ln1"], x)
            q, k, v = layer["qkv"](h).chunk(3, dim=-1)
            d = q.shape[-1] // self.heads
            q, k, v = (z.reshape(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
            att = q @ k.transpose(-2, -1) / (d**0.5)
            if n == 0:
                i = torch.arange(t)
                mask = i.unsqueeze(1) < i.unsqueeze(0)
            else:
                mask = torch.ones(t, t).tril() == 0
            att = att.masked_fill(mask, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + layer["proj"](y)
            x = x + layer["fc2"](nn.functional.gelu(layer["fc1"](self.norm(layer["ln2"], x))))
        return self.head(self.norm(self.ln_f, x))


def gpt(
    seed: int = 0, manual_norm: bool = False, dynamic: bool = False, seq: int = 8
) -> tuple[bytes, list[np.ndarray]]:
    """With `dynamic`, batch and sequence length are symbolic: the shape computations run at
    call time, and the model takes other lengths than the exported one."""
    torch.manual_seed(seed)
    model = _Gpt(manual_norm=manual_norm)
    idx = torch.randint(0, 40, (2, seq))
    axes = {"idx": {0: "batch", 1: "seq"}} if dynamic else None
    return export(model, (idx,), ["idx"], axes), [idx.numpy()]


def lstm(seed: int = 0, bidirectional: bool = False) -> tuple[bytes, list[np.ndarray]]:
    """Two stacked LSTM layers (batch first) with explicit initial states, or one bidirectional."""
    torch.manual_seed(seed)
    layers = 1 if bidirectional else 2
    model = nn.LSTM(5, 7, num_layers=layers, batch_first=True, bidirectional=bidirectional)
    dirs = 2 if bidirectional else 1
    x, h0, c0 = torch.randn(3, 6, 5), torch.randn(layers * dirs, 3, 7), torch.randn(layers * dirs, 3, 7)
    return export(model, (x, (h0, c0)), ["x", "h0", "c0"]), [x.numpy(), h0.numpy(), c0.numpy()]


def gru(seed: int = 0) -> tuple[bytes, list[np.ndarray]]:
    torch.manual_seed(seed)
    model = nn.GRU(5, 7, batch_first=True)
    x = torch.randn(3, 6, 5)
    return export(model, (x,), ["x"]), [x.numpy()]


MODELS = {
    "mlp": mlp,
    "resnet": resnet,
    "gpt": gpt,
    "gpt-manual-norm": lambda: gpt(manual_norm=True),
    "gpt-dynamic": lambda: gpt(dynamic=True),
    "lstm": lstm,
    "lstm-bidirectional": lambda: lstm(bidirectional=True),
    "gru": gru,
}
