"""burn-cuda's own CUDA kernels, one module per op family that uses them (`index` holds those of
the gather and scatter ops every kind and the pooling gradient share).

Fused kernels are `cupy.ElementwiseKernel`s: one launch and one pass over memory where the op
would otherwise be several CuPy calls, each with its own temporary. Float kernels are instantiated
for float32 and float64 (``T``); float16 inputs go through float32 (see `burn_cuda._dtypes.work`).
Kernels are compiled on first use and cached by CuPy, on disk too.
"""
