"""Values to and from ggml's block formats (``minfer::quant``).

    import numpy as np, minfer.quant
    w = np.random.default_rng(0).standard_normal((4, 4096), dtype=np.float32)
    q = minfer.quant.quantize(w, "q4_K")               # uint8, shape (4, 4096 / 256 * 144)
    back = minfer.quant.dequantize(q, "q4_K").reshape(w.shape)

:func:`quantize` writes, byte for byte, what ggml's ``ggml_quantize_chunk`` writes for the same
rows and importance weights (its ``quantize_row_*_ref`` without weights), for every type ggml can
quantize to; the bytes do not depend on ``threads``. :func:`dequantize` is :func:`minfer.dequantize`
(ggml's ``to_float``, bit for bit) taking a type name as well.
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core, _toolbox
from .toolbox import _int
from .types import TensorType

__all__ = ["quantize", "dequantize", "can_quantize", "requires_importance", "TypeLike"]

TypeLike = Union[str, TensorType, int]


def _type_id(type: Any) -> int:
    """A tensor type given as a ggml name in any case (``"q4_K"``, ``"IQ4_XS"``) or a TensorType."""
    if isinstance(type, str):
        return int(_toolbox.tensor_type_id(type))
    if isinstance(type, numbers.Integral) and not isinstance(type, bool):
        return int(type)
    raise TypeError(f"type must be a tensor type name (str) or a minfer.types.TensorType, not {_type_name(type)}")


def quantize(values: npt.NDArray[np.float32], type: TypeLike, importance: Optional[npt.NDArray[np.float32]] = None,
             threads: int = 0) -> npt.NDArray[np.uint8]:
    """Quantize rows of float32 values to ggml's ``type``, as ``ggml_quantize_chunk`` does.

    - ``values``: a numpy float32 array, 1-D (one row) or 2-D (rows x n_per_row). Other dtypes are
      refused with TypeError, float64 and float16 included: quantizing is exact on float32 input,
      so the rounding to float32 is left to the caller (``values.astype(np.float32)``). A
      non-contiguous float32 array is copied first (the values are unchanged).
    - ``type``: a ggml tensor type name in any case (``"q4_0"``, ``"Q4_K"``, ``"iq4_xs"``, ``"f16"``)
      or a :class:`~minfer.types.TensorType`.
    - ``importance``: None, or n_per_row float32 weights (one per column, shared by every row: an
      imatrix entry). ``iq2_xxs``, ``iq2_xs`` and ``iq1_s`` need them (:func:`requires_importance`);
      ``q8_0``, ``f16``, ``bf16`` and a few others ignore them.
    - ``threads``: 0 for one per hardware thread; the bytes are the same for any number.

    Returns a new uint8 array: shape ``(rows, row_bytes)`` for 2-D input, ``(row_bytes,)`` for a
    1-D row, where ``row_bytes = n_per_row / block_values * block_bytes`` (:func:`minfer.type_block`).
    Runs without the GIL.

    Raises (minfer.errors) RequestError with the library's code: ``type_not_quantizable`` (q8_1,
    q8_K, the integer types, removed ids), ``bad_value_text`` (an unknown name),
    ``importance_required``, ``not_block_multiple`` (n_per_row not a whole number of blocks;
    ``expected`` is the block size), ``buffer_size_mismatch`` (importance of the wrong length),
    ``quantize_failed`` (a row on which ggml's codebook search would assert, such as a NaN for the
    IQ types; ``index`` is the row), ``usage`` (threads out of range). TypeError for a wrong Python type or
    dtype, ValueError for an array that is not 1-D or 2-D."""
    if not isinstance(values, np.ndarray):
        raise TypeError(f"values must be a numpy float32 array, not {_type_name(values)}")
    if values.dtype != np.float32:  # a byte-swapped float32 is another dtype too
        raise TypeError(f"values must be a float32 array, not {values.dtype} (convert with values.astype(np.float32))")
    imp = None
    if importance is not None:
        if not isinstance(importance, np.ndarray):
            raise TypeError(f"importance must be None or a numpy float32 array, not {_type_name(importance)}")
        if importance.dtype != np.float32:
            raise TypeError(f"importance must be a float32 array, not {importance.dtype}")
        imp = np.ascontiguousarray(importance)
    n_threads = _int(threads, "threads", 0, 2**32 - 1)
    return _toolbox.quantize_rows(np.ascontiguousarray(values), _type_id(type), imp, n_threads)


def dequantize(data: Any, type: TypeLike, *, threads: int = 0,
               out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]:
    """:func:`minfer.dequantize` with ``type`` also given by name: the f32 values (1-D) of raw bytes
    of ``type`` (a uint8 array of any shape, C-contiguous, such as :func:`quantize` returns)."""
    return _core.dequantize(data, _type_id(type), threads=threads, out=out)


def can_quantize(type: TypeLike) -> bool:
    """Whether :func:`quantize` can produce ``type`` (every type ggml_quantize_chunk accepts)."""
    t = _type_id(type)
    return 0 <= t < 2**32 and bool(_toolbox.can_quantize(t))


def requires_importance(type: TypeLike) -> bool:
    """Whether ``type`` needs importance weights (ggml_quantize_requires_imatrix: iq2_xxs, iq2_xs, iq1_s)."""
    t = _type_id(type)
    return 0 <= t < 2**32 and bool(_toolbox.requires_importance(t))


def _type_name(v: Any) -> str:
    return builtins.type(v).__name__
