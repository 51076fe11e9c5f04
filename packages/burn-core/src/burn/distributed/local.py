"""The engine of a world of one process: every collective is a copy. Built in, needs nothing."""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from burn.distributed.engine import CollectiveEngine, Completed, EngineOp, Request


class LocalEngine(CollectiveEngine):
    """Rank 0 of 1: what `burn.distributed.init()` uses when no launcher started several processes.

    Example:
        >>> import numpy as np
        >>> out = np.empty(2)
        >>> LocalEngine().iall_reduce(np.ones(2), out, "sum").test(), out.tolist()
        (True, [1.0, 1.0])
    """

    name = "local"

    def __init__(self) -> None:
        self.rank, self.world_size, self.local_rank = 0, 1, 0

    def iall_reduce(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        np.copyto(recv, send)
        return Completed()

    def ibroadcast(self, buffer: np.ndarray, root: int) -> Request:
        return Completed()

    def iall_gather(self, send: np.ndarray, recv: np.ndarray) -> Request:
        np.copyto(recv, send)
        return Completed()

    def ireduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: EngineOp) -> Request:
        np.copyto(recv, send)
        return Completed()

    def ibarrier(self) -> Request:
        return Completed()

    def abort(self, code: int) -> NoReturn:
        import os

        os._exit(code)
