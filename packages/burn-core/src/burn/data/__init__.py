"""Data pipeline: datasets, the loader and augmentation transforms (`burn.data.transforms`)."""
