"""The CIFAR-style CNN and character-level GPT examples (examples/cifar_cnn.py, examples/char_gpt.py)
train through their command lines on tiny configurations: the loss goes down, the metric files and
checkpoints are written, ``--workers 2`` trains exactly what ``--workers 0`` does (every step's
loss is the same float), ``--resume`` ends where an uninterrupted run ends, and ``--sample`` prints
generated text."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def load_example(name: str) -> Any:
    path = EXAMPLES / f"{name}.py"
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def steps(out: Path) -> list[dict[str, Any]]:
    """Every logged step of a run (metrics.json), in order."""
    return json.loads((out / "metrics.json").read_text())["steps"]


def epochs(out: Path, split: str) -> list[dict[str, Any]]:
    return [row for row in json.loads((out / "metrics.json").read_text())["epochs"] if row["split"] == split]


# -- CIFAR-style CNN -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cifar() -> Any:
    return load_example("cifar_cnn")


@pytest.fixture(scope="module")
def tiny_cifar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A learnable CIFAR-shaped set on disk (``--data``): label 1 where the top half is the brighter
    (a flip and a 4-pixel crop keep that), written with `write_memmap` as the docstring says."""
    from burn.data import write_memmap

    root = tmp_path_factory.mktemp("tiny-cifar")
    rng = np.random.default_rng(0)
    for split, n in (("train", 128), ("test", 32)):
        labels = rng.integers(0, 2, size=n)
        images = rng.integers(0, 96, size=(n, 3, 32, 32))
        images[labels == 1, :, :16] += 128
        images[labels == 0, :, 16:] += 128
        write_memmap(root / split, {"image": images.astype(np.uint8), "label": labels.astype(np.int64)})
    return root


def cifar_args(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--data",
        str(data),
        "--out",
        str(out),
        "--width",
        "4",
        "--batch-size",
        "32",
        "--progress",
        "none",
        *extra,
    ]


def test_cifar_digits_stand_in_is_cifar_shaped(cifar: Any) -> None:
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (the stand-in is its digits)")
    train, test = cifar.digits_as_cifar()
    image, label = train[0]
    assert image.shape == (3, 32, 32) and image.dtype == np.uint8
    assert len(train) + len(test) == 1797 and sorted(set(train.arrays[1].tolist())) == list(range(10))
    assert image.max() == 255 and not image[:, :4].any() and not image[:, :, -4:].any()  # the 4-pixel border
    np.testing.assert_array_equal(image[0], image[2])  # the same picture in the three channels


def test_cifar_trains_the_same_with_workers_and_resumes(
    cifar: Any, tiny_cifar: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cifar.main(cifar_args(tiny_cifar, tmp_path / "w0", "--epochs", "2")) == 0
    printed = capsys.readouterr().out
    assert "trained 2 epochs" in printed and "best" in printed
    losses = [row["loss"] for row in epochs(tmp_path / "w0", "train")]
    assert len(losses) == 2 and losses[1] < losses[0], losses
    assert (tmp_path / "w0" / "metrics.csv").exists()
    assert (tmp_path / "w0" / "checkpoints" / "best.mpk").exists()

    # Two worker processes augment the items: the same crops and flips, so the same steps.
    assert cifar.main(cifar_args(tiny_cifar, tmp_path / "w2", "--epochs", "2", "--workers", "2")) == 0
    assert steps(tmp_path / "w2") == steps(tmp_path / "w0")
    # A run that stopped after epoch 1 (its last checkpoint removed) resumes to the same end.
    (tmp_path / "w2" / "checkpoints" / "checkpoint-00002.mpk").unlink()
    resumed = cifar_args(tiny_cifar, tmp_path / "w2", "--epochs", "2", "--workers", "2", "--resume")
    assert cifar.main(resumed) == 0
    assert steps(tmp_path / "w2") == steps(tmp_path / "w0")


def test_cifar_refuses_a_used_out_and_a_bad_data_folder(
    cifar: Any, tiny_cifar: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit, match="no .*write_memmap"):
        cifar.main(cifar_args(tmp_path / "missing", tmp_path / "out", "--epochs", "1"))
    with pytest.raises(SystemExit):
        cifar.main(cifar_args(tiny_cifar, tmp_path / "out", "--workers", "-1"))
    assert "--workers must be 0 or more" in capsys.readouterr().err


# -- character-level GPT ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gpt() -> Any:
    return load_example("char_gpt")


def gpt_args(out: Path, *extra: str) -> list[str]:
    return [
        "--out",
        str(out),
        "--block",
        "16",
        "--d-model",
        "16",
        "--layers",
        "1",
        "--heads",
        "2",
        "--batch-size",
        "64",
        "--warmup",
        "3",
        "--progress",
        "none",
        *extra,
    ]


def test_gpt_windows_come_from_the_loader(gpt: Any) -> None:
    text = gpt.load_text(module="textwrap")
    vocab = gpt.CharVocab(text)
    assert vocab.decode(vocab.encode(text)) == text
    train, valid = gpt.datasets(vocab.encode(text), block=16)
    assert train[0].shape == (32,) and valid[0].shape == (17,)
    from burn.data import DataLoader
    from burn.data import transforms as T

    loader = DataLoader(
        train, 8, shuffle=True, transform=T.RandomSubsequence(17), batcher=lambda items, _: items
    )
    for window in next(iter(loader.batches(epoch=0))):  # 17 consecutive characters of the text
        assert window.shape == (17,) and vocab.decode(window) in text
    with pytest.raises(ValueError, match="fewer than a window"):
        gpt.datasets(vocab.encode("short"), block=16)


def test_gpt_learns_samples_and_trains_the_same_with_workers(
    gpt: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpt.main(gpt_args(tmp_path / "w0", "--epochs", "2", "--sample", "30")) == 0
    printed = capsys.readouterr().out
    assert "trained 2 epochs" in printed and "vocabulary 88 characters" in printed
    sample = printed.split("--- 30 characters after ")[1].split(":\n", 1)[1].rstrip("\n")
    text = gpt.load_text(module="textwrap")
    assert len(sample) == 30 and set(sample) <= set(text)
    valid_losses = [row["loss"] for row in epochs(tmp_path / "w0", "valid")]
    assert valid_losses[1] < valid_losses[0] < np.log(88), valid_losses  # below a uniform guess
    lrs = [row["lr"] for row in steps(tmp_path / "w0") if row["split"] == "train"]
    assert lrs[0] < lrs[2] and max(lrs) == pytest.approx(1e-2) and lrs[-1] < lrs[3]  # warm-up, then decay

    extra: tuple[str, ...] = ("--epochs", "2", "--sample", "0", "--workers", "2")
    if importlib.util.find_spec("tensorboardX") is not None:
        extra += ("--logger", "tensorboard")
    assert gpt.main(gpt_args(tmp_path / "w2", *extra)) == 0
    assert steps(tmp_path / "w2") == steps(tmp_path / "w0")
    if "--logger" in extra:
        assert any((tmp_path / "w2" / "tensorboard").rglob("events.out.tfevents.*"))


def test_gpt_reports_a_bad_text(gpt: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = tmp_path / "short.txt"
    short.write_text("too short", encoding="utf-8")
    assert gpt.main(gpt_args(tmp_path / "out", "--text", str(short), "--epochs", "1")) == 2
    assert "fewer than a window of 32" in capsys.readouterr().err
    assert gpt.main(gpt_args(tmp_path / "out", "--text", str(tmp_path / "missing.txt"))) == 2
    assert "cannot read the text" in capsys.readouterr().err
