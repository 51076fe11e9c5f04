"""``burn record inspect FILE...``: the subcommand of the ``burn`` command (and ``python -m burn``)."""

from __future__ import annotations

import subprocess
import sys

from test_record_support import backend, make_net

from burn import record
from burn.cli import main


def test_burn_record_inspect_prints_metadata_and_the_param_tree(tmp_path, capsys) -> None:  # noqa: ANN001
    net = make_net(backend("ndarray"))
    path = net.save_file(tmp_path / "net", record.NamedMpkFileRecorder(record.BFloat16PrecisionSettings()))
    assert main(["record", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "named-mpk" in out and "BFloat16PrecisionSettings" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("layers.0.weight"))
    assert "[4, 3]" in line and "bfloat16" in line and "24 B" in line and str(net.layers[0].weight.id) in line
    assert any(ln.strip().startswith("stats.counts") and "int16" in ln for ln in out.splitlines())


def test_burn_record_inspect_reports_bad_files_and_goes_on(tmp_path, capsys) -> None:  # noqa: ANN001
    good = make_net(backend("ndarray")).save_file(tmp_path / "net", record.SafetensorsFileRecorder())
    bad = tmp_path / "bad.mpk"
    bad.write_bytes(b"\x00" * 5)
    assert main(["record", "inspect", str(bad), str(good), str(tmp_path / "missing.mpk")]) == 1
    captured = capsys.readouterr()
    assert "layers.1.bias" in captured.out  # the good file is still shown
    errors = [ln for ln in captured.err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2 and "bad.mpk" in errors[0] and "missing.mpk" in errors[1]


def test_python_dash_m_burn_record_inspect(tmp_path) -> None:  # noqa: ANN001
    path = make_net(backend("ndarray")).save_file(tmp_path / "net", record.BinGzFileRecorder())
    done = subprocess.run(
        [sys.executable, "-m", "burn", "record", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "bin" in done.stdout and "gzip" in done.stdout and "#6" in done.stdout  # bin: params by position
    usage = subprocess.run(
        [sys.executable, "-m", "burn", "record"], capture_output=True, text=True, timeout=120
    )
    assert usage.returncode == 2 and "inspect" in usage.stderr
