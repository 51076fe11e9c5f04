"""Hostile checkpoints, safetensors files and records end in a `RecordError` naming the limit of
`burn.Limits` they break, fast and in bounded memory, before anything is allocated for them.

Every crafted input is built here, from pickle opcodes, zip archives, gzip and MessagePack bytes.
The inputs that used to hang (shared-reference pickle DAGs, whose hash or repr is exponential;
a FIFO, whose open blocks) are loaded in one child process with a timeout, so a regression fails
instead of blocking the run; the child also measures the peak RSS of a memo bomb.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from test_record_support import backend, make_net

import burn
from burn import record
from burn.foundations.data import TensorData
from burn.record import RecordError, load_pytorch, load_pytorch_safetensors
from burn.record.inspect import inspect_file
from burn.record.pytorch_pickle import open_checkpoint

# -- pickles written opcode by opcode -------------------------------------------------------------
PROTO = b"\x80\x02"
STOP = b"."


def glob(module: str, name: str) -> bytes:
    return f"c{module}\n{name}\n".encode()


def get(i: int) -> bytes:
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def put(i: int) -> bytes:
    return b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i)


def string(text: str) -> bytes:
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def integer(n: int) -> bytes:
    if 0 <= n < 1 << 31:
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def ints(values: tuple[int, ...]) -> bytes:
    return b"(" + b"".join(integer(v) for v in values) + b"t"


def storage(key: str, numel: int, kind: str = "FloatStorage") -> bytes:
    """A persistent id ``("storage", torch.<kind>, key, "cpu", numel)``."""
    return (
        b"(" + string("storage") + glob("torch", kind) + string(key) + string("cpu") + integer(numel) + b"tQ"
    )


def tensor(key: str, numel: int, shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> bytes:
    """``_rebuild_tensor_v2(storage, offset, shape, stride, False, OrderedDict())``."""
    return (
        glob("torch._utils", "_rebuild_tensor_v2")
        + b"("
        + storage(key, numel)
        + integer(offset)
        + ints(shape)
        + ints(stride)
        + b"\x89"
        + glob("collections", "OrderedDict")
        + b")RtR"
    )


def state(entries: dict[str, bytes]) -> bytes:
    return PROTO + b"}(" + b"".join(string(k) + v for k, v in entries.items()) + b"u" + STOP


def tuple_dag(levels: int, first: int) -> bytes:
    """Memo ``first + levels`` (left on the stack) holds ``t_n = (t_{n-1}, t_{n-1})``: 2^levels
    leaves in a few bytes a level."""
    out = b")" + put(first)
    for i in range(levels):
        out += b"0" + get(first + i) + get(first + i) + b"\x86" + put(first + i + 1)
    return out


def list_dag(levels: int, first: int) -> bytes:
    """The same with lists: ``l_n = [l_{n-1}, l_{n-1}]``."""
    out = b"]" + put(first)
    for i in range(levels):
        out += b"0(" + get(first + i) + get(first + i) + b"l" + put(first + i + 1)
    return out


def write_pt(
    path: Path, pkl: bytes, storages: dict[str, bytes] | None = None, *, deflate: bool = False
) -> Path:
    """A zip checkpoint as torch.save lays it out (data.pkl deflated if asked)."""
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo("archive/data.pkl")
        info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
        z.writestr(info, pkl)
        z.writestr("archive/byteorder", b"little")
        for key, raw in (storages or {}).items():
            z.writestr(f"archive/data/{key}", raw)
        z.writestr("archive/version", b"3\n")
    return path


def write_legacy(path: Path, main: bytes, storages: dict[str, bytes] | None = None) -> Path:
    """The legacy layout: header pickles, `main` (the object), the storage keys, then each
    (float32) storage as its element count and bytes."""
    storages = storages or {}
    header = PROTO + b"\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little") + STOP
    header += PROTO + integer(1001) + STOP + PROTO + b"}" + STOP
    keys = PROTO + b"](" + b"".join(string(k) for k in storages) + b"e" + STOP
    data = b"".join(struct.pack("<q", len(raw) // 4) + raw for raw in storages.values())
    path.write_bytes(header + main + keys + data)
    return path


FLOATS = np.arange(3, dtype="<f4").tobytes()
VALID = state({"w": tensor("0", 3, (3,), (1,))})

# -- the crafted cases ------------------------------------------------------------------------------
# name -> (loader, file builder, Limits fields, regex the RecordError must match)
Case = tuple[str, Any, dict[str, int], str]


def _cases() -> dict[str, Case]:
    over = r"over the limit of \d+ \(raise it with limits=burn\.Limits\({}=\.\.\.\)\)"
    nodes = over.format("max_object_nodes")
    cases: dict[str, Case] = {
        # shapes that overflowed NumPy (OverflowError, "array is too big")
        "size beyond int64": (
            "pytorch",
            lambda p: write_pt(p, state({"w": tensor("0", 3, (1 << 70,), (1,))}), {"0": FLOATS}),
            {},
            r"tensor size must be a non-negative int below 2\^63, got 1180591620717411303424",
        ),
        "empty tensor with huge dims": (
            "pytorch",
            lambda p: write_pt(
                p, state({"w": tensor("0", 3, (0, 1 << 62, 1 << 62), (1, 1, 1))}), {"0": FLOATS}
            ),
            {},
            r"tensor of shape \[0, 4611686018427387904, 4611686018427387904\]: \d+ elements in one tensor, "
            + over.format("max_tensor_elements"),
        ),
        # a stride-0 view of one float that would have been read as 4 TiB
        "stride-0 4 TiB view": (
            "pytorch",
            lambda p: write_pt(
                p, state({"w": tensor("0", 1, (1 << 20, 1 << 20, 4), (0, 0, 0))}), {"0": FLOATS[:4]}
            ),
            {},
            r"tensor of shape \[1048576, 1048576, 4\]: 4398046511104 elements in one tensor, "
            + over.format("max_tensor_elements"),
        ),
        "stride-0 view over a lowered limit": (
            "pytorch",
            lambda p: write_pt(p, state({"w": tensor("0", 1, (100, 100), (0, 0))}), {"0": FLOATS[:4]}),
            {"max_tensor_elements": 1000},
            r"10000 elements in one tensor, over the limit of 1000",
        ),
        "storage larger than its record": (
            "checkpoint",
            lambda p: write_pt(p, state({"w": tensor("0", 1 << 40, (3,), (1,))}), {"0": FLOATS}),
            {},
            r"storage record data/0 holds 12 bytes, the pickle says 4398046511104",
        ),
        "rank": (
            "pytorch",
            lambda p: write_pt(p, state({"w": tensor("0", 1, (1, 1, 1), (1, 1, 1))}), {"0": FLOATS[:4]}),
            {"max_rank": 2},
            r"tensor size: 3 dims, over the limit of 2",
        ),
        "tensors": (
            "pytorch",
            lambda p: write_pt(
                p, state({"a": tensor("0", 3, (3,), (1,)), "b": tensor("0", 3, (3,), (1,))}), {"0": FLOATS}
            ),
            {"max_tensors": 1},
            r"the checkpoint's tensors: 2 tensors, over the limit of 1",
        ),
        "elements in all": (
            "pytorch",
            lambda p: write_pt(
                p, state({"a": tensor("0", 3, (3,), (1,)), "b": tensor("0", 3, (3,), (1,))}), {"0": FLOATS}
            ),
            {"max_total_elements": 5},
            r"the checkpoint's tensors: 6 elements in all, over the limit of 5",
        ),
        # pickles whose objects share references: a DAG expanding to 2^80 nodes
        "tuple DAG as a dict key": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"}" + put(0) + tuple_dag(80, 1) + b"K\x01s" + STOP),
            {},
            nodes,
        ),
        "frozenset of a tuple DAG": (
            "pytorch",
            lambda p: write_pt(p, PROTO + tuple_dag(80, 0) + b"0(" + get(80) + b"\x91" + STOP),
            {},
            nodes,
        ),
        "list DAG as a persistent id": (
            "pytorch",
            lambda p: write_pt(p, PROTO + list_dag(80, 0) + b"Q" + STOP),
            {},
            nodes,
        ),
        "list DAG as a parameter": (
            "pytorch",
            lambda p: write_pt(
                p, PROTO + glob("torch._utils", "_rebuild_parameter") + b"(" + list_dag(60, 0) + b"tR" + STOP
            ),
            {},
            nodes,
        ),
        "list DAG as a storage": (
            "pytorch",
            lambda p: write_pt(
                p,
                PROTO
                + glob("torch._utils", "_rebuild_tensor_v2")
                + b"("
                + list_dag(60, 0)
                + b"K\x00K\x01\x85K\x01\x85\x89NtR"
                + STOP,
            ),
            {},
            nodes,
        ),
        "tuple DAG in a legacy checkpoint": (
            "pytorch",
            lambda p: write_legacy(p, PROTO + b"}" + put(0) + tuple_dag(80, 1) + b"K\x01s" + STOP),
            {},
            nodes,
        ),
        "nesting": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"(" * 300 + b")" + b"t" * 300 + STOP),
            {},
            r"levels of nesting, " + over.format("max_depth"),
        ),
        # zip bombs: refused from data.pkl's declared size, before it is inflated
        "zip bomb of opcodes": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"N0" * (4 << 20) + b"N" + STOP, deflate=True),
            {},
            r"archive/data\.pkl declares 8388612 bytes from \d+ compressed, more than a pickle of tensor "
            r"metadata deflates to \(32x\): refused before inflating it",
        ),
        "pickle bytes": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"N0" * 1000 + b"N" + STOP),
            {"max_pickle_bytes": 1000},
            r"archive/data\.pkl: 2004 bytes of pickle, over the limit of 1000",
        ),
        "pickle opcodes": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"N0" * 1000 + b"N" + STOP),
            {"max_pickle_opcodes": 500},
            r"archive/data\.pkl: 501 pickle opcodes, over the limit of 500",
        ),
        "legacy pickle bytes": (
            "pytorch",
            lambda p: write_legacy(p, PROTO + b"N0" * 1000 + b"N" + STOP),
            {"max_pickle_bytes": 1000},
            r"the pickle at byte \d+: 1001 bytes of pickle, over the limit of 1000",
        ),
        # memo bombs: entries counted, indices bounded (they size the unpickler's memo table)
        "memo entries": (
            "pytorch",
            lambda p: write_pt(p, PROTO + b"N" + b"\x94" * 5000 + STOP),
            {"max_memo_entries": 1000},
            r"memo index 1000 at byte 1004: 1001 memo entries, over the limit of 1000",
        ),
        "memo index": (
            "pytorch",
            lambda p: write_pt(
                p, PROTO + b"C\xff" + bytes(255) + b"0N" + b"r" + struct.pack("<I", 200) + STOP
            ),
            {"max_memo_entries": 100},
            r"memo index 200 at byte \d+: 201 memo entries, over the limit of 100",
        ),
        # a regular file over max_file_bytes, in every loader
        "file size (pytorch)": (
            "pytorch",
            lambda p: write_pt(p, VALID, {"0": FLOATS}),
            {"max_file_bytes": 100},
            r"\d+ bytes, over the limit of 100",
        ),
        "file size (safetensors)": (
            "safetensors",
            lambda p: _safetensors(p),
            {"max_file_bytes": 10},
            r"\d+ bytes, over the limit of 10",
        ),
        "file size (record)": (
            "record",
            lambda p: _record(p),
            {"max_file_bytes": 10},
            r"\d+ bytes, over the limit of 10",
        ),
        # records
        "gzip MessagePack declaring 2^25 items": (
            "record-gz",
            lambda p: _write(p, gzip.compress(b"\xdd" + struct.pack(">I", 1 << 25) + b"\xc0" * (1 << 25), 1)),
            {},
            r"MessagePack array of 33554432 items at byte 5: 33554433 objects \(shared references counted "
            r"as copies\), " + over.format("max_object_nodes"),
        ),
        "gzip bomb over a lowered limit": (
            "record-gz",
            lambda p: _write(p, gzip.compress(bytes(8 << 20), 1)),
            {"max_decompressed_bytes": 1 << 20},
            r"gzip data \(a decompression bomb\?\): 1048577 bytes once decompressed, "
            r"over the limit of 1048576",
        ),
        "safetensors tensors": (
            "safetensors",
            lambda p: _safetensors(p, n=3),
            {"max_tensors": 2},
            r"t2: the file's tensors: 3 tensors, over the limit of 2",
        ),
    }
    return cases


def _write(path: Path, raw: bytes) -> Path:
    path.write_bytes(raw)
    return path


def _safetensors(path: Path, n: int = 1) -> Path:
    header = {
        f"t{i}": {"dtype": "F32", "shape": [3], "data_offsets": [12 * i, 12 * i + 12]} for i in range(n)
    }
    raw = json.dumps(header).encode()
    return _write(path, struct.pack("<Q", len(raw)) + raw + FLOATS * n)


def _record(path: Path) -> Path:
    w = TensorData(np.arange(3, dtype=np.float32))
    return _write(path, record.NamedMpkBytesRecorder().record({"step": 3, "w": w}))


# -- the child process: each case loaded, timed, its peak RSS measured ---------------------------------
CHILD = textwrap.dedent(
    """
    import json, os, resource, sys, time
    import burn
    from burn import record
    from burn.record import RecordError, load_pytorch, load_pytorch_safetensors
    from burn.record.inspect import inspect_file
    from burn.record.pytorch_pickle import open_checkpoint
    from test_record_support import backend, make_net

    module = make_net(backend("minimal"))

    def run(kind, path, limits):
        if kind == "pytorch":
            load_pytorch(path, module, strict=False, allow_partial=True, limits=limits)
        elif kind == "checkpoint":
            with open_checkpoint(path, limits=limits) as ckpt:
                for value in ckpt.obj.values():
                    value.read()
        elif kind == "safetensors":
            load_pytorch_safetensors(path, module, strict=False, allow_partial=True, limits=limits)
        elif kind == "record":
            record.NamedMpkFileRecorder().load(path, limits=limits)
        elif kind == "record-gz":
            record.NamedMpkGzFileRecorder().load(path, limits=limits)
        elif kind == "inspect":
            inspect_file(path, limits=limits)
        else:
            raise ValueError(kind)

    for name, kind, path, fields in json.load(open(sys.argv[1])):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            run(kind, path, burn.Limits(**fields))
            out = {"outcome": "loaded"}
        except RecordError as err:
            out = {"outcome": "RecordError", "message": str(err), "internal": err.internal}
        except BaseException as err:
            out = {"outcome": type(err).__name__, "message": str(err)[:500]}
        out["name"] = name
        out["seconds"] = time.perf_counter() - start
        out["rss_before_kib"] = before
        out["rss_after_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps(out), flush=True)
    """
)
FIFO_KINDS = ("pytorch", "checkpoint", "safetensors", "record", "record-gz", "inspect")


def _run_child(jobs: list[tuple[str, str, str, dict[str, int]]], tmp: Path) -> dict[str, dict[str, Any]]:
    spec = tmp / "jobs.json"
    spec.write_text(json.dumps(jobs))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), *sys.path]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(spec)], capture_output=True, text=True, timeout=120, env=env
    )
    results = {}
    for line in done.stdout.splitlines():
        result = json.loads(line)
        results[result["name"]] = result
    assert done.returncode == 0, done.stderr[-3000:]
    return results


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("limits")
    jobs = []
    # the memo bomb first: ru_maxrss is the process's high-water mark
    bomb = write_pt(tmp / "memo-bomb.pt", PROTO + b"N" + b"\x94" * (4 << 20) + STOP)
    jobs.append(("memo bomb", "pytorch", str(bomb), {"max_memo_entries": 1 << 16}))
    for i, (name, (kind, build, fields, _)) in enumerate(_cases().items()):
        jobs.append((name, kind, str(build(tmp / f"case{i}.bin")), fields))
    if hasattr(os, "mkfifo"):
        fifo = tmp / "fifo.pt"
        os.mkfifo(fifo)
        jobs += [(f"FIFO ({kind})", kind, str(fifo), {}) for kind in FIFO_KINDS]
    jobs.append(("directory", "pytorch", str(tmp), {}))
    return _run_child(jobs, tmp)


@pytest.mark.parametrize("name", list(_cases()))
def test_crafted_input_is_refused_fast_naming_the_limit(outcomes, name):
    result = outcomes[name]
    assert result["outcome"] == "RecordError", result
    assert not result["internal"], result
    assert "case" in result["message"] and ".bin: " in result["message"], result  # names the file
    assert __import__("re").search(_cases()[name][3], result["message"]), result["message"]
    assert result["seconds"] < 5, result  # the target is 1 s; generous for a loaded CI machine


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", FIFO_KINDS)
def test_a_fifo_is_refused_unopened_by_every_loader(outcomes, kind):
    result = outcomes[f"FIFO ({kind})"]
    assert result["outcome"] == "RecordError", result
    assert "fifo.pt" in result["message"], result
    assert "a FIFO (named pipe), not a regular file: refused" in result["message"], result
    assert result["seconds"] < 5, result


def test_a_directory_is_refused(outcomes):
    assert "a directory, not a regular file: refused" in outcomes["directory"]["message"]


def test_the_memo_bomb_is_refused_in_bounded_memory(outcomes):
    """16 MiB of MEMOIZE opcodes (4M memo entries): refused at the limit's entry, having read
    only what it takes to get there, where the unpickler grew a 32 MiB table per 4M entries."""
    result = outcomes["memo bomb"]
    assert result["outcome"] == "RecordError", result
    assert "65537 memo entries, over the limit of 65536" in result["message"]
    assert result["rss_after_kib"] - result["rss_before_kib"] < 64 << 10, result


# -- in-process checks --------------------------------------------------------------------------------
def test_limits_must_be_a_limits():
    with pytest.raises(TypeError, match=r"Recorder\.load\(limits=\) must be a burn\.Limits, got dict"):
        record.NamedMpkBytesRecorder().load(b"\x80", limits={"max_depth": 3})


def test_a_legitimate_checkpoint_within_the_limits_loads(tmp_path):
    path = write_pt(tmp_path / "ok.pt", VALID, {"0": FLOATS})
    tight = burn.Limits(max_tensors=1, max_total_elements=3, max_tensor_elements=3, max_rank=1, max_depth=8)
    with open_checkpoint(path, limits=tight) as ckpt:
        assert ckpt.state_dict()["w"].read().array.tolist() == [0.0, 1.0, 2.0]
    # a size-1 dim's stride is never used: any value below 2^63 is read, not overflowed
    odd = write_pt(
        tmp_path / "odd.pt", state({"w": tensor("0", 3, (1, 3), ((1 << 62) + 5, 1))}), {"0": FLOATS}
    )
    with open_checkpoint(odd) as ckpt:
        assert ckpt.state_dict()["w"].read().array.tolist() == [[0.0, 1.0, 2.0]]
    # a broadcast (stride-0) view within the limits is read: its elements, not its storage, count
    wide = write_pt(tmp_path / "wide.pt", state({"w": tensor("0", 1, (50, 20), (0, 0))}), {"0": FLOATS[4:8]})
    with open_checkpoint(wide, limits=burn.Limits(max_tensor_elements=1000)) as ckpt:
        assert (ckpt.state_dict()["w"].read().array == 1.0).all()


def test_records_hold_nesting_values_and_tensors_to_the_limits():
    B = backend("minimal")  # noqa: N806
    raw = record.NamedMpkBytesRecorder().record({"deep": [[[[1]]]], "items": list(range(50))})
    record.NamedMpkBytesRecorder().load(raw, limits=burn.Limits(max_depth=8))
    with pytest.raises(RecordError, match=r"<bytes>: .*5 levels of nesting, over the limit of 4"):
        record.NamedMpkBytesRecorder().load(raw, limits=burn.Limits(max_depth=4))
    with pytest.raises(
        RecordError, match=r"MessagePack array of 50 items at byte \d+: \d+ objects .*limit of 60"
    ):
        record.NamedMpkBytesRecorder().load(raw, limits=burn.Limits(max_object_nodes=60))
    text = record.PrettyJsonFileRecorder().record({"deep": [[[[[[1]]]]]]})
    with pytest.raises(
        RecordError, match=r"record nested too deeply: 5 levels of nesting, over the limit of 4"
    ):
        record.PrettyJsonFileRecorder().load(text, limits=burn.Limits(max_depth=4))
    net = make_net(B).into_record()
    for cls in (record.NamedMpkBytesRecorder, record.BinBytesRecorder, record.SafetensorsFileRecorder):
        raw = cls().record(net)
        with pytest.raises(RecordError, match=r"tensors, over the limit of 3"):
            cls().load(raw, template=make_net(B), limits=burn.Limits(max_tensors=3))
        with pytest.raises(RecordError, match=r"elements in one tensor, over the limit of 5"):
            cls().load(raw, template=make_net(B), limits=burn.Limits(max_tensor_elements=5))
        assert cls().load(raw, template=make_net(B), limits=burn.Limits(max_tensors=7)).keys() == net.keys()
    with pytest.raises(RecordError, match=r"<bytes>: \d+ bytes, over the limit of 10"):
        record.NamedMpkBytesRecorder().load(raw, limits=burn.Limits(max_file_bytes=10))


def test_module_load_file_takes_limits(tmp_path):
    B = backend("minimal")  # noqa: N806
    path = make_net(B).save_file(tmp_path / "net")
    make_net(B, seed=1).load_file(path, limits=burn.Limits(max_tensors=7))
    with pytest.raises(RecordError, match=r"net\.mpk: .*7 tensors, over the limit of 6"):
        make_net(B).load_file(path, limits=burn.Limits(max_tensors=6))


def test_gunzip_stops_at_the_cap_without_buffering_past_it():
    payload = gzip.compress(bytes(64 << 20), 9)  # 64 MiB of zeros in ~64 KiB
    tracemalloc.start()
    try:
        with pytest.raises(RecordError, match=r"1048577 bytes once decompressed, over the limit of 1048576"):
            record.NamedMpkGzFileRecorder().load(payload, limits=burn.Limits(max_decompressed_bytes=1 << 20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # the cap and one step, not the 64 MiB


def test_loaders_take_limits_as_a_keyword(tmp_path):
    """`load_pytorch`, `load_pytorch_safetensors`, `open_checkpoint`, `Recorder.load` and
    `inspect_file` all refuse through the limits they are given."""
    B = backend("minimal")  # noqa: N806
    pt = write_pt(tmp_path / "w.pt", VALID, {"0": FLOATS})
    st = _safetensors(tmp_path / "w.safetensors")
    rec = _record(tmp_path / "w.mpk")
    small = burn.Limits(max_tensor_elements=2)
    message = r"3 elements in one tensor, over the limit of 2"
    with pytest.raises(RecordError, match=message):
        load_pytorch(pt, make_net(B), strict=False, limits=small)
    with pytest.raises(RecordError, match=message):
        load_pytorch_safetensors(st, make_net(B), strict=False, limits=small)
    with pytest.raises(RecordError, match=message), open_checkpoint(pt, limits=small):
        pass
    with pytest.raises(RecordError, match=message):
        record.NamedMpkFileRecorder().load(rec, limits=small)
    with pytest.raises(RecordError, match=message):
        inspect_file(rec, limits=small)
    # bytes in memory too (no file): the size limit applies to them
    with pytest.raises(RecordError, match=r"<bytes>: "):
        record.NamedMpkBytesRecorder().load(rec.read_bytes(), limits=burn.Limits(max_file_bytes=8))
    assert msgpack.unpackb(rec.read_bytes())["item"]["step"] == 3


def test_a_zip_of_more_records_than_tensors_allow_is_refused_before_its_directory_is_parsed(tmp_path):
    path = write_pt(tmp_path / "many.pt", VALID, {str(i): FLOATS for i in range(100)})
    with pytest.raises(
        RecordError, match=r"many\.pt: a zip archive of 103 records: 39 tensors, over the limit of 10"
    ):
        open_checkpoint(path, limits=burn.Limits(max_tensors=10))
    with open_checkpoint(path, limits=burn.Limits(max_tensors=40)) as ckpt:
        assert ckpt.state_dict()["w"].read().array.tolist() == [0.0, 1.0, 2.0]
