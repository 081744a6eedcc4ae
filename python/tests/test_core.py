"""minfer._core on hand-made files: every value type, zero-copy views, lifetime, closed models,
split sets, errors and wrong Python types. Expected values come from the bytes the test wrote
(gguf_bytes.py), never from minfer."""

from __future__ import annotations

import gc
import math
import struct
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import gguf_bytes as G  # noqa: E402

import minfer  # noqa: E402

SCALARS = [
    ("t.u8", G.U8, 255), ("t.i8", G.I8, -128), ("t.u16", G.U16, 65535), ("t.i16", G.I16, -32768),
    ("t.u32", G.U32, 4294967295), ("t.i32", G.I32, -2147483648), ("t.f32", G.F32, 0.1),
    ("t.bool", G.BOOL, 1), ("t.str", G.STRING, "héllo ☃"), ("t.u64", G.U64, 2**64 - 1),
    ("t.i64", G.I64, -(2**63)), ("t.f64", G.F64, 1e300),
]
NUMPY = {G.U8: "<u1", G.I8: "<i1", G.U16: "<u2", G.I16: "<i2", G.U32: "<u4", G.I32: "<i4", G.F32: "<f4",
         G.BOOL: "?", G.U64: "<u8", G.I64: "<i8", G.F64: "<f8"}
ARRAYS = [
    ("a.u8", G.U8, [0, 1, 255]), ("a.i8", G.I8, [-1, 0, 127]), ("a.u16", G.U16, [1, 65535]),
    ("a.i16", G.I16, [-5, 5]), ("a.u32", G.U32, [7, 4294967295]), ("a.i32", G.I32, [-7, 7]),
    ("a.f32", G.F32, [0.5, -2.25, 1e-3]), ("a.bool", G.BOOL, [1, 0, 1]), ("a.u64", G.U64, [2**64 - 1]),
    ("a.i64", G.I64, [-(2**63), 3]), ("a.f64", G.F64, [math.pi, -0.0]), ("a.empty", G.I32, []),
]


def write(tmp_path: Path, data: bytes, name: str = "m.gguf") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.fixture()
def typed_model(tmp_path):
    kvs = [(k, t, v) for k, t, v in SCALARS]
    kvs += [(k, G.ARRAY, (t, v)) for k, t, v in ARRAYS]
    kvs += [("a.str", G.ARRAY, (G.STRING, ["a", "", "ü", b"\xff\xfe bad utf-8"]))]
    f32 = np.arange(12, dtype=np.float32)
    f16 = np.linspace(-1, 1, 64).astype(np.float16)
    tensors = [("w.f32", [4, 3], 0, f32.tobytes()), ("w.f16", [64], 1, f16.tobytes()),
               ("w.q8", [32, 2], 8, bytes(range(68)))]
    return write(tmp_path, G.gguf(kvs, tensors)), kvs, tensors


def test_every_scalar_type_reads_back_as_written(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        md = m.metadata
        for key, vtype, v in SCALARS:
            got = md[key]
            if vtype == G.F32:
                assert isinstance(got, float) and got == struct.unpack("<f", struct.pack("<f", v))[0]
            elif vtype == G.BOOL:
                assert got is True
            elif vtype == G.STRING:
                assert got == v
            else:
                assert type(got) is type(v) and got == v, key
            assert md.raw(key).type == minfer.ValueType(vtype)


def test_every_numeric_array_is_a_read_only_view_with_the_files_values(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        for key, vtype, v in ARRAYS:
            a = m.metadata[key]
            assert isinstance(a, np.ndarray), key
            assert a.dtype == np.dtype(NUMPY[vtype]), key
            assert a.tolist() == np.array(v, dtype=NUMPY[vtype]).tolist(), key
            assert not a.flags.writeable and not a.flags.owndata
            assert isinstance(a.base, minfer._core.FileMapping)
            with pytest.raises(ValueError):
                a[...] = 0 if a.size else a
            raw = m.metadata.raw(key)
            assert raw.type == minfer.ValueType.ARRAY and raw.element_type == minfer.ValueType(vtype)
            assert raw.count == len(v)


def test_raw_offsets_are_the_bytes_positions_in_the_file(typed_model):
    path, kvs, _ = typed_model
    data = path.read_bytes()
    offset = 24
    with minfer.open(path) as m:
        for key, vtype, v in kvs:
            raw = m.metadata.raw(key)
            assert raw.offset == offset, key
            record = G.kv(key, vtype, v)
            payload = G.value(vtype, v)
            if vtype == G.STRING:
                payload = payload[8:]
            elif vtype == G.ARRAY:
                payload = payload[12:]
            assert raw.value_offset == offset + len(record) - len(payload)
            assert raw.data.tobytes() == payload == data[raw.value_offset:raw.value_offset + len(payload)]
            offset += len(record)


def test_string_arrays_are_lazy_sequences_and_keep_undecodable_bytes(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        s = m.metadata["a.str"]
        assert isinstance(s, minfer.StringArray)
        assert len(s) == 4 and s[0] == "a" and s[1] == "" and s[2] == "ü" and s[-1] == s[3]
        assert s[3].encode("utf-8", "surrogateescape") == b"\xff\xfe bad utf-8"
        assert s.bytes_at(3) == b"\xff\xfe bad utf-8"
        assert list(s) == s.to_list() == s[0:4] == [s[i] for i in range(4)]
        assert s[::-2] == [s[3], s[1]]
        for bad in (4, -5, 2**40):
            with pytest.raises(IndexError):
                s[bad]
        with pytest.raises(TypeError):
            s["x"]


def test_mapping_protocol_in_file_order(typed_model):
    path, kvs, tensors = typed_model
    with minfer.open(path) as m:
        assert list(m.metadata) == [k for k, _, _ in kvs] == m.metadata.keys()
        assert len(m.metadata) == len(kvs)
        assert "t.u8" in m.metadata and "nope" not in m.metadata and 5 not in m.metadata
        assert m.metadata.get("nope", 42) == 42 and m.metadata.get("t.u8") == 255
        with pytest.raises(KeyError):
            m.metadata["nope"]
        with pytest.raises(KeyError):
            m.metadata[5]
        assert [k for k, _ in m.metadata.items()] == m.metadata.keys()
        import collections.abc as abc
        assert isinstance(m.metadata, abc.Mapping) and isinstance(m.tensors, abc.Mapping)
        assert list(m.tensors) == [t[0] for t in tensors]
        assert [t.name for t in m.tensors.values()] == list(m.tensors)
        assert m.tensors.get("nope") is None and "w.f32" in m.tensors


def test_tensor_attributes_and_zero_copy_bytes(typed_model):
    path, _, tensors = typed_model
    data = path.read_bytes()
    with minfer.open(path) as m:
        part = m.parts[0]
        assert part.file_size == len(data) and part.version == 3 and part.alignment == 32
        assert part.n_tensors == 3 and part.complete and part.trailing_bytes == 0
        t = m.tensors["w.f32"]
        assert t.type == minfer.TensorType.F32 and t.shape == (4, 3) and t.numpy_shape == (3, 4)
        assert t.n_dims == 2 and t.n_elements == 12 and t.n_bytes == 48 and t.part == 0
        assert t.strides == (4, 16, 48, 48)
        assert t.offset == part.data_offset + t.data_offset
        whole = part.data
        assert whole.tobytes() == data and not whole.flags.writeable
        # the tensor table follows the metadata: the first record starts where the last entry ends
        last = m.metadata.raw("a.str")
        assert t.info_offset == last.value_offset + len(last.data)
        assert data[t.info_offset:t.info_offset + 8 + 5] == G.gstr("w.f32")
        assert m.tensors["w.f16"].info_offset == t.info_offset + len(G.tensor_info("w.f32", [4, 3], 0, 0))
        a, b = m.tensors["w.f32"].data, m.tensors["w.q8"].data
        assert a.tobytes() == data[t.offset:t.offset + 48]
        # both views point into one mapping, as far apart as the tensors are in the file
        addr = lambda x: x.__array_interface__["data"][0]  # noqa: E731
        assert addr(b) - addr(a) == m.tensors["w.q8"].offset - t.offset
        assert addr(m.tensors["w.f32"].data) == addr(a)  # no copy on a second access
        assert not a.flags.writeable and isinstance(a.base, minfer._core.FileMapping)
        np.testing.assert_array_equal(t.to_numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
        f16 = m.tensors["w.f16"].to_numpy()
        np.testing.assert_array_equal(f16, np.linspace(-1, 1, 64).astype(np.float16).astype(np.float32))
        assert m.tensors["w.f16"].to_numpy(np.float64).dtype == np.float64
        assert m.tensors["w.f16"].to_numpy("float16").dtype == np.float16
        with pytest.raises(TypeError):
            t.to_numpy(np.int32)


def test_q8_0_values_follow_the_block_formula(typed_model):
    path, _, _ = typed_model
    raw = bytes(range(68))
    want = []
    for blk in (raw[:34], raw[34:]):
        d = np.frombuffer(blk[:2], dtype="<f2").astype(np.float32)[0]
        want += [np.float32(d) * np.float32(q) for q in np.frombuffer(blk[2:], dtype=np.int8)]
    with minfer.open(path) as m:
        got = m.tensors["w.q8"].to_numpy()
    assert got.shape == (2, 32)
    np.testing.assert_array_equal(got.ravel(), np.array(want, dtype=np.float32))
    np.testing.assert_array_equal(minfer.dequantize(raw, minfer.TensorType.Q8_0), got.ravel())
    np.testing.assert_array_equal(minfer.dequantize(np.frombuffer(raw, np.uint8).reshape(2, 34), 8), got.ravel())


def test_views_outlive_close_and_the_model_object(typed_model):
    path, _, _ = typed_model
    m = minfer.open(path)
    arr = m.metadata["a.f32"]
    data = m.tensors["w.f32"].data
    tensor = m.tensors["w.f32"]
    strings = m.metadata["a.str"]
    m.close()
    assert m.closed
    m.close()  # twice is fine
    for use in (lambda: m.metadata, lambda: m.tensors, lambda: m.parts, lambda: tensor.data,
                lambda: tensor.to_numpy(), lambda: strings[0], lambda: len(strings), lambda: tensor.shape):
        with pytest.raises(ValueError, match="closed"):
            use()
    assert "closed" in repr(m) and "closed" in repr(tensor)
    ref = weakref.ref(data.base)
    del m, tensor, strings
    gc.collect()
    assert arr.tolist() == [0.5, -2.25, np.float32(1e-3)]
    assert np.frombuffer(data.tobytes(), np.float32).tolist() == list(range(12))
    assert ref() is not None
    del data
    gc.collect()
    assert ref() is None  # the last view gone, the mapping goes with it


def test_context_manager_closes(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        assert not m.closed
    assert m.closed
    with pytest.raises(ValueError):
        m.metadata


def test_no_mmap_reads_the_same(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as a, minfer.open(path, mmap=False) as b:
        assert a.metadata.keys() == b.metadata.keys()
        for name in a.tensors:
            assert a.tensors[name].data.tobytes() == b.tensors[name].data.tobytes()


def test_paths_may_be_pathlike_str_or_bytes(typed_model):
    path, _, _ = typed_model
    for p in (path, str(path), bytes(path)):
        with minfer.open(p) as m:
            assert len(m.tensors) == 3


@pytest.mark.parametrize("bad", [None, 3, 1.5, ["x"], object()])
def test_wrong_python_types_are_type_errors(bad):
    with pytest.raises(TypeError):
        minfer.open(bad)


def test_wrong_argument_types_to_accessors(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        with pytest.raises(TypeError):
            m.tensors["w.f32"].to_numpy(threads="many")
        with pytest.raises(TypeError):
            minfer.dequantize(object(), 8)
        with pytest.raises(TypeError):
            minfer.dequantize(b"", "q8_0")
        with pytest.raises(TypeError):
            m.metadata.raw(None)  # a key that is not text: KeyError would hide the mistake
    with pytest.raises(TypeError):
        minfer.open(path, mmap="no")


def test_errors_carry_the_librarys_fields(tmp_path):
    good = G.gguf([("general.architecture", G.STRING, "llama")], [("w", [8], 0, bytes(32))])
    cases = [
        (b"GGUX" + good[4:], minfer.InvalidFileError, "bad_magic", 0),
        (good[:20], minfer.InvalidFileError, "truncated", 16),
        (good[:-1], minfer.InvalidFileError, "data_truncated", None),
        (G.gguf([("k", G.STRING, "a"), ("k", G.U8, 1)]), minfer.InvalidFileError, "duplicate_key", None),
    ]
    for i, (data, cls, code, offset) in enumerate(cases):
        p = write(tmp_path, data, f"bad{i}.gguf")
        with pytest.raises(cls) as info:
            minfer.open(p)
        e = info.value
        assert isinstance(e, ValueError) and isinstance(e, minfer.GGUFError)
        assert e.code == code and e.file == str(p) and e.exit_code == 1
        if offset is not None:
            assert e.offset == offset
        assert code in str(e) and str(p) in str(e)
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.open(tmp_path / "missing.gguf")
    assert isinstance(info.value, OSError) and info.value.errno == 2 and info.value.exit_code == 3
    assert info.value.code == "io_error"


def test_type_not_convertible_is_a_request_error(tmp_path):
    p = write(tmp_path, G.gguf([], [("q81", [32], 9, bytes(36)), ("i64", [2], 27, bytes(16))]))
    with minfer.open(p) as m:
        for name in ("q81", "i64"):
            with pytest.raises(minfer.RequestError) as info:
                m.tensors[name].to_numpy()
            assert info.value.code == "type_not_convertible" and info.value.subject == name
        assert m.tensors["q81"].data.size == 36  # the bytes are still there


def test_split_set_parts_and_data(tmp_path, sample_model, minfer_cli):
    out = tmp_path / "set"
    subprocess.run([str(minfer_cli), "split", str(sample_model), str(out), "--split-max-tensors", "10"],
                   check=True, stdout=subprocess.DEVNULL)
    first = tmp_path / "set-00001-of-00003.gguf"
    with minfer.open(first) as s, minfer.open(sample_model) as whole:
        assert [Path(p.path).name for p in s.parts] == [f"set-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
        assert list(s.tensors) == list(whole.tensors)
        assert [t.part for t in s.tensors.values()] == [0] * 10 + [1] * 10 + [2] * 7
        for name in whole.tensors:
            assert s.tensors[name].data.tobytes() == whole.tensors[name].data.tobytes()
        assert s.file_bytes == sum(p.file_size for p in s.parts)
    (tmp_path / "set-00002-of-00003.gguf").unlink()
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.open(first)
    assert info.value.code == "split_part_missing"


def test_to_numpy_releases_the_gil_and_threads_agree(tmp_path):
    rng = np.random.default_rng(7)
    n_blocks = 64 * 1024  # 2 M values of q8_0
    blocks = rng.integers(0, 256, size=(n_blocks, 34), dtype=np.uint8)
    blocks[:, 0:2] = np.frombuffer(np.full(n_blocks, 0.01, np.float16).tobytes(), np.uint8).reshape(n_blocks, 2)
    p = write(tmp_path, G.gguf([], [("big", [32 * 1024, 64], 8, blocks.tobytes())]))
    with minfer.open(p) as m:
        t = m.tensors["big"]
        one = t.to_numpy(threads=1)
        ticks = []
        stop = threading.Event()
        th = threading.Thread(target=lambda: [ticks.append(1) for _ in iter(lambda: stop.is_set(), True)])
        th.start()
        many = t.to_numpy(threads=0)
        stop.set()
        th.join()
        assert one.view(np.uint32).tobytes() == many.view(np.uint32).tobytes()
        assert one.shape == (64, 32 * 1024)
        assert len(ticks) > 0  # another Python thread ran meanwhile


def test_type_table_matches_the_enum():
    for t in minfer.TensorType:
        name = minfer.tensor_type_name(t)
        assert name.lower() == t.name.lower(), t
    assert minfer.tensor_type_name(999) == "unknown"
    assert minfer.type_block(minfer.TensorType.Q8_K) == (256, 292)
    assert minfer.type_block(minfer.TensorType.Q4_2) == (0, 0)
    assert minfer.can_dequantize(minfer.TensorType.Q4_K) and not minfer.can_dequantize(minfer.TensorType.Q8_1)


def test_to_numpy_and_dequantize_into_a_callers_buffer(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        t = m.tensors["w.q8"]
        want = t.to_numpy()
        buf = np.full(64, np.nan, np.float32)
        assert t.to_numpy(out=buf) is buf
        assert buf.tobytes() == want.tobytes()
        flat = np.empty((8, 8), np.float32)  # any shape with the right count
        assert minfer.dequantize(t.data, t.type, out=flat) is flat
        assert flat.tobytes() == want.tobytes()
        for bad, exc in ((np.empty(63, np.float32), ValueError), (np.empty(64, np.float64), TypeError),
                         (np.empty(128, np.float32)[::2], ValueError), ([0.0] * 64, TypeError)):
            with pytest.raises(exc):
                t.to_numpy(out=bad)
        ro = np.empty(64, np.float32)
        ro.flags.writeable = False
        with pytest.raises(ValueError):
            t.to_numpy(out=ro)
        with pytest.raises(TypeError):
            t.to_numpy(np.float64, out=buf)
        with pytest.raises(minfer.RequestError):
            minfer.dequantize(bytes(36), minfer.TensorType.Q8_1, out=np.empty(32, np.float32))


def test_str_of_a_type_is_its_name(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        t = m.tensors["w.q8"]
        assert str(t.type) == "Q8_0" and f"{t.type}" == "Q8_0" and f"{t.type:>6}" == "  Q8_0"
        assert t.type == 8 and int(t.type) == 8 and t.type.value == 8
        assert str(minfer.TensorType.F32) == "F32" and str(minfer.ValueType.UINT32) == "UINT32"
        assert str(m.metadata.raw("t.u8").type) == "UINT8"


def test_every_index_out_of_range_is_an_index_error(typed_model):
    path, _, _ = typed_model
    with minfer.open(path) as m:
        n = len(m.tensors)
        # Tensors by position in file order, as gguf-py's reader.tensors[i].
        assert m.tensors[0].name == "w.f32" and m.tensors[-1].name == "w.q8" and m.tensors[n - 1].name == "w.q8"
        assert m.tensors["w.f16"].name == m.tensors[1].name
        s = m.metadata["a.str"]
        arr = m.metadata["a.u32"]
        for bad in (n, -n - 1, 2**63, 2**64, -(2**64)):
            with pytest.raises(IndexError):
                m.tensors[bad]
        for bad in (4, -5, 2**63, 2**64, -(2**64)):
            with pytest.raises(IndexError):
                s[bad]
            with pytest.raises(IndexError):
                s.bytes_at(bad)
        for bad in (2, -3, 2**64):
            with pytest.raises(IndexError):
                arr[bad]
        for bad in (len(m.parts), 2**64):
            with pytest.raises(IndexError):
                m.parts[bad]
        with pytest.raises(KeyError):
            m.tensors["no.such"]
