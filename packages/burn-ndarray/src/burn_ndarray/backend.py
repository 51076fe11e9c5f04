"""`NdArray`: burn's NumPy backend (CPU)."""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar

import numpy

from burn.backend.base import Backend
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.foundations.dtype import DType
from burn_ndarray.fused import FusedOps
from burn_ndarray.ops.activation import ActivationOps, ThreadedActivationOps
from burn_ndarray.ops.attention import AttentionOps
from burn_ndarray.ops.bool import BoolOps
from burn_ndarray.ops.conv import ConvOps
from burn_ndarray.ops.embedding import EmbeddingOps
from burn_ndarray.ops.float import FloatOps, ThreadedFloatOps
from burn_ndarray.ops.int import IntOps
from burn_ndarray.ops.loss import LossOps
from burn_ndarray.ops.norm import NormOps
from burn_ndarray.ops.optim import OptimOps
from burn_ndarray.ops.pool import PoolOps
from burn_ndarray.ops.quantization import QuantizationOps
from burn_ndarray.ops.rnn import RnnOps
from burn_ndarray.ops.sampling import SamplingOps
from burn_ndarray.runtime import blas, malloc, threads
from burn_ndarray.runtime.dtypes import ALL_DTYPES, NP_OF

CAPABILITIES = Capabilities(dtypes=ALL_DTYPES, features=frozenset({"dlpack", "buffer_reuse"}))


# Ops bound to ufuncs (``float_add = np.add``) differ in type from the contract's methods on purpose.
# One mixin per op family (`burn_ndarray.ops`), the threaded paths of large tensors first.
class NdArray(  # type: ignore[misc]
    ThreadedFloatOps,
    ThreadedActivationOps,
    FloatOps,
    IntOps,
    BoolOps,
    ActivationOps,
    ConvOps,
    PoolOps,
    SamplingOps,
    EmbeddingOps,
    LossOps,
    RnnOps,
    AttentionOps,
    NormOps,
    OptimOps,
    QuantizationOps,
    FusedOps,
    Backend,
):
    """The NumPy backend: primitives are NumPy arrays on the CPU (one device, ``ndarray:cpu``).

    Every dtype of burn is supported; float16 and bfloat16 (``ml_dtypes``) reductions, matmul and
    module ops compute in float32 and round back. Primitives may be views and are never written
    to. A 0-d result of a NumPy ufunc is a NumPy scalar (``np.float32(1.0)``), and every op accepts
    those as primitives too: wrapping them back into 0-d arrays would cost every op a check.

    Args:
        float_dtype: element type of float tensors created without a dtype (default float32).
        int_dtype: element type of int tensors created without a dtype, and of indices (default int64).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn.tensor import TensorData
        >>> B = NdArray(float_dtype="float64")
        >>> str(B.default_device())
        'ndarray:cpu'
        >>> a = B.float_from_data(TensorData([1.0, 2.0]), B.default_device())
        >>> B.float_into_data(B.float_add(a, a)).to_list()
        [2.0, 4.0]
    """

    name: ClassVar[str] = "ndarray"
    xp: ClassVar[ModuleType] = numpy  # the array namespace of the shared op code (`burn.backend.xp`)

    def __init__(self, float_dtype: DType | str = DType.F32, int_dtype: DType | str = DType.I64) -> None:
        super().__init__(float_dtype=float_dtype, int_dtype=int_dtype, capabilities=CAPABILITIES)
        malloc.configure()  # fresh results reuse freed memory instead of faulting in new pages
        blas.configure()  # OpenBLAS's idle threads sleep after 0.3 ms instead of polling 80 ms
        threads.apply_env()  # BURN_NUM_THREADS sets NumPy's BLAS too
        self._device = Device("ndarray", "cpu", owner=self)
        self._devices = [self._device]
        self._int_np = NP_OF[self.int_dtype]

    def devices(self) -> list[Device]:
        """The one device, ``ndarray:cpu``."""
        return list(self._devices)

    def default_device(self) -> Device:
        return self._device
