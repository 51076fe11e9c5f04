"""A smoke test of the installed template: burn finds it by name and it computes.

The full check is burn's conformance suite: ``pytest --pyargs burn.testing --burn-backend template``.
"""

from __future__ import annotations

import numpy as np

import burn
import burn.backend
from burn_template import TemplateBackend


def test_found_by_name_through_the_entry_point() -> None:
    backend = burn.backend("template")
    assert isinstance(backend, TemplateBackend)
    assert str(backend.default_device()) == "template:cpu"
    info = {i.name: i for i in burn.backends()}["template"]
    assert (info.package, info.status) == ("burn-template-backend", "available")


def test_implements_only_the_required_ops() -> None:
    assert burn.backend.implemented_ops(TemplateBackend) == set(burn.backend.required_ops())


def test_required_and_default_ops_compute() -> None:
    device = burn.backend("template").default_device()
    x = burn.Tensor.from_data([[1.0, -2.0], [3.0, 4.0]], device=device)
    y = (x @ x).mean_dim(1)  # matmul is required; mean_dim comes from burn-core's defaults
    np.testing.assert_allclose(y.to_numpy(), [[-7.5], [12.5]])
    np.testing.assert_allclose(burn.activation.softmax(x, 1).sum_dim(1).to_numpy(), [[1.0], [1.0]], rtol=1e-6)
