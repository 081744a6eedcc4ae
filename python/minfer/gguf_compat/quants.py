"""gguf-py's ``gguf.quants`` for reading: the byte shape of a quantized tensor and its conversion to
float32, with the shapes gguf-py gives (rows of block bytes in, rows of values out).

The conversion is minfer's (minfer._core.dequantize: ggml's own arithmetic, bit for bit, SIMD,
without the GIL), not gguf-py's numpy code. Quantizing is not provided beyond F32 and F16.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np

from .. import _core
from .constants import GGML_QUANT_SIZES, GGMLQuantizationType

__all__ = ["quant_shape_to_byte_shape", "quant_shape_from_byte_shape", "dequantize", "quantize", "QuantError"]


class QuantError(Exception):
    """Raised by gguf-py's quantizers for a shape they cannot take."""


def _sizes(quant_type: Any) -> Tuple[int, int, str]:
    try:
        qt = GGMLQuantizationType(quant_type)
    except ValueError:
        raise NotImplementedError(f"Unknown tensor type {quant_type!r}") from None
    block_size, type_size = GGML_QUANT_SIZES[qt]
    return block_size, type_size, qt.name


def quant_shape_to_byte_shape(shape: Sequence[int], quant_type: GGMLQuantizationType) -> Tuple[int, ...]:
    """The shape of a tensor's bytes: the last (row) dimension in bytes of whole blocks."""
    block_size, type_size, name = _sizes(quant_type)
    if shape[-1] % block_size != 0:
        raise ValueError(f"Quantized tensor row size ({shape[-1]}) is not a multiple of {name} block size ({block_size})")
    return (*shape[:-1], shape[-1] // block_size * type_size)


def quant_shape_from_byte_shape(shape: Sequence[int], quant_type: GGMLQuantizationType) -> Tuple[int, ...]:
    """The shape of a tensor's values from the shape of its bytes."""
    block_size, type_size, name = _sizes(quant_type)
    if shape[-1] % type_size != 0:
        raise ValueError(f"Quantized tensor bytes per row ({shape[-1]}) is not a multiple of {name} type size ({type_size})")
    return (*shape[:-1], shape[-1] // type_size * block_size)


def dequantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """The values of `data` (a tensor's ``.data`` as GGUFReader gives it: float32 or float16 values,
    or uint8 rows of block bytes) as float32, shaped as gguf-py shapes them: F32 a view of the same
    bytes, F16 converted, every other type ``(*data.shape[:-1], row bytes / type size * block
    size)``. NotImplementedError for a type minfer cannot convert."""
    if qtype == GGMLQuantizationType.F32:
        return data.view(np.float32)
    if qtype == GGMLQuantizationType.F16:
        return data.view(np.float16).astype(np.float32)
    try:
        qt = GGMLQuantizationType(qtype)
    except ValueError:
        raise NotImplementedError(f"Dequantization for type {qtype!r} is not yet implemented") from None
    if qt not in GGML_QUANT_SIZES or not _core.can_dequantize(int(qt)):
        raise NotImplementedError(f"Dequantization for {qt.name} is not yet implemented")
    arr = np.asarray(data)
    if arr.dtype != np.uint8:
        arr = arr.view(np.uint8)  # a view changes the last dimension to bytes, as the rows need
    if arr.ndim == 0:
        arr = arr.reshape(1)
    out_shape = quant_shape_from_byte_shape(arr.shape, qt)
    if arr.size == 0:
        return np.empty(out_shape, dtype=np.float32)
    values = _core.dequantize(np.ascontiguousarray(arr), int(qt))
    return values.reshape(out_shape)


def quantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """F32 and F16 only (a cast, as gguf-py does); minfer has no quantizer."""
    if qtype == GGMLQuantizationType.F32:
        return data.astype(np.float32, copy=False)
    if qtype == GGMLQuantizationType.F16:
        return data.astype(np.float16, copy=False)
    name = getattr(qtype, "name", repr(qtype))
    raise NotImplementedError(f"Quantization for {name} is not yet implemented")
