"""Kernel generators and launchers, one module per op family."""
