"""minfer.quant.quantize (rows of a numpy array) and minfer.quantize (a model file).

- minfer.quant.quantize against llama.cpp's ggml_quantize_chunk, loaded with ctypes from
  $MINFER_LLAMA_LIB (libggml-base.so; skipped loudly without it), byte for byte, for types of every
  family, with and without importance weights; the bytes do not depend on the thread count; the
  errors for bad inputs; round trips through minfer.quant.dequantize within each type's error.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np
import pytest

import minfer
import minfer.quant
from minfer.errors import RequestError
from minfer.types import TensorType

# ---- ggml through ctypes -------------------------------------------------------------------------------


class Ggml:
    """ggml_quantize_chunk of llama.cpp's libggml-base: the reference bytes."""

    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)
        f = self.lib.ggml_quantize_chunk
        # size_t ggml_quantize_chunk(enum ggml_type, const float * src, void * dst, int64_t start,
        #                            int64_t nrows, int64_t n_per_row, const float * imatrix)
        f.restype = ctypes.c_size_t
        f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                      ctypes.c_int64, ctypes.c_void_p]
        self.lib.ggml_type_name.restype = ctypes.c_char_p
        self.lib.ggml_type_name.argtypes = [ctypes.c_int]
        self.lib.ggml_row_size.restype = ctypes.c_size_t
        self.lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]

    def quantize(self, type_id: int, x: np.ndarray, importance) -> np.ndarray:
        # The ids the tests use are old enough to be in every ggml; the name is checked all the same.
        assert self.lib.ggml_type_name(type_id).decode() == minfer.tensor_type_name(type_id)
        rows, n_per_row = x.shape
        row_bytes = self.lib.ggml_row_size(type_id, n_per_row)
        out = np.zeros((rows, row_bytes), dtype=np.uint8)
        src = np.ascontiguousarray(x, dtype=np.float32)
        imp = None if importance is None else np.ascontiguousarray(importance, dtype=np.float32)
        n = self.lib.ggml_quantize_chunk(type_id, src.ctypes.data, out.ctypes.data, 0, rows, n_per_row,
                                         None if imp is None else imp.ctypes.data)
        assert n == out.size
        return out


@pytest.fixture(scope="module")
def ggml():
    path = os.environ.get("MINFER_LLAMA_LIB")
    if not path:
        pytest.skip("MINFER_LLAMA_LIB is not set (scripts/llama-ref.sh installs llama.cpp; point it at "
                    "libggml-base.so): minfer.quant.quantize is not compared with ggml_quantize_chunk")
    return Ggml(path)


def rows_of(seed: int, rows: int, n_per_row: int) -> np.ndarray:
    """Weights as models have them: Gaussian, a few outliers, one row of small integers (exact
    rounding ties), one with a zero block."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, n_per_row)).astype(np.float32) * np.float32(0.02)
    x[0, rng.integers(0, n_per_row, 5)] *= np.float32(40)
    if rows > 2:
        x[1] = rng.integers(-8, 8, n_per_row).astype(np.float32) * np.float32(0.5)
        x[2, :256] = 0
    return x


def importance_of(seed: int, n_per_row: int) -> np.ndarray:
    w = np.random.default_rng(seed + 1000).gamma(1.0, 1.0, n_per_row).astype(np.float32)
    w[:7] = 0  # unused columns, as imatrix files have them
    return w


# (type, with importance): every family: legacy, k-quants, codebook types (iq2_xxs needs weights).
# Not iq1_s: ggml_quantize_init spends 15 s on its tables in this build (the C++ reference test has it).
CASES = [("q4_0", False), ("q4_0", True), ("q8_0", False), ("q5_1", True), ("q4_K", False), ("q4_K", True),
         ("q6_K", False), ("q6_K", True), ("q2_K", True), ("iq4_xs", False), ("iq4_xs", True), ("iq4_nl", True),
         ("iq2_xxs", True), ("iq3_xxs", True), ("f16", False), ("bf16", False)]


@pytest.mark.parametrize("name,weighted", CASES, ids=[f"{n}{'-imatrix' if w else ''}" for n, w in CASES])
def test_quantize_matches_ggml_quantize_chunk(ggml, name, weighted):
    x = rows_of(len(name), 6, 1024)
    imp = importance_of(len(name), 1024) if weighted else None
    got = minfer.quant.quantize(x, name, importance=imp)
    want = ggml.quantize(int(TensorType[name.upper()]), x, imp)
    assert got.dtype == np.uint8 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_threads_and_type_spellings_give_the_same_bytes():
    x = rows_of(1, 64, 512)
    imp = importance_of(1, 512)
    one = minfer.quant.quantize(x, "q4_K", importance=imp, threads=1)
    for t in ("Q4_K", "q4_k", TensorType.Q4_K):
        for threads in (0, 2, 7):
            assert minfer.quant.quantize(x, t, importance=imp, threads=threads).tobytes() == one.tobytes()


def test_a_1d_array_is_one_row_and_a_view_is_copied_first():
    x = rows_of(2, 4, 512)
    whole = minfer.quant.quantize(x, "q8_0")
    assert whole.shape == (4, 512 // 32 * 34)
    row = minfer.quant.quantize(x[2], "q8_0")
    assert row.shape == (512 // 32 * 34,) and row.tobytes() == whole[2].tobytes()
    # a non-contiguous float32 view (every other row; a transposed array) has the same values quantized
    assert minfer.quant.quantize(x[::2], "q8_0").tobytes() == whole[::2].tobytes()
    t = np.asfortranarray(x)
    assert minfer.quant.quantize(t, "q8_0").tobytes() == whole.tobytes()
    # no rows: no bytes, the row size still known
    assert minfer.quant.quantize(np.zeros((0, 512), np.float32), "q4_0").shape == (0, 512 // 32 * 18)


# Each type's round-trip error on rows_of(...) (RMS of the error over the RMS of the values), with room:
# a quantizer that wrote the wrong blocks would be far above it.
ROUND_TRIP = {"q8_0": 0.01, "q4_0": 0.15, "q4_K": 0.12, "q6_K": 0.04, "iq4_xs": 0.12, "f16": 0.001, "iq2_xxs": 0.5}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_round_trip_through_dequantize(name):
    x = rows_of(3, 8, 2048)
    imp = importance_of(3, 2048) if minfer.quant.requires_importance(name) else None
    q = minfer.quant.quantize(x, name, importance=imp)
    back = minfer.quant.dequantize(q, name).reshape(x.shape)
    rel = float(np.sqrt(np.mean((back - x) ** 2)) / np.sqrt(np.mean(x ** 2)))
    assert rel < ROUND_TRIP[name], rel
    # the values a type stores exactly come back exactly: quantizing them again gives the same bytes
    if name in ("q8_0", "f16"):
        assert minfer.quant.quantize(back, name).tobytes() == q.tobytes()


def test_quantize_releases_the_gil():
    x = rows_of(4, 512, 4096)
    imp = importance_of(4, 4096)
    ticks = []
    stop = threading.Event()
    th = threading.Thread(target=lambda: [ticks.append(1) for _ in iter(lambda: stop.is_set(), True)])
    th.start()
    try:
        minfer.quant.quantize(x, "iq4_xs", importance=imp, threads=1)
    finally:
        stop.set()
        th.join()
    assert len(ticks) > 0  # another Python thread ran meanwhile


# ---- bad inputs ----------------------------------------------------------------------------------------


def test_wrong_dtypes_and_shapes_are_python_errors():
    x = rows_of(5, 2, 256)
    with pytest.raises(TypeError, match="float32"):
        minfer.quant.quantize(x.astype(np.float64), "q4_0")
    with pytest.raises(TypeError, match="float32"):
        minfer.quant.quantize(x.astype(np.float16), "q4_0")
    with pytest.raises(TypeError, match="float32"):
        minfer.quant.quantize(x.astype(">f4"), "q4_0")  # float32 of the other byte order
    with pytest.raises(TypeError, match="numpy"):
        minfer.quant.quantize(x.tolist(), "q4_0")
    with pytest.raises(TypeError, match="importance"):
        minfer.quant.quantize(x, "q4_0", importance=np.ones(256))
    with pytest.raises(TypeError, match="type"):
        minfer.quant.quantize(x, 4.0)
    with pytest.raises(ValueError, match="1-D"):
        minfer.quant.quantize(x.reshape(2, 2, 128), "q4_0")
    with pytest.raises(TypeError):
        minfer.quant.quantize(x, "q4_0", threads="many")
    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(x, "q4_0", threads=-1)
    assert e.value.code == "usage"


def test_library_errors_raise_request_errors_with_the_library_fields():
    x = rows_of(6, 3, 512)
    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(x, "q4_0", importance=np.ones(511, np.float32))
    assert (e.value.code, e.value.expected, e.value.found) == ("buffer_size_mismatch", 512, 511)

    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(x[:, :500], "q4_K")
    assert (e.value.code, e.value.expected, e.value.found) == ("not_block_multiple", 256, 500)
    assert "not a multiple of block size (256)" in str(e.value)

    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(x, "iq2_xxs")
    assert e.value.code == "importance_required"

    for t in ("q8_K", "i32", TensorType.Q4_2, 99):
        with pytest.raises(RequestError) as e:
            minfer.quant.quantize(x, t)
        assert e.value.code == "type_not_quantizable", t

    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(x, "q9_9")
    assert e.value.code == "bad_value_text" and "q4_K" in str(e.value)

    # A NaN where a codebook search would assert in ggml (it is not run on ggml here: it would abort).
    bad = x.copy()
    bad[2, 300] = np.nan  # (row 2's first block is zeros: a NaN among zeros is a zero block for ggml)
    with pytest.raises(RequestError) as e:
        minfer.quant.quantize(bad, "iq3_xxs", importance=importance_of(6, 512))
    assert (e.value.code, e.value.index) == ("quantize_failed", 2)
    # the basic types take it, as ggml does
    assert minfer.quant.quantize(bad, "q4_0").shape == (3, 512 // 32 * 18)


def test_can_quantize_and_requires_importance():
    assert minfer.quant.can_quantize("q4_K") and minfer.quant.can_quantize(TensorType.IQ4_XS)
    assert not minfer.quant.can_quantize("q8_K") and not minfer.quant.can_quantize(2**40)
    assert [t for t in ("iq2_xxs", "iq2_xs", "iq1_s", "iq3_xxs", "q4_0") if minfer.quant.requires_importance(t)] == \
        ["iq2_xxs", "iq2_xs", "iq1_s"]
