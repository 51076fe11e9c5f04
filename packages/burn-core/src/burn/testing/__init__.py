"""The burn conformance suite: every op of the backend contract, checked against NumPy.

Run it against any installed backend (a third party's included)::

    pytest --pyargs burn.testing --burn-backend ndarray
    pytest --pyargs burn.testing --burn-backend "autodiff(ndarray)"
    pytest --pyargs burn.testing --burn-backend "ndarray?float_dtype=float64"
    pytest --pyargs burn.testing --burn-plugin my_backend.plugin --burn-backend mine  # not installed

The pytest plugin (`burn.testing.plugin`, registered as the ``pytest11`` entry point ``burn``)
adds ``--burn-backend`` and the `backend` fixture. A run that would test nothing stops with a usage
error instead of passing: no ``--burn-backend``, an unknown name, or a backend whose probe says it
cannot run here (``--burn-allow-unavailable`` skips the suite for it instead, by choice). Tests
declare the contract ops they check with `covers`; a meta-test fails when an op of
`burn.backend.contract_ops()` has no test.

Importing it loads `burn` and pytest only; backends are built on first use of the `backend`
fixture, so the plugin costs little in projects that do not use it.
"""

from burn.testing.markers import covers

__all__ = ["covers"]
