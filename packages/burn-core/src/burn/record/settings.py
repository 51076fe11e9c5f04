"""Precision settings: the element types floats and ints are saved in, whatever the backend."""

from __future__ import annotations

from typing import ClassVar

from burn.foundations.dtype import DType


class PrecisionSettings:
    """The element types a recorder saves tensors in. Bool tensors always stay bool, and int8 and
    uint8 tensors (a quantized model's storage) stay as they are.

    Conversion happens tensor by tensor while a recorder writes, so a model is never held twice
    in memory. Loading reads the types from the file's metadata and converts each param to the
    dtype of the module it is loaded into, so a record saved at any precision loads anywhere.

    Subclass it (class attributes ``float_dtype`` and ``int_dtype``) for another combination; a
    ``None`` dtype keeps each tensor's own type.

    Example:
        >>> HalfPrecisionSettings().float_dtype, HalfPrecisionSettings().int_dtype
        (burn.float16, burn.int16)
        >>> HalfPrecisionSettings() == HalfPrecisionSettings()
        True
    """

    float_dtype: ClassVar[DType | None] = DType.F32
    int_dtype: ClassVar[DType | None] = DType.I32

    @property
    def name(self) -> str:
        """The class name, written to every file's metadata."""
        return type(self).__name__

    def saved_dtype(self, dtype: DType) -> DType:
        """The dtype a tensor of `dtype` is written in."""
        if dtype.is_float:
            return self.float_dtype or dtype
        if dtype.is_int:
            # 8-bit ints (quantized storage: burn.quantization) keep their type: every settings'
            # int type is wider, so converting them would only multiply the file's size.
            return dtype if dtype.itemsize == 1 else self.int_dtype or dtype
        return dtype

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PrecisionSettings)
            and other.float_dtype is self.float_dtype
            and other.int_dtype is self.int_dtype
        )

    def __hash__(self) -> int:
        return hash((self.float_dtype, self.int_dtype))

    def __repr__(self) -> str:
        return f"{self.name}()"


class FullPrecisionSettings(PrecisionSettings):
    """float32 / int32 (the default)."""

    float_dtype = DType.F32
    int_dtype = DType.I32


class HalfPrecisionSettings(PrecisionSettings):
    """float16 / int16: half the size; ints that do not fit in int16 are refused when saving."""

    float_dtype = DType.F16
    int_dtype = DType.I16


class DoublePrecisionSettings(PrecisionSettings):
    """float64 / int64."""

    float_dtype = DType.F64
    int_dtype = DType.I64


class BFloat16PrecisionSettings(PrecisionSettings):
    """bfloat16 / int16 (bfloat16 through ml_dtypes)."""

    float_dtype = DType.BF16
    int_dtype = DType.I16


class KeepPrecisionSettings(PrecisionSettings):
    """Every tensor in its own dtype: exact round trips of mixed-precision models and optimizer
    state (e.g. float64 moments next to float32 ones)."""

    float_dtype = None
    int_dtype = None


SETTINGS_BY_NAME: dict[str, type[PrecisionSettings]] = {
    cls.__name__: cls
    for cls in (
        FullPrecisionSettings,
        HalfPrecisionSettings,
        DoublePrecisionSettings,
        BFloat16PrecisionSettings,
        KeepPrecisionSettings,
    )
}
