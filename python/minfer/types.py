"""GGUF's value type tags and ggml's tensor type ids, as Python enums.

The members are spelled as gguf-py spells them (``GGUFValueType.UINT32``,
``GGMLQuantizationType.Q4_K``), so code written for gguf-py reads the same. The ids are the file
format's and never change; tests/python check every one against the C++ library's table
(``minfer._core.tensor_type_name``).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ValueType", "TensorType"]


class _NamedIntEnum(IntEnum):
    """An IntEnum whose ``str()`` and ``format()`` are the member's name (``Q4_K``), as people read
    a type. IntEnum's own ``__str__`` is ``int.__str__`` since Python 3.11, so ``str(t.type)`` would
    print ``12``; the value stays ``int(t)`` / ``t.value``."""

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)


class ValueType(_NamedIntEnum):
    """A metadata value's type tag, as stored in the file."""

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


class TensorType(_NamedIntEnum):
    """A ggml tensor type id. Removed ids (Q4_2, Q4_3, Q4_0_4_4, …) are named so that they can be
    reported; a file holding one is refused with ``removed_tensor_type``."""

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q4_2 = 4
    Q4_3 = 5
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
    Q4_0_4_4 = 31
    Q4_0_4_8 = 32
    Q4_0_8_8 = 33
    TQ1_0 = 34
    TQ2_0 = 35
    IQ4_NL_4_4 = 36
    IQ4_NL_4_8 = 37
    IQ4_NL_8_8 = 38
    MXFP4 = 39
    NVFP4 = 40
    Q1_0 = 41
    Q2_0 = 42
