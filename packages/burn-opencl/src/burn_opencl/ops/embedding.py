"""Embedding ops of the contract (`burn.backend.ops.embedding`) on `CLTensor` primitives: a select
of rows, and its gradient a select-add into zeros (`burn_opencl.kernels.index`)."""

from __future__ import annotations

from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import index as ix
from burn_opencl.ops.module_common import P, reshaped

_run = ew.run


class OpenCLEmbeddingOps:
    """The embedding ops of `burn_opencl.OpenCL`."""

    def embedding(self, weights: P, indices: P) -> P:
        flat = reshaped(indices, (indices.n,))
        return reshaped(ix.select(weights, 0, flat), indices.shape + (weights.shape[1],))

    def embedding_backward(self, weights: P, output_grad: P, indices: P) -> P:
        zeros = _run(
            ew.FILL,
            [],
            output_grad.dtype,
            (0.0,),
            compute=output_grad.dtype,
            shape=weights.shape,
            rt=weights.rt,
        )
        flat = reshaped(indices, (indices.n,))
        return ix.select_add(zeros, 0, flat, reshaped(output_grad, (indices.n, weights.shape[1])))
