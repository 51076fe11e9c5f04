"""The facts declared at each contract op (`burn.backend.contract.OpFacts`) are complete and
consistent, so that a new op cannot leave one unsaid where a name would have implied it.

- every op returning primitives says the kind of each (`results`), and no other op does;
- an op whose name says it draws (random, bernoulli, dropout, multinomial) is declared
  ``random``, and an op that hands data to the host (``*_into_data``) ``host_read``;
- an undeclared op gets its family's kind, and wrong declarations fail where they are made.

Whether the declared kinds are what a backend returns is checked per backend by the conformance
suite (``test_primitives.py::test_declared_result_kinds_match_what_the_backend_returns``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from burn.backend.contract import compare, default, family, op_facts, required

P = Any  # the contract's primitive, as its annotations name it (read as the string "P")
_DRAWS = re.compile(r"random|bernoulli|dropout|multinomial")


def test_every_op_returning_primitives_declares_their_kinds() -> None:
    wrong = [
        f"{op}: returns {f.returns!r}, results {f.results!r}"
        for op, f in op_facts().items()
        if (f.returns == "P" and len(f.results) != 1)
        or (f.returns == "tuple" and not f.results)
        or (f.returns not in ("P", "tuple") and f.results)
    ]
    assert not wrong, "ops whose declared result kinds do not fit what they return:\n" + "\n".join(wrong)


def test_an_op_named_for_drawing_is_declared_random() -> None:
    forgot = sorted(op for op, f in op_facts().items() if _DRAWS.search(op) and not f.random)
    assert not forgot, f"ops named for drawing but not declared random=True: {', '.join(forgot)}"
    assert op_facts()["float_random"].random and not op_facts()["float_add"].random


def test_host_reads_are_the_ops_handing_data_to_the_host() -> None:
    reads = {op for op, f in op_facts().items() if f.host_read}
    assert reads == {op for op in op_facts() if op.endswith("_into_data")}
    assert all(op_facts()[op].returns == "" for op in reads), "a host read returns host data"


@pytest.mark.parametrize("op, kinds", [
    ("float_exp", ("float",)),
    ("float_greater_elem", ("bool",)),  # element-wise rule says bool
    ("int_greater", ("bool",)),  # no element-wise rule: declared
    ("int_add", ("int",)),
    ("int_arange", ("int",)),
    ("bool_not", ("bool",)),
    ("float_argmax", ("int",)),
    ("bool_argwhere", ("int",)),
    ("int_into_float", ("float",)),
    ("float_sort_with_indices", ("float", "int")),
    ("max_pool3d_with_indices", ("float", "int")),
    ("conv2d", ("float",)),
    ("float_adam_step", ("float",)),
    ("float_into_data", ()),
    ("quantize_into_int", ("int",)),
    ("dequantize", ("float",)),
])
def test_result_kinds_of_representative_ops(op: str, kinds: tuple[str, ...]) -> None:
    assert op_facts()[op].results == kinds


def test_conversions_declare_the_kind_they_name() -> None:
    """An op named ``*_into_int`` / ``*_into_float`` / ``*_into_bool`` (in any family) returns
    that kind: a new conversion in a float family cannot keep the family's default."""
    wrong = [
        f"{name}: results {f.results}"
        for name, f in op_facts().items()
        for kind in ("int", "float", "bool")
        if name.endswith(f"_into_{kind}") and f.results != (kind,)
    ]
    assert not wrong, wrong


def test_an_undeclared_op_gets_its_family_kind() -> None:
    @family("demo_int", grad=False, bound=None, kind="int")
    class DemoIntOps:
        @required
        def demo_int_twice(self, x: P) -> P: ...

        @default(ew=compare("a < b"))
        def demo_int_less(self, x: P, y: P) -> P: ...

        @default
        def demo_int_pair(self, x: P) -> tuple[P, P]: ...

        @required(host_read=True)
        def demo_int_into_data(self, x: P) -> object: ...

    facts = {name: getattr(DemoIntOps, name).__burn_facts__ for name in vars(DemoIntOps) if name[0] != "_"}
    assert facts["demo_int_twice"].results == ("int",)
    assert facts["demo_int_less"].results == ("bool",)
    assert facts["demo_int_pair"].results == ("int",)
    assert facts["demo_int_into_data"].results == ()
    assert facts["demo_int_into_data"].host_read and not facts["demo_int_twice"].random


def test_wrong_result_declarations_fail_at_the_op() -> None:
    with pytest.raises(ValueError, match="demo_bad_kind: results must be"):
        @default(results=("half",))  # type: ignore[arg-type]
        def demo_bad_kind(self, x: P) -> P: ...

    with pytest.raises(TypeError, match="demo_shape declares results=.*no primitive"):
        @family("demo")
        class DemoOps:
            @default(results=("int",))
            def demo_shape(self, x: P) -> tuple[int, ...]: ...

    with pytest.raises(TypeError, match="demo_one declares results=.*one primitive"):
        @family("demo")
        class DemoPairOps:
            @default(results=("float", "int"))
            def demo_one(self, x: P) -> P: ...

