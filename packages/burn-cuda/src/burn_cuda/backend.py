"""`Cuda`: burn's backend on CuPy (NVIDIA GPUs)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

import cupy

from burn.backend.base import Backend
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.backend.xp.loss import XpLossOps
from burn.backend.xp.sampling import XpInterpolateOps
from burn.errors import BackendUnavailableError
from burn.foundations.dtype import DType
from burn_cuda import _runtime
from burn_cuda._dtypes import NP_OF, SUPPORTED
from burn_cuda._random import CudaRandom
from burn_cuda.fusion import FusionOps
from burn_cuda.ops.activation import CudaActivationOps
from burn_cuda.ops.bool import CudaBoolOps
from burn_cuda.ops.conv import CudaConvOps
from burn_cuda.ops.embedding import CudaEmbeddingOps
from burn_cuda.ops.float import CudaFloatOps
from burn_cuda.ops.int import CudaIntOps
from burn_cuda.ops.optim import CudaOptimOps
from burn_cuda.ops.pool import CudaPoolOps
from burn_cuda.pinned import PinnedHostBuffer


# Ops bound to CuPy ufuncs (``float_add = cupy.add``) differ in type from the contract's methods on purpose.
class Cuda(  # type: ignore[misc]
    CudaOptimOps,
    CudaFloatOps,
    CudaIntOps,
    CudaBoolOps,
    CudaConvOps,
    CudaPoolOps,
    XpInterpolateOps,
    CudaEmbeddingOps,
    CudaActivationOps,
    XpLossOps,
    FusionOps,
    Backend,
):
    """The CUDA backend: primitives are CuPy arrays on NVIDIA GPUs, one device ``cuda:N`` per GPU.

    Ops are queued asynchronously on each device's default CuPy stream (`sync` waits; reading data
    back waits for what produced it). Matmul and convolutions run on cuBLAS; activations and integer
    division are fused CUDA kernels; random ops use cuRAND's Philox per device, reproducible with
    `seed`. Every burn dtype is supported (bfloat16 with CuPy 14 or later, as
    ``ml_dtypes.bfloat16`` arrays); float16 and bfloat16 reductions, convolutions and activations
    compute in float32 and round once. With several GPUs each op runs on the device of
    its operands. It implements the fusion contract (`burn_cuda.fusion`): ``"fusion(cuda)"`` runs
    chains of element-wise ops as one generated kernel.

    Args:
        float_dtype: element type of float tensors created without a dtype (default float32).
        int_dtype: element type of int tensors created without a dtype, and of indices (default int64).
        device: the default device: an ordinal or ``"cuda:N"`` (default ``cuda:0``).

    Example:
        >>> import burn
        >>> B = burn.backend("cuda")  # doctest: +SKIP
        >>> x = burn.Tensor.ones((2, 3), device=B.default_device())  # doctest: +SKIP
        >>> str(x.device)  # doctest: +SKIP
        'cuda:0'
    """

    name: ClassVar[str] = "cuda"
    xp: ClassVar[ModuleType] = cupy  # the array namespace of the shared op code (`burn.backend.xp`)
    random_state = CudaRandom  # the host generator and a Philox generator per device (`_random`)

    def __new__(cls, *args: Any, **kwargs: Any) -> Cuda:
        # With several GPUs, ops must run on their operands' device: a subclass wraps each op.
        if cls is Cuda and _runtime.device_count() > 1:
            cls = _multi_device_class()
        return super().__new__(cls)

    def __init__(
        self,
        float_dtype: DType | str = DType.F32,
        int_dtype: DType | str = DType.I64,
        device: int | str | None = None,
    ) -> None:
        count = _runtime.device_count()
        if count == 0:
            raise BackendUnavailableError(
                "cuda: no CUDA device (CuPy sees none): use a machine with an NVIDIA GPU"
            )
        self._device_spec = device
        self._index = _runtime.parse_device(device, count)
        self._devices = [Device("cuda", i, self) for i in range(count)]
        features = {"dlpack", "async", "pinned_host"} | ({"multi_device"} if count > 1 else set())
        super().__init__(float_dtype, int_dtype, Capabilities(SUPPORTED, frozenset(features)))
        self._int_np = NP_OF[self.int_dtype]

    # -- devices ----------------------------------------------------------------------------------
    def devices(self) -> list[Device]:
        """Every GPU CuPy sees, ``cuda:0`` .. ``cuda:N-1`` (``CUDA_VISIBLE_DEVICES`` applies)."""
        return list(self._devices)

    def default_device(self) -> Device:
        return self._devices[self._index]

    def device_names(self) -> list[str]:
        """``"cuda:i <GPU name>"`` for each device, in `devices()` order."""
        import cupy as cp

        names = []
        for i in range(len(self._devices)):
            props = cp.cuda.runtime.getDeviceProperties(i)
            name = props["name"]
            names.append(f"cuda:{i} {name.decode() if isinstance(name, bytes) else name}")
        return names

    def host_buffer(self, nbytes: int, device: Device | None = None) -> PinnedHostBuffer:
        """`nbytes` of page-locked host memory that `device` uploads from asynchronously
        (the ``"pinned_host"`` capability; see `burn_cuda.pinned`)."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"cuda host_buffer: nbytes must be a positive int, got {nbytes!r}")
        ordinal = _runtime.device_id(device or self.default_device(), len(self._devices))
        return PinnedHostBuffer(nbytes, ordinal)

    def sync(self, device: Device | None = None) -> None:
        """Wait until the kernels queued on `device` (every device when None) have run."""
        ordinal = None if device is None else _runtime.device_id(device, len(self._devices))
        _runtime.sync(ordinal, len(self._devices))

    def options(self) -> dict[str, Any]:
        options = super().options()
        if self._device_spec is not None:
            options["device"] = self._device_spec
        return options


_MULTI: list[type[Cuda]] = []


def _multi_device_class() -> type[Cuda]:
    if not _MULTI:
        _MULTI.append(_runtime.scope_ops(Cuda))
    return _MULTI[0]
