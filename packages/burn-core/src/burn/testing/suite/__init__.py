"""The conformance tests (``test_*.py``); run with ``pytest --pyargs burn.testing --burn-backend NAME``."""
