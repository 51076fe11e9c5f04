"""Learning-rate schedulers: their sequences, validation, records (exact resume at any step) and
configs (JSON round trips, floats as constant rates)."""

from __future__ import annotations

import copy
import doctest
import importlib
import math

import pytest

from burn.errors import ConfigError
from burn.optim import lr_scheduler as ls
from burn.record import RecordError


def take(scheduler: ls.LrScheduler, n: int) -> list[float]:
    return [scheduler.step() for _ in range(n)]


def approx(values: list[float]) -> list:
    return [pytest.approx(v, abs=1e-10) for v in values]


def test_constant_and_plain_float() -> None:
    assert take(ls.ConstantLr(0.01), 3) == [0.01] * 3
    assert take(ls.as_scheduler(0.5), 2) == [0.5, 0.5]
    assert ls.as_scheduler(3).step() == 3.0
    with pytest.raises(TypeError, match="LrScheduler or a learning rate"):
        ls.as_scheduler("0.1")  # type: ignore[arg-type]


def test_linear() -> None:
    assert take(ls.LinearLrSchedulerConfig(0.9, 0.5, 4).init(), 6) == approx([0.9, 0.8, 0.7, 0.6, 0.5, 0.5])
    assert take(ls.LinearLrSchedulerConfig(0.01, 0.04, 3).init(), 5) == approx([0.01, 0.02, 0.03, 0.04, 0.04])
    assert take(ls.LinearLrSchedulerConfig(0.3, 0.3, 2).init(), 3) == approx([0.3] * 3)


def test_cosine_restarts() -> None:
    s = ls.CosineAnnealingLrSchedulerConfig(0.5, 2, min_lr=0.1).init()
    assert take(s, 7) == approx([0.5, 0.3, 0.1, 0.5, 0.3, 0.1, 0.5])
    s = ls.CosineAnnealingLrSchedulerConfig(1.0, 4).init()
    assert take(s, 5) == approx([0.5 * (1 + math.cos(math.pi * i / 4)) for i in range(5)])


def test_exponential() -> None:
    s = ls.ExponentialLrSchedulerConfig(0.8, 0.1).init()
    assert take(s, 5) == approx([0.8, 0.08, 0.008, 0.0008, 0.00008])
    assert ls.ExponentialLrSchedulerConfig(0.3, 0.7).init().step() == 0.3  # exactly


def test_step() -> None:
    assert take(ls.StepLrSchedulerConfig(0.5, 3, 0.1).init(), 9) == approx(
        [0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005, 0.005, 0.005]
    )
    with pytest.warns(UserWarning, match="gamma"):
        s = ls.StepLrSchedulerConfig(0.1, 2, gamma=2.0).init()
    assert take(s, 6) == approx([0.1, 0.1, 0.2, 0.2, 0.4, 0.4])
    assert ls.StepLrSchedulerConfig(1.0, 1).gamma == 0.1  # Burn's default


def test_noam_warms_up_then_decays() -> None:
    s = ls.NoamLrSchedulerConfig(10.0, warmup_steps=100).init()
    rates = take(s, 200)
    assert all(b > a for a, b in zip(rates[:100], rates[1:100], strict=False))
    assert all(b < a for a, b in zip(rates[100:], rates[101:], strict=False))
    assert rates[99] == pytest.approx(10.0 * 512**-0.5 * 100**-0.5)
    assert (
        ls.NoamLrSchedulerConfig(1.0).warmup_steps == 4000 and ls.NoamLrSchedulerConfig(1.0).model_size == 512
    )


def test_composed_reductions() -> None:
    children = [ls.LinearLrSchedulerConfig(0.5, 0.1, 2), 0.2]
    expected = [[0.5, 0.3, 0.1], [0.2] * 3]
    for reduction, combine in [
        ("prod", lambda a, b: a * b),
        ("sum", lambda a, b: a + b),
        ("avg", lambda a, b: (a + b) / 2),
    ]:
        s = ls.ComposedLrSchedulerConfig(children, reduction).init()  # type: ignore[arg-type]
        assert take(s, 3) == approx([combine(a, b) for a, b in zip(*expected, strict=True)]), reduction


def test_sequential_switches_at_milestones() -> None:
    cfg = ls.SequentialLrSchedulerConfig(
        [
            ls.LinearLrSchedulerConfig(0.1, 0.3, 2),
            ls.ExponentialLrSchedulerConfig(0.5, 0.5),
            ls.CosineAnnealingLrSchedulerConfig(0.8, 2),
        ],
        [2, 5],
    )
    assert take(cfg.init(), 8) == approx([0.1, 0.2, 0.5, 0.25, 0.125, 0.8, 0.4, 0.0])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ls.LinearLrSchedulerConfig(0.0, 0.5, 10).init(), "initial_lr"),
        (lambda: ls.LinearLrSchedulerConfig(1.5, 0.5, 10).init(), "initial_lr"),
        (lambda: ls.LinearLrSchedulerConfig(0.5, -0.5, 10).init(), "final_lr"),
        (lambda: ls.LinearLrSchedulerConfig(0.9, 0.1, 0).init(), "num_iters"),
        (lambda: ls.CosineAnnealingLrSchedulerConfig(0.5, 10, min_lr=0.6).init(), "min_lr"),
        (lambda: ls.CosineAnnealingLrSchedulerConfig(0.5, 0).init(), "num_iters"),
        (lambda: ls.ExponentialLrSchedulerConfig(0.5, 0.0).init(), "gamma"),
        (lambda: ls.ExponentialLrSchedulerConfig(0.5, 1.5).init(), "gamma"),
        (lambda: ls.StepLrSchedulerConfig(1.0, 0).init(), "step_size"),
        (lambda: ls.NoamLrSchedulerConfig(0.1, warmup_steps=0).init(), "warmup_steps"),
        (lambda: ls.NoamLrSchedulerConfig(0.1, model_size=0).init(), "model_size"),
        (lambda: ls.ComposedLrSchedulerConfig([]).init(), "at least one"),
        (lambda: ls.SequentialLrSchedulerConfig([0.1, 0.2], []).init(), "milestones"),
        (lambda: ls.SequentialLrSchedulerConfig([0.1, 0.2, 0.3], [3, 3]).init(), "strictly increasing"),
        (lambda: ls.SequentialLrSchedulerConfig([0.1, 0.2], [0]).init(), "strictly increasing"),
        (
            lambda: ls.SequentialLrSchedulerConfig([ls.LinearLrSchedulerConfig(0.1, 0.2, 0)], []).init(),
            "num_iters",
        ),
    ],
)
def test_invalid_configs_are_refused(make, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ConfigError, match=message):
        make()


def all_schedulers() -> dict[str, ls.LrScheduler]:
    return {
        "constant": ls.ConstantLr(0.3),
        "linear": ls.LinearLrSchedulerConfig(1.0, 0.01, 6).init(),
        "cosine": ls.CosineAnnealingLrSchedulerConfig(1.0, 9).init(),
        "exponential": ls.ExponentialLrSchedulerConfig(0.083, 0.3).init(),
        "step": ls.StepLrSchedulerConfig(0.007, 10, 0.03).init(),
        "noam": ls.NoamLrSchedulerConfig(2.0, warmup_steps=5, model_size=8).init(),
        "composed": ls.ComposedLrSchedulerConfig(
            [0.5, ls.ExponentialLrSchedulerConfig(1.0, 0.9), ls.CosineAnnealingLrSchedulerConfig(1.0, 3)]
        ).init(),
        "sequential": ls.SequentialLrSchedulerConfig(
            [ls.LinearLrSchedulerConfig(0.1, 0.3, 2), ls.ExponentialLrSchedulerConfig(0.5, 0.5), 0.01], [2, 5]
        ).init(),
        "nested": ls.SequentialLrScheduler(
            [ls.ComposedLrScheduler([0.1, ls.StepLrSchedulerConfig(1.0, 1, 0.5).init()], "prod"), 0.02], [3]
        ),
    }


@pytest.mark.parametrize("name", sorted(all_schedulers()))
@pytest.mark.parametrize("at", [0, 1, 4, 12])
def test_resume_from_a_record_at_any_step(name: str, at: int) -> None:
    truth, scheduler = all_schedulers()[name], all_schedulers()[name]
    for _ in range(at):
        assert truth.step() == scheduler.step()
    record = copy.deepcopy(scheduler.to_record())
    assert record["scheduler"] == truth.kind
    fresh = all_schedulers()[name].load_record(record)
    assert take(fresh, 15) == take(truth, 15)  # bit-identical, not approximately


def test_fresh_scheduler_differs_from_resumed_one() -> None:
    a, b = all_schedulers()["linear"], all_schedulers()["linear"]
    take(a, 3)
    assert take(a, 3) != take(b, 3)


def test_record_of_another_scheduler_is_refused() -> None:
    record = ls.LinearLrSchedulerConfig(0.5, 0.1, 3).init().to_record()
    with pytest.raises(RecordError, match="'linear' scheduler cannot be loaded into a 'cosine'"):
        ls.CosineAnnealingLrSchedulerConfig(0.5, 3).init().load_record(record)
    with pytest.raises(RecordError, match="must be an int"):
        ls.LinearLrSchedulerConfig(0.5, 0.1, 3).init().load_record(
            {"scheduler": "linear", "remaining_iters": "x"}
        )
    composed = ls.ComposedLrScheduler([0.1, 0.2])
    with pytest.raises(RecordError, match="expected 2 child records"):
        composed.load_record({"scheduler": "composed", "schedulers": [{"scheduler": "constant"}]})


def test_configs_round_trip_through_json(tmp_path) -> None:  # noqa: ANN001
    composed = ls.ComposedLrSchedulerConfig(
        [
            0.5,
            ls.LinearLrSchedulerConfig(0.1, 0.2, 3),
            ls.StepLrSchedulerConfig(1.0, 2, 0.5),
            ls.ExponentialLrSchedulerConfig(1.0, 0.9),
            ls.NoamLrSchedulerConfig(1.0, 10, 16),
            ls.CosineAnnealingLrSchedulerConfig(0.3, 4, 0.1),
        ],
        "avg",
    )
    again = ls.ComposedLrSchedulerConfig.from_json(composed.to_json())
    assert again == composed
    assert [type(c).__name__ for c in again.schedulers][1:] == [
        "LinearLrSchedulerConfig",
        "StepLrSchedulerConfig",
        "ExponentialLrSchedulerConfig",
        "NoamLrSchedulerConfig",
        "CosineAnnealingLrSchedulerConfig",
    ]
    sequential = ls.SequentialLrSchedulerConfig([ls.LinearLrSchedulerConfig(0.1, 0.2, 3), 0.05], [4])
    sequential.save(tmp_path / "sched.json")
    loaded = ls.SequentialLrSchedulerConfig.load(tmp_path / "sched.json")
    assert take(loaded.init(), 6) == take(sequential.init(), 6)


@pytest.mark.parametrize(
    "module", ["base", "linear", "cosine", "exponential", "step", "noam", "composed", "sequential", ""]
)
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module("burn.optim.lr_scheduler" + (f".{module}" if module else ""))
    result = doctest.testmod(mod)
    assert result.failed == 0 and result.attempted > 0
