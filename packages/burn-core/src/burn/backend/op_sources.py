"""Which ops each default op of the contract is built from, read from the defaults' own code.

A plugin author overriding one op speeds up every default built on it (overriding
``float_max_dim`` speeds up the default ``max_pool2d``). `op_sources()` answers "what does this
default call" and `used_by()` "which defaults call this op", for the code as it is: the body of
each ``@default`` is parsed (`ast`) and every contract op it names is collected, following the
helpers it calls (module functions of ``burn.backend`` and the contract's private methods), with
the op kind of ``self._lop(kind, "shape")``-style lookups bound from the call site. It lists the
ops a default *may* call, every branch included (a float16 path, an error path), which is what
an author deciding what to override needs. ``burn ops`` prints it.

Example:
    >>> from burn.backend.op_sources import op_sources
    >>> "float_max_dim" in op_sources()["max_pool2d"].rests_on
    True
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from burn.backend.contract import OpKind, contract_ops

_KINDS = ("float", "int", "bool")


@dataclass(frozen=True)
class OpSources:
    """How one contract op is built.

    Attributes:
        name: the op.
        kind: ``"required"`` or ``"default"``.
        calls: the contract ops its default names directly (or through helpers), sorted; empty
            for a required op.
        rests_on: the required ops it comes down to when no default on the way is overridden.
    """

    name: str
    kind: OpKind
    calls: tuple[str, ...]
    rests_on: tuple[str, ...]


@functools.cache
def op_sources() -> dict[str, OpSources]:
    """`OpSources` of every contract op, by name (computed once)."""
    from burn.backend.base import Backend

    ops = contract_ops()
    reader = _Reader(Backend, set(ops))
    calls = {
        name: tuple(sorted(reader.ops_of(_function(Backend, name), {}) - {name})) if kind == "default" else ()
        for name, kind in ops.items()
    }

    @functools.cache
    def rests_on(name: str) -> frozenset[str]:
        if ops[name] == "required":
            return frozenset({name})
        out: set[str] = set()
        for callee in calls[name]:
            out |= rests_on(callee)
        return frozenset(out)

    return {
        name: OpSources(name, kind, calls[name], tuple(sorted(rests_on(name)))) for name, kind in ops.items()
    }


def used_by(op: str) -> list[str]:
    """The default ops that call `op` directly (their speed follows it when it is overridden).

    Example:
        >>> "max_pool2d_with_indices" in used_by("float_max_dim")  # doctest: +SKIP
        True
    """
    return sorted(name for name, src in op_sources().items() if op in src.calls)


def markdown_table(backend_ops: Iterable[str] = ()) -> str:
    """The default ops as a Markdown table (each with the ops it is built from): the section of
    the plugin guide that ``burn ops --markdown`` regenerates; `backend_ops` marks overridden ones."""
    overridden = set(backend_ops)
    rows = ["| default op | built from |", "|---|---|"]
    for name, src in op_sources().items():
        if src.kind != "default":
            continue
        mark = " (overridden)" if name in overridden else ""
        rows.append(f"| `{name}`{mark} | {', '.join(src.calls) or '-'} |")
    return "\n".join(rows)


def format_report(names: Iterable[str] = (), overridden: Iterable[str] | None = None) -> str:
    """The text ``burn ops`` prints.

    Without `names`: one line per default op with the ops it is built from. With `names`: for each
    op, its kind, what it is built from, the required ops it rests on, and the defaults that use it.
    `overridden` (the ops a backend implements itself) marks each op ``yours`` or ``default``.

    Raises:
        KeyError: a name that is not an op of the contract (the message suggests close ones).
    """
    sources = op_sources()
    mine = None if overridden is None else set(overridden)

    def whose(name: str) -> str:
        if mine is None:
            return ""
        return (
            "  [yours]"
            if name in mine
            else "  [default]"
            if sources[name].kind == "default"
            else "  [missing]"
        )

    wanted = list(names)
    unknown = [n for n in wanted if n not in sources]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(sources), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"not an op of the backend contract: {', '.join(unknown)}{hint}")
    if not wanted:
        rows = [(n, s) for n, s in sources.items() if s.kind == "default"]
        width = max(len(n) for n, _ in rows)
        lines = [f"{'DEFAULT OP'.ljust(width)}  BUILT FROM"]
        lines += [f"{n.ljust(width)}  {', '.join(s.calls) or '-'}{whose(n)}" for n, s in rows]
        return "\n".join(lines)
    blocks = []
    for name in wanted:
        src = sources[name]
        block = [f"{name} ({src.kind}){whose(name)}"]
        if src.kind == "default":
            block.append(f"  built from: {', '.join(src.calls) or '-'}")
            block.append(f"  rests on:   {', '.join(src.rests_on) or '-'}")
        users = used_by(name)
        block.append(f"  used by:    {', '.join(users) or '-'}")
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def _function(cls: type, name: str) -> Callable[..., Any]:
    return inspect.unwrap(getattr(cls, name))


class _Reader:
    """Collects the contract ops a function names, following helpers, with string bindings."""

    def __init__(self, cls: type, ops: set[str]) -> None:
        self._cls = cls
        self._ops = ops
        self._seen: dict[tuple[Any, tuple[tuple[str, str], ...]], set[str]] = {}

    def ops_of(self, fn: Callable[..., Any], bound: dict[str, str]) -> set[str]:
        key = (fn, tuple(sorted(bound.items())))
        if key in self._seen:
            return self._seen[key]
        found: set[str] = set()
        self._seen[key] = found  # recursion (mutual helpers) stops here
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):  # a builtin, or code without source: nothing to read
            return found
        tree = ast.parse(source)
        env = getattr(fn, "__globals__", {})
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                if node.attr in self._ops:
                    found.add(node.attr)
            elif isinstance(node, ast.Call):
                found |= self._call(node, env, bound)
        return found

    def _call(self, node: ast.Call, env: dict[str, Any], bound: dict[str, str]) -> set[str]:
        func = node.func
        target: Any = None
        if isinstance(func, ast.Attribute) and func.attr not in self._ops:
            method = getattr(self._cls, func.attr, None)
            if func.attr.startswith("_") and callable(method):
                target = inspect.unwrap(method)  # a private helper method of the contract
        elif isinstance(func, ast.Name):
            value = env.get(func.id)
            if inspect.isfunction(value) and value.__module__.startswith("burn.backend"):
                target = value
            elif func.id == "getattr" and len(node.args) >= 2:
                return self._dynamic(node.args[1], bound)
        if target is None:
            return set()
        return self.ops_of(target, self._bindings(target, node, bound))

    def _bindings(self, target: Callable[..., Any], node: ast.Call, bound: dict[str, str]) -> dict[str, str]:
        """Strings passed to `target` (constants, or names bound in the caller), by parameter."""
        try:
            params = [p for p in inspect.signature(target).parameters if p != "self"]
        except (TypeError, ValueError):
            return {}
        out: dict[str, str] = {}
        for param, arg in zip(params, node.args, strict=False):
            value = _string(arg, bound)
            if value is not None:
                out[param] = value
        for kw in node.keywords:
            value = _string(kw.value, bound) if kw.arg else None
            if kw.arg and value is not None:
                out[kw.arg] = value
        return out

    def _dynamic(self, expr: ast.expr, bound: dict[str, str]) -> set[str]:
        """``getattr(self, f"{kind}_{op}")``: the op when every part is known, else every kind's."""
        if not isinstance(expr, ast.JoinedStr):
            value = _string(expr, bound)
            return {value} & self._ops if value else set()
        parts: list[str | None] = []
        for piece in expr.values:
            if isinstance(piece, ast.FormattedValue):
                parts.append(_string(piece.value, bound))
            else:
                parts.append(_string(piece, bound))
        if all(p is not None for p in parts):
            return {"".join(p for p in parts if p is not None)} & self._ops
        # An unknown part (a kind chosen at run time): every op the known parts allow.
        candidates = set()
        for kind in _KINDS:
            filled = [kind if p is None else p for p in parts]
            candidates.add("".join(filled))
        return candidates & self._ops


def _string(expr: ast.expr, bound: dict[str, str]) -> str | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Name):
        return bound.get(expr.id)
    return None
