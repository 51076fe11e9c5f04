"""Real architectures for the model-level bench (issue 34): each built in PyTorch with random
weights from its constructor (fixed seed, nothing downloaded), exported to ONNX (opset 17, cached
on disk), and run by burn (`burn.onnx.load`), onnxruntime and torch eager on the same inputs.

Architectures come from `transformers` where it has them (ResNet, EfficientNet, ConvNeXt, ViT,
BERT, GPT-2); MobileNetV3-small (`workloads.mobilenet`) and the LSTM language model are written
here with ``torch.nn``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workloads.common import BETA_1, BETA_2, EPS, Workload, burn_trained, torch_trained

OPSET = 17
TRAIN_LR = 1e-5
IMAGE, CLASSES = 224, 1000


@dataclass(frozen=True)
class ModelSpec:
    """One architecture: `config` keys the export cache with the constructors' source;
    `tokens` is the vocabulary size of a token model (its input is int64 ids ``[batch, seq]``),
    0 for an image model (input ``[batch, 3, 224, 224]``)."""

    name: str
    config: dict[str, Any]
    tokens: int = 0
    seq: int = 0
    label: str = field(default="", compare=False)

    def title(self) -> str:
        return self.label or self.name

    def input(self, batch: int, seed: int = 1) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if self.tokens:
            return rng.integers(0, self.tokens, size=(batch, self.seq)).astype(np.int64)
        return rng.standard_normal((batch, 3, IMAGE, IMAGE), dtype=np.float32)

    def target(self, batch: int, seed: int = 2) -> np.ndarray:
        """Class labels (image models) or next-token ids ``[batch, seq]`` (language models)."""
        rng = np.random.default_rng(seed)
        if self.tokens:
            return rng.integers(0, self.tokens, size=(batch, self.seq)).astype(np.int64)
        return rng.integers(0, CLASSES, size=batch).astype(np.int64)


RESNET_18 = {"depths": [2, 2, 2, 2], "hidden_sizes": [64, 128, 256, 512], "layer_type": "basic"}
EFFICIENTNET_B0 = {"width_coefficient": 1.0, "depth_coefficient": 1.0, "hidden_dim": 1280}
BERT = {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 1024}
GPT2 = {"n_embd": 256, "n_layer": 4, "n_head": 4}
LSTM_LM = {"vocab": 10000, "embed": 256, "hidden": 256, "layers": 2}
VIT_TINY = {"hidden_size": 192, "num_hidden_layers": 12, "num_attention_heads": 3, "intermediate_size": 768}

SPECS = {
    s.name: s
    for s in (
        ModelSpec("resnet18", RESNET_18),
        ModelSpec("mobilenet_v3_small", {"table": "Howard et al. 2019, table 2"}),
        ModelSpec("efficientnet_b0", EFFICIENTNET_B0),
        ModelSpec("convnext_tiny", {"depths": [3, 3, 9, 3], "hidden_sizes": [96, 192, 384, 768]}),
        ModelSpec("vit_tiny", VIT_TINY, label="vit_tiny (patch16, 224)"),
        ModelSpec("vit_base", {"hidden_size": 768, "num_hidden_layers": 12}, label="vit_base (patch16, 224)"),
        ModelSpec("bert", BERT, tokens=30522, seq=128, label="bert (4 layers, 256, seq 128)"),
        ModelSpec("gpt2", GPT2, tokens=50257, seq=128, label="gpt2 (4 layers, 256, seq 128)"),
        ModelSpec("lstm_lm", LSTM_LM, tokens=LSTM_LM["vocab"], seq=64, label="lstm_lm (2x256, seq 64)"),
    )
}


def build_torch(torch: Any, spec: ModelSpec) -> Any:
    """The model in eval mode (batch norm on running statistics, dropout off), seeded, returning
    one tensor: logits (classifiers and language models) or the last hidden state (BERT)."""
    torch.manual_seed(0)
    c = spec.config
    if spec.name == "mobilenet_v3_small":
        from workloads.mobilenet import mobilenet_v3_small

        return _calibrated(torch, mobilenet_v3_small(torch, CLASSES))
    if spec.name == "lstm_lm":
        return _lstm_lm(torch, c).eval()
    import transformers as tf

    image = {"num_labels": CLASSES}
    hf: Any
    if spec.name == "resnet18":
        hf = tf.ResNetForImageClassification(tf.ResNetConfig(**c, **image))
    elif spec.name == "efficientnet_b0":
        hf = tf.EfficientNetForImageClassification(tf.EfficientNetConfig(**c, image_size=IMAGE, **image))
        # its pooler, AvgPool2d(kernel 1280, ceil_mode) over the 7x7 map, is exported as is: ONNX's
        # ceil-mode AveragePool makes it one window over the map, a global average
        # its init draws batch-norm scales from N(0, 0.02); PyTorch's own init (scale 1) instead
        for module in hf.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.reset_parameters()
    elif spec.name == "convnext_tiny":
        hf = tf.ConvNextForImageClassification(tf.ConvNextConfig(**c, **image))
    elif spec.name.startswith("vit"):
        config = tf.ViTConfig(**c, image_size=IMAGE, patch_size=16, attn_implementation="eager", **image)
        hf = tf.ViTForImageClassification(config)
    elif spec.name == "bert":
        hf = tf.BertModel(tf.BertConfig(**c, attn_implementation="eager"), add_pooling_layer=False)
    elif spec.name == "gpt2":
        hf = tf.GPT2LMHeadModel(tf.GPT2Config(**c, use_cache=False, attn_implementation="eager"))
        # an all-ones attention mask: without one, transformers looks for packed sequences with
        # torch.diff, which the ONNX exporter has no symbolic for
        return _first_output(torch, hf, mask=True).eval()
    else:
        raise KeyError(f"no model named {spec.name!r}; known: {', '.join(SPECS)}")
    return _calibrated(torch, _first_output(torch, hf))


def _calibrated(torch: Any, model: Any) -> Any:
    """`model` in eval mode, its batch-norm running statistics those of one random batch.

    With random weights and the initial statistics (mean 0, variance 1), activations shrink layer
    after layer (EfficientNet-B0's logits come out near 1e-26, its inner values subnormal, which
    would time the CPU's subnormal path and leave nothing for the agreement check to compare).
    Statistics taken from data keep every layer near unit scale, as in a trained model."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if norms:
        for norm in norms:
            norm.reset_running_stats()
            norm.momentum = None  # a plain average over the batches seen: here the one batch
        model.train()
        with torch.no_grad():
            model(torch.randn(8, 3, IMAGE, IMAGE))
    return model.eval()


def _first_output(torch: Any, hf: Any, mask: bool = False) -> Any:
    base: Any = torch.nn.Module

    class FirstOutput(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.model = hf

        def forward(self, x: Any) -> Any:
            kw = {"attention_mask": torch.ones_like(x)} if mask else {}
            return self.model(x, return_dict=False, **kw)[0]

    return FirstOutput()


def _lstm_lm(torch: Any, c: dict[str, int]) -> Any:
    nn = torch.nn
    base: Any = nn.Module

    class LstmLM(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(c["vocab"], c["embed"])
            self.lstm = nn.LSTM(c["embed"], c["hidden"], c["layers"], batch_first=True)
            self.head = nn.Linear(c["hidden"], c["vocab"])

        def forward(self, ids: Any) -> Any:
            return self.head(self.lstm(self.embed(ids))[0])

    return LstmLM()


def cache_dir() -> Path:
    """Where exported models are kept (BURN_BENCH_CACHE, else a folder in the temp dir)."""
    path = Path(os.environ.get("BURN_BENCH_CACHE") or Path(tempfile.gettempdir()) / "burn-bench-onnx")
    path.mkdir(parents=True, exist_ok=True)
    return path


def export(torch: Any, spec: ModelSpec, batch: int, *, training: bool = False) -> Path:
    """The model exported to ONNX with static shapes for `batch`, from the cache when there.

    The inference export folds constants, which lets the exporter merge each batch norm into its
    convolution, as a deployed model would be. The training export does not fold (each batch
    norm stays a node on running statistics, and weights tied in PyTorch stay one initializer), so
    burn trains the same parameters as PyTorch."""
    import transformers

    key = repr((spec.name, sorted(spec.config.items()), spec.seq, batch, training, OPSET))
    key += torch.__version__ + transformers.__version__
    for source in ("models.py", "mobilenet.py"):  # the constructors: edit them, export anew
        key += (Path(__file__).parent / source).read_text()
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    stem = f"{spec.name}-b{batch}-{'train' if training else 'infer'}"
    path = cache_dir() / f"{stem}-{digest}.onnx"
    if path.exists():
        return path
    for stale in cache_dir().glob(f"{stem}-*.onnx"):  # exports of older code (ViT-base: 346 MB)
        stale.unlink(missing_ok=True)
    model = build_torch(torch, spec)
    kw: dict[str, Any] = {}
    if training:
        # The exporter merges initializers of equal values (every zero bias, every unit norm
        # scale of a shape into one) unless the model it is given is training; burn would then
        # train one shared param where PyTorch trains many. Marking the outer wrapper alone as
        # training keeps them apart (weights tied in PyTorch still become one initializer),
        # while every inner module, batch norm and dropout included, is traced in eval mode.
        model.training = True
        kw["training"] = torch.onnx.TrainingMode.PRESERVE
    x = torch.from_numpy(spec.input(batch))
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's and legacy exporter's warnings
        torch.onnx.export(
            model, (x,), str(tmp), opset_version=OPSET, dynamo=False, input_names=["x"],
            output_names=["y"], do_constant_folding=not training, **kw,
        )  # fmt: skip
    os.replace(tmp, path)
    return path


Fn = Callable[[], object]


@dataclass
class Inference:
    """One call per contender on the same input, and their outputs for the agreement check."""

    fns: dict[str, Fn]
    outputs: dict[str, np.ndarray]


def inference(torch: Any, spec: ModelSpec, batch: int, threads: int) -> Inference:
    """burn (ndarray), onnxruntime (`threads` intra-op threads, 1 inter-op) and torch eager
    (`inference_mode`) on the same exported model and input."""
    import onnxruntime as ort

    import burn
    import burn.onnx

    path = export(torch, spec, batch)
    x_np = spec.input(batch)
    model = burn.onnx.load(path, backend="ndarray")
    x_burn = burn.Tensor.from_data(x_np, backend=model.backend)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x_np}
    net, x_torch = build_torch(torch, spec), torch.from_numpy(x_np.copy())

    def run_torch() -> Any:
        with torch.inference_mode():
            return net(x_torch)

    fns: dict[str, Fn] = {
        "burn": lambda: model(x_burn),
        "ort": lambda: session.run(None, feed),
        "torch": run_torch,
    }
    outputs = {
        "burn": model(x_burn).to_numpy(),
        "ort": session.run(None, feed)[0],
        "torch": run_torch().numpy(),
    }
    return Inference(fns, outputs)


def training(torch: Any, spec: ModelSpec, batch: int) -> dict[str, Workload]:
    """burn autodiff(ndarray) training the imported ONNX graph's params, and torch eager training
    the same module (eval mode: batch norm on running statistics, as the import runs it), from the
    same weights on the same batch, cross-entropy and Adam (the bench's betas and epsilon).

    Adam's learning rate is 1e-5, not the bench's 1e-3: with batch norm on running statistics
    ResNet-18 at 1e-3 diverges (loss 6.7 to 22.7 in 3 steps at batch 2) and at 1e-4 it fits its
    batch at once (6.7 to 0.64): either way float32 rounding grows into a 5e-3 difference between
    the two losses, and a float64 run differs from both by 2e-2. At 1e-5 (6.7 to 5.2) the two
    agree to 1e-5."""
    import burn
    import burn.onnx
    from burn import nn, optim

    path = export(torch, spec, batch, training=True)
    x, y = spec.input(batch), spec.target(batch)
    model = burn.onnx.load(path, backend="autodiff(ndarray)")
    ce = nn.CrossEntropyLossConfig().init()
    burn_loss = ce
    if spec.tokens:
        vocab = spec.tokens

        def burn_loss(logits: Any, target: Any) -> Any:
            return ce(logits.reshape([-1, vocab]), target.reshape([-1]))

    adam = optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()
    return {
        "burn": burn_trained(model.backend, model, x, y, burn_loss, adam, TRAIN_LR),
        "torch": torch_training(torch, spec, batch),
    }


def torch_training(torch: Any, spec: ModelSpec, batch: int, dtype: Any = None) -> Workload:
    """torch's side of `training`; with `dtype` (float64) the weights and float inputs are cast
    to it: a reference that says which of two float32 losses is nearer the exact one."""
    x, y = spec.input(batch), spec.target(batch)
    net = build_torch(torch, spec)
    if dtype is not None:
        net = net.to(dtype)
        x = x if spec.tokens else x.astype(np.float64)
    vocab = spec.tokens

    def loss(logits: Any, target: Any) -> Any:
        if vocab:
            logits, target = logits.reshape(-1, vocab), target.reshape(-1)
        return torch.nn.functional.cross_entropy(logits, target)

    def adam(params: Any) -> Any:
        return torch.optim.Adam(params, lr=TRAIN_LR, betas=(BETA_1, BETA_2), eps=EPS)

    return torch_trained(torch, net, x, y, loss_fn=loss, make_optimizer=adam)
