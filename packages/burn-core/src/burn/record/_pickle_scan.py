"""The pre-scan of an untrusted pickle: its opcodes walked (``pickletools.genops``, which runs
nothing) and held to `burn.Limits` before the real unpickler sees a byte.

The C unpickler trusts what a pickle declares: it allocates a length before reading it, grows its
memo table to the largest index, and builds whatever the opcodes say. A pickle whose objects share
references (the memo's GET) describes a DAG that Python code treats as the tree it expands to:
hashing a tuple of tuples of the same tuple, or printing it, takes time exponential in its size
in bytes (a "billion laughs"). So the scan follows the unpickler's stack with, for each item, the
size of the tree it expands to (shared references counted as copies) and its nesting depth, and
refuses a pickle that would build more than ``max_object_nodes`` such nodes in one object, nest
deeper than ``max_depth``, run more than ``max_pickle_opcodes`` opcodes, span more than
``max_pickle_bytes``, or keep more than ``max_memo_entries`` memo entries (or use a memo index at
or above that, which would size the unpickler's memo table).

Mutable containers (lists, dicts, sets, the results of calls) are tracked by reference, so items
added to one after it was memoized count wherever it is used later.
"""

from __future__ import annotations

import io
import pickletools
import warnings
from typing import IO, Any, Protocol, cast

from burn.foundations.limits import Limits
from burn.record.errors import RecordError

_FILL = 1 << 16
MAX_LINE = 1 << 16

# What each opcode does to the stack, as far as sizes go.
_SCALAR = 0  # pushes a leaf
_CONTAINER = 1  # pushes an empty mutable container
_MARK = 2
_POP = 3
_POP_MARK = 4
_DUP = 5
_TUPLE_MARK = 6  # pops to the mark, pushes an immutable container
_LIST_MARK = 7  # pops to the mark, pushes a mutable container
_TUPLE_N = 8  # pops N (TUPLE1-3), pushes an immutable container
_ADD_ONE = 9  # APPEND: pops one, adds it to the container below
_ADD_TWO = 10  # SETITEM, BUILD's (state) is _ADD_ONE
_ADD_MARK = 11  # APPENDS, SETITEMS, ADDITEMS
_CALL = 12  # pops N (callable and args), pushes the result (mutable: it may be filled later)
_CALL_MARK = 13  # OBJ, INST: pops to the mark, pushes the result
_GET = 14
_PUT = 15
_MEMOIZE = 16
_NOTHING = 17  # PROTO, FRAME, STOP, READONLY_BUFFER (no change of sizes)

_ACTIONS: dict[str, tuple[int, int]] = {
    **{
        name: (_SCALAR, 0)
        for name in (
            "INT BININT BININT1 BININT2 LONG LONG1 LONG4 STRING BINSTRING SHORT_BINSTRING BINBYTES "
            "SHORT_BINBYTES BINBYTES8 BYTEARRAY8 NEXT_BUFFER NONE NEWTRUE NEWFALSE UNICODE "
            "SHORT_BINUNICODE BINUNICODE BINUNICODE8 FLOAT BINFLOAT EMPTY_TUPLE EXT1 EXT2 EXT4 GLOBAL "
            "PERSID"
        ).split()
    },
    "EMPTY_LIST": (_CONTAINER, 0),
    "EMPTY_DICT": (_CONTAINER, 0),
    "EMPTY_SET": (_CONTAINER, 0),
    "MARK": (_MARK, 0),
    "POP": (_POP, 0),
    "POP_MARK": (_POP_MARK, 0),
    "DUP": (_DUP, 0),
    "TUPLE": (_TUPLE_MARK, 0),
    "FROZENSET": (_TUPLE_MARK, 0),
    "LIST": (_LIST_MARK, 0),
    "DICT": (_LIST_MARK, 0),
    "TUPLE1": (_TUPLE_N, 1),
    "TUPLE2": (_TUPLE_N, 2),
    "TUPLE3": (_TUPLE_N, 3),
    "APPEND": (_ADD_ONE, 0),
    "BUILD": (_ADD_ONE, 0),
    "SETITEM": (_ADD_TWO, 0),
    "APPENDS": (_ADD_MARK, 0),
    "SETITEMS": (_ADD_MARK, 0),
    "ADDITEMS": (_ADD_MARK, 0),
    "STACK_GLOBAL": (_CALL, 2),
    "REDUCE": (_CALL, 2),
    "NEWOBJ": (_CALL, 2),
    "NEWOBJ_EX": (_CALL, 3),
    "BINPERSID": (_CALL, 1),
    "OBJ": (_CALL_MARK, 0),
    "INST": (_CALL_MARK, 0),
    "GET": (_GET, 0),
    "BINGET": (_GET, 0),
    "LONG_BINGET": (_GET, 0),
    "PUT": (_PUT, 0),
    "BINPUT": (_PUT, 0),
    "LONG_BINPUT": (_PUT, 0),
    "MEMOIZE": (_MEMOIZE, 0),
    "PROTO": (_NOTHING, 0),
    "FRAME": (_NOTHING, 0),
    "STOP": (_NOTHING, 0),
    "READONLY_BUFFER": (_NOTHING, 0),
}
_LEAF = (1, 0)
_BY_OPCODE = {op: _ACTIONS.get(op.name, (-1, 0)) for op in pickletools.opcodes}


class _Source(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class _CappedRaw(io.RawIOBase):
    """The raw bytes under `ScanReader`'s buffer: at most the `available` bytes the container
    declares, and never past `cap` (`capped` tells that a read stopped there)."""

    def __init__(self, source: _Source, available: int, cap: int) -> None:
        super().__init__()
        self._source = source
        self._left = min(available, cap)
        self.beyond = available > cap  # the container holds more than the cap
        self.capped = False
        self.pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self._left)
        if not n:
            self.capped = self.beyond
            return 0
        data = self._source.read(n)
        buffer[: len(data)] = data
        self._left -= len(data) if data else self._left
        self.pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self.pos


class ScanReader:
    """A pickle's bytes as the scan reads them, from where `source` is: buffered (genops reads
    an opcode at a time), never more than the `available` bytes the container declares nor past
    `cap` (a read that asks for more gets what there is: a length inside a corrupt pickle cannot
    make it read or hold more), lines cut at 64 KiB.

    There is deliberately no `tell`, which genops would call at every opcode (`position` gives
    it, for errors and the end).
    """

    __slots__ = ("_buffer", "_raw", "_read", "_most")

    def __init__(self, source: _Source, available: int, cap: int) -> None:
        self._raw = _CappedRaw(source, available, cap)
        self._buffer = io.BufferedReader(self._raw, _FILL)
        self._read = self._buffer.read
        self._most = min(available, cap)

    def read(self, n: int = -1) -> bytes:
        if n > self._most or n < 0:  # more than there can be: nothing is read (the caller fails)
            if n > self._most and self._raw.beyond:
                self._raw.capped = True
            return b""
        return self._read(n)

    def readline(self, limit: int = -1) -> bytes:
        # Text opcodes (GLOBAL's module and name, INT, LONG...) read lines: short ones, unless
        # the pickle is garbage, which must not make the scan hold the rest of it at once.
        return self._buffer.readline(MAX_LINE if limit < 0 else min(limit, MAX_LINE))

    @property
    def capped(self) -> bool:
        """Whether a read stopped at `cap` with more bytes in the container."""
        return self._raw.capped

    def position(self) -> int:
        """Bytes consumed from the pickle's start."""
        return self._buffer.tell()


def scan_pickle(stream: ScanReader, limits: Limits, what: str) -> int:
    """Walk one pickle of `stream` up to its STOP, holding it to `limits`; returns its length in
    bytes. Nothing is built but counts. `what` names the pickle in errors (``archive/data.pkl``);
    positions in them are where the scan was (just after the opcode at fault).

    Raises:
        RecordError: a limit broken (the message names it), a length not backed by the bytes
            present, a stack underflow, or garbage.
    """
    max_nodes, max_depth = limits.max_object_nodes, limits.max_depth
    max_ops, max_memo = limits.max_pickle_opcodes, limits.max_memo_entries
    stack: list[Any] = []  # (size, depth) tuples; [size, depth] lists for mutable containers
    marks: list[int] = []
    memo: list[Any] = []  # by index; None: no entry
    memo_count = 0
    ops = 0
    by_opcode = _BY_OPCODE

    def at() -> str:
        return f"at byte {stream.position()}"

    def corrupt(message: str) -> RecordError:
        return RecordError(f"{what}: corrupt pickle: {message} {at()}")

    def check(size: int, depth: int) -> None:
        if size > max_nodes:
            raise RecordError(limits.refusal("max_object_nodes", size, f"{what}: an object {at()}"))
        if depth > max_depth:
            raise RecordError(limits.refusal("max_depth", depth, f"{what}: an object {at()}"))

    def pop_to_mark() -> list[Any]:
        if not marks:
            raise corrupt("no MARK before the opcode")
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    def pop(n: int) -> list[Any]:
        fence = marks[-1] if marks else 0
        if len(stack) - n < fence:
            raise corrupt("stack underflow")
        items = stack[len(stack) - n :]
        del stack[len(stack) - n :]
        return items

    def combine(items: list[Any]) -> tuple[int, int]:
        size, depth = 1, 0
        for item in items:
            size += item[0]
            if item[1] > depth:
                depth = item[1]
        check(size, depth + 1)
        return size, depth + 1

    def add(items: list[Any]) -> None:
        if len(stack) <= (marks[-1] if marks else 0):
            raise corrupt("stack underflow")
        top = stack[-1]
        if type(top) is not list:  # not a container we know to be mutable: track it as one now
            top = list(top)
            stack[-1] = top
        size, depth = combine(items)
        top[0] += size - 1
        top[1] = max(top[1], depth)
        check(top[0], top[1])

    try:
        with warnings.catch_warnings():  # genops decodes STRING escapes; bad ones only warn
            warnings.simplefilter("ignore", DeprecationWarning)
            for opcode, arg, _ in pickletools.genops(cast(IO[bytes], stream)):
                ops += 1
                if ops > max_ops:
                    raise RecordError(limits.refusal("max_pickle_opcodes", ops, what))
                action, n = by_opcode[opcode]
                if action == _SCALAR:
                    stack.append(_LEAF)
                elif action == _PUT or action == _MEMOIZE:
                    if len(stack) <= (marks[-1] if marks else 0):
                        raise corrupt("nothing to memoize")
                    index = memo_count if action == _MEMOIZE else arg
                    if not isinstance(index, int) or index < 0:
                        raise corrupt(f"memo index {index!r}")
                    if index >= max_memo:  # it would size the unpickler's memo table
                        where = f"{what}: memo index {index} {at()}"
                        raise RecordError(limits.refusal("max_memo_entries", index + 1, where))
                    if index >= len(memo):  # grown geometrically, never past the limit
                        memo.extend([None] * (min(max(index + 1, 2 * len(memo)), max_memo) - len(memo)))
                    if memo[index] is None:
                        memo_count += 1
                    memo[index] = stack[-1]
                elif action == _GET:
                    if not isinstance(arg, int) or not 0 <= arg < len(memo) or memo[arg] is None:
                        raise corrupt(f"memo key {arg!r} missing")
                    stack.append(memo[arg])
                elif action == _CONTAINER:
                    stack.append([1, 1])
                elif action == _MARK:
                    marks.append(len(stack))
                elif action == _TUPLE_N:
                    stack.append(combine(pop(n)))
                elif action == _TUPLE_MARK:
                    stack.append(combine(pop_to_mark()))
                elif action == _LIST_MARK or action == _CALL_MARK:
                    stack.append(list(combine(pop_to_mark())))
                elif action == _CALL:
                    stack.append(list(combine(pop(n))))
                elif action == _ADD_ONE:
                    add(pop(1))
                elif action == _ADD_TWO:
                    add(pop(2))
                elif action == _ADD_MARK:
                    add(pop_to_mark())
                elif action == _POP:
                    if marks and marks[-1] == len(stack):
                        marks.pop()  # as the C unpickler does: POP right after MARK drops the mark
                    else:
                        pop(1)
                elif action == _POP_MARK:
                    pop_to_mark()
                elif action == _DUP:
                    stack.append(pop(1)[0])
                    stack.append(stack[-1])
                elif action != _NOTHING:
                    raise RecordError(f"{what}: pickle opcode {opcode.name} is not supported")
    except RecordError:
        raise
    except Exception as exc:  # truncated, unknown opcode, bad argument, a length beyond the data...
        if stream.capped:  # it ran into the byte limit, not into the end of its data
            raise RecordError(limits.refusal("max_pickle_bytes", limits.max_pickle_bytes + 1, what)) from None
        raise RecordError(f"corrupt pickle: {type(exc).__name__}: {_short_text(exc)}") from exc
    return stream.position()


def _short_text(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
