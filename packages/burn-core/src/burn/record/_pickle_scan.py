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

import pickletools
from typing import IO, Any, Protocol, cast

from burn.foundations.limits import Limits
from burn.record.errors import RecordError

MAX_LINE = 1 << 16
_FILL = 1 << 16

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


class _Raw(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class ScanReader:
    """`raw` as the scan reads it: buffered, never reading more than the `available` bytes the
    container declares nor past `cap` (a length inside a corrupt pickle would otherwise size a
    read: one that cannot be satisfied returns nothing, unread), lines cut at 64 KiB, and `tell`
    counting from where the pickle starts.

    Attributes:
        capped: a read wanted bytes beyond `cap` that the container has.
    """

    def __init__(self, raw: _Raw, available: int, cap: int) -> None:
        self._raw = raw
        self._left = min(available, cap)  # bytes of `raw` not yet buffered
        self._beyond = available > cap
        self.capped = False
        self._buf = b""
        self._pos = 0  # in _buf
        self._base = 0  # bytes consumed before _buf

    def _fill(self, want: int) -> None:
        """Buffer at least `want` unread bytes, or all that are left."""
        have = len(self._buf) - self._pos
        if have >= want or not self._left:
            return
        chunk = self._raw.read(min(self._left, max(want - have, _FILL)))
        if not chunk:
            self._left = 0
            return
        self._left -= len(chunk)
        self._base += self._pos
        self._buf = self._buf[self._pos :] + chunk
        self._pos = 0
        if len(chunk) < want - have:
            self._fill(want)

    def read(self, n: int = -1) -> bytes:
        pos = self._pos
        left = len(self._buf) - pos + self._left
        if n < 0 or n > left:  # cannot be satisfied: nothing is read (the caller fails on it)
            self.capped = self.capped or self._beyond
            return b""
        end = pos + n
        if end > len(self._buf):
            self._fill(n)
            pos = self._pos
            end = pos + n
        self._pos = min(end, len(self._buf))
        return self._buf[pos:end]

    def readline(self, limit: int = -1) -> bytes:
        cap = MAX_LINE if limit < 0 else min(limit, MAX_LINE)
        while True:
            at = self._buf.find(b"\n", self._pos, self._pos + cap)
            if at >= 0:
                return self.read(at + 1 - self._pos)
            if len(self._buf) - self._pos >= cap or not self._left:
                self.capped = self.capped or (self._beyond and not self._left)
                return self.read(min(cap, len(self._buf) - self._pos))
            self._fill(len(self._buf) - self._pos + _FILL)

    def tell(self) -> int:
        return self._base + self._pos


def scan_pickle(stream: ScanReader, limits: Limits, what: str) -> int:
    """Walk one pickle of `stream` up to its STOP, holding it to `limits`; returns its length in
    bytes. Nothing is built but counts. `what` names the pickle in errors (``archive/data.pkl``).

    Raises:
        RecordError: a limit broken (the message names it), a length not backed by the bytes
            present, a memo index beyond the pickle, a stack underflow, or garbage.
    """
    max_nodes, max_depth = limits.max_object_nodes, limits.max_depth
    max_ops, max_bytes, max_memo = limits.max_pickle_opcodes, limits.max_pickle_bytes, limits.max_memo_entries
    stack: list[Any] = []  # (size, depth) tuples; [size, depth] lists for mutable containers
    marks: list[int] = []
    memo: list[Any] = []  # by index; None: no entry
    memo_count = 0
    ops = 0

    def check(size: int, depth: int, pos: int) -> None:
        if size > max_nodes:
            raise RecordError(limits.refusal("max_object_nodes", size, f"{what}: an object at byte {pos}"))
        if depth > max_depth:
            raise RecordError(limits.refusal("max_depth", depth, f"{what}: an object at byte {pos}"))

    def pop_to_mark(pos: int) -> list[Any]:
        if not marks:
            raise RecordError(f"{what}: corrupt pickle: no MARK before the opcode at byte {pos}")
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    def pop(n: int, pos: int) -> list[Any]:
        fence = marks[-1] if marks else 0
        if len(stack) - n < fence:
            raise RecordError(f"{what}: corrupt pickle: stack underflow at byte {pos}")
        items = stack[len(stack) - n :]
        del stack[len(stack) - n :]
        return items

    def combine(items: list[Any], pos: int) -> tuple[int, int]:
        size, depth = 1, 0
        for item in items:
            size += item[0]
            if item[1] > depth:
                depth = item[1]
        check(size, depth + 1, pos)
        return size, depth + 1

    def add(items: list[Any], pos: int) -> None:
        fence = marks[-1] if marks else 0
        if len(stack) <= fence:
            raise RecordError(f"{what}: corrupt pickle: stack underflow at byte {pos}")
        top = stack[-1]
        if type(top) is not list:  # not a container we know to be mutable: track it as one now
            top = list(top)
            stack[-1] = top
        size, depth = combine(items, pos)
        top[0] += size - 1
        top[1] = max(top[1], depth)
        check(top[0], top[1], pos)

    try:
        for opcode, arg, at in pickletools.genops(cast(IO[bytes], stream)):
            pos = at or 0
            ops += 1
            if ops > max_ops:
                raise RecordError(limits.refusal("max_pickle_opcodes", ops, what))
            if pos > max_bytes:
                raise RecordError(limits.refusal("max_pickle_bytes", pos, what))
            action, n = _ACTIONS.get(opcode.name, (-1, 0))
            if action == _SCALAR:
                stack.append(_LEAF)
            elif action == _CONTAINER:
                stack.append([1, 1])
            elif action == _MARK:
                marks.append(len(stack))
            elif action == _POP:
                if marks and marks[-1] == len(stack):
                    marks.pop()  # as the C unpickler does: POP right after MARK drops the mark
                else:
                    pop(1, pos)
            elif action == _POP_MARK:
                pop_to_mark(pos)
            elif action == _DUP:
                stack.append(pop(1, pos)[0])
                stack.append(stack[-1])
            elif action == _TUPLE_MARK:
                stack.append(combine(pop_to_mark(pos), pos))
            elif action == _LIST_MARK:
                stack.append(list(combine(pop_to_mark(pos), pos)))
            elif action == _TUPLE_N:
                stack.append(combine(pop(n, pos), pos))
            elif action == _ADD_ONE:
                add(pop(1, pos), pos)
            elif action == _ADD_TWO:
                add(pop(2, pos), pos)
            elif action == _ADD_MARK:
                add(pop_to_mark(pos), pos)
            elif action == _CALL:
                stack.append(list(combine(pop(n, pos), pos)))
            elif action == _CALL_MARK:
                stack.append(list(combine(pop_to_mark(pos), pos)))
            elif action == _GET:
                if not isinstance(arg, int) or not 0 <= arg < len(memo) or memo[arg] is None:
                    raise RecordError(f"{what}: corrupt pickle: memo key {arg!r} missing at byte {pos}")
                stack.append(memo[arg])
            elif action in (_PUT, _MEMOIZE):
                fence = marks[-1] if marks else 0
                if len(stack) <= fence:
                    raise RecordError(f"{what}: corrupt pickle: nothing to memoize at byte {pos}")
                index = memo_count if action == _MEMOIZE else arg
                if not isinstance(index, int) or index < 0 or index > pos:
                    raise RecordError(f"memo index {index} at byte {pos} of the pickle (corrupt or hostile)")
                if index >= max_memo:
                    raise RecordError(limits.refusal("max_memo_entries", index + 1, f"{what}: memo index"))
                if index >= len(memo):
                    memo.extend([None] * (index + 1 - len(memo)))
                if memo[index] is None:
                    memo_count += 1
                    if memo_count > max_memo:  # pragma: no cover - indices below the limit bound it
                        raise RecordError(limits.refusal("max_memo_entries", memo_count, what))
                memo[index] = stack[-1]
            elif action != _NOTHING:
                raise RecordError(f"{what}: pickle opcode {opcode.name} is not supported")
    except RecordError:
        raise
    except Exception as exc:  # truncated, unknown opcode, bad argument...
        if stream.capped:  # it ran into the byte limit, not into the end of its data
            raise RecordError(limits.refusal("max_pickle_bytes", max_bytes + 1, what)) from None
        raise RecordError(f"corrupt pickle: {type(exc).__name__}: {_short_text(exc)}") from exc
    end = stream.tell()
    if end > max_bytes:
        raise RecordError(limits.refusal("max_pickle_bytes", end, what))
    return end


def _short_text(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
