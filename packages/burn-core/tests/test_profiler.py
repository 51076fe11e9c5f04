"""burn.profile(): ops recorded by name and count, module attribution, backward attribution,
nesting, Chrome trace export, thread isolation, nothing recorded outside, the Learner option."""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import numpy as np
import pytest

import burn
from burn import nn
from burn.module import Module
from burn.profiler import Profile

pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")


def _opencl_names() -> list[str]:
    names = [info.name for info in burn.backends() if info.status == "available"]
    return ["opencl"] if "opencl" in names else []


BACKENDS = ["ndarray", "autodiff(ndarray)", *_opencl_names()]


class Block(Module):
    fc: nn.Linear

    def forward(self, x: Any) -> Any:
        return burn.activation.relu(self.fc(x))


class Net(Module):
    layers: list[Block]
    head: nn.Linear

    def forward(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def make_net(B: Any) -> Net:
    device = B.default_device()
    net = Net(
        [Block(nn.LinearConfig(4, 8).init(device)), Block(nn.LinearConfig(8, 8).init(device))],
        nn.LinearConfig(8, 2).init(device),
    )
    net(burn.Tensor.ones((1, 4), backend=B))  # initialize the lazy params outside the profiles
    return net


def calls(prof: Profile, by: str = "op") -> dict[str, int]:
    return {row.name: row.calls for row in prof.stats(by)}


@pytest.mark.parametrize("name", BACKENDS)
def test_ops_are_recorded_by_name_and_count(name: str) -> None:
    B = burn.backend(name)
    x = burn.Tensor.from_data(np.ones((4, 4), np.float32), backend=B)
    with burn.profile() as prof:
        y = x @ x
        z = y + y
        z = z + y
        _ = z.exp()
    got = calls(prof)
    assert got["float_matmul"] == 1 and got["float_add"] == 2 and got["float_exp"] == 1
    assert all(e.backend == B.name for e in prof.events if e.depth == 0)
    # outputs: 4x4 float32 = 64 bytes each
    assert prof.stats_by_name()["float_add"].nbytes == 2 * 64
    assert abs(sum(r.percent for r in prof.stats()) - 100.0) < 1e-6


@pytest.mark.parametrize("name", BACKENDS)
def test_linear_forward_is_one_matmul_and_one_add_per_layer(name: str) -> None:
    B = burn.backend(name)
    net = make_net(B)
    x = burn.Tensor.ones((3, 4), backend=B)
    with burn.profile() as prof:
        net(x)
    got = calls(prof)
    assert got["float_matmul"] == 3 and got["float_add"] == 3 and got["relu"] == 2
    by_module = calls(prof, "module")
    # each Linear's ops are attributed to it, the relu to its block
    for path in ("layers.0.fc", "layers.1.fc", "head"):
        ops = [e.name for e in prof.events if e.depth == 0 and e.module == path and e.kind == "op"]
        assert ops.count("float_matmul") == 1 and ops.count("float_add") == 1, (path, ops)
    assert by_module["layers.0"] == 1 and by_module["layers.1"] == 1
    modules = [e.name for e in prof.events if e.kind == "module"]
    assert modules == ["Net", "layers.0", "layers.0.fc", "layers.1", "layers.1.fc", "head"]


def test_backward_is_attributed_to_its_forward_op_and_module() -> None:
    B = burn.backend("autodiff(ndarray)")
    net = make_net(B)
    x = burn.Tensor.ones((3, 4), backend=B)
    with burn.profile() as prof:
        net(x).sum().backward()
    got = calls(prof)
    assert got["float_matmul.backward"] == 3 and got["float_add.backward"] == 3
    assert got["relu.backward"] == 2 and got["float_sum.backward"] == 1
    back = [e for e in prof.events if e.kind == "backward"]
    assert sorted(e.module for e in back if e.name == "float_matmul.backward") == [
        "head", "layers.0.fc", "layers.1.fc"
    ]
    # the rule's own ops are nested under it (depth 1), on the inner backend
    inner = [e for e in prof.events if e.depth == 1 and e.module == "head" and e.backend == "ndarray"]
    assert inner, "no inner op recorded under head's backward"


def test_backward_outside_the_profile_runs_the_plain_rules() -> None:
    B = burn.backend("autodiff(ndarray)")
    w = burn.Tensor.ones((2, 2), backend=B).require_grad()
    with burn.profile():
        y = (w * w).sum()
    with burn.profile() as later:
        pass
    grads = y.backward()  # the rules were marked inside the profile; none is open now
    np.testing.assert_allclose(w.grad(grads).to_numpy(), 2 * np.ones((2, 2)))
    assert later.events == []


def test_nothing_is_recorded_outside_and_wrappers_are_removed() -> None:
    B = burn.backend("ndarray")
    x = burn.Tensor.ones((2,), backend=B)
    before = dict(vars(B))
    _ = x + 1
    with burn.profile() as prof:
        _ = x + 2
        assert "float_add_scalar" in vars(B)  # shadowed while open
    _ = x + 3
    assert dict(vars(B)) == before
    assert Module.__call__ is Module.__dict__["__call__"] and "profiler" not in Module.__call__.__module__
    assert calls(prof) == {"float_add_scalar": 1}


def test_profiles_nest_and_an_inner_profile_records_into_the_outer() -> None:
    B = burn.backend("ndarray")
    x = burn.Tensor.ones((2,), backend=B)
    with burn.profile() as outer:
        _ = x + x
        with burn.profile() as inner:
            _ = x * x
        _ = x - x
    assert calls(inner) == {"float_mul": 1}
    assert calls(outer) == {"float_add": 1, "float_mul": 1, "float_sub": 1}


def test_misuse_is_a_clear_error() -> None:
    outer = burn.profile().start()
    inner = burn.profile().start()
    with pytest.raises(RuntimeError, match="innermost"):
        outer.stop()
    inner.stop()
    outer.stop()
    with pytest.raises(RuntimeError, match="already closed"):
        outer.start()
    with pytest.raises(RuntimeError, match="not open"):
        outer.stop()
    with pytest.raises(ValueError, match="'op' or 'module'"):
        outer.table(by="layer")
    with pytest.raises(ValueError, match="positive int"):
        outer.table(top=0)
    with pytest.raises(TypeError, match="bool"):
        burn.profile(sync="yes")  # type: ignore[arg-type]


def test_a_profile_sees_only_its_own_thread() -> None:
    B = burn.backend("ndarray")
    x = burn.Tensor.ones((2,), backend=B)
    go, done = threading.Event(), threading.Event()
    seen: list[Any] = []

    def other() -> None:
        go.wait()
        seen.append((x * 3).tolist())  # runs while the main thread's profile is open
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with burn.profile() as prof:
        go.set()
        done.wait()
        _ = x + x
    t.join()
    assert seen == [[3.0, 3.0]]
    assert calls(prof) == {"float_add": 1}
    assert {e.thread for e in prof.events} == {threading.get_ident()}


def test_chrome_trace_parses_and_holds_the_events(tmp_path) -> None:  # noqa: ANN001
    B = burn.backend("autodiff(ndarray)")
    net = make_net(B)
    with burn.profile() as prof:
        net(burn.Tensor.ones((3, 4), backend=B)).sum().backward()
    path = prof.export_chrome_trace(tmp_path / "sub" / "trace.json")
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == len(prof.events)
    assert {e["ph"] for e in events} == {"X"}
    assert {"op", "backward", "module"} <= {e["cat"] for e in events}
    names = [e["name"] for e in events]
    assert names.count("float_matmul.backward") == 3 and "layers.1.fc" in names
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in events)


def test_table_lists_ops_sorted_by_total_time() -> None:
    B = burn.backend("ndarray")
    x = burn.Tensor.ones((8, 8), backend=B)
    with burn.profile() as prof:
        for _ in range(3):
            x = x + 1
        _ = x.sum()
    text = prof.table(top=1)
    lines = text.splitlines()
    assert lines[0].split() == ["op", "calls", "total", "mean", "%", "out", "bytes"]
    top = prof.stats()[0]
    assert lines[2].split()[:2] == [top.name, str(top.calls)]
    assert lines[3] == "... 1 more" and lines[-1].startswith("total")
    assert str(prof) == prof.table()
    assert [r.total_ns for r in prof.stats()] == sorted((r.total_ns for r in prof.stats()), reverse=True)


def test_learner_profile_steps_writes_the_trace(tmp_path) -> None:  # noqa: ANN001
    from test_train_learner import learner, loaders

    train, valid = loaders()
    stream = io.StringIO()
    fit = learner(tmp_path, 1, profile_steps=2, stream=stream)
    fit.fit(train, valid)
    trace = json.loads((tmp_path / "profile" / "trace.json").read_text())
    names = [e["name"] for e in trace["traceEvents"]]
    # two steps of a 2-Linear net: two forward matmuls and their backward rules per step
    assert names.count("float_matmul.backward") == 4
    # the loader's wait for each of the two steps' batches, as a span of kind "data"
    assert names.count("data.wait") == 2
    assert {e["cat"] for e in trace["traceEvents"] if e["name"] == "data.wait"} == {"data"}
    out = stream.getvalue()
    assert "profile of 2 training step(s)" in out and "float_matmul" in out
    assert (tmp_path / "profile" / "table.txt").read_text().startswith("profile of 2")
    with pytest.raises(ValueError, match="positive int"):
        learner(tmp_path, 1, profile_steps=0)
