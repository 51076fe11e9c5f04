"""The `DataLoader`'s workers: threads or processes that read and transform the items of batches.

Each worker has its own task and result channel. Batch ``p`` of an epoch goes to worker
``p % num_workers`` and the loader reads the results worker by worker in that same order, so the
batches come out in order whatever the number of workers, with no reordering buffer.

Process workers start with ``forkserver`` on Linux (``spawn`` where there is none), not ``fork``:
a forked child inherits a copy of every lock of the parent, held or not, and the parent of a
training run has threads (BLAS pools, progress bars, loggers, GPU runtimes), so a fork can deadlock
on a lock that a thread held at that moment (Python 3.12 warns about it and 3.14 left fork as
Linux's default). The fork server is a small process forked early, before those threads exist;
workers are forked from it. It preloads `burn.data.workers` once so that each worker starts
without importing burn again. The cost: the dataset and the transform are pickled to each worker
(a `MemmapDataset` pickles as its path), and scripts need the ``if __name__ == "__main__":`` guard;
``persistent_workers=True`` pays it once instead of every pass (`WorkerPool`).

Process workers return each batch's arrays through shared memory (`burn.data.transport`), not
pickled through the pipe.

A transform that transforms batches (`burn.data.transforms.supports_batch`: the image transforms
and their compositions) runs once over the batch's stacked images (`load_batch`), with the same
per-item generators and the same results as item by item.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

from burn.data.transforms import supports_batch
from burn.data.transport import Collated, Slot, SlotRing, close_attached, pack
from burn.errors import BurnError

Transform = Callable[[Any, np.random.Generator], Any]
"""``transform(item, rng) -> item``, with ``rng = numpy.random.default_rng([seed, epoch, index])``."""


class WorkerError(BurnError, RuntimeError):
    """A `DataLoader` worker failed in a way its exception cannot tell: it died, or what it raised
    could not be sent back. `index` is the dataset index of the item (None when unknown), `worker`
    the worker's number, `worker_traceback` the worker's traceback text."""

    def __init__(
        self, message: str, *, worker: int, index: int | None = None, worker_traceback: str = ""
    ) -> None:
        super().__init__(message)
        self.worker, self.index, self.worker_traceback = worker, index, worker_traceback


class ItemFailed(Exception):
    """Raised by `load_items`: reading or transforming item `index` raised `error`."""

    def __init__(self, index: int, error: Exception) -> None:
        super().__init__(index, error)
        self.index, self.error = index, error


def load_items(
    dataset: Any, transform: Transform | None, seed: int, epoch: int, indices: Sequence[int]
) -> list[Any]:
    """The items at `indices`, each transformed with its own generator (see `Transform`)."""
    items = []
    for index in indices:
        try:
            item = dataset[index]
            if transform is not None:
                item = transform(item, np.random.default_rng([seed, epoch, index]))
        except Exception as error:
            raise ItemFailed(index, error) from error
        items.append(item)
    return items


def load_batch(
    dataset: Any, transform: Transform | None, seed: int, epoch: int, indices: Sequence[int]
) -> Collated | list[Any]:
    """The items of `load_items`, transformed as one batch where the transform allows.

    When `transform` transforms batches (`burn.data.transforms.supports_batch`) and the items are
    (C, H, W) uint8 or float32 images of one shape (or tuples of one width starting with one),
    the images are stacked and transformed by one ``transform.apply_batch`` call with each item's
    ``default_rng([seed, epoch, index])``: a `Collated` batch whose first field holds the
    transformed images, the same values as `load_items` would give, bit for bit. Otherwise, and
    when anything in the batched path raises (reading an item, the transform), the items go
    through `load_items`, which raises the first failing item's error with its index.
    """
    if transform is None or not indices or not supports_batch(transform):
        return load_items(dataset, transform, seed, epoch, indices)
    try:
        items = [dataset[index] for index in indices]
        batch = _transform_batch(items, transform, seed, epoch, indices)
    except Exception:
        batch = None  # the item-by-item path says which item failed, and how
    return load_items(dataset, transform, seed, epoch, indices) if batch is None else batch


def _transform_batch(
    items: list[Any], transform: Any, seed: int, epoch: int, indices: Sequence[int]
) -> Collated | None:
    """The `Collated` batch of `load_batch`, None when the items' images do not stack."""
    first = items[0]
    if isinstance(first, tuple):
        width: int | None = len(first)
        if not width or not all(isinstance(item, tuple) and len(item) == width for item in items):
            return None
        images = [item[0] for item in items]
    else:
        width, images = None, items
    head = images[0]
    if not (
        isinstance(head, np.ndarray)
        and head.ndim == 3
        and head.dtype in (np.uint8, np.float32)
        and all(isinstance(i, np.ndarray) and i.shape == head.shape and i.dtype == head.dtype for i in images)
    ):
        return None
    rngs = [np.random.default_rng([seed, epoch, index]) for index in indices]
    out = transform.apply_batch(np.stack(images), rngs)
    rest: list[np.ndarray | list[Any]] = [[item[k] for item in items] for k in range(1, width or 1)]
    return Collated(width, [out, *rest], len(items))


# A task is (position of the batch in the epoch, epoch, item indices, the shared-memory slot to
# fill or None); None stops the worker. The epoch travels with each task: a worker that lives
# across epochs (persistent_workers) seeds each item with (seed, epoch, index) all the same.
Task = tuple[int, int, list[int], Slot | None]


def _process_main(conn: Any, dataset: Any, transform: Transform | None, seed: int) -> None:
    # Ctrl-C goes to the whole process group: the main process handles it and closes the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    attached: dict[int, Any] = {}
    try:
        _serve(conn, dataset, transform, seed, attached)
    finally:
        close_attached(attached)


def _serve(conn: Any, dataset: Any, transform: Transform | None, seed: int, attached: dict[int, Any]) -> None:
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the main process went away
            return
        if task is None:
            return
        position, epoch, indices, slot = task
        try:
            batch = load_batch(dataset, transform, seed, epoch, indices)
            message: tuple[Any, ...] = ("ok", position, pack(batch, slot, attached))
        except ItemFailed as failed:
            message = _error_message(position, failed.index, failed.error)
        try:
            conn.send(message)
        except (BrokenPipeError, EOFError, ConnectionResetError):
            return
        except Exception as error:  # the items do not pickle (nothing was written: send why instead)
            try:
                conn.send(_error_message(position, None, error))
            except (BrokenPipeError, EOFError, ConnectionResetError):
                return


def _error_message(position: int, index: int | None, error: BaseException) -> tuple[Any, ...]:
    text = "".join(traceback.format_exception(error))
    try:
        payload: bytes | None = pickle.dumps(error)
    except Exception:
        payload = None
    return ("error", position, index, payload, f"{type(error).__qualname__}: {error}", text)


def _default_context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # has effect only until the fork server starts (once per process); harmless after
        context.set_forkserver_preload(["burn.data.workers"])
        return context
    return multiprocessing.get_context("spawn")


class ProcessWorker:
    """One worker process, fed tasks through its own pipe."""

    kind = "process"

    def __init__(
        self, number: int, dataset: Any, transform: Transform | None, seed: int, start_method: str | None
    ) -> None:
        self.number = number
        context: Any = multiprocessing.get_context(start_method) if start_method else _default_context()
        self.conn: Any
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(
            target=_process_main,
            args=(child, dataset, transform, seed),
            daemon=True,
            name=f"burn-data-{number}",
        )
        try:
            self.process.start()
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            self.conn.close()
            raise TypeError(
                "DataLoader: worker_type='process' sends the dataset and the transform to each worker "
                "by pickling them, and they do not pickle (a lambda or a local function?): define them "
                f"at module level, or use worker_type='thread'. The error: {error}"
            ) from error
        finally:
            child.close()  # the main process keeps one end: a dead worker reads as EOF

    def describe(self) -> str:
        return f"DataLoader worker {self.number} (process {self.process.pid})"

    def send(self, task: Task) -> None:
        self.conn.send(task)

    def ready(self) -> bool:
        """Whether a message is waiting to be read."""
        try:
            return bool(self.conn.poll(0))
        except (OSError, EOFError):
            return False

    def receive(self) -> tuple[Any, ...]:
        # waiting on the sentinel too: a worker that dies (killed, os._exit, a crash in C) is noticed
        ready = multiprocessing.connection.wait([self.conn, self.process.sentinel])
        if self.conn in ready:  # a message written before an exit is still read first
            with contextlib.suppress(EOFError):
                message: tuple[Any, ...] = self.conn.recv()
                return message
        self.process.join(timeout=5)
        raise WorkerError(
            f"{self.describe()} exited unexpectedly (exit code {self.process.exitcode}); "
            "what it wrote to stderr may say why",
            worker=self.number,
        )

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        # closing our end also stops a worker blocked sending a batch nobody will read
        self.conn.close()
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.process.close()


class ThreadWorker:
    """One worker thread (for transforms that release the GIL, or that do not pickle)."""

    kind = "thread"

    def __init__(self, number: int, dataset: Any, transform: Transform | None, seed: int) -> None:
        self.number = number
        self.tasks: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.stopped = threading.Event()
        # daemon: a loop abandoned without closing cannot keep the interpreter from exiting
        self.thread = threading.Thread(
            target=self._run, args=(dataset, transform, seed), daemon=True, name=f"burn-data-{number}"
        )
        self.thread.start()

    def _run(self, dataset: Any, transform: Transform | None, seed: int) -> None:
        while True:
            task = self.tasks.get()
            if task is None or self.stopped.is_set():
                return
            position, epoch, indices, _ = task  # threads share memory: no slot to fill
            try:
                self.results.put(("ok", position, load_batch(dataset, transform, seed, epoch, indices)))
            except ItemFailed as failed:
                self.results.put(("raised", position, failed.index, failed.error))
            except BaseException as error:
                self.results.put(("raised", position, None, error))
                return

    def describe(self) -> str:
        return f"DataLoader worker {self.number} (thread)"

    def send(self, task: Task) -> None:
        self.tasks.put(task)

    def ready(self) -> bool:
        """Whether a result is waiting to be read."""
        return not self.results.empty()

    def receive(self) -> tuple[Any, ...]:
        while True:
            try:
                return self.results.get(timeout=0.5)
            except queue.Empty:
                if not self.thread.is_alive():
                    raise WorkerError(f"{self.describe()} stopped unexpectedly", worker=self.number) from None

    def close(self) -> None:
        self.stopped.set()
        self.tasks.put(None)
        # a batch still being read finishes in the background: the thread is a daemon
        self.thread.join(timeout=2)


def raise_failure(message: tuple[Any, ...], worker: ProcessWorker | ThreadWorker, epoch: int) -> None:
    """Raises what a worker's error `message` reports, naming the worker and the item."""
    where = worker.describe()
    if message[0] == "raised":  # a thread: the exception itself, its traceback attached
        _, _, index, error = message
        error.add_note(f"raised in {where} while loading item {index} of the dataset (epoch {epoch})")
        raise error
    _, _, index, payload, summary, text = message
    error = None
    if payload is not None:
        with contextlib.suppress(Exception):
            error = pickle.loads(payload)
    item = "an item" if index is None else f"item {index}"
    if not isinstance(error, BaseException):
        raise WorkerError(
            f"{where} failed on {item} of the dataset (epoch {epoch}): {summary}\n{text}",
            worker=worker.number,
            index=index,
            worker_traceback=text,
        )
    error.add_note(
        f"raised in {where} while loading {item} of the dataset (epoch {epoch}); its traceback:\n{text}"
    )
    raise error


class WorkerPool:
    """The workers of a `DataLoader` pass (or of every pass, with ``persistent_workers``).

    `run` keeps each worker busy with up to `prefetch` tasks (batch ``p`` goes to worker
    ``p % count``, at most ``2 * count * prefetch`` positions past the batch awaited) and yields the
    batches in order. Process workers' results are read as soon as any arrives, copied out of the
    worker's `SlotRing` (`prefetch` shared-memory blocks, `burn.data.transport`) and kept until
    their turn, and that worker gets its next task at once: one slow batch does not leave the
    other workers idle. A slot is free again once its batch was copied out, before the next task.
    An error is raised in its batch's turn.

    A pass left early (the generator closed: ``break``) leaves up to `prefetch` results per worker
    in flight; a pool that lives on reads and drops them at the start of its next pass, so leaving
    a loop never waits for workers. Any other exception in a pass closes the pool.
    """

    def __init__(
        self,
        count: int,
        dataset: Any,
        transform: Transform | None,
        seed: int,
        *,
        worker_type: str,
        prefetch: int,
        start_method: str | None = None,
        need: int = 0,
    ) -> None:
        self.prefetch = prefetch
        self.need = need  # bytes the array fields of a batch take; 0: not known yet
        self.busy = False
        self.closed = False
        self.workers: list[ProcessWorker | ThreadWorker] = []
        self.rings: list[SlotRing] = []
        self.pending: list[collections.deque[tuple[int, Slot | None]]] = []  # (position, slot)
        try:
            for number in range(count):
                if worker_type == "thread":
                    self.workers.append(ThreadWorker(number, dataset, transform, seed))
                else:
                    self.workers.append(ProcessWorker(number, dataset, transform, seed, start_method))
                    self.rings.append(SlotRing(number, prefetch))
                self.pending.append(collections.deque())
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.workers)

    def run(
        self, tasks: list[list[int]], epoch: int
    ) -> Generator[tuple[Collated | list[Any], int, int, bool]]:
        """Yields ``(batch, when the wait for it began, nanoseconds waited, ready)`` for each task,
        in order (`time.perf_counter_ns`): a batch is the list of items, or a `Collated` batch from
        a process worker; `ready` tells whether its worker had sent it before it was asked for
        (then the wait is this process's own time to read it, and its scheduling)."""
        if self.closed:
            raise RuntimeError("DataLoader: this worker pool is closed")
        self.busy = True
        count = len(self.workers)
        window = 2 * count * self.prefetch  # how far past the batch awaited tasks may be sent
        following = list(range(count))  # the next position of each worker: p goes to p % count
        done: dict[int, tuple[Any, ...]] = {}  # batches that arrived before their turn

        def fill(number: int, awaited: int) -> None:
            pending = self.pending[number]
            while len(pending) < self.prefetch and following[number] < min(len(tasks), awaited + window):
                self._send(number, following[number], epoch, tasks[following[number]])
                following[number] += count

        def take(number: int) -> None:
            message = self.workers[number].receive()
            position, slot = self.pending[number].popleft()
            if message[0] != "ok":
                if self.rings:
                    self.rings[number].release(slot)
                done[position] = ("failed", message, number)  # raised in its turn
                return
            if message[1] != position:
                raise RuntimeError(f"DataLoader: expected batch {position}, a worker sent {message[1]}")
            done[position] = ("ok", self._unpack(number, message[2], slot))

        try:
            self._drop_stale()
            for position in range(len(tasks)):
                number = position % count
                for other in range(count):
                    fill(other, position)
                began = time.perf_counter_ns()
                ready = position in done or self.workers[number].ready()
                while position not in done:
                    # Process workers: whatever any of them finished is read now, its block copied
                    # out and the worker given its next task, so a worker ahead of the others
                    # keeps working instead of waiting for the batch awaited (torch's loader
                    # does the same with its reorder buffer).
                    for other in self._finished() if self.rings else [number]:
                        take(other)
                        fill(other, position)
                waited = time.perf_counter_ns() - began
                entry = done.pop(position)
                if entry[0] == "failed":
                    raise_failure(entry[1], self.workers[entry[2]], epoch)
                yield entry[1], began, waited, ready
        except GeneratorExit:  # left early: what is in flight is dropped by the next pass
            raise
        except BaseException:
            self.close()
            raise
        finally:
            self.busy = False

    def _send(self, number: int, position: int, epoch: int, indices: list[int]) -> None:
        slot = self.rings[number].take(self.need) if self.rings else None
        self.pending[number].append((position, slot))
        self.workers[number].send((position, epoch, indices, slot))

    def _finished(self) -> list[int]:
        """Process workers with a message to read or that exited (blocks until there is one)."""
        owners: dict[Any, int] = {}
        for number, worker in enumerate(self.workers):
            if self.pending[number] and isinstance(worker, ProcessWorker):
                owners[worker.conn] = owners[worker.process.sentinel] = number
        return sorted({owners[ready] for ready in multiprocessing.connection.wait(list(owners))})

    def _unpack(self, number: int, payload: Any, slot: Slot | None) -> Collated | list[Any]:
        if not self.rings:
            batch: list[Any] = payload
            return batch
        if payload[0] == "items" and payload[2] > self.need:  # blocks sized from this batch on
            self.need = payload[2]
        return self.rings[number].unpack(payload, slot)

    def _drop_stale(self) -> None:
        for number, pending in enumerate(self.pending):
            while pending:
                self.workers[number].receive()  # an error of a pass nobody reads is dropped too
                _, slot = pending.popleft()
                if self.rings:
                    self.rings[number].release(slot)

    def close(self) -> None:
        """Stop the workers, then unlink the shared-memory blocks (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for worker in self.workers:
            with contextlib.suppress(Exception):
                worker.close()
        for ring in self.rings:
            ring.close()
