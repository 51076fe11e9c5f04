"""The `Backend` base class: devices, element types, capabilities, seeding, and every op family."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import numpy as np

from burn.backend import instances as _instances
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.backend.ops.activation import ActivationOps
from burn.backend.ops.attention import AttentionOps
from burn.backend.ops.bool import BoolOps
from burn.backend.ops.conv import ConvOps
from burn.backend.ops.embedding import EmbeddingOps
from burn.backend.ops.float import FloatOps
from burn.backend.ops.int import IntOps
from burn.backend.ops.loss import LossOps
from burn.backend.ops.norm import NormOps
from burn.backend.ops.optim import OptimOps
from burn.backend.ops.pool import PoolOps
from burn.backend.ops.quantization import QuantizationOps
from burn.backend.ops.rnn import RnnOps
from burn.backend.ops.sampling import SamplingOps
from burn.backend.random_state import RandomState
from burn.foundations import ownership as _ownership
from burn.foundations.dtype import DType


class Backend(
    FloatOps, IntOps, BoolOps, ActivationOps, ConvOps, PoolOps, SamplingOps, EmbeddingOps, LossOps, RnnOps,
    AttentionOps, NormOps, OptimOps, QuantizationOps,
):
    """A backend: ops on opaque primitives, one mixin per op family (`burn.backend.ops`).

    Subclasses set `name`, implement the required ops (see `burn.backend.contract_ops`) and call
    ``super().__init__(float_dtype=..., int_dtype=...)``. Defaults of every other op are inherited.

    Attributes:
        name: the name the backend is selected by (``"ndarray"``; ``"autodiff(ndarray)"``).
        float_dtype: element type of float tensors created without an explicit dtype.
        int_dtype: element type of int tensors created without an explicit dtype (and of indices).
        capabilities: the dtypes and features the backend declares.
        ad_enabled: whether the backend records gradients.
        random_state: the class of the backend's random state (`RandomState`, or a subclass with
            a device generator's state); see `seed` and `current_random`.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")  # doctest: +SKIP
        >>> B.float_dtype, str(B.default_device())  # doctest: +SKIP
        (burn.float32, 'ndarray:cpu')
    """

    name: ClassVar[str] = "backend"
    ad_enabled: ClassVar[bool] = False

    float_dtype: DType
    int_dtype: DType
    bool_dtype: DType = DType.BOOL
    capabilities: Capabilities
    _reuse: bool = False  # set by __init__: whether the Tensor layer calls the *_owned ops
    random_state: ClassVar[type[RandomState]] = RandomState

    def __init__(
        self,
        float_dtype: DType | str = DType.F32,
        int_dtype: DType | str = DType.I64,
        capabilities: Capabilities | None = None,
    ) -> None:
        self.float_dtype = DType.from_any(float_dtype)
        self.int_dtype = DType.from_any(int_dtype)
        if not self.float_dtype.is_float:
            raise ValueError(f"{self.name}: float_dtype must be a float type, got {self.float_dtype}")
        if not self.int_dtype.is_int:
            raise ValueError(f"{self.name}: int_dtype must be an int type, got {self.int_dtype}")
        self.capabilities = capabilities or Capabilities(
            dtypes=frozenset({self.float_dtype, self.int_dtype, DType.BOOL})
        )
        missing = {self.float_dtype, self.int_dtype} - self.capabilities.dtypes
        if missing:
            names = ", ".join(sorted(d.value for d in missing))
            raise ValueError(f"backend {self.name!r} does not support {names}")
        self._seed_lock = threading.Lock()
        self._shared_random = self.random_state(None)
        self._thread_random = threading.local()  # .state: the calling thread's own, if it seeded one
        # Buffer reuse (burn.foundations.ownership): only where the backend declares it.
        self._reuse = _ownership.ENABLED and self.capabilities.has("buffer_reuse")
        _instances.register(self)

    # -- devices ------------------------------------------------------------------------------
    def default_device(self) -> Device:
        """The device tensors go to when none is given."""
        return self.devices()[0]

    def devices(self) -> list[Device]:
        """Every device this backend can use here."""
        raise NotImplementedError(f"backend {self.name!r} does not list its devices")

    def sync(self, device: Device | None = None) -> None:
        """Wait until queued work on `device` (every device when None) is done."""

    def seed(self, seed: int | None, *, thread: bool = False) -> None:
        """Make random ops reproducible from now on.

        By default the backend has one generator that every thread draws from: after
        ``seed(n)``, the values a thread gets depend on the draws other threads make in between
        (as with PyTorch's global generator), so two models trained at once on two threads differ
        from the same runs made one after the other as soon as either draws (lazy initialization,
        dropout). With ``thread=True`` the calling thread gets a generator of its own, seeded with
        `seed`: its draws follow from `seed` alone, the same values as after ``seed(seed)`` in a
        single thread, and the shared generator is neither used nor advanced by it.

        Args:
            seed: the seed; None: fresh entropy (with ``thread=True``: drop the calling thread's
                own generator, so that it draws from the shared one again).
            thread: seed a generator of the calling thread only, for every random op of this
                backend (and of decorators over it, such as autodiff) made on that thread. It
                ends with the thread.

        Example:
            >>> import burn
            >>> B = burn.backend("ndarray")  # doctest: +SKIP
            >>> B.seed(0, thread=True)  # in each worker thread: its own, reproducible draws  # doctest: +SKIP
        """
        if thread:
            self._thread_random.state = None if seed is None else self.random_state(seed)
            return
        with self._seed_lock:
            self._shared_random = self.random_state(seed)

    def current_random(self) -> RandomState:
        """The random state draws use on the calling thread: its own after
        ``seed(n, thread=True)``, else the one every thread shares."""
        own: RandomState | None = getattr(self._thread_random, "state", None)
        return own if own is not None else self._shared_random

    @property
    def rng(self) -> np.random.Generator:
        """The host generator random ops draw from on the calling thread (`current_random`)."""
        return self.current_random().rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self.current_random().rng = value

    # -- decorators ---------------------------------------------------------------------------
    @property
    def inner(self) -> Backend:
        """The wrapped backend for decorators (autodiff); the backend itself otherwise."""
        return self

    # -- autodiff hooks: only decorator backends with ad_enabled implement these ----------------
    def _no_autodiff(self, what: str) -> TypeError:
        return TypeError(
            f"{what} needs an autodiff backend; {self.name!r} has none: "
            f"use burn.backend('autodiff({self.name})')"
        )

    def backward(self, tensor: Any) -> Any:
        """Run backward from a float primitive; returns a `Gradients` object."""
        raise self._no_autodiff("backward()")

    def grad(self, tensor: Any, grads: Any) -> Any:
        """The gradient of a float primitive in `grads` as an inner primitive, or None."""
        raise self._no_autodiff("grad()")

    def grad_remove(self, tensor: Any, grads: Any) -> Any:
        """Like `grad`, and removes it from `grads`."""
        raise self._no_autodiff("grad_remove()")

    def float_inner(self, tensor: Any) -> Any:
        """The inner backend's primitive (identity here)."""
        return tensor

    def float_from_inner(self, tensor: Any) -> Any:
        """Wrap an inner primitive as one of this backend, not requiring grad (identity here)."""
        return tensor

    def __repr__(self) -> str:
        return f"<burn backend {self.name} float={self.float_dtype.value} int={self.int_dtype.value}>"

    def options(self) -> dict[str, Any]:
        """Options that rebuild an equal backend with `burn.backend(name, **options)`."""
        return {"float_dtype": self.float_dtype.value, "int_dtype": self.int_dtype.value}
