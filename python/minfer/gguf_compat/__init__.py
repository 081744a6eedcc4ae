"""gguf-py's reading API on minfer: a script written for gguf-py runs unchanged with

    from minfer import gguf_compat as gguf
    reader = gguf.GGUFReader("model.gguf")
    arch = reader.fields["general.architecture"].contents()
    for t in reader.tensors:
        w = gguf.dequantize(t.data, t.tensor_type)   # minfer's ggml-exact conversion

or with ``from minfer.gguf_compat import GGUFReader``. Covered: GGUFReader (fields, tensors,
get_field, get_tensor, alignment, data_offset, byte_order, endianess, data), ReaderField (offset,
name, parts, data, types, contents), ReaderTensor (name, tensor_type, shape, n_elements, n_bytes,
data_offset, data, field), GGUFValueType, GGMLQuantizationType, GGML_QUANT_SIZES, LlamaFileType,
TokenType, GGUFEndian, quants.dequantize and the shape helpers. Writing (GGUFWriter) is not covered:
see minfer.edit. docs/GGUF_COMPAT.md lists each attribute, what it returns and how it is tested.
"""

from __future__ import annotations

from . import constants, gguf_reader, quants
from .constants import (
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    GGUF_VERSION,
    QK_K,
    GGMLQuantizationType,
    GGUFEndian,
    GGUFValueType,
    LlamaFileType,
    TokenType,
)
from .gguf_reader import GGUFReader, ReaderField, ReaderTensor
from .quants import QuantError, dequantize, quant_shape_from_byte_shape, quant_shape_to_byte_shape, quantize

__all__ = [
    "GGUFReader", "ReaderField", "ReaderTensor",
    "GGUFValueType", "GGMLQuantizationType", "GGML_QUANT_SIZES", "LlamaFileType", "TokenType", "GGUFEndian",
    "GGUF_MAGIC", "GGUF_VERSION", "GGUF_DEFAULT_ALIGNMENT", "QK_K",
    "dequantize", "quantize", "quant_shape_to_byte_shape", "quant_shape_from_byte_shape", "QuantError",
    "constants", "gguf_reader", "quants",
]
