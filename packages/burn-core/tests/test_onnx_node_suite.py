"""ONNX's node test suite (`onnx_node_suite`) as a check: every case listed in
``onnx_node_passing.txt`` still passes on ndarray, as many pass as the list holds, and no case
gives a wrong answer beyond those listed in ``onnx_node_known_wrong.txt`` (empty: a case burn
cannot run must be refused, not answered wrongly).

After a fix that makes more cases pass, regenerate the list and the per-op counts
(``onnx_node_counts.txt``), then the import guide's op table that shows them:
``python packages/burn-core/tests/onnx_node_suite.py --write-passing`` and
``python -m burn.onnx.table --counts packages/burn-core/tests/onnx_node_counts.txt
docs/guides/import-models.md``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("onnx", reason="onnx is not installed: pip install 'burn-core[onnx]'")
pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")

from onnx_node_suite import (  # noqa: E402
    KNOWN_WRONG,
    PASSING,
    Result,
    counts_file,
    op_counts,
    read_list,
    report,
    run_suite,
    summary,
)

from burn.onnx.ops import read_counts  # noqa: E402


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    return {r.name: r for r in run_suite()}


def test_every_listed_case_still_passes(results: dict[str, Result]) -> None:
    listed = read_list(PASSING)
    present = [name for name in listed if name in results]
    # another onnx wheel may drop a few cases; most of the list must still be there
    assert len(present) >= 0.95 * len(listed), f"only {len(present)} of {len(listed)} listed cases exist"
    regressed = [results[name] for name in present if results[name].outcome != "pass"]
    assert not regressed, "cases that passed no longer do:\n" + "\n".join(
        f"  {r.name}: {r.outcome}: {r.detail}" for r in regressed
    )
    counts = summary(list(results.values()))
    assert counts["pass"] >= len(present), report(list(results.values()))


def test_no_op_passes_fewer_cases_than_its_recorded_count(results: dict[str, Result]) -> None:
    # the counts the import guide's op table shows (onnx_node_counts.txt): none may drop
    # (an op whose number of cases differs comes from another onnx wheel: not compared)
    recorded = read_counts(counts_file().read_text(encoding="utf-8"))
    now = op_counts(list(results.values()))
    same = {op: counts for op, counts in recorded.items() if now.get(op, (0, -1))[1] == counts[1]}
    assert len(same) >= 0.9 * len(recorded), f"only {len(same)} of {len(recorded)} ops have their cases"
    fewer = {op: (now[op][0], passed) for op, (passed, _) in same.items() if now[op][0] < passed}
    assert not fewer, f"ops passing fewer node cases than recorded (now, recorded): {fewer}"


def test_no_wrong_answers_beyond_the_known(results: dict[str, Result]) -> None:
    known = set(read_list(KNOWN_WRONG))
    wrong = sorted(r.name for r in results.values() if r.outcome == "wrong")
    assert len(wrong) <= len(known), f"{len(wrong)} wrong answers, {len(known)} tolerated: {wrong[:20]}"
    new = [results[name] for name in wrong if name not in known]
    assert not new, "cases answered wrongly (refuse them instead):\n" + "\n".join(
        f"  {r.name}: {r.detail}" for r in new
    )


def test_no_case_crashes_or_hangs(results: dict[str, Result]) -> None:
    bad = [r for r in results.values() if r.outcome in ("crash", "timeout")]
    lines = [f"  {r.name}: {r.outcome}: {r.detail}" for r in bad]
    assert not bad, "raw exceptions or timeouts:\n" + "\n".join(lines)


def test_the_comparison_is_strict() -> None:
    # the runner's own judgement: dtype, shape and tolerance as onnx's runner applies them
    import numpy as np
    from onnx_node_suite import compare

    ref = [np.array([1.0, 2.0], np.float32)]
    assert compare(ref, [np.array([1.0, 2.0], np.float32)]) is None
    assert "dtype float64" in (compare(ref, [np.array([1.0, 2.0])]) or "")
    assert "shape [1, 2]" in (compare(ref, [np.array([[1.0, 2.0]], np.float32)]) or "")
    assert "values differ" in (compare(ref, [np.array([1.0, 2.01], np.float32)]) or "")
    assert compare(ref, [np.array([1.0, 2.0005], np.float32)]) is None  # within rtol 1e-3
    assert "2 outputs" in (compare(ref, ref * 2) or "")
