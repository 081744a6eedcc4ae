"""The constants of gguf-py (``gguf.constants``) that reading code uses, spelled as gguf-py spells
them: the format's magic, version and default alignment, the value and tensor type enums, the
block sizes of every tensor type, llama.cpp's file types and the token types.

The enums are their own classes (gguf-py's member sets, not minfer.types'), but their values are
the file format's ids, so they compare equal to minfer.types.ValueType / TensorType and to plain
ints. GGML_QUANT_SIZES is read from the C++ library's type table (minfer._core.type_block); the
tests check it against hand-written sizes and, when available, against gguf-py itself.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Dict, Tuple

from .. import _core

__all__ = [
    "GGUF_MAGIC", "GGUF_VERSION", "GGUF_DEFAULT_ALIGNMENT", "QK_K",
    "GGUFEndian", "GGUFValueType", "GGMLQuantizationType", "LlamaFileType", "TokenType",
    "GGML_QUANT_SIZES",
]

GGUF_MAGIC = 0x46554747  # b"GGUF" read as a little-endian uint32
GGUF_VERSION = 3
GGUF_DEFAULT_ALIGNMENT = 32
QK_K = 256


class GGUFEndian(IntEnum):
    LITTLE = 0
    BIG = 1


class GGUFValueType(IntEnum):
    """A metadata value's type tag."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    @staticmethod
    def get_type(val: Any) -> "GGUFValueType":
        """The tag a writer would give a Python value (gguf-py's rule: int -> INT32, float ->
        FLOAT32; bool is tested before int)."""
        if isinstance(val, (str, bytes, bytearray)):
            return GGUFValueType.STRING
        if isinstance(val, list):
            return GGUFValueType.ARRAY
        if isinstance(val, float):
            return GGUFValueType.FLOAT32
        if isinstance(val, bool):
            return GGUFValueType.BOOL
        if isinstance(val, int):
            return GGUFValueType.INT32
        raise ValueError(f"Unknown type: {type(val)}")


class GGMLQuantizationType(IntEnum):
    """A ggml tensor type id (the ids a current file can hold; removed ids are not members)."""

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    IQ2_XXS = 16
    IQ2_XS = 17
    IQ3_XXS = 18
    IQ1_S = 19
    IQ4_NL = 20
    IQ3_S = 21
    IQ2_S = 22
    IQ4_XS = 23
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    IQ1_M = 29
    BF16 = 30
    TQ1_0 = 34
    TQ2_0 = 35
    MXFP4 = 39
    NVFP4 = 40
    Q1_0 = 41
    Q2_0 = 42


class LlamaFileType(IntEnum):
    """llama.cpp's llama_ftype (general.file_type)."""

    ALL_F32 = 0
    MOSTLY_F16 = 1
    MOSTLY_Q4_0 = 2
    MOSTLY_Q4_1 = 3
    MOSTLY_Q8_0 = 7
    MOSTLY_Q5_0 = 8
    MOSTLY_Q5_1 = 9
    MOSTLY_Q2_K = 10
    MOSTLY_Q3_K_S = 11
    MOSTLY_Q3_K_M = 12
    MOSTLY_Q3_K_L = 13
    MOSTLY_Q4_K_S = 14
    MOSTLY_Q4_K_M = 15
    MOSTLY_Q5_K_S = 16
    MOSTLY_Q5_K_M = 17
    MOSTLY_Q6_K = 18
    MOSTLY_IQ2_XXS = 19
    MOSTLY_IQ2_XS = 20
    MOSTLY_Q2_K_S = 21
    MOSTLY_IQ3_XS = 22
    MOSTLY_IQ3_XXS = 23
    MOSTLY_IQ1_S = 24
    MOSTLY_IQ4_NL = 25
    MOSTLY_IQ3_S = 26
    MOSTLY_IQ3_M = 27
    MOSTLY_IQ2_S = 28
    MOSTLY_IQ2_M = 29
    MOSTLY_IQ4_XS = 30
    MOSTLY_IQ1_M = 31
    MOSTLY_BF16 = 32
    MOSTLY_TQ1_0 = 36
    MOSTLY_TQ2_0 = 37
    MOSTLY_MXFP4_MOE = 38

    GUESSED = 1024


class TokenType(IntEnum):
    """tokenizer.ggml.token_type values."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def _quant_sizes() -> Dict[GGMLQuantizationType, Tuple[int, int]]:
    sizes = {}
    for t in GGMLQuantizationType:
        blk, size = _core.type_block(int(t))
        if (blk, size) != (0, 0):
            sizes[t] = (int(blk), int(size))
    return sizes


GGML_QUANT_SIZES: Dict[GGMLQuantizationType, Tuple[int, int]] = _quant_sizes()
"""(values per block, bytes per block) of each tensor type."""
