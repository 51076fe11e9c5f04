"""What burn-ndarray's ops run on, and no op itself: the thread count and the Python pool
(`threads`), numba's TBB pool (`tbb`), how large ops split between them (`split`), NumPy's BLAS
threads (`blas`), glibc's malloc settings (`malloc`), numba's disk cache made safe for several
processes (`numba_cache`), recycled buffers for large results (`recycle`), the proof that a
handed-over array is an op's alone (`ownership`) and NumPy's dtype tables (`dtypes`).

Nothing here imports the ops or the compiled kernels. numba is loaded only by `tbb_start`, which
`tbb` imports when it starts numba's pool.
"""
