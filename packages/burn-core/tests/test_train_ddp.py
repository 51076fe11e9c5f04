"""burn.train's DDP pieces in one process: the sharded loader, and DataParallel in a world of one
(the multi-process runs are burn-mpi's tests, under mpiexec)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import burn.distributed as dist
from burn.train import ArrayDataset, DataLoader, DataParallel, ShardedLoader


@pytest.fixture(autouse=True)
def fresh_group(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    dist.shutdown()
    yield
    dist.shutdown()


@pytest.mark.parametrize(("items", "world"), [(10, 2), (10, 3), (7, 4), (12, 4)])
def test_shards_are_equal_cover_every_item_and_follow_the_epoch_order(items: int, world: int) -> None:
    base = DataLoader(ArrayDataset(np.arange(items)), batch_size=2, shuffle=True, seed=5)
    for epoch in (0, 1):
        shards = [ShardedLoader(base, r, world).order(epoch) for r in range(world)]
        assert len({len(s) for s in shards}) == 1  # equal sizes
        assert sorted(set(np.concatenate(shards).tolist())) == list(range(items))
        # interleaved, they are the base loader's order (padded by wrapping around)
        merged = np.stack(shards, axis=1).reshape(-1)
        assert merged[:items].tolist() == base.order(epoch).tolist()
    assert not np.array_equal(ShardedLoader(base, 0, world).order(0), ShardedLoader(base, 0, world).order(1))


def test_batches_of_the_ranks_together_are_one_larger_batch() -> None:
    base = DataLoader(ArrayDataset(np.arange(24)), batch_size=6, shuffle=True, seed=1)
    big = DataLoader(ArrayDataset(np.arange(24)), batch_size=12, shuffle=True, seed=1)
    shards = [ShardedLoader(base, r, 2) for r in range(2)]
    assert [len(s) for s in shards] == [2, 2] and shards[0].num_items == 12
    for k, want in enumerate(big.index_batches(3)):
        got = np.concatenate([s.index_batches(3)[k] for s in shards])
        assert sorted(got.tolist()) == sorted(want.tolist())


def test_drop_tail_and_bad_rank() -> None:
    base = DataLoader(ArrayDataset(np.arange(7)), batch_size=1)
    assert [len(ShardedLoader(base, r, 2, drop_tail=True).order(0)) for r in range(2)] == [3, 3]
    with pytest.raises(ValueError, match=r"rank 2 is not in \[0, 2\)"):
        ShardedLoader(base, 2, 2)


def test_data_parallel_in_a_world_of_one_trains_like_no_strategy() -> None:
    pytest.importorskip("burn_autodiff")
    import burn
    from burn import nn, optim
    from burn.train import Learner, LossMetric, StepOutput

    B = burn.backend("autodiff(ndarray)", float_dtype="float64")
    rng = np.random.default_rng(0)
    data = ArrayDataset(rng.normal(size=(16, 3)), rng.normal(size=(16, 1)))

    def step(model: Any, batch: Any) -> StepOutput:
        x, y = batch
        return StepOutput(nn.MseLoss()(model(x), y), batch_size=x.shape[0])

    def run(strategy: DataParallel | None) -> list[np.ndarray]:
        B.seed(3)
        model = nn.LinearConfig(3, 1).init(B.default_device())
        learner = Learner(
            model, optim.SgdConfig().init(), step, lr=0.1, num_epochs=2, metrics=[LossMetric()],
            progress="none", plot=False, strategy=strategy,
        )  # fmt: skip
        result = learner.fit(DataLoader(data, 4, shuffle=True, seed=2))
        return [p.val().to_numpy() for p in result.model.params()]

    strategy = DataParallel()
    assert strategy.world_size == 1 and strategy.is_main
    for a, b in zip(run(strategy), run(None), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="bucket_mb must be positive"):
        DataParallel(bucket_mb=0)
