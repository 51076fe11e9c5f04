"""Benchmark sections; each module has ``run(settings) -> list[Table]``. `SECTIONS` lists them in
the order `run.py` runs them."""

SECTIONS = (
    "ops", "autodiff_ops", "mlp", "cnn", "transformer", "lstm", "gru", "adam", "record", "scaling",
    "memory", "opencl", "fusion", "models", "quantization",
)  # fmt: skip
