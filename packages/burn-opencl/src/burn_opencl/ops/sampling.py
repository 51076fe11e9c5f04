"""Sampling ops of the contract (`burn.backend.ops.sampling`) on `CLTensor` primitives: nearest and
bilinear interpolation as separable linear maps (`module_common.SeparableMaps`); bicubic,
nearest-exact and grid sampling are burn-core's defaults."""

from __future__ import annotations

from typing import Any

from burn.backend.ops.sampling import SamplingOps as _CoreSamplingOps
from burn_opencl.ops.module_common import P, Pair, SeparableMaps


class OpenCLSamplingOps(SeparableMaps):
    """The sampling ops of `burn_opencl.OpenCL`."""

    def interpolate(self, x: P, output_size: Pair, mode: Any, align_corners: bool) -> P:
        if mode not in ("nearest", "bilinear"):
            # bicubic, nearest-exact: burn-core's default (separable selects), which also
            # rejects unknown modes by name.
            return _CoreSamplingOps.interpolate(self, x, output_size, mode, align_corners)  # type: ignore[arg-type]
        extra = () if mode == "nearest" else (bool(align_corners),)
        return self._separable(x, tuple(output_size), mode, False, *extra)  # type: ignore[arg-type]

    def interpolate_backward(
        self, x: P, output_grad: P, output_size: Pair, mode: Any, align_corners: bool
    ) -> P:
        if mode not in ("nearest", "bilinear"):
            return _CoreSamplingOps.interpolate_backward(
                self, x, output_grad, output_size, mode, align_corners  # type: ignore[arg-type]
            )
        extra = () if mode == "nearest" else (bool(align_corners),)
        return self._separable(output_grad, (x.shape[2], x.shape[3]), mode, True, *extra)
