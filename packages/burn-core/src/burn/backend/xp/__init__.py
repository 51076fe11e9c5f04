"""Op code written once against an array namespace, for backends whose arrays follow NumPy's API.

`burn-ndarray` (NumPy) and `burn-cuda` (CuPy) share these bodies: a fix lands in one place, and
each backend keeps only what differs (NumPy's ``out=`` passes and buffer reuse; CuPy's fused
kernels, streams and devices). A third-party backend on another NumPy-like library can use them
too.

Convention: a shared function takes the namespace as its first argument, ``xp`` (the module
``numpy`` or ``cupy``); a shared mixin class reads it from the backend's class attribute ``xp``.
Nothing here imports CuPy: the namespace always comes from the backend.
"""
