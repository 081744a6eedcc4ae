"""Tensor.to_numpy() and minfer.dequantize() give, bit for bit, what the C++ library gives.

For every type minfer can convert, a tensor of seeded random bytes (NaN and Inf scales included:
they must convert as ggml converts them) in a file written byte by byte (gguf_bytes.py):
- the C++ library's values through the tool: `minfer tensor FILE t --dump OUT` (raw f32), compared
  as uint32 (NaN payloads included);
- llama.cpp's ggml: ggml_get_type_traits(type)->to_float through ctypes, when MINFER_LLAMA_LIB names
  libggml-base.so (scripts/llama-ref.sh installs it); NaN matches NaN there, whatever its payload,
  as in tests/unit/test_quant_ggml.cpp. Skipped loudly without it.
- threads=1 and threads=0 on a tensor of several million values: the same bits.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import minfer
from minfer.errors import RequestError
from minfer.types import TensorType

import gguf_bytes as gb

REMOVED = {4, 5, 31, 32, 33, 36, 37, 38}
NOT_CONVERTIBLE = {9, 27}  # q8_1 (ggml has no to_float either), i64
# What minfer converts: every id the file format knows (gguf_bytes.BLOCKS) but those.
CONVERTIBLE = sorted(set(gb.BLOCKS) - NOT_CONVERTIBLE)
BLOCKS_PER_ROW, ROWS = 8, 3


def random_tensor_bytes(type_id: int, n_blocks: int, seed: int) -> bytes:
    return np.random.default_rng(seed).bytes(n_blocks * gb.BLOCKS[type_id][1])


def per_row(type_id: int) -> int:
    """Blocks per row: 8, or 256 values for the plain types (so that random bits hold NaN and Inf)."""
    return max(BLOCKS_PER_ROW, 256 // gb.BLOCKS[type_id][0])


def one_tensor_file(path: Path, type_id: int, seed: int = 0, blocks_per_row: int = 0,
                    rows: int = ROWS) -> bytes:
    elems, _ = gb.BLOCKS[type_id]
    blocks_per_row = blocks_per_row or per_row(type_id)
    data = random_tensor_bytes(type_id, blocks_per_row * rows, seed + type_id)
    path.write_bytes(gb.gguf([("general.architecture", gb.STRING, "test")],
                             [("t", [elems * blocks_per_row, rows], type_id, data)]))
    return data


def cli_dump(cli: Path, path: Path, name: str, out: Path) -> np.ndarray:
    r = subprocess.run([str(cli), "tensor", str(path), name, "--dump", str(out), "--force"], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return np.fromfile(out, dtype="<f4")


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32).reshape(-1).view(np.uint32)


def name_of(type_id: int) -> str:
    return TensorType(type_id).name


# ---- ggml through ctypes -------------------------------------------------------------------------------

class GgmlTypeTraits(ctypes.Structure):
    """ggml.h's struct ggml_type_traits (tests/support/llama_ref/llama_ref.hpp)."""
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                ("blck_size_interleave", ctypes.c_int64), ("type_size", ctypes.c_size_t),
                ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p), ("from_float_ref", ctypes.c_void_p)]


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64)


class GgufInitParams(ctypes.Structure):
    """gguf.h's struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; }."""
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


class Ggml:
    def __init__(self, path: str, scratch: Path) -> None:
        self.lib = ctypes.CDLL(path)
        self.lib.gguf_init_from_file.restype = ctypes.c_void_p
        self.lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, GgufInitParams]
        self.lib.gguf_free.argtypes = [ctypes.c_void_p]
        self.count = self._type_count(scratch)
        self.lib.ggml_get_type_traits.restype = ctypes.POINTER(GgmlTypeTraits)
        self.lib.ggml_get_type_traits.argtypes = [ctypes.c_int]
        self.lib.ggml_type_name.restype = ctypes.c_char_p  # "NONE" past GGML_TYPE_COUNT
        self.lib.ggml_type_name.argtypes = [ctypes.c_int]
        q = self.lib.ggml_get_type_traits(2).contents
        # the layout is checked on q4_0 before any other entry is trusted, as the C++ binding does
        assert (q.type_name, q.blck_size, q.type_size, q.is_quantized) == (b"q4_0", 32, 18, True), \
            "ggml_type_traits has another layout in this library"

    def _type_count(self, scratch: Path) -> int:
        """GGML_TYPE_COUNT of this library, learned from its GGUF reader (which refuses a tensor type at
        or past it): its tables must not be read past their end (ggml_type_name does not check)."""
        for t in sorted(set(gb.BLOCKS) - REMOVED, reverse=True):
            p = scratch / f"type{t}.gguf"
            elems, size = gb.BLOCKS[t]
            p.write_bytes(gb.gguf([], [("t", [elems], t, b"\0" * size)]))
            ctx = self.lib.gguf_init_from_file(str(p).encode(), GgufInitParams(True, None))
            if ctx:
                self.lib.gguf_free(ctx)
                return t + 1
        raise AssertionError("ggml's GGUF reader accepts no tensor type")

    def to_float(self, type_id: int):
        """ggml's row conversion for the type, or None when this ggml has none (or another type there)."""
        if type_id >= self.count:
            return None
        name = self.lib.ggml_type_name(type_id)
        if name is None or name == b"NONE" or name.decode() != minfer.tensor_type_name(type_id):
            return None
        tr = self.lib.ggml_get_type_traits(type_id).contents
        if tr.to_float:
            return TO_FLOAT(tr.to_float)
        if type_id == 15:  # q8_K: exported, though its traits have no to_float
            fn = getattr(self.lib, "dequantize_row_q8_K", None)
            return TO_FLOAT(ctypes.cast(fn, ctypes.c_void_p).value) if fn else None
        return None

    def dequantize(self, fn, data: bytes, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.float32)
        src = ctypes.create_string_buffer(data, len(data))
        fn(ctypes.cast(src, ctypes.c_void_p), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), n)
        return out


@pytest.fixture(scope="module")
def ggml(tmp_path_factory):
    path = os.environ.get("MINFER_LLAMA_LIB")
    if not path:
        pytest.skip("MINFER_LLAMA_LIB is not set (scripts/llama-ref.sh gives libggml-base.so): "
                    "NOT compared with llama.cpp's ggml")
    return Ggml(path, tmp_path_factory.mktemp("ggml"))


# ---- the tests ------------------------------------------------------------------------------------------

def test_convertible_types_are_the_expected_ones():
    got = [t for t in range(64) if minfer.can_dequantize(t)]
    assert got == CONVERTIBLE, (sorted(set(got) ^ set(CONVERTIBLE)))
    for t in CONVERTIBLE:
        assert minfer.type_block(t) == gb.BLOCKS[t], name_of(t)
    for t in REMOVED:
        assert minfer.type_block(t) == (0, 0)
        assert not minfer.can_dequantize(t)
    assert minfer.type_block(43) == (0, 0) and minfer.tensor_type_name(43) == "unknown"
    assert minfer.tensor_type_name(12) == "q4_K" and minfer.tensor_type_name(0) == "f32"
    assert minfer.active_isa() in ("avx2", "scalar", "avx512", "neon", "sse4", "avx")


@pytest.mark.parametrize("type_id", CONVERTIBLE, ids=[name_of(t) for t in CONVERTIBLE])
def test_to_numpy_equals_the_cli(type_id: int, tmp_path: Path, minfer_cli: Path):
    path = tmp_path / "t.gguf"
    data = one_tensor_file(path, type_id)
    elems, size = gb.BLOCKS[type_id]
    n = elems * per_row(type_id) * ROWS
    want = cli_dump(minfer_cli, path, "t", tmp_path / "t.f32")
    assert want.size == n
    with minfer.open(path) as m:
        t = m.tensors["t"]
        assert t.type == TensorType(type_id)
        assert t.data.tobytes() == data
        got = t.to_numpy()
        assert got.dtype == np.float32 and got.shape == (ROWS, elems * per_row(type_id))
        assert got.flags.c_contiguous and got.flags.writeable  # a new array
        assert np.array_equal(bits(got), want.view(np.uint32)), name_of(type_id)
        assert np.array_equal(bits(t.to_numpy(threads=1)), want.view(np.uint32))
        # dtype: float64 and float16 are the f32 values converted (NaN stays NaN)
        ref = want.reshape(got.shape)
        for dt in (np.float64, np.float16):
            with np.errstate(over="ignore", invalid="ignore"):  # large values overflow f16 (inf)
                g = t.to_numpy(dt)
                w = ref.astype(dt)
            assert g.dtype == dt and g.shape == got.shape
            nan = np.isnan(w)
            assert np.array_equal(np.isnan(g), nan)
            assert np.array_equal(g[~nan].view(np.uint64 if dt is np.float64 else np.uint16),
                                  w[~nan].view(np.uint64 if dt is np.float64 else np.uint16)), (name_of(type_id), dt)
    # minfer.dequantize on the same bytes, from bytes, a uint8 array and a memoryview
    for buf in (data, np.frombuffer(data, dtype=np.uint8), memoryview(data), bytearray(data)):
        d = minfer.dequantize(buf, type_id)
        assert d.dtype == np.float32 and d.shape == (n,)
        assert np.array_equal(bits(d), want.view(np.uint32)), name_of(type_id)
    assert np.array_equal(bits(minfer.dequantize(data, TensorType(type_id), threads=1)), want.view(np.uint32))
    # one block less than whole, one byte short: refused
    if size > 1:
        with pytest.raises(RequestError) as ei:
            minfer.dequantize(data[:-1], type_id)
        assert ei.value.code == "buffer_size_mismatch"
    assert minfer.dequantize(b"", type_id).shape == (0,)


@pytest.mark.parametrize("type_id", CONVERTIBLE, ids=[name_of(t) for t in CONVERTIBLE])
def test_to_numpy_equals_ggml(type_id: int, tmp_path: Path, ggml):
    fn = ggml.to_float(type_id)
    if fn is None:
        if type_id in (0, 24, 25, 26, 28):  # f32, i8, i16, i32, f64: plain types ggml has no to_float for
            pytest.skip(f"ggml has no to_float for {name_of(type_id)} (a plain type)")
        pytest.fail(f"ggml's library has no to_float for {name_of(type_id)}, which minfer converts")
    path = tmp_path / "t.gguf"
    data = one_tensor_file(path, type_id, seed=1000)
    elems, _ = gb.BLOCKS[type_id]
    n = elems * per_row(type_id) * ROWS
    want = ggml.dequantize(fn, data, n)
    with minfer.open(path) as m:
        got = m.tensors["t"].to_numpy().reshape(-1)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), name_of(type_id)
    assert np.array_equal(bits(got)[~nan], bits(want)[~nan]), name_of(type_id)
    d = minfer.dequantize(data, type_id)
    assert np.array_equal(np.isnan(d), nan) and np.array_equal(bits(d)[~nan], bits(want)[~nan])


def test_formulas(tmp_path: Path):
    """The values from numpy formulas of the block layouts (docs/QUANT.md), computed here: f32 copied
    bit for bit (NaN payloads, signalling NaNs), bf16 shifted, f16 and the integers widened, f64
    narrowed as C does, q8_0 and q4_0 as scale times quant in f32."""
    rng = np.random.default_rng(5)
    specials = np.array([0x7FC00001, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x00000001, 0x80000000,
                         0x7F7FFFFF, 0x3F800000], dtype=np.uint32)
    cases = {}
    f32 = np.concatenate([specials, rng.integers(0, 2**32, 247, dtype=np.uint64).astype(np.uint32)])
    cases[0] = (f32.tobytes(), f32)
    bf16 = np.concatenate([np.array([0x7FC1, 0x7F81, 0xFFFF, 0x7F80, 0x0001, 0x8000], np.uint16),
                           rng.integers(0, 2**16, 250, dtype=np.uint32).astype(np.uint16)])
    cases[30] = (bf16.tobytes(), bf16.astype(np.uint32) << 16)
    f16 = rng.integers(0, 2**16, 256, dtype=np.uint32).astype(np.uint16)
    f16 = f16[(f16 & 0x7C00) != 0x7C00]  # NaN and Inf widen by ggml's bit trick; finite ones exactly
    f16 = f16[: len(f16) // 32 * 32]
    cases[1] = (f16.tobytes(), f16.view(np.float16).astype(np.float32).view(np.uint32))
    for tid, dt in ((24, np.int8), (25, np.int16), (26, np.int32)):
        v = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, 256, dtype=np.int64, endpoint=True).astype(dt)
        cases[tid] = (v.tobytes(), v.astype(np.float32).view(np.uint32))
    f64 = rng.standard_normal(256) * 1e3
    cases[28] = (f64.tobytes(), f64.astype(np.float32).view(np.uint32))
    # q8_0: 34-byte blocks, f16 d then 32 int8; q4_0: 18-byte blocks, f16 d then 16 bytes of nibbles
    d = rng.uniform(-2, 2, 16).astype(np.float16)
    q8 = rng.integers(-128, 127, (16, 32), endpoint=True).astype(np.int8)
    blocks = b"".join(d[i].tobytes() + q8[i].tobytes() for i in range(16))
    cases[8] = (blocks, (q8.astype(np.float32) * d.astype(np.float32)[:, None]).reshape(-1).view(np.uint32))
    qs = rng.integers(0, 256, (16, 16), dtype=np.uint32).astype(np.uint8)
    nib = np.concatenate([(qs & 0xF).astype(np.int32) - 8, (qs >> 4).astype(np.int32) - 8], axis=1)
    blocks = b"".join(d[i].tobytes() + qs[i].tobytes() for i in range(16))
    cases[2] = (blocks, (nib.astype(np.float32) * d.astype(np.float32)[:, None]).reshape(-1).view(np.uint32))
    for tid, (data, want) in cases.items():
        elems, size = gb.BLOCKS[tid]
        n = len(data) // size * elems
        assert n == want.size
        path = tmp_path / f"f{tid}.gguf"
        path.write_bytes(gb.gguf([], [("t", [n], tid, data)]))
        with minfer.open(path) as m:
            got = m.tensors["t"].to_numpy()
        assert np.array_equal(bits(got), want), (name_of(tid), np.flatnonzero(bits(got) != want)[:5])
        assert np.array_equal(bits(minfer.dequantize(data, tid)), want), name_of(tid)


def test_not_convertible(tmp_path: Path, minfer_cli: Path):
    for type_id in sorted(NOT_CONVERTIBLE):
        path = tmp_path / f"nc{type_id}.gguf"
        one_tensor_file(path, type_id)
        with minfer.open(path) as m:
            t = m.tensors["t"]
            assert t.data.nbytes == gb.BLOCKS[type_id][1] * per_row(type_id) * ROWS
            with pytest.raises(RequestError) as ei:
                t.to_numpy()
            assert ei.value.code == "type_not_convertible" and ei.value.found == type_id
        r = subprocess.run([str(minfer_cli), "tensor", str(path), "t", "--dump", str(tmp_path / "x.f32")],
                           capture_output=True)
        assert r.returncode == 1 and b"[type_not_convertible]" in r.stderr


@pytest.mark.parametrize("type_id", [2, 14, 1, 23], ids=["Q4_0", "Q6_K", "F16", "IQ4_XS"])
def test_threads_give_the_same_bits(type_id: int, tmp_path: Path):
    elems, _ = gb.BLOCKS[type_id]
    rows = 1024
    per_row = 4096 // elems  # 4096 values a row: 4 Mi values
    path = tmp_path / "big.gguf"
    data = one_tensor_file(path, type_id, seed=7, blocks_per_row=per_row, rows=rows)
    with minfer.open(path) as m:
        t = m.tensors["t"]
        assert t.n_elements == 4096 * rows
        one = t.to_numpy(threads=1)
        every = t.to_numpy(threads=0)
        four = t.to_numpy(threads=4)
    assert np.array_equal(bits(one), bits(every)) and np.array_equal(bits(one), bits(four))
    assert np.array_equal(bits(minfer.dequantize(data, type_id, threads=0)), bits(one))
    assert np.array_equal(bits(minfer.dequantize(data, type_id, threads=1)), bits(one))
