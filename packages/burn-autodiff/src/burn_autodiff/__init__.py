"""burn-autodiff: the ``autodiff`` backend decorator, making any burn backend differentiable.

    >>> import burn  # doctest: +SKIP
    >>> B = burn.backend("autodiff(ndarray)")  # doctest: +SKIP
    >>> x = burn.Tensor.from_data([1.0, 2.0, 3.0], backend=B).require_grad()  # doctest: +SKIP
    >>> grads = (x * x).sum().backward()  # doctest: +SKIP
    >>> x.grad(grads).tolist()  # doctest: +SKIP
    [2.0, 4.0, 6.0]

`Autodiff(inner, checkpointing="balanced")` builds a backend with gradient checkpointing.
"""

from burn_autodiff._version import __version__
from burn_autodiff.backend import Autodiff
from burn_autodiff.errors import AutodiffError
from burn_autodiff.gradients import Gradients
from burn_autodiff.node import ADTensor, Node

__all__ = ["ADTensor", "Autodiff", "AutodiffError", "Gradients", "Node", "__version__"]
