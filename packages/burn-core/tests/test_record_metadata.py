"""Every recorder writes the metadata (format, format version, library version, float/int types,
settings) into its files and refuses a file of a newer format version with a clear message."""

from __future__ import annotations

import pytest
from test_record_support import SETTINGS, backend, make_net

import burn
from burn import record
from burn.record import RecordError, metadata

ENCODING = {
    record.NamedMpkFileRecorder: "named-mpk",
    record.NamedMpkGzFileRecorder: "named-mpk",
    record.NamedMpkBytesRecorder: "named-mpk",
    record.BinFileRecorder: "bin",
    record.BinGzFileRecorder: "bin",
    record.BinBytesRecorder: "bin",
    record.JsonGzFileRecorder: "json",
    record.PrettyJsonFileRecorder: "json",
    record.SafetensorsFileRecorder: "safetensors",
}


def test_every_recorder_is_covered() -> None:
    assert set(ENCODING) == set(record.ALL_RECORDERS)


def _save(recorder: record.Recorder, rec: object, tmp_path) -> object:  # noqa: ANN001
    return recorder.record(rec, tmp_path / "net") if recorder.extension else recorder.record(rec)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.name)
@pytest.mark.parametrize("recorder_cls", record.ALL_RECORDERS, ids=lambda c: c.__name__)
def test_metadata_in_every_file(recorder_cls, settings, tmp_path) -> None:  # noqa: ANN001
    net = make_net(backend("ndarray"))
    recorder = recorder_cls(settings)
    saved = _save(recorder, net.into_record(), tmp_path)
    meta, _ = recorder.load_with_metadata(saved, template=net)
    assert meta is not None
    assert (meta.format, meta.format_version, meta.encoding) == (
        "burn-record",
        record.FORMAT_VERSION,
        ENCODING[recorder_cls],
    )
    assert meta.burn_version == burn.__version__ and meta.settings == settings.name
    assert meta.float_dtype == (settings.float_dtype.value if settings.float_dtype else "keep")
    assert meta.int_dtype == (settings.int_dtype.value if settings.int_dtype else "keep")


@pytest.mark.parametrize("recorder_cls", record.ALL_RECORDERS, ids=lambda c: c.__name__)
def test_a_newer_format_version_is_refused(recorder_cls, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    net = make_net(backend("ndarray"))
    recorder = recorder_cls()
    monkeypatch.setattr(metadata, "FORMAT_VERSION", record.FORMAT_VERSION + 1)
    monkeypatch.setattr(metadata, "_version", "99.0.0")
    saved = _save(recorder, net.into_record(), tmp_path)  # as a future burn would write it
    monkeypatch.undo()
    where = r"net\.[a-z.]+: " if recorder.extension else ""
    with pytest.raises(
        RecordError,
        match=where
        + rf"record format version {record.FORMAT_VERSION + 1} \(written by burn 99\.0\.0\) is newer "
        r".*upgrade burn-core",
    ):
        recorder.load(saved, template=net)
