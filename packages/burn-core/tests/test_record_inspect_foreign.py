"""``burn record inspect`` on a file that is not a record says so (not "malformed MessagePack")."""

from __future__ import annotations

import gzip
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from burn.record import RecordError
from burn.record.inspect import inspect_file

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(40)


@pytest.mark.parametrize(
    ("name", "content", "looks_like"),
    [
        ("metrics.png", PNG, "a PNG image"),  # its first byte is also a MessagePack map's
        ("weights.pkl", pickle.dumps({"w": [1.0, 2.0]}, protocol=4), "a Python pickle"),  # ditto
        ("model.pt", b"PK\x03\x04" + bytes(60), "a zip archive; a PyTorch .pt/.pth file is one"),
        ("metrics.csv", b"epoch,split,loss\n1,train,0.5\n", "a text file"),
        ("notes.txt.gz", gzip.compress(b"hello\n", mtime=0), "a text file"),
    ],
)
def test_a_foreign_file_is_not_a_record(tmp_path: Path, name: str, content: bytes, looks_like: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(RecordError, match=f"not a record file \\(it looks like {looks_like}") as info:
        inspect_file(path)
    assert str(path) in str(info.value) and "burn reads named-mpk, bin, json and safetensors" in str(
        info.value
    )


def test_npy_and_random_bytes(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.ones(3))
    with pytest.raises(RecordError, match="not a record file \\(it looks like a NumPy .npy array\\)"):
        inspect_file(tmp_path / "a.npy")
    (tmp_path / "noise").write_bytes(bytes(range(256)) * 2)
    with pytest.raises(RecordError, match="not a record file: burn reads"):
        inspect_file(tmp_path / "noise")


def test_a_damaged_record_is_still_reported_as_damaged(tmp_path: Path) -> None:
    import msgpack

    path = tmp_path / "cut.mpk"
    path.write_bytes(msgpack.packb({"format": "burn-record", "version": 1, "item": [1, 2, 3]})[:-2])
    with pytest.raises(RecordError) as info:
        inspect_file(path)
    assert "not a record file" not in str(info.value)


def test_cli_exit_status(tmp_path: Path) -> None:
    path = tmp_path / "metrics.png"
    path.write_bytes(PNG)
    proc = subprocess.run(
        [sys.executable, "-m", "burn", "record", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {path}: not a record file (it looks like a PNG image)")
