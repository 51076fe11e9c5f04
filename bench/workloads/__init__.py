"""Training workloads built three ways from the same initial weights and data: burn, PyTorch and a
hand-written NumPy floor (manual backward, in-place Adam). Each builder returns a `Workload`."""
