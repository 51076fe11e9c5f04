"""The op families of the backend contract on CuPy arrays, one mixin per family that burn-cuda
overrides (the module stems are the contract's, `burn.backend.ops`): ``float``, ``int``,
``bool``, ``activation``, ``conv``, ``pool``, ``embedding`` and ``optim``. Each starts from the
shared array-namespace bodies of its family (`burn.backend.xp`); `burn_cuda.Cuda` composes them
with the shared sampling and loss ops, which burn-cuda takes as they are.

What CuPy does its own way for every tensor kind (uploads, devices, gathers and sums by atomics)
is in `burn_cuda._common`, bound under each kind's names by the kind mixins; the CUDA kernels are
in `burn_cuda.kernels`, by family.
"""
