"""How `burn_cuda.graphs` takes apart and rebuilds argument and result structures, checked on the
NumPy backend (the structure code holds no CUDA)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn, optim
from burn_cuda import _graph_tree as tree

pytestmark = pytest.mark.no_device

Batch = namedtuple("Batch", ["x", "y"])


@pytest.fixture(scope="module")
def AD() -> Any:
    return burn.backend("autodiff(ndarray)")


def _arrays(leaves: list[tuple[str, burn.Tensor]]) -> list[np.ndarray]:
    return [np.asarray(t.to_data().to_numpy()) for _, t in leaves]


def test_a_module_and_a_batch_round_trip_with_new_arrays(AD: Any) -> None:
    model = nn.LinearConfig(3, 2).init(AD.default_device())
    x = burn.Tensor.ones((4, 3), backend=AD)
    y = burn.Tensor.from_data(np.array([0, 1, 1, 0]), backend=AD)
    spec, leaves = tree.flatten(((model, Batch(x, y), 0.5), {"scale": 2}), "args")
    paths = ["args[0][0].weight", "args[0][0].bias", "args[0][1][0]", "args[0][1][1]"]
    assert [p for p, _ in leaves] == paths
    new = [a + 1 for a in _arrays(leaves)]
    (m2, batch, half), kwargs = tree.rebuild(spec, iter(new))
    assert half == 0.5 and kwargs == {"scale": 2} and isinstance(batch, Batch)
    assert [p.id for p in m2.params()] == [p.id for p in model.params()]  # ids kept for optimizers
    assert all(p.val().is_require_grad() for p in m2.params())
    np.testing.assert_array_equal(m2.weight.val().to_data().to_numpy(), new[0])
    assert batch.y.kind is burn.Int and not batch.x.is_require_grad()


def test_specs_compare_by_structure_not_by_values(AD: Any) -> None:
    m1 = nn.LinearConfig(3, 2).init(AD.default_device())
    m2 = nn.LinearConfig(3, 2).init(AD.default_device())
    s1, _ = tree.flatten((m1,), "args")
    s2, _ = tree.flatten((m2,), "args")
    s3, _ = tree.flatten((nn.LinearConfig(3, 2, bias=False).init(AD.default_device()),), "args")
    assert s1 == s2 and hash(s1) == hash(s2) and s1 != s3
    frozen = m1.map(lambda path, p: p.no_grad() if path == "bias" else p)
    assert tree.flatten((frozen,), "args")[0] != s1  # a frozen param: another graph
    assert tree.flatten((1,), "a")[0] != tree.flatten((2,), "a")[0]


def test_gradients_come_back_keyed_by_the_same_params(AD: Any) -> None:
    model = nn.LinearConfig(3, 2).init(AD.default_device())
    loss = model(burn.Tensor.ones((4, 3), backend=AD)).sum()
    grads = optim.GradientsParams.from_grads(loss.backward(), model)
    spec, leaves = tree.flatten(grads, "result", result=True)
    again = tree.rebuild(spec, iter(_arrays(leaves)))
    assert sorted(map(str, again)) == sorted(map(str, grads)) and len(again) == 2


def test_results_that_a_graph_cannot_replay_are_refused(AD: Any) -> None:
    model = nn.LinearConfig(3, 2).init(AD.default_device())
    with pytest.raises(TypeError, match=r"result\[1\] is a float"):
        tree.flatten((burn.Tensor.ones((2,), backend=AD), 1.5), "result", result=True)
    with pytest.raises(TypeError, match="is a module; return gradients"):
        tree.flatten(model, "result", result=True)
    assert tree.flatten(None, "result", result=True)[1] == []


def test_an_unhashable_constant_argument_is_named(AD: Any) -> None:
    with pytest.raises(TypeError, match=r"args\[1\] \(set\)"):
        tree.flatten((burn.Tensor.ones((2,), backend=AD), {1, 2}), "args")
