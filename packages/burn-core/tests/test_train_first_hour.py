"""A new user's first hour with burn.train and the digits example: a re-run never wipes the previous
run, ``--resume`` on a finished run reports its final metrics, and every file is written with the
user's umask (metrics.png and model.json were 0600)."""

from __future__ import annotations

import importlib.util
import io
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

from test_train_learner import learner, loaders  # noqa: E402

import burn  # noqa: E402
from burn.train.history import History  # noqa: E402
from burn.train.plot import matplotlib_available, plot_history  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "digits.py"


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_run_refuses_a_directory_holding_a_run(tmp_path: Path) -> None:
    train, valid = loaders()
    first = learner(tmp_path, 1).fit(train, valid)
    assert first.checkpoint is not None and first.checkpoint.exists()
    with pytest.raises(
        FileExistsError, match=r"already holds a run \(checkpoints up to epoch 1\).*resume=True"
    ):
        learner(tmp_path, 1).fit(train, valid)
    assert first.checkpoint.exists()  # the refusal deleted nothing
    again = learner(tmp_path, 2).fit(train, valid, overwrite=True)
    assert again.epoch == 2 and sorted(p.name for p in (tmp_path / "checkpoints").iterdir())[-1].endswith(
        "2.mpk"
    )


def test_resume_on_a_finished_run_reports_its_final_metrics(tmp_path: Path) -> None:
    train, valid = loaders()
    done = learner(tmp_path, 2).fit(train, valid)
    stream = io.StringIO()
    again = learner(tmp_path, 2, stream=stream).fit(train, valid, resume=True)
    text = stream.getvalue()
    assert f"the run in {tmp_path} is complete (2/2 epochs): nothing to train" in text
    final = done.history.last("valid")
    assert f"epoch 2/2 valid  loss {final['loss']:.4f}" in text and "accuracy" in text
    assert again.epoch == 2 and again.history.last("valid") == final
    assert again.files["csv"] == tmp_path / "metrics.csv" and again.files["json"].exists()
    assert again.checkpoint == done.checkpoint


def test_files_are_written_with_the_users_umask(tmp_path: Path, umask_022: None) -> None:
    from burn import record

    train, valid = loaders()
    result = learner(tmp_path, 1).fit(train, valid)
    written = [result.files["csv"], result.files["json"], result.checkpoint]
    history = History()
    history.add_epoch("train", 1, {"loss": 1.0})
    if matplotlib_available():
        png = plot_history(history, tmp_path / "metrics.png")
        assert png is not None
        written.append(png)

    @burn.config
    class Cfg:
        hidden: int = 3

    Cfg().save(tmp_path / "model.json")
    result.model.save_file(tmp_path / "model", record.NamedMpkFileRecorder())
    written += [tmp_path / "model.json", tmp_path / "model.mpk"]
    assert {p.name: oct(mode(p)) for p in written if p is not None} == {
        p.name: oct(0o644) for p in written if p is not None
    }
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


# -- the digits example ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits() -> Any:
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (the digits data ships with it)")
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is not in this checkout")
    spec = importlib.util.spec_from_file_location("digits_example_first_hour", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["digits_example_first_hour"] = module
    spec.loader.exec_module(module)
    return module


def test_rerunning_digits_never_wipes_the_previous_run(
    digits: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--epochs", "1", "--progress", "none", "--min-accuracy", "0"]
    assert digits.main(argv) == 0
    first = (tmp_path / "runs" / "digits-mlp" / "model.mpk").read_bytes()
    capsys.readouterr()
    assert digits.main(argv) == 0
    out = capsys.readouterr().out
    assert "runs/digits-mlp holds a previous run: this one goes to runs/digits-mlp-2" in out
    assert (tmp_path / "runs" / "digits-mlp" / "model.mpk").read_bytes() == first
    assert (tmp_path / "runs" / "digits-mlp-2" / "model.mpk").exists()
    # --resume continues the latest run: finished, so it reports its final metrics
    assert digits.main([*argv, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "runs/digits-mlp-2 is complete (1/1 epochs)" in out and "epoch 1/1 valid  loss" in out
    assert "metrics: runs/digits-mlp-2/metrics.csv" in out
    # an --out holding a run is refused, clearly, unless --overwrite
    assert digits.main([*argv, "--out", "runs/digits-mlp"]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert (tmp_path / "runs" / "digits-mlp" / "model.mpk").read_bytes() == first
    assert digits.main([*argv, "--out", "runs/digits-mlp", "--overwrite"]) == 0
    assert not (tmp_path / "runs" / "digits-mlp-3").exists()
