"""The digits example (the main job): the MLP reaches 95% test accuracy, a run interrupted and
resumed from its checkpoint ends bit-identical to an uninterrupted one, and the saved model reloads
on other backends (ndarray in float32 and float64) with the same accuracy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
pytest.importorskip("sklearn", reason="scikit-learn is not installed (the digits data ships with it)")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "digits.py"


@pytest.fixture(scope="module")
def digits() -> Any:
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is not in this checkout")
    spec = importlib.util.spec_from_file_location("digits_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["digits_example"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mlp_run(digits: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("mlp")
    model, _ = digits.train(out, model="mlp", epochs=10, progress="none", plot=False)
    return out, model


def params(model: Any) -> dict[str, np.ndarray]:
    return {path: p.val().to_numpy() for path, p in model.named_params()}


def test_mlp_reaches_95_percent(digits: Any, mlp_run: tuple[Path, Any]) -> None:
    out, model = mlp_run
    data = digits.load_digits(0)
    assert digits.accuracy(model.valid(), data.x_test, data.y_test) >= 0.95
    assert (out / "model.mpk").exists() and (out / "model.json").exists()
    assert (out / "metrics.csv").exists() and (out / "metrics.json").exists()
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == [
        "checkpoint-00009.mpk",
        "checkpoint-00010.mpk",
    ]


@pytest.mark.parametrize("options", [{}, {"float_dtype": "float64"}], ids=["ndarray", "ndarray-float64"])
def test_reload_on_another_backend(digits: Any, mlp_run: tuple[Path, Any], options: dict[str, str]) -> None:
    out, model = mlp_run
    data = digits.load_digits(0)
    reloaded = digits.reload(out, "ndarray", **options)
    owner = reloaded.devices()[0].owner
    assert not owner.ad_enabled and owner.float_dtype.value == options.get("float_dtype", "float32")
    expected = digits.accuracy(model.valid(), data.x_test, data.y_test)
    got = digits.accuracy(reloaded, data.x_test, data.y_test)
    assert got >= 0.95 and abs(got - expected) <= 1 / len(data.y_test)  # float64 may flip one tie
    for path, value in params(model).items():
        np.testing.assert_allclose(params(reloaded)[path], value, rtol=1e-6, err_msg=path)


def test_resume_after_an_interruption_matches_an_uninterrupted_run(
    digits: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full, _ = digits.train(tmp_path / "full", epochs=3, progress="none", plot=False)

    calls = {"n": 0}
    real = digits.classify

    def interrupted(model: Any, batch: Any) -> Any:
        calls["n"] += 1
        if calls["n"] > 60:  # epoch 1 is 45 train + 2 valid steps: this stops mid-epoch 2
            raise KeyboardInterrupt
        return real(model, batch)

    monkeypatch.setattr(digits, "classify", interrupted)
    with pytest.raises(KeyboardInterrupt):
        digits.train(tmp_path / "split", epochs=3, progress="none", plot=False)
    checkpoints = tmp_path / "split" / "checkpoints"
    assert [p.name for p in checkpoints.iterdir()] == ["checkpoint-00001.mpk"]
    monkeypatch.setattr(digits, "classify", real)
    resumed, result = digits.train(tmp_path / "split", epochs=3, resume=True, progress="none", plot=False)
    assert result.epoch == 3
    a, b = params(full), params(resumed)
    for path in a:
        np.testing.assert_array_equal(a[path], b[path], err_msg=path)
    full_csv = (tmp_path / "full" / "metrics.csv").read_text()
    assert (tmp_path / "split" / "metrics.csv").read_text() == full_csv


def test_cnn_trains_and_reloads(digits: Any, tmp_path: Path) -> None:
    model, result = digits.train(tmp_path, model="cnn", epochs=1, progress="none", plot=False)
    data = digits.load_digits(0)
    reloaded = digits.reload(tmp_path, "ndarray")
    assert type(reloaded).__name__ == "Cnn"
    accuracy = digits.accuracy(reloaded, data.x_test, data.y_test)
    assert accuracy == digits.accuracy(model.valid(), data.x_test, data.y_test)
    assert accuracy > 0.5  # one epoch of a small CNN is already far above chance (0.1)


def test_the_default_accuracy_bar_scales_with_the_epochs(digits: Any) -> None:
    assert digits.default_min_accuracy("mlp", 10) == digits.default_min_accuracy("mlp", 8) == 0.95
    assert digits.default_min_accuracy("mlp", 2) == digits.default_min_accuracy("mlp", 1) == 0.85
    assert digits.default_min_accuracy("cnn", 10) == 0.0


def test_main_prints_accuracy_and_where_things_went(
    digits: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--out", str(tmp_path), "--epochs", "2", "--progress", "plain", "--min-accuracy", "0"]
    assert digits.main([*argv, "--infer-backend", "ndarray", "--infer-float-dtype", "float64"]) == 0
    text = capsys.readouterr().out
    assert "epoch 2/2 valid" in text and "test accuracy" in text
    assert "reloaded on ndarray (float burn.float64)" in text
    assert f"model: {tmp_path / 'model.mpk'}" in text and f"{tmp_path / 'metrics.csv'}" in text
    assert "plot: " in text
    assert digits.main([*argv, "--min-accuracy", "1.01", "--resume"]) == 1  # nothing left to train
    assert "below 1.01" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        digits.main(["--epochs", "0"])


def test_logger_option_adds_tensorboard_beside_the_csv(
    digits: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert digits.parse_args([]).logger == "csv"
    with pytest.raises(SystemExit):
        digits.parse_args(["--logger", "wandb"])
    pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (burn-core[tensorboard])")
    argv = ["--out", str(tmp_path), "--epochs", "1", "--progress", "none", "--min-accuracy", "0"]
    assert digits.main([*argv, "--logger", "tensorboard"]) == 0
    assert f"tensorboard: tensorboard --logdir {tmp_path / 'tensorboard'}" in capsys.readouterr().out
    assert (tmp_path / "metrics.csv").is_file()
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))
