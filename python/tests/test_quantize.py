"""minfer.quant.quantize (rows of a numpy array) and minfer.quantize (a model file).

- minfer.quant.quantize against llama.cpp's ggml_quantize_chunk, loaded with ctypes from
  $MINFER_LLAMA_LIB (libggml-base.so; skipped loudly without it), byte for byte, for types of every
  family, with and without importance weights; the bytes do not depend on the thread count; the
  errors for bad inputs; round trips through minfer.quant.dequantize within each type's error.
- minfer.quantize on a small llama-shaped model written by gguf_bytes.py: the file llama.cpp's
  llama_model_quantize writes for the same options (libllama beside $MINFER_LLAMA_LIB, run in a child
  process through ctypes: an assert there must not kill the test run), byte for byte; a dry run's
  sizes are the written sizes; the outputs open with minfer.open and hold the planned types and
  minfer.quant.quantize's bytes; options reach the library; errors raise with their exit_code.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import minfer
import minfer.quant
from minfer.errors import GGUFError, InvalidFileError, RequestError
from minfer.types import TensorType

sys.path.insert(0, str(Path(__file__).parent))
import gguf_bytes as gb  # noqa: E402
from conftest import python_env  # noqa: E402

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


# ---- minfer.quantize: a model --------------------------------------------------------------------------


def tiny_model(path: Path, seed: int = 0, n_embd: int = 256, n_ff: int = 512, n_vocab: int = 32,
               n_layer: int = 2, nan_in: str = "", outliers: dict = {}) -> Path:
    """A llama-shaped model llama.cpp loads (hyperparameters, f16 weights, f32 norms; no vocabulary:
    quantizing does not read it)."""
    rng = np.random.default_rng(seed)
    kvs = [("general.architecture", gb.STRING, "llama"), ("general.name", gb.STRING, "tiny"),
           ("llama.block_count", gb.U32, n_layer), ("llama.context_length", gb.U32, 128),
           ("llama.embedding_length", gb.U32, n_embd), ("llama.feed_forward_length", gb.U32, n_ff),
           ("llama.attention.head_count", gb.U32, 4), ("llama.attention.head_count_kv", gb.U32, 4),
           ("llama.rope.dimension_count", gb.U32, n_embd // 4),
           ("llama.attention.layer_norm_rms_epsilon", gb.F32, 1e-5), ("general.file_type", gb.U32, 1)]
    tensors = []

    def add(name, shape, f16=True):
        v = (rng.standard_normal(int(np.prod(shape))) * 0.02).astype(np.float32)
        if name == nan_in:
            v[300] = np.nan
        if name in outliers:  # a finite weight f16 may not hold: stored as f32
            at, big = outliers[name]
            v[at] = big
            f16 = False
        tensors.append((name, shape, 1, v.astype(np.float16).tobytes()) if f16 else (name, shape, 0, v.tobytes()))

    add("token_embd.weight", [n_embd, n_vocab])
    for i in range(n_layer):
        add(f"blk.{i}.attn_norm.weight", [n_embd], f16=False)
        for w in ("attn_q", "attn_k", "attn_v", "attn_output"):
            add(f"blk.{i}.{w}.weight", [n_embd, n_embd])
        add(f"blk.{i}.ffn_norm.weight", [n_embd], f16=False)
        add(f"blk.{i}.ffn_gate.weight", [n_embd, n_ff])
        add(f"blk.{i}.ffn_up.weight", [n_embd, n_ff])
        add(f"blk.{i}.ffn_down.weight", [n_ff, n_embd])
    add("output_norm.weight", [n_embd], f16=False)
    add("output.weight", [n_embd, n_vocab])
    path.write_bytes(gb.gguf(kvs, tensors))
    return path


LLAMA_QUANTIZE = r"""
import ctypes, sys
class Params(ctypes.Structure):  # llama.h's llama_model_quantize_params (tests/support/llama_ref/llama_ref.hpp)
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int32), ("output_tensor_type", ctypes.c_int32),
                ("token_embedding_type", ctypes.c_int32), ("allow_requantize", ctypes.c_bool),
                ("quantize_output_tensor", ctypes.c_bool), ("only_copy", ctypes.c_bool), ("pure", ctypes.c_bool),
                ("keep_split", ctypes.c_bool), ("dry_run", ctypes.c_bool), ("imatrix", ctypes.c_void_p),
                ("kv_overrides", ctypes.c_void_p), ("tt_overrides", ctypes.c_void_p), ("prune_layers", ctypes.c_void_p),
                ("tail", ctypes.c_ubyte * 8)]
class Override(ctypes.Structure):  # llama_model_tensor_override {const char * pattern; enum ggml_type type;}
    _fields_ = [("pattern", ctypes.c_char_p), ("type", ctypes.c_int32)]
lib, inp, out, ftype, opts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), eval(sys.argv[5])
l = ctypes.CDLL(lib)
l.llama_model_quantize_default_params.restype = Params
l.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Params)]
l.llama_model_quantize.restype = ctypes.c_uint32
l.llama_backend_init()
p = l.llama_model_quantize_default_params()
p.ftype, p.nthread = ftype, 2
for k in ("output_tensor_type", "token_embedding_type", "pure", "quantize_output_tensor", "keep_split"):
    if k in opts:
        setattr(p, k, opts[k])
tt = opts.get("tensor_types", [])
arr = (Override * (len(tt) + 1))(*[Override(pat.encode(), t) for pat, t in tt], Override(None, 0))
if tt:
    p.tt_overrides = ctypes.cast(arr, ctypes.c_void_p)
sys.exit(l.llama_model_quantize(inp.encode(), out.encode(), ctypes.byref(p)))
"""


@pytest.fixture(scope="module")
def libllama():
    path = os.environ.get("MINFER_LLAMA_LIB")
    if not path:
        pytest.skip("MINFER_LLAMA_LIB is not set: minfer.quantize is not compared with llama_model_quantize")
    lib = Path(path).parent / "libllama.v0.5.0.so"
    if not lib.exists():
        pytest.skip(f"{lib} is missing: minfer.quantize is not compared with llama_model_quantize")
    return lib


def llama_quantize(lib: Path, inp: Path, out: Path, ftype: int, **opts) -> bytes:
    """llama_model_quantize's output (with keep_split: the parts' names begin with `out`; b"" is returned)."""
    r = subprocess.run([sys.executable, "-c", LLAMA_QUANTIZE, str(lib), str(inp), str(out), str(ftype), repr(opts)],
                       capture_output=True, env=python_env())
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    return b"" if opts.get("keep_split") else out.read_bytes()


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# (minfer.quantize's TYPE and options, llama_ftype and llama_model_quantize_params' fields)
LLAMA_CASES = [
    ("Q4_K_M", {}, 15, {}),
    ("q8_0", {}, 7, {}),
    ("Q6_K", {"pure": True}, 18, {"pure": True}),
    ("Q4_0", {"leave_output_tensor": True, "token_embedding_type": "q8_0"}, 2,
     {"quantize_output_tensor": False, "token_embedding_type": 8}),
    ("Q5_K_S", {"output_tensor_type": TensorType.Q8_0, "tensor_types": {"attn_V": "Q4_0", "ffn_.*": "iq4_nl"}}, 16,
     {"output_tensor_type": 8, "tensor_types": [("attn_v", 2), ("ffn_.*", 20)]}),
]


@pytest.mark.parametrize("ftype,options,llama_ftype,llama_options", LLAMA_CASES,
                         ids=[c[0] + ("-" + "-".join(c[1]) if c[1] else "") for c in LLAMA_CASES])
def test_quantize_writes_llama_model_quantize_file(tmp_path, libllama, ftype, options, llama_ftype, llama_options):
    src = tiny_model(tmp_path / "tiny-f16.gguf")
    want = llama_quantize(libllama, src, tmp_path / "llama.gguf", llama_ftype, **llama_options)
    r = minfer.quantize(src, tmp_path / "minfer.gguf", ftype, **options)
    assert r.written and [o["path"] for o in r.outputs] == [str(tmp_path / "minfer.gguf")]
    got = (tmp_path / "minfer.gguf").read_bytes()
    assert len(got) == len(want) == r.file_size
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(want).hexdigest()


def test_dry_run_sizes_are_the_written_sizes_and_the_output_holds_the_plan(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=1)
    out = tmp_path / "q.gguf"
    plan = minfer.quantize(src, out, "Q4_K_M", dry_run=True)
    assert not plan.written and plan.dry_run and not out.exists()
    done = minfer.quantize(src, out, "Q4_K_M", threads=1)
    assert done.written and not done.dry_run
    assert [(o["path"], o["file_size"], o["tensor_count"]) for o in plan.outputs] == \
        [(o["path"], o["file_size"], o["tensor_count"]) for o in done.outputs] == [(str(out), out.stat().st_size, 21)]
    assert plan.plan == done.plan and plan.output_tensor_bytes == done.output_tensor_bytes
    assert 4.0 < done.bits_per_weight < 6.0

    with minfer.open(src) as m_in, minfer.open(out) as m_out:
        assert [p["name"] for p in done.plan] == list(m_out.tensors.keys())
        assert sorted(m_out.tensors.keys()) == sorted(m_in.tensors.keys())
        for p in done.plan:
            t_in, t_out = m_in.tensors[p["name"]], m_out.tensors[p["name"]]
            assert (p["from"], p["to"]) == (t_in.type, t_out.type) and p["why"]
            assert t_out.shape == t_in.shape
            if p["converted"]:  # the bytes of minfer.quant.quantize for the same values
                rows = t_in.to_numpy().reshape(-1, t_in.shape[0])
                assert t_out.data.tobytes() == minfer.quant.quantize(rows, p["to"]).tobytes(), p["name"]
            else:
                assert t_out.data.tobytes() == t_in.data.tobytes()
        assert m_out.metadata["general.file_type"] == 15  # Q4_K_M
        assert m_out.metadata["general.quantization_version"] == 2
        assert m_out.metadata["general.name"] == "tiny"


def test_options_reach_the_library(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=2)
    r = minfer.quantize(src, tmp_path / "a.gguf", "q8_0", tensor_types=["ATTN_Q=q4_0", ("ffn_up", TensorType.Q5_0)],
                        output_tensor_type="f16", token_embedding_type=TensorType.Q4_0,
                        override_kv=["general.name=str:renamed", "tiny.extra=int:-7", "tiny.flag=bool:true"])
    to = {p["name"]: p["to"] for p in r.plan}
    assert to["blk.0.attn_q.weight"] == TensorType.Q4_0 and to["blk.1.ffn_up.weight"] == TensorType.Q5_0
    assert to["output.weight"] == TensorType.F16 and to["token_embd.weight"] == TensorType.Q4_0
    assert to["blk.0.attn_k.weight"] == TensorType.Q8_0 and to["blk.0.attn_norm.weight"] == TensorType.F32
    with minfer.open(tmp_path / "a.gguf") as m:
        assert m.metadata["general.name"] == "renamed"
        assert m.metadata["tiny.extra"] == 7  # llama.cpp writes an int override as u32 of its absolute value
        assert m.metadata.raw("tiny.extra").type == minfer.ValueType.UINT32
        assert m.metadata["tiny.flag"] is True
    # the same plan from a dict
    d = minfer.quantize(src, tmp_path / "b.gguf", "q8_0", tensor_types={"attn_q": "Q4_0", "ffn_up": "q5_0"},
                        output_tensor_type="F16", token_embedding_type="q4_0", dry_run=True)
    assert {p["name"]: p["to"] for p in d.plan} == to

    # pure: every quantizable tensor gets the file type's own type
    p = minfer.quantize(src, tmp_path / "c.gguf", "Q4_K_M", pure=True, dry_run=True)
    assert {x["to"] for x in p.plan if x["quantizable"]} == {TensorType.Q4_K}


def test_split_outputs_and_progress(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=3)
    calls = []
    r = minfer.quantize(src, tmp_path / "s.gguf", "q8_0", split_max_tensors=8, progress=lambda d, t: calls.append((d, t)))
    names = [Path(o["path"]).name for o in r.outputs]
    assert names == ["s-00001-of-00003.gguf", "s-00002-of-00003.gguf", "s-00003-of-00003.gguf"]
    assert [o["tensor_count"] for o in r.outputs] == [8, 8, 5]
    assert [o["file_size"] for o in r.outputs] == [(tmp_path / n).stat().st_size for n in names]
    assert calls and calls[-1][0] == calls[-1][1] and all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
    with minfer.open(tmp_path / names[0]) as m:
        assert len(m.parts) == 3 and len(m.tensors) == 21
    by_size = minfer.quantize(src, tmp_path / "z.gguf", "q8_0", split_max_size="300K", dry_run=True)
    assert len(by_size.outputs) > 1 and all(o["file_size"] <= 300_000 for o in by_size.outputs)


def test_an_exception_in_progress_leaves_no_output(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=4)
    out = tmp_path / "q.gguf"
    seen = []

    def progress(done, total):
        seen.append(done)
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        minfer.quantize(src, out, "Q4_K_M", progress=progress)
    assert len(seen) == 1 and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny-f16.gguf"]  # no temporary file either


@pytest.mark.parametrize("split", [False, True])
def test_an_exception_in_progress_keeps_the_old_output(tmp_path, split):
    # Ctrl-C in a progress bar while replacing a model: the old model stays as it was, byte for byte
    # (the run is cancelled before anything is named), for one file and for a split set.
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=4)
    out = tmp_path / "q.gguf"
    extra = {"split_max_tensors": 8} if split else {}
    old = minfer.quantize(src, out, "q8_0", **extra)
    before = {o["path"]: Path(o["path"]).read_bytes() for o in old.outputs}

    def progress(done, total):
        if done > total // 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        minfer.quantize(src, out, "q4_0", overwrite=True, progress=progress, **extra)
    assert {p: Path(p).read_bytes() for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["tiny-f16.gguf"] + [Path(p).name for p in before])


def test_a_weight_beyond_the_type_is_refused(tmp_path):
    # 1e5 becomes an infinity in f16, and 1e7 an infinite q8_0 block scale: llama.cpp refuses both
    # ("quantized data validation failed"), and so does minfer, naming the tensor and the row; an
    # existing output is left as it was.
    # blk.0.attn_q.weight is 256 x 256: value 2*256+7 is in row 2, value 256 in row 1
    src = tiny_model(tmp_path / "outlier.gguf", seed=6,
                     outliers={"blk.0.attn_q.weight": (2 * 256 + 7, 1e5), "blk.1.attn_k.weight": (256, 1e7)})
    out = tmp_path / "out.gguf"
    out.write_bytes(b"old")
    for type_, tensor, row in (("F16", "blk.0.attn_q.weight", 2), ("Q8_0", "blk.1.attn_k.weight", 1)):
        with pytest.raises(RequestError) as e:
            minfer.quantize(src, out, type_, pure=True, overwrite=True)
        assert e.value.code == "quantize_failed"
        assert tensor in str(e.value) and f"row {row}" in str(e.value)
        assert out.read_bytes() == b"old"


def test_quantize_errors(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=5)
    out = tmp_path / "q.gguf"
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "Q4_K_Z")
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2)
    # the argument is named, never called a metadata key ("the value for key …")
    assert "type: 'Q4_K_Z'" in str(e.value) and "for key" not in str(e.value)
    for kwargs, said in (({"tensor_types": ["(attn=q4_0"]}, "tensor_types: '(attn'"),
                         ({"keep_split": True, "split_max_tensors": 4}, "keep_split: "),
                         ({"exclude_weights": ["a"]}, "exclude_weights: ")):
        with pytest.raises(RequestError) as e:
            minfer.quantize(src, out, "q4_0", **kwargs)
        assert said in str(e.value) and "for key" not in str(e.value), str(e.value)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", tensor_types=["attn_q"])
    assert e.value.code == "bad_value_text"
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", tensor_types=["attn_q=q4_7"])
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", tensor_types=["(attn=q4_0"])  # not a regular expression
    assert e.value.code == "bad_value_text"
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", override_kv=["general.name=text:x"])
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", imatrix=tmp_path / "none.dat", include_weights=["a"], exclude_weights=["b"])
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2)
    # the CLI's refusals, from the same library: a filter without an imatrix, an override of split.*
    # or of a key llama.cpp reads with another type (unless allow_type_change)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", include_weights=["a"])
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2) and "no importance matrix" in str(e.value)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", override_kv=["split.count=int:3"])
    assert (e.value.code, e.value.exit_code) == ("bad_value_text", 2) and "split.*" in str(e.value)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", override_kv=["llama.context_length=float:64"])
    assert e.value.code == "bad_value_text" and "llama.cpp reads llama.context_length as u32" in str(e.value)
    r = minfer.quantize(src, out, "q4_0", override_kv=["llama.context_length=float:64"], allow_type_change=True)
    assert any("llama.context_length becomes f32" in w for w in r.warnings)
    out.unlink()
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", tensor_types=["=q4_0"])
    assert e.value.code == "bad_value_text" and "the tensor name pattern is empty" in str(e.value)
    # a dry run refuses an existing output as the real run and the CLI's dry run do
    out.write_bytes(b"old")
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", dry_run=True)
    assert e.value.code == "usage" and out.read_bytes() == b"old"
    assert minfer.quantize(src, out, "q4_0", dry_run=True, overwrite=True).dry_run
    out.unlink()
    # iq2_xxs without an imatrix: llama-quantize refuses it too
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "IQ2_XXS")
    assert e.value.code == "importance_required" and e.value.subject
    with pytest.raises(GGUFError) as e:
        minfer.quantize(tmp_path / "missing.gguf", out, "q4_0")
    assert e.value.exit_code == 3
    assert not out.exists()

    minfer.quantize(src, out, "q4_0")
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0")
    assert (e.value.code, e.value.exit_code) == ("usage", 2)
    assert minfer.quantize(src, out, "q8_0", overwrite=True).written
    with pytest.raises(GGUFError):
        minfer.quantize(src, src, "q4_0", overwrite=True)  # never the input
    # a quantized input needs allow_requantize
    with pytest.raises(RequestError) as e:
        minfer.quantize(out, tmp_path / "r.gguf", "q4_0")
    assert (e.value.code, e.value.exit_code) == ("requantize_refused", 2)
    assert minfer.quantize(out, tmp_path / "r.gguf", "q4_0", allow_requantize=True).written
    # a NaN in a tensor to be converted
    bad = tiny_model(tmp_path / "nan.gguf", seed=5, nan_in="blk.1.ffn_up.weight")
    with pytest.raises(RequestError) as e:
        minfer.quantize(bad, tmp_path / "nan-q.gguf", "q4_0")
    assert (e.value.code, e.value.subject, e.value.index) == ("non_finite_weight", "blk.1.ffn_up.weight", 300)
    assert not (tmp_path / "nan-q.gguf").exists()
    # a tensor copied unchanged is not inspected (llama-quantize copies it too)
    assert minfer.quantize(bad, tmp_path / "nan-q.gguf", "q4_0", tensor_types=["ffn_up=f16"]).written
    # Python's own mistakes
    with pytest.raises(TypeError):
        minfer.quantize(src, out, 15)
    with pytest.raises(TypeError):
        minfer.quantize(src, out, "q4_0", tensor_types="attn_q=q4_0")
    with pytest.raises(TypeError):
        minfer.quantize(src, out, "q4_0", progress=5)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, out, "q4_0", split_max_size="2 G")
    assert e.value.code == "usage"


def legacy_imatrix(path: Path, entries: dict, ncall: int = 4, chunks: int = 7, dataset: str = "calib.txt") -> Path:
    """llama-imatrix's legacy .dat: i32 count; per entry i32 len, name, i32 ncall, i32 nval, f32 sums
    (each weight times ncall: llama-quantize divides by it); then i32 chunks, i32 len, dataset."""
    out = [np.int32(len(entries)).tobytes()]
    for name, w in entries.items():
        out += [np.int32(len(name)).tobytes(), name.encode(), np.int32(ncall).tobytes(), np.int32(w.size).tobytes(),
                (w * np.float32(ncall)).astype(np.float32).tobytes()]
    out += [np.int32(chunks).tobytes(), np.int32(len(dataset)).tobytes(), dataset.encode()]
    path.write_bytes(b"".join(out))
    return path


def test_imatrix_reaches_the_quantizer(tmp_path):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=6)
    with minfer.open(src) as m:
        rng = np.random.default_rng(6)
        # powers of two times small integers: w * ncall / ncall is w exactly
        weights = {n: (rng.integers(1, 64, t.shape[0]) / 16).astype(np.float32)
                   for n, t in m.tensors.items() if n.startswith("blk.") and t.n_dims == 2}
    dat = legacy_imatrix(tmp_path / "imatrix.dat", weights)
    out = tmp_path / "iq.gguf"
    r = minfer.quantize(src, out, "IQ2_XXS", imatrix=dat)
    assert r.written and r.imatrix_entries == len(weights) == 14
    with minfer.open(src) as m_in, minfer.open(out) as m_out:
        assert m_out.metadata["quantize.imatrix.file"] == str(dat)
        assert m_out.metadata["quantize.imatrix.dataset"] == "calib.txt"
        assert m_out.metadata["quantize.imatrix.entries_count"] == 14
        assert m_out.metadata["quantize.imatrix.chunks_count"] == 7
        converted = [p for p in r.plan if p["converted"]]
        assert {p["to"] for p in converted if p["name"] in weights} >= {TensorType.IQ2_XXS}
        for p in converted:
            t_in = m_in.tensors[p["name"]]
            rows = t_in.to_numpy().reshape(-1, t_in.shape[0])
            want = minfer.quant.quantize(rows, p["to"], importance=weights.get(p["name"]))
            assert m_out.tensors[p["name"]].data.tobytes() == want.tobytes(), p["name"]

    # include_weights keeps the attention entries only: the ffn tensors then have none, and
    # IQ2_XXS cannot be written without (llama-quantize stops there too)
    with pytest.raises(RequestError) as e:
        minfer.quantize(src, tmp_path / "iq2.gguf", "IQ2_XXS", imatrix=dat, include_weights=["attn_"])
    assert e.value.code == "importance_required" and "ffn_" in (e.value.subject or "")
    f = minfer.quantize(src, tmp_path / "q4.gguf", "Q4_K_M", imatrix=dat, exclude_weights=["ffn_", "attn_q"])
    assert f.imatrix_entries == 6  # attn_k, attn_v, attn_output of two layers
    broken = tmp_path / "broken.dat"
    broken.write_bytes(dat.read_bytes()[:-1000])  # cut inside an entry's values
    with pytest.raises(InvalidFileError) as e:
        minfer.quantize(src, tmp_path / "q4b.gguf", "Q4_K_M", imatrix=broken)
    assert e.value.exit_code == 1 and e.value.file == str(broken)
    assert not (tmp_path / "q4b.gguf").exists()


def test_keep_split_writes_llama_model_quantize_parts(tmp_path, libllama):
    src = tiny_model(tmp_path / "tiny-f16.gguf", seed=7)
    minfer.split(src, tmp_path / "in", max_tensors=9)  # in-00001-of-00003.gguf …
    first = tmp_path / "in-00001-of-00003.gguf"
    # llama_model_quantize names the parts after its output path as given (llama-quantize strips ".gguf")
    llama_quantize(libllama, first, tmp_path / "llama", 15, keep_split=True)
    r = minfer.quantize(first, tmp_path / "mine.gguf", "Q4_K_M", keep_split=True)
    names = [Path(o["path"]).name for o in r.outputs]
    assert names == [f"mine-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    assert [o["tensor_count"] for o in r.outputs] == [9, 9, 3]
    for i, n in enumerate(names, 1):
        assert sha(tmp_path / n) == sha(tmp_path / f"llama-0000{i}-of-00003.gguf"), n
