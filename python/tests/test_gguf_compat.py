"""minfer.gguf_compat: gguf-py's GGUFReader API on minfer.

Every expectation is computed without the code under test: from the bytes the test writes
(gguf_bytes.py, with the values and the layout known in Python), from REFERENCE.txt (llama.cpp's
parse of the real files), from the minfer tool's `info --json --full` and `tensor --dump -` (the C++
library's reading), from numpy formulas of the block formats, and, when MINFER_GGUF_PY names a
gguf-py checkout (the folder holding the `gguf` package), from gguf-py's own GGUFReader and
gguf.quants.dequantize on the same files (skipped loudly otherwise).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import shutil
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import gguf_bytes as gb
from conftest import python_env, real_files, reference_rows

from minfer import errors
from minfer import gguf_compat as gguf
from minfer.gguf_compat import GGUFReader

VT = gguf.GGUFValueType
QT = gguf.GGMLQuantizationType

NP_OF = {gb.U8: np.uint8, gb.I8: np.int8, gb.U16: np.uint16, gb.I16: np.int16, gb.U32: np.uint32,
         gb.I32: np.int32, gb.F32: np.float32, gb.BOOL: np.bool_, gb.U64: np.uint64, gb.I64: np.int64,
         gb.F64: np.float64}
CLI_TYPE = {gb.U8: "u8", gb.I8: "i8", gb.U16: "u16", gb.I16: "i16", gb.U32: "u32", gb.I32: "i32",
            gb.F32: "f32", gb.BOOL: "bool", gb.STRING: "string", gb.ARRAY: "array", gb.U64: "u64",
            gb.I64: "i64", gb.F64: "f64"}


def addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


# --------------------------------------------------------------------------------------------
# The hand-made file: every value type, arrays of each, non-ASCII strings and keys, every plain
# tensor type, two quantized types with known blocks, 1-D to 4-D shapes, alignment 64.

SCALARS = [
    ("t.u8", gb.U8, 200), ("t.i8", gb.I8, -100), ("t.u16", gb.U16, 60000), ("t.i16", gb.I16, -30000),
    ("t.u32", gb.U32, 4000000000), ("t.i32", gb.I32, -2000000000), ("t.f32", gb.F32, 0.1),
    ("t.bool", gb.BOOL, True), ("t.bool0", gb.BOOL, False), ("t.u64", gb.U64, 2**64 - 1),
    ("t.i64", gb.I64, -2**63), ("t.f64", gb.F64, 0.1),
]
ARRAYS = [
    ("a.u8", gb.U8, [0, 1, 255]), ("a.i8", gb.I8, [-128, 0, 127]), ("a.u16", gb.U16, [1, 65535, 7]),
    ("a.i16", gb.I16, [-32768, 5, 32767]), ("a.u32", gb.U32, [3, 2, 4294967295]),
    ("a.i32", gb.I32, [-1, 0, 2147483647]), ("a.f32", gb.F32, [0.5, -1.25, 0.1, 3e38]),
    ("a.bool", gb.BOOL, [True, False, True]), ("a.u64", gb.U64, [2**64 - 1, 0]),
    ("a.i64", gb.I64, [-2**63, 2**63 - 1, 3]), ("a.f64", gb.F64, [0.1, -2.5e300]),
    ("a.str", gb.STRING, ["a", "ü", "", "日本語 ✓", "tab\tnl\n"]),
    ("a.empty", gb.U32, []), ("a.empty_str", gb.STRING, []),
]
KVS: List[Tuple[str, int, Any]] = (
    [("general.architecture", gb.STRING, "llama"), ("general.alignment", gb.U32, 64)]
    + SCALARS
    + [("t.str", gb.STRING, "héllo ✓ 日本"), ("t.empty_str", gb.STRING, ""), ("t.ключ", gb.STRING, "значение")]
    + [(k, gb.ARRAY, (et, items)) for k, et, items in ARRAYS]
)


def q8_0_blocks(rng: np.random.Generator, n: int) -> bytes:
    out = b""
    for _ in range(n):
        d = np.float16(rng.uniform(0.001, 0.1))
        q = rng.integers(-128, 128, 32).astype(np.int8)
        out += d.tobytes() + q.tobytes()
    return out


def q4_0_blocks(rng: np.random.Generator, n: int) -> bytes:
    out = b""
    for _ in range(n):
        d = np.float16(rng.uniform(-0.1, 0.1))
        out += d.tobytes() + rng.integers(0, 256, 16).astype(np.uint8).tobytes()
    return out


def q8_0_values(raw: bytes) -> np.ndarray:
    """ggml's Q8_0: per block of 34 bytes, d (f16) then 32 int8; value = d * q."""
    b = np.frombuffer(raw, np.uint8).reshape(-1, 34)
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    q = b[:, 2:].copy().view(np.int8).astype(np.float32)
    return (d * q).reshape(-1)


def q4_0_values(raw: bytes) -> np.ndarray:
    """ggml's Q4_0: d (f16) then 16 bytes; value j < 16 = d * ((qs[j] & 15) - 8), j >= 16 uses qs >> 4."""
    b = np.frombuffer(raw, np.uint8).reshape(-1, 18)
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    qs = b[:, 2:]
    lo = (qs & 0x0F).astype(np.int32) - 8
    hi = (qs >> 4).astype(np.int32) - 8
    return (d * np.concatenate([lo, hi], axis=1).astype(np.float32)).reshape(-1)


def plain_tensors() -> List[Tuple[str, List[int], int, np.ndarray]]:
    """(name, ggml shape, type id, values as numpy in numpy shape) of the plain types."""
    rng = np.random.default_rng(7)
    out = []
    for name, shape, tid, dt in [
        ("w.f32", [4, 3], 0, np.float32), ("w.f16", [8, 2], 1, np.float16), ("w.i8", [5], 24, np.int8),
        ("w.i16", [3, 2], 25, np.int16), ("w.i32", [4], 26, np.int32), ("w.i64", [2, 2], 27, np.int64),
        ("w.f64", [3], 28, np.float64), ("w.4d", [2, 3, 2, 2], 0, np.float32),
    ]:
        n = int(np.prod(shape))
        if np.dtype(dt).kind == "f":
            v = rng.standard_normal(n).astype(dt)
        else:
            info = np.iinfo(dt)
            v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        out.append((name, shape, tid, v.reshape(tuple(reversed(shape)))))
    return out


def handmade() -> Tuple[bytes, Dict[str, Any]]:
    """The file and what a reader must find in it, computed here from the values written."""
    rng = np.random.default_rng(11)
    tensors = [(n, s, t, v.tobytes()) for n, s, t, v in plain_tensors()]
    bf16 = rng.integers(0, 65536, 8).astype(np.uint16).tobytes()
    tensors.append(("w.bf16", [4, 2], 30, bf16))
    tensors.append(("w.q8_0", [64, 2], 8, q8_0_blocks(rng, 4)))
    tensors.append(("w.q4_0", [32, 3], 2, q4_0_blocks(rng, 3)))
    blob = gb.gguf(KVS, tensors, alignment=64)
    # the layout, from the pieces' lengths
    kv_offsets = []
    pos = 24
    for k, t, v in KVS:
        kv_offsets.append(pos)
        pos += len(gb.kv(k, t, v))
    info_offsets = []
    data_off = 0
    data_offsets = []
    for name, shape, tid, raw in tensors:
        info_offsets.append(pos)
        pos += len(gb.tensor_info(name, shape, tid, 0))
        data_offsets.append(data_off)
        data_off += gb.pad(len(raw), 64)
    head = gb.pad(pos, 64)
    assert blob[head:head + len(tensors[0][3])] == tensors[0][3]
    return blob, {"kv_offsets": kv_offsets, "info_offsets": info_offsets, "data_offset": head,
                  "tensor_offsets": [head + o for o in data_offsets], "tensors": tensors}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    blob, facts = handmade()
    path = tmp_path_factory.mktemp("compat") / "made.gguf"
    path.write_bytes(blob)
    return path, facts


def expected_value_parts(vtype: int, v: Any) -> Tuple[List[np.ndarray], List[int], List[int]]:
    """gguf-py's parts of one value, from the Python value: (parts, data indices, types)."""
    if vtype == gb.STRING:
        b = v.encode() if isinstance(v, str) else v
        return [np.array([len(b)], np.uint64), np.frombuffer(b, np.uint8)], [1], [gb.STRING]
    if vtype == gb.ARRAY:
        et, items = v
        parts = [np.array([et], np.uint32), np.array([len(items)], np.uint64)]
        idxs: List[int] = []
        tys = [gb.ARRAY]
        for i, x in enumerate(items):
            p, d, t = expected_value_parts(et, x)
            if i == 0:
                tys += t
            idxs += [j + len(parts) for j in d]
            parts += p
        return parts, idxs, tys
    return [np.array([v], NP_OF[vtype])], [0], [vtype]


def expected_contents(vtype: int, v: Any) -> Any:
    if vtype == gb.ARRAY:
        et, items = v
        return [expected_contents(et, x) for x in items]
    if vtype == gb.F32:
        return float(np.float32(v))
    if vtype == gb.BOOL:
        return bool(v)
    return v


def check_parts(got: List[np.ndarray], exp: List[np.ndarray], data: np.ndarray, start: int) -> None:
    """Same dtypes, shapes and values; each part a view of the file at its place (zero-copy)."""
    assert len(got) == len(exp)
    pos = start
    for g, e in zip(got, exp):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape
        assert np.array_equal(g, e)
        if e.nbytes:  # numpy gives an empty slice no meaningful address
            assert addr(g) - addr(data) == pos
        pos += e.nbytes


# --------------------------------------------------------------------------------------------
# The hand-made file


def test_header_and_layout(made):
    path, facts = made
    r = GGUFReader(path)
    assert r.byte_order == "I"
    assert r.endianess == gguf.GGUFEndian.LITTLE
    assert r.alignment == 64
    assert r.data_offset == facts["data_offset"]
    assert isinstance(r.data, np.ndarray) and r.data.dtype == np.uint8
    assert r.data.shape == (path.stat().st_size,)
    assert r.data.tobytes() == path.read_bytes()
    assert not r.data.flags.writeable
    # a view of minfer's own mapping (the one the tensors' bytes come from), not a second mapping
    assert not isinstance(r.data, np.memmap)
    assert np.shares_memory(r.data, r.tensors[0].data)
    names = list(r.fields)
    assert names[:3] == ["GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"]
    assert names[3:] == [k for k, _, _ in KVS]
    v, tc, kc = (r.fields[n] for n in names[:3])
    assert (v.offset, tc.offset, kc.offset) == (4, 8, 16)
    assert v.parts[0].dtype == np.uint32 and v.parts[0].tolist() == [3] and v.types == [VT.UINT32]
    assert tc.parts[0].dtype == np.uint64 and tc.parts[0].tolist() == [len(facts["tensors"])]
    assert kc.parts[0].tolist() == [len(KVS)] and kc.types == [VT.UINT64] and kc.data == [0]
    assert v.contents() == 3 and kc.contents() == len(KVS)


def test_every_field_parts_data_types(made):
    path, facts = made
    r = GGUFReader(path)
    for (key, vtype, value), off in zip(KVS, facts["kv_offsets"]):
        f = r.get_field(key)
        assert f is r.fields[key]
        assert f.name == key and f.offset == off
        kb = key.encode()
        vparts, vidx, vtypes = expected_value_parts(vtype, value)
        exp = [np.array([len(kb)], np.uint64), np.frombuffer(kb, np.uint8), np.array([vtype], np.uint32)] + vparts
        check_parts(f.parts, exp, r.data, off)
        assert f.data == [i + 3 for i in vidx]
        assert f.types == vtypes and all(isinstance(t, VT) for t in f.types)
    assert r.get_field("no.such.key") is None


def test_contents_every_type(made):
    path, _ = made
    r = GGUFReader(path)
    for key, vtype, value in KVS:
        want = expected_contents(vtype, value)
        f = r.fields[key]
        assert f.contents() == want, key
        if vtype == gb.ARRAY and value[1]:
            n = len(value[1])
            assert f.contents(0) == want[0]
            assert f.contents(-1) == want[-1]
            assert f.contents(slice(1, None)) == want[1:]
            assert f.contents(slice(None, None, 2)) == want[::2]
            with pytest.raises(IndexError):
                f.contents(n)
        # the same through the parts (the lazy path and the built path agree)
        g = GGUFReader(path).fields[key]
        _ = g.parts
        assert g.contents() == want
    assert r.fields["t.f32"].contents() == float(np.float32(0.1)) != 0.1
    assert type(r.fields["t.bool"].contents()) is bool


def test_field_is_a_namedtuple_lookalike(made):
    path, _ = made
    f = GGUFReader(path).fields["t.u32"]
    offset, name, parts, data, tys = f
    assert (offset, name, data, tys) == (f.offset, "t.u32", [3], [VT.UINT32])
    assert f[1] == "t.u32" and len(f) == 5 and f._asdict()["name"] == "t.u32"
    made_by_hand = gguf.ReaderField(0, "x", [np.array([7], np.uint32)], [0], [VT.UINT32])
    assert made_by_hand.contents() == 7
    assert gguf.ReaderField(0, "empty").contents() is None


def test_a_script_written_for_gguf_py(sample_model, minfer_cli):
    """The way transformers' GGUF loader and gguf-py's dump script read a file: values through
    parts[data[i]] and types, tensors through name, shape, tensor_type, data and dequantize."""
    from minfer.gguf_compat import GGUFReader as Reader  # the other import spelling

    def parse(part: np.ndarray, tys: List[Any]) -> Any:
        t = tys[-1] if tys[0] == 9 else tys[0]
        if t in (0, 1, 2, 3, 4, 5, 10, 11):
            return int(part[0])
        if t in (6, 12):
            return float(part[0])
        if t == 7:
            return bool(part[0])
        return bytes(part).decode()

    reader = Reader(sample_model)
    doc = cli_json(minfer_cli, sample_model)["metadata"]
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        values = [parse(field.parts[i], field.types) for i in field.data]
        e = doc[key]
        want = e["items"] if e["type"] == "array" else [e["value"]]
        if e["type"] in ("f32", "f64") or e.get("element_type") in ("f32", "f64"):
            assert np.array_equal(np.float32(values), np.float32(want)), key
        else:
            assert values == want, key
    for t in reader.tensors:
        w = gguf.dequantize(t.data, t.tensor_type).reshape(np.flip(t.shape))
        assert w.shape == tuple(int(d) for d in t.shape[::-1])
        assert w.dtype == np.float32


def test_tensors(made):
    path, facts = made
    r = GGUFReader(path)
    assert len(r.tensors) == len(facts["tensors"])
    plain = {n: v for n, _, _, v in plain_tensors()}
    for i, ((name, shape, tid, raw), info_off, abs_off) in enumerate(
            zip(facts["tensors"], facts["info_offsets"], facts["tensor_offsets"])):
        t = r.get_tensor(i)
        assert t is r.tensors[i]
        assert t.name == name
        assert t.tensor_type == tid and isinstance(t.tensor_type, QT)
        assert t.shape.dtype == np.uint64 and t.shape.tolist() == shape
        assert t.n_elements == int(np.prod(shape))
        assert t.n_bytes == len(raw)
        assert t.data_offset == abs_off
        assert addr(t.data) - addr(r.data) == abs_off  # a view of the file: no copy
        assert t.data.tobytes() == raw
        if name in plain:
            assert t.data.dtype == plain[name].dtype and t.data.shape == plain[name].shape
            assert np.array_equal(t.data, plain[name])
        else:  # BF16 and quantized: uint8 rows of block bytes, as gguf-py
            blk, size = gb.BLOCKS[tid]
            assert t.data.dtype == np.uint8
            assert t.data.shape == tuple(reversed(shape[1:])) + (shape[0] // blk * size,)
        # the tensor's table record
        f = t.field
        nb = name.encode()
        exp = [np.array([len(nb)], np.uint64), np.frombuffer(nb, np.uint8), np.array([len(shape)], np.uint32),
               np.array(shape, np.uint64), np.array([tid], np.uint32),
               np.array([abs_off - facts["data_offset"]], np.uint64)]
        assert f.offset == info_off and f.name == name
        check_parts(f.parts, exp, r.data, info_off)
        assert f.data == [1, 3, 4, 5] and f.types == [] and f.contents() is None
        assert t.shape is f.parts[3]


def test_dequantize_formulas_and_shapes(made):
    path, facts = made
    r = GGUFReader(path)
    by_name = {t.name: t for t in r.tensors}
    raw = {n: b for n, _, _, b in facts["tensors"]}
    q8 = by_name["w.q8_0"]
    got = gguf.dequantize(q8.data, q8.tensor_type)
    assert got.dtype == np.float32 and got.shape == (2, 64)
    assert np.array_equal(got.reshape(-1), q8_0_values(raw["w.q8_0"]))
    q4 = by_name["w.q4_0"]
    got = gguf.quants.dequantize(q4.data, q4.tensor_type)
    assert got.shape == (3, 32)
    assert np.array_equal(got.reshape(-1), q4_0_values(raw["w.q4_0"]))
    bf = by_name["w.bf16"]
    got = gguf.dequantize(bf.data, bf.tensor_type)
    want = (np.frombuffer(raw["w.bf16"], np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(2, 4)
    assert got.shape == (2, 4) and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    f32 = by_name["w.f32"]
    got = gguf.dequantize(f32.data, f32.tensor_type)
    assert np.shares_memory(got, f32.data) and got.shape == (3, 4)  # a view, as gguf-py
    f16 = by_name["w.f16"]
    got = gguf.dequantize(f16.data, f16.tensor_type)
    assert got.dtype == np.float32 and np.array_equal(got, f16.data.astype(np.float32))
    # raw bytes in (gguf-py views them as the type first)
    as_bytes = np.frombuffer(raw["w.f16"], np.uint8)
    assert np.array_equal(gguf.dequantize(as_bytes, QT.F16), np.frombuffer(raw["w.f16"], np.float16).astype(np.float32))
    as_bytes = np.frombuffer(raw["w.f32"], np.uint8)
    assert np.array_equal(gguf.dequantize(as_bytes, QT.F32), np.frombuffer(raw["w.f32"], np.float32))
    # rows out as rows in: a slice of rows, and one row
    assert np.array_equal(gguf.dequantize(q8.data[1:], QT.Q8_0), q8_0_values(raw["w.q8_0"])[64:].reshape(1, 64))
    assert gguf.dequantize(q8.data[0], QT.Q8_0).shape == (64,)
    with pytest.raises(ValueError):
        gguf.dequantize(q8.data[:, :33], QT.Q8_0)  # not whole blocks
    with pytest.raises(NotImplementedError):
        gguf.dequantize(np.zeros(36, np.uint8), QT.Q8_1)  # minfer has no Q8_1 conversion


def test_quant_sizes_and_enums():
    for tid, (blk, size) in gb.BLOCKS.items():
        if tid in {t.value for t in QT}:
            assert gguf.GGML_QUANT_SIZES[QT(tid)] == (blk, size), QT(tid).name
    assert gguf.quant_shape_to_byte_shape((3, 64), QT.Q8_0) == (3, 68)
    assert gguf.quant_shape_from_byte_shape((3, 68), QT.Q8_0) == (3, 64)
    with pytest.raises(ValueError):
        gguf.quant_shape_to_byte_shape((3, 63), QT.Q8_0)
    assert [t.value for t in VT] == list(range(13))
    assert VT.get_type("x") == VT.STRING and VT.get_type(True) == VT.BOOL and VT.get_type(1) == VT.INT32
    assert gguf.LlamaFileType.MOSTLY_Q4_K_M == 15 and gguf.LlamaFileType.GUESSED == 1024
    assert gguf.GGUF_MAGIC == struct.unpack("<I", b"GGUF")[0]


def test_modes_r_plus_and_copy_on_write(made, tmp_path):
    path, facts = made
    p = tmp_path / "rw.gguf"
    shutil.copy(path, p)
    original = p.read_bytes()
    r = GGUFReader(p)
    with pytest.raises(ValueError):
        r.fields["t.u32"].parts[-1][0] = 1  # read-only views in mode 'r'
    c = GGUFReader(p, "c")
    c.fields["t.u32"].parts[-1][0] = 5
    assert c.fields["t.u32"].contents() == 5
    arr = c.fields["a.i32"]
    arr.parts[arr.data[1]][0] = 77
    assert arr.contents() == [-1, 77, 2147483647]
    fresh = GGUFReader(p, "c").fields["a.i32"]  # lazy parts, read through the writable mapping
    assert fresh.contents() == [-1, 0, 2147483647]
    assert p.read_bytes() == original
    w = GGUFReader(p, "r+")  # gguf_set_metadata.py's way: write into the part
    w.fields["t.u32"].parts[-1][0] = 12345
    w.tensors[0].data[0, 0] = 2.5
    w.data.flush()
    del w
    gc.collect()
    again = GGUFReader(p)
    assert again.fields["t.u32"].contents() == 12345
    assert again.tensors[0].data[0, 0] == np.float32(2.5)
    with pytest.raises(ValueError):
        GGUFReader(p, "w+")


def test_views_outlive_the_reader(made):
    path, _ = made
    r = GGUFReader(path)
    data = r.tensors[0].data
    part = r.fields["a.str"].parts[-1]
    whole = r.data
    want = data.copy()
    del r
    gc.collect()
    assert np.array_equal(data, want)
    assert part.tobytes() == "tab\tnl\n".encode()
    assert whole[:4].tobytes() == b"GGUF"


def test_non_utf8_strings(tmp_path):
    p = tmp_path / "bytes.gguf"
    p.write_bytes(gb.gguf([("s.bad", gb.STRING, b"ok\xff\xfe"), ("a.bad", gb.ARRAY, (gb.STRING, [b"fine", b"\xc3("]))]))
    r = GGUFReader(p)
    f = r.fields["s.bad"]
    assert f.parts[-1].tobytes() == b"ok\xff\xfe"  # the bytes, as stored
    with pytest.raises(UnicodeDecodeError):  # gguf-py's strict decoding
        f.contents()
    a = GGUFReader(p).fields["a.bad"]
    assert a.contents(0) == "fine"
    with pytest.raises(UnicodeDecodeError):
        a.contents(1)
    with pytest.raises(UnicodeDecodeError):
        a.contents()
    assert [a.parts[i].tobytes() for i in a.data] == [b"fine", b"\xc3("]


# --------------------------------------------------------------------------------------------
# Hostile and wrong input: exceptions, never a crash


def test_hostile_files(tmp_path, made):
    path, facts = made
    blob = path.read_bytes()
    cases = {
        "empty": b"",
        "magic": b"GGUX" + blob[4:],
        "version": blob[:4] + struct.pack("<I", 99) + blob[8:],
        "head_cut": blob[:30],
        "kv_cut": blob[:facts["kv_offsets"][5] + 3],
        "table_cut": blob[:facts["info_offsets"][2] + 5],
        "data_cut": blob[:-40],
        "bad_tag": b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + gb.gstr("k") + struct.pack("<I", 77),
        "huge_string": b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**62) + b"k",
        "dup_key": gb.gguf([("k", gb.U8, 1), ("k", gb.U8, 2)]),
        "dup_tensor": gb.gguf([], [("t", [4], 0, b"\0" * 16), ("t", [4], 0, b"\0" * 16)]),
    }
    for name, data in cases.items():
        p = tmp_path / f"{name}.gguf"
        p.write_bytes(data)
        with pytest.raises(ValueError) as e:
            GGUFReader(p)
        assert isinstance(e.value, errors.InvalidFileError), name
    with pytest.raises(FileNotFoundError):
        GGUFReader(tmp_path / "absent.gguf")
    with pytest.raises(OSError):
        GGUFReader(tmp_path)  # a folder
    with pytest.raises(TypeError):
        GGUFReader(12345)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        GGUFReader("http://127.0.0.1:9/x.gguf")


def test_every_cut_and_flipped_byte(made, tmp_path):
    """Every prefix of the head, and 300 files with a byte changed: a ValueError (or the strict
    decoding's UnicodeDecodeError) or a reader whose every value and tensor can be read."""
    path, facts = made
    blob = path.read_bytes()
    p = tmp_path / "cut.gguf"
    # (the last tensor, q4_0, is 54 bytes padded to 64: a file may end in its padding, as llama.cpp allows)
    for n in list(range(0, facts["data_offset"] + 1, 7)) + [len(blob) - 11]:
        p.write_bytes(blob[:n])
        with pytest.raises(ValueError):
            GGUFReader(p)
    rng = np.random.default_rng(5)
    opened = 0
    for _ in range(300):
        b = bytearray(blob)
        at = int(rng.integers(0, facts["data_offset"]))
        b[at] = int(rng.integers(0, 256))
        p.write_bytes(bytes(b))
        try:
            r = GGUFReader(p)
        except ValueError:
            continue
        opened += 1
        for f in r.fields.values():
            try:
                f.contents()
            except UnicodeDecodeError:
                pass
            assert len(f.parts) >= 1
        for t in r.tensors:
            assert t.data.nbytes == t.n_bytes
    assert opened > 0  # some changes (a value's byte) leave a valid file


def test_split_set_part_one(sample_model, minfer_cli, tmp_path):
    subprocess.run([str(minfer_cli), "split", str(sample_model), str(tmp_path / "s"), "--split-max-tensors", "4",
                    "--quiet"], check=True)
    first = tmp_path / "s-00001-of-{:05d}.gguf".format(len(list(tmp_path.glob("s-*.gguf"))))
    assert first.exists()
    r = GGUFReader(first)  # gguf-py reads one file: part 1's metadata and tensors only
    doc = cli_json(minfer_cli, first)
    assert len(doc["parts"]) > 1 and len(r.tensors) == 4
    check_against_cli(r, doc)
    assert r.fields["split.count"].contents() == len(doc["parts"])


def test_no_tensors_data_offset_is_padded(tmp_path):
    p = tmp_path / "kv.gguf"
    blob = gb.gguf([("general.architecture", gb.STRING, "x")])  # 24 + 8+20+4+8+1 = 65 bytes
    p.write_bytes(blob)
    r = GGUFReader(p)
    assert r.tensors == [] and r.alignment == 32
    assert r.data_offset == 96  # gguf-py pads the table's end even without tensors


# --------------------------------------------------------------------------------------------
# The sample model and the real files, against the minfer tool and REFERENCE.txt


def cli_json(cli: Path, path: Path) -> dict:
    out = subprocess.run([str(cli), "info", "--json", "--full", str(path)], check=True, capture_output=True)
    return json.loads(out.stdout)


def json_number(v: Any) -> float:
    return float(v)  # "nan", "inf", "-inf" parse as such


def same_number(a: Any, b: Any, vtype: str) -> bool:
    if vtype in ("f32", "f64"):
        x, y = json_number(a), float(b)
        if vtype == "f32":
            x, y = float(np.float32(x)), float(np.float32(y))
        return (x == y) or (np.isnan(x) and np.isnan(y))
    return a == b


def check_against_cli(r: GGUFReader, doc: dict) -> None:
    part = doc["parts"][0]
    assert r.alignment == part["alignment"]
    want_off = part["data_offset"] if part["n_tensors"] else gb.pad(part["data_offset"], part["alignment"])
    assert r.data_offset == want_off
    assert r.fields["GGUF.version"].contents() == part["version"]
    assert r.fields["GGUF.kv_count"].contents() == part["n_kv"]
    assert r.fields["GGUF.tensor_count"].contents() == part["n_tensors"]
    md = doc["metadata"]
    assert len(r.fields) == len(md) + 3
    for (key, e), f in zip(md.items(), list(r.fields.values())[3:]):
        key = bytes.fromhex(e["key_hex"]).decode("utf-8", "surrogateescape") if "key_hex" in e else key
        assert f.name == key and f.offset == e["offset"]
        assert CLI_TYPE[f.types[0]] == e["type"]
        if e["type"] == "array":
            if e["count"]:
                assert CLI_TYPE[f.types[1]] == e["element_type"]
            else:
                assert f.types == [VT.ARRAY]
            bad = set(e.get("invalid_utf8_items", []))
            if e["element_type"] == "string" and bad:
                items = [f.parts[i].tobytes() for i in f.data]
                hexes = dict(zip(e["invalid_utf8_items"], e["invalid_utf8_items_hex"]))
                assert [bytes.fromhex(hexes[i]) if i in bad else s.encode() for i, s in enumerate(e["items"])] == items
                continue
            got = f.contents()
            assert len(got) == e["count"]
            if e["element_type"] == "string":
                assert got == e["items"]
            else:
                assert all(same_number(a, b, e["element_type"]) for a, b in zip(e["items"], got)), key
        elif e["type"] == "string":
            if e.get("invalid_utf8"):
                assert f.parts[-1].tobytes() == bytes.fromhex(e["value_hex"])
            else:
                assert f.contents() == e["value"]
        else:
            assert same_number(e["value"], f.contents(), e["type"]), key
    tensors = [t for t in doc.get("tensors", []) if t["part"] == 1]
    assert len(r.tensors) == len(tensors)
    for t, e in zip(r.tensors, tensors):
        assert t.name == e["name"] and int(t.tensor_type) == e["type_id"]
        assert t.shape.tolist() == e["shape"] and t.n_elements == e["n_elements"] and t.n_bytes == e["n_bytes"]
        assert t.data_offset == e["absolute_offset"] and addr(t.data) - addr(r.data) == e["absolute_offset"]
        assert t.field.parts[5].tolist() == [e["offset"]]
        assert t.data.nbytes == e["n_bytes"]


def test_sample_model_against_cli(sample_model, minfer_cli):
    r = GGUFReader(sample_model)
    check_against_cli(r, cli_json(minfer_cli, sample_model))
    assert {t.tensor_type.name for t in r.tensors} >= {"F32", "F16", "Q4_0", "Q8_0"}
    assert r.data.tobytes() == sample_model.read_bytes()


def dump_values(cli: Path, path: Path, name: str) -> np.ndarray:
    out = subprocess.run([str(cli), "tensor", str(path), name, "--dump", "-"], check=True, capture_output=True)
    return np.frombuffer(out.stdout, "<f4")


def test_sample_model_dequantize_against_cli(sample_model, minfer_cli):
    r = GGUFReader(sample_model)
    for t in r.tensors:
        got = gguf.dequantize(t.data, t.tensor_type)
        assert got.shape == tuple(reversed(t.shape.tolist()))
        want = dump_values(minfer_cli, sample_model, t.name)
        assert np.array_equal(got.reshape(-1).view(np.uint32), want.view(np.uint32)), t.name
        if t.tensor_type == QT.Q8_0:
            assert np.array_equal(got.reshape(-1), q8_0_values(t.data.tobytes()))
        if t.tensor_type == QT.Q4_0:
            assert np.array_equal(got.reshape(-1), q4_0_values(t.data.tobytes()))


def random_quant_file(path: Path) -> List[QT]:
    """One tensor of random block bytes (finite f16 scales) per type minfer converts."""
    rng = np.random.default_rng(3)
    tensors = []
    kinds = []
    import minfer
    for qt, (blk, size) in gguf.GGML_QUANT_SIZES.items():
        if blk == 1 or not minfer.can_dequantize(int(qt)):
            continue
        raw = bytearray(rng.integers(0, 256, 2 * size).astype(np.uint8).tobytes())
        # keep the f16 scales finite: clear the exponent's top bit of every byte pair
        for i in range(1, len(raw), 2):
            raw[i] &= 0xBF
        tensors.append((f"q.{qt.name}", [blk, 2], int(qt), bytes(raw)))
        kinds.append(qt)
    path.write_bytes(gb.gguf([], tensors))
    return kinds


def test_every_quant_type_against_cli(tmp_path, minfer_cli):
    p = tmp_path / "quants.gguf"
    kinds = random_quant_file(p)
    assert QT.Q4_K in kinds and QT.IQ2_XXS in kinds
    r = GGUFReader(p)
    for t, qt in zip(r.tensors, kinds):
        assert t.tensor_type == qt
        got = gguf.dequantize(t.data, t.tensor_type)
        assert got.shape == (2, gguf.GGML_QUANT_SIZES[qt][0]) and got.dtype == np.float32
        want = dump_values(minfer_cli, p, t.name)
        assert np.array_equal(got.reshape(-1).view(np.uint32), want.view(np.uint32)), qt.name


ACCEPTED = [f for f in real_files() if reference_rows().get(f.name, ("",))[0] == "ACCEPTED"]
REJECTED = [f for f in real_files() if reference_rows().get(f.name, ("",))[0] == "REJECTED"]


@pytest.mark.skipif(not real_files(), reason="no real files (../shared/fixtures/real absent)")
@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_real_file(path, minfer_cli):
    _, ref = reference_rows()[path.name]
    r = GGUFReader(str(path))
    assert r.data.nbytes == int(ref["size"])
    assert r.fields["GGUF.version"].contents() == int(ref["version"])
    assert r.fields["GGUF.kv_count"].contents() == int(ref["n_kv"]) == len(r.fields) - 3
    assert len(r.tensors) == int(ref["n_tensors"])
    assert r.alignment == int(ref["alignment"])
    ref_off = int(ref["data_offset"])
    assert r.data_offset == (ref_off if r.tensors else gb.pad(ref_off, r.alignment))

    def text(key: str) -> str:
        f = r.get_field(key)
        return "(none)" if f is None else f.contents()
    assert text("general.architecture") == ref["arch"]
    assert text("tokenizer.ggml.model") == ref["tokenizer"]
    assert text("tokenizer.ggml.pre") == ref["pre"]
    tokens = r.get_field("tokenizer.ggml.tokens")
    assert (0 if tokens is None else len(tokens.contents())) == int(ref["n_vocab"])
    if tokens is not None:
        assert len(tokens.data) == int(ref["n_vocab"])
    counts: Dict[str, int] = {}
    for t in r.tensors:
        n = t.tensor_type.name.lower()
        counts[n] = counts.get(n, 0) + 1
    want = {} if ref["tensor_types"] == "-" else dict((k, int(v)) for k, v in (c.split(":") for c in ref["tensor_types"].split(",")))
    assert counts == want
    check_against_cli(r, cli_json(minfer_cli, path))


@pytest.mark.skipif(not real_files(), reason="no real files (../shared/fixtures/real absent)")
@pytest.mark.parametrize("path", REJECTED, ids=lambda p: p.name)
def test_real_rejected_file(path, minfer_cli):
    verdict = subprocess.run([str(minfer_cli), "info", str(path)], capture_output=True).returncode
    if verdict == 0:
        r = GGUFReader(path)  # minfer accepts what llama.cpp refused: the reader opens it too
        assert len(r.fields) >= 3
    else:
        with pytest.raises(ValueError):
            GGUFReader(path)


# --------------------------------------------------------------------------------------------
# gguf-py itself (MINFER_GGUF_PY: the folder holding the `gguf` package)


def load_gguf_py():
    root = os.environ.get("MINFER_GGUF_PY")
    if not root:
        pytest.skip("MINFER_GGUF_PY is not set: no comparison with gguf-py (see docs/GGUF_COMPAT.md)")
    pkg_dir = Path(root) / "gguf"
    if not (pkg_dir / "gguf_reader.py").exists():
        pytest.fail(f"MINFER_GGUF_PY={root} has no gguf/gguf_reader.py")
    if "gguf" not in sys.modules:
        # gguf/__init__ imports the writer, vocab (sentencepiece) and more: load only the reader's modules
        pkg = types.ModuleType("gguf")
        pkg.__path__ = [str(pkg_dir)]  # type: ignore[attr-defined]
        sys.modules["gguf"] = pkg
    quants = importlib.import_module("gguf.quants")
    reader = importlib.import_module("gguf.gguf_reader")
    constants = importlib.import_module("gguf.constants")
    return reader, quants, constants


def ref_contents(f: Any, index_or_slice: Any = slice(None)) -> Any:
    """gguf-py's contents() semantics over gguf-py's own parts (older gguf-py has no contents())."""
    if hasattr(f, "contents"):
        return f.contents(index_or_slice)
    if not f.types:
        return None
    s = lambda p: str(p.tobytes(), encoding="utf-8")  # noqa: E731
    if f.types[0] == VT.ARRAY:
        idx = f.data[index_or_slice]
        if f.types[-1] == VT.STRING:
            return s(f.parts[idx]) if isinstance(index_or_slice, int) else [s(f.parts[i]) for i in idx]
        if isinstance(index_or_slice, int):
            return f.parts[idx].tolist()[0]
        return [v for i in idx for v in f.parts[i].tolist()]
    return s(f.parts[-1]) if f.types[0] == VT.STRING else f.parts[-1].tolist()[0]


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def compare_with_gguf_py(path: Path, ref_reader: Any) -> None:
    ours = GGUFReader(path)
    ref = ref_reader.GGUFReader(path)
    assert list(ours.fields) == list(ref.fields)
    assert ours.alignment == ref.alignment and ours.data_offset == ref.data_offset
    assert ours.byte_order == ref.byte_order
    assert same_array(ours.data, np.asarray(ref.data))
    for name, rf in ref.fields.items():
        f = ours.fields[name]
        assert f.offset == rf.offset and f.name == rf.name, name
        assert [int(t) for t in f.types] == [int(t) for t in rf.types], name
        assert f.data == rf.data, name
        assert len(f.parts) == len(rf.parts), name
        assert all(same_array(a, np.asarray(b)) for a, b in zip(f.parts, rf.parts)), name
        try:
            want = ref_contents(rf)
        except UnicodeDecodeError:
            with pytest.raises(UnicodeDecodeError):
                GGUFReader(path).fields[name].contents()
            continue
        assert GGUFReader(path).fields[name].contents() == want, name  # the lazy path
        assert f.contents() == want, name  # the built path
    assert len(ours.tensors) == len(ref.tensors)
    for t, rt in zip(ours.tensors, ref.tensors):
        assert t.name == rt.name and int(t.tensor_type) == int(rt.tensor_type)
        assert same_array(t.shape, np.asarray(rt.shape))
        assert t.n_elements == rt.n_elements and t.n_bytes == rt.n_bytes and t.data_offset == rt.data_offset
        assert same_array(t.data, np.asarray(rt.data)), t.name
        assert t.field.offset == rt.field.offset and t.field.data == rt.field.data
        assert all(same_array(a, np.asarray(b)) for a, b in zip(t.field.parts, rt.field.parts))


def test_gguf_py_handmade_and_sample(made, sample_model, minfer_cli, tmp_path):
    reader, _, _ = load_gguf_py()
    compare_with_gguf_py(made[0], reader)
    compare_with_gguf_py(sample_model, reader)
    subprocess.run([str(minfer_cli), "split", str(sample_model), str(tmp_path / "s"), "--split-max-tensors", "5",
                    "--quiet"], check=True)
    compare_with_gguf_py(sorted(tmp_path.glob("s-*.gguf"))[0], reader)  # part 1 of a split set


@pytest.mark.skipif(not real_files(), reason="no real files (../shared/fixtures/real absent)")
@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_gguf_py_real_file(path):
    reader, _, _ = load_gguf_py()
    compare_with_gguf_py(path, reader)


def test_gguf_py_dequantize(tmp_path, made, sample_model):
    _, quants, _ = load_gguf_py()
    p = tmp_path / "quants.gguf"
    random_quant_file(p)
    checked = []
    for f in (p, made[0], sample_model):
        for t in GGUFReader(f).tensors:
            try:
                want = quants.dequantize(np.asarray(t.data), t.tensor_type)
            except NotImplementedError:
                continue  # a type this gguf-py cannot convert
            got = gguf.dequantize(t.data, t.tensor_type)
            assert got.shape == want.shape and got.dtype == want.dtype, t.name
            assert np.array_equal(got, want, equal_nan=True), t.name
            checked.append(t.tensor_type.name)
    assert {"Q4_0", "Q8_0", "Q4_K", "Q6_K", "IQ2_XXS", "BF16"} <= set(checked)


def test_gguf_py_constants():
    _, _, constants = load_gguf_py()
    for t in constants.GGMLQuantizationType:
        if t.name in QT.__members__:
            assert QT[t.name] == t.value
            if t.name == "Q8_1" and constants.GGML_QUANT_SIZES[t] == (32, 40):
                continue  # gguf-py before 2025 said 4 + 4 + 32; ggml's block_q8_1 is 2 + 2 + 32 (as gguf-py now)
            assert gguf.GGML_QUANT_SIZES[QT[t.name]] == constants.GGML_QUANT_SIZES[t], t.name
    assert {t.name: t.value for t in constants.GGUFValueType} == {t.name: t.value for t in VT}
    for t in constants.LlamaFileType:
        if t.name in gguf.LlamaFileType.__members__:
            assert gguf.LlamaFileType[t.name] == t.value


RUNNER = '''
import importlib, runpy, sys, types
mode, root, script = sys.argv[1:4]
if mode == "minfer":
    import minfer.gguf_compat as g
    sys.modules["gguf"] = g
else:  # gguf-py, without its __init__ (which needs sentencepiece and more)
    pkg = types.ModuleType("gguf")
    pkg.__path__ = [root + "/gguf"]
    sys.modules["gguf"] = pkg
    for m in ("constants", "quants", "gguf_reader"):
        mod = importlib.import_module("gguf." + m)
        pkg.__dict__.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
sys.argv = [script] + sys.argv[4:]
runpy.run_path(script, run_name="__main__")
'''


def gguf_py_script(name: str) -> Path:
    root = Path(os.environ.get("MINFER_GGUF_PY", ""))
    for p in (root / "scripts" / name, root / "gguf" / "scripts" / name):
        if p.exists():
            return p
    pytest.skip(f"no {name} in MINFER_GGUF_PY (extract gguf-py's scripts/ beside gguf/: docs/GGUF_COMPAT.md)")
    raise AssertionError


def run_script(tmp_path: Path, mode: str, script: Path, *args: str) -> Tuple[int, str]:
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    env = python_env(NO_LOCAL_GGUF="1")
    out = subprocess.run([sys.executable, str(runner), mode, os.environ["MINFER_GGUF_PY"], str(script), *args],
                         capture_output=True, text=True, env=env, timeout=120)
    return out.returncode, out.stdout + out.stderr


def test_gguf_py_dump_script_unchanged(made, sample_model, tmp_path):
    """gguf-py's own gguf_dump.py, run once on gguf-py and once on gguf_compat: the same output."""
    load_gguf_py()
    script = gguf_py_script("gguf_dump.py")
    files = [made[0], sample_model] + [f for f in ACCEPTED if "stories260K" in f.name]
    for f in files:
        for opts in ([], ["--json"], ["--markdown"]):
            ours = run_script(tmp_path, "minfer", script, *opts, str(f))
            ref = run_script(tmp_path, "gguf-py", script, *opts, str(f))
            assert ref[0] == 0, ref[1][-2000:]
            assert ours == ref, (f.name, opts)


def test_gguf_py_set_metadata_script_unchanged(sample_model, tmp_path):
    """gguf-py's gguf_set_metadata.py (GGUFReader(path, 'r+'), a value written into its part): the
    same file either way, and minfer reads the new value."""
    load_gguf_py()
    script = gguf_py_script("gguf_set_metadata.py")
    results = {}
    for mode in ("minfer", "gguf-py"):
        p = tmp_path / mode / "m.gguf"
        p.parent.mkdir()
        shutil.copy(sample_model, p)
        rc, log = run_script(tmp_path, mode, script, str(p), "qwen2.context_length", "1234", "--force")
        assert rc == 0, log[-2000:]
        results[mode] = (p.read_bytes(), log.replace(str(p), "M"))
    assert results["minfer"] == results["gguf-py"]
    assert results["minfer"][0] != sample_model.read_bytes()
    assert GGUFReader(tmp_path / "minfer" / "m.gguf").fields["qwen2.context_length"].contents() == 1234
