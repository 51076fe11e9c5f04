"""Records and recorders: save only a module's params (or any nested state), at a chosen
precision, in a chosen format, and load them on any backend without initializing the module.

Example:
    >>> from burn import record  # doctest: +SKIP
    >>> recorder = record.NamedMpkFileRecorder(record.HalfPrecisionSettings())  # doctest: +SKIP
    >>> model.save_file("model", recorder)  # writes model.mpk  # doctest: +SKIP
    >>> model = config.init(device).load_file("model", recorder, device)  # doctest: +SKIP
    >>> state = recorder.record(optimizer.to_record(), "optimizer")  # doctest: +SKIP
"""

from burn.record.errors import RecordError
from burn.record.items import ModuleRecord, ParamRecord, Record, map_tensors
from burn.record.metadata import FORMAT_VERSION, Metadata
from burn.record.pytorch import (
    load_pytorch,
    load_pytorch_safetensors,
    pytorch_state_dict,
    save_pytorch,
    save_pytorch_safetensors,
)
from burn.record.recorder import (
    ALL_RECORDERS,
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrettyJsonFileRecorder,
    Recorder,
    SafetensorsFileRecorder,
    default_recorder,
)
from burn.record.settings import (
    BFloat16PrecisionSettings,
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    KeepPrecisionSettings,
    PrecisionSettings,
)

__all__ = [
    "ALL_RECORDERS",
    "FORMAT_VERSION",
    "BFloat16PrecisionSettings",
    "BinBytesRecorder",
    "BinFileRecorder",
    "BinGzFileRecorder",
    "DoublePrecisionSettings",
    "FullPrecisionSettings",
    "HalfPrecisionSettings",
    "JsonGzFileRecorder",
    "KeepPrecisionSettings",
    "Metadata",
    "ModuleRecord",
    "NamedMpkBytesRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "ParamRecord",
    "PrecisionSettings",
    "PrettyJsonFileRecorder",
    "Record",
    "RecordError",
    "Recorder",
    "SafetensorsFileRecorder",
    "default_recorder",
    "load_pytorch",
    "load_pytorch_safetensors",
    "map_tensors",
    "pytorch_state_dict",
    "save_pytorch",
    "save_pytorch_safetensors",
]
