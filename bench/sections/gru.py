"""GRU training step (one layer with the reset gate after the hidden projection, 128 inputs, 256
hidden, 32 steps, batch 32; Linear head on the last hidden state, cross-entropy, Adam) and forward
+ backward alone: burn autodiff(ndarray) vs torch (`nn.GRU`)."""

from __future__ import annotations

from harness import Settings, Table
from workloads.gru import burn_gru, init_weights, torch_gru

from sections.lstm import recurrent


def run(settings: Settings) -> list[Table]:
    return recurrent(settings, "GRU", burn_gru, torch_gru, init_weights)
