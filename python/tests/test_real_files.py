"""Every real file of ../shared/fixtures/real read from Python equals what the C++ library reads.

The reference is never the module under test:
- `minfer info FILE --json --full` (MINFER_CLI, the C++ library) for every metadata value, type and
  offset, and every tensor's type, shape, strides, sizes and offsets;
- REFERENCE.txt (llama.cpp's own parse) for the verdict, n_kv, n_tensors, data_offset, alignment, size;
- the file's bytes read with plain Python file I/O for every payload (metadata and tensor data);
- `minfer tensor FILE NAME --dump OUT` (raw f32 from the C++ library) for the values of tensors (every
  quantized one, two of each plain type), and numpy for the plain ones (f32 bits as stored, f16 widened);
- `minfer info FILE` (exit code and `[code]` of its error line) for the files it refuses.
Split sets are made by `minfer split` from the sample model and compared tensor by tensor with it.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import minfer
from minfer.errors import GGUFError, GGUFIOError, InvalidFileError
from minfer.types import TensorType, ValueType

from conftest import real_files, reference_rows

# JSON type names of `minfer info --json` -> (ValueType, numpy dtype of an array of them, bytes per item)
VTYPES = {
    "u8": (ValueType.UINT8, np.uint8, 1), "i8": (ValueType.INT8, np.int8, 1),
    "u16": (ValueType.UINT16, np.uint16, 2), "i16": (ValueType.INT16, np.int16, 2),
    "u32": (ValueType.UINT32, np.uint32, 4), "i32": (ValueType.INT32, np.int32, 4),
    "f32": (ValueType.FLOAT32, np.float32, 4), "bool": (ValueType.BOOL, np.bool_, 1),
    "string": (ValueType.STRING, None, None), "array": (ValueType.ARRAY, None, None),
    "u64": (ValueType.UINT64, np.uint64, 8), "i64": (ValueType.INT64, np.int64, 8),
    "f64": (ValueType.FLOAT64, np.float64, 8),
}
IO_CODES = {"io_error", "split_part_missing", "out_of_memory"}

REAL = real_files()
ROWS = reference_rows()


def _ids(paths):
    return [p.stem for p in paths]


# ---- the C++ library's reading, through the minfer tool ------------------------------------------

def cli_json(cli: Path, path: Path) -> dict:
    r = subprocess.run([str(cli), "info", str(path), "--json", "--full"], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


def cli_verdict(cli: Path, path: Path):
    """(exit code, error code or None, the library's message or None) of `minfer info FILE`."""
    r = subprocess.run([str(cli), "info", str(path)], capture_output=True)
    err = r.stderr.decode("utf-8", "surrogateescape").strip().splitlines()
    if r.returncode == 0:
        return 0, None, None
    line = [l for l in err if l.startswith("Error: ")][-1]
    m = re.search(r"\[([a-z0-9_]+)\]$", line)
    assert m, line
    msg = line[len("Error: "):]
    if msg.startswith("failed to parse GGUF: "):
        msg = msg[len("failed to parse GGUF: "):]
    return r.returncode, m.group(1), msg


def cli_dump(cli: Path, path: Path, name: str, out: Path) -> np.ndarray:
    """The tensor's values as the C++ library converts them: raw little-endian f32."""
    r = subprocess.run([str(cli), "tensor", str(path), name, "--dump", str(out), "--force"], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return np.fromfile(out, dtype="<f4")


def text_bytes(obj: dict, field: str) -> bytes:
    """The exact bytes of a string field of the JSON (docs/CLI.md: F_hex when not UTF-8)."""
    if field + "_hex" in obj:
        return bytes.fromhex(obj[field + "_hex"])
    return obj[field].encode("utf-8")


def py_bytes(s: str) -> bytes:
    """The bytes behind a str of the module (undecodable bytes are lone surrogates)."""
    return s.encode("utf-8", "surrogateescape")


def f32_bits(x) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def json_float(v) -> float:
    return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}.get(v, v) if isinstance(v, str) else float(v)


def same_float(a: float, b: float, width: int) -> bool:
    if a != a or b != b:
        return a != a and b != b
    if width == 4:
        return f32_bits(a) == f32_bits(b)
    return a == b and np.signbit(a) == np.signbit(b)


def file_range(path: Path, offset: int, n: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        b = f.read(n)
    assert len(b) == n
    return b


# ---- one model against its JSON ---------------------------------------------------------------------

def check_metadata(model, doc: dict, part1: Path) -> int:
    """Every key, value, type and offset; returns the number of values checked."""
    md = model.metadata
    entries = list(doc["metadata"].items())
    assert len(md) == len(entries) == doc["parts"][0]["n_kv"]
    keys = list(md)
    assert len(keys) == len(entries)
    checked = 0
    for got_key, (name, e) in zip(keys, entries):
        want_key = bytes.fromhex(e["key_hex"]) if "key_hex" in e else name.encode("utf-8")
        assert py_bytes(got_key) == want_key, (got_key, name)
        assert got_key in md
        value = md[got_key]
        raw = md.raw(got_key)
        vt, _, _ = VTYPES[e["type"]]
        assert raw.type == vt and isinstance(raw.type, ValueType), name
        assert py_bytes(raw.key) == want_key
        assert raw.offset == e["offset"], name
        # The record: u64 key length, key, u32 type, then the payload (after a string's u64 length,
        # or after an array's u32 element type and u64 count).
        head = file_range(part1, e["offset"], 8)
        (klen,) = struct.unpack("<Q", head)
        assert klen == len(want_key)
        assert file_range(part1, e["offset"] + 8, klen) == want_key
        after_type = e["offset"] + 8 + klen + 4
        assert struct.unpack("<I", file_range(part1, after_type - 4, 4))[0] == int(vt)

        if e["type"] == "string":
            want = text_bytes(e, "value")
            assert isinstance(value, str), name
            assert py_bytes(value) == want, name
            assert raw.count == 1 and raw.element_type is None
            assert raw.value_offset == after_type + 8
            payload_len = len(want)
        elif e["type"] == "array":
            et, dtype, size = VTYPES[e["element_type"]]
            assert raw.element_type == et, name
            assert raw.count == e["count"], name
            assert raw.value_offset == after_type + 12, name
            items = e["items"]
            assert len(items) == e["count"]
            if e["element_type"] == "string":
                bad = dict(zip(e.get("invalid_utf8_items", []), e.get("invalid_utf8_items_hex", [])))
                want = [bytes.fromhex(bad[i]) if i in bad else s.encode("utf-8") for i, s in enumerate(items)]
                assert isinstance(value, minfer.StringArray), name
                assert len(value) == len(want)
                as_list = value.to_list()
                assert [py_bytes(s) for s in as_list] == want, name
                assert [py_bytes(s) for s in value] == want, name
                if want:
                    for i in sorted({0, len(want) // 2, len(want) - 1}):
                        assert py_bytes(value[i]) == want[i]
                        assert value.bytes_at(i) == want[i]
                    assert py_bytes(value[-1]) == want[-1]
                    assert [py_bytes(s) for s in value[1:4]] == want[1:4]
                payload_len = sum(8 + len(w) for w in want)
            else:
                assert isinstance(value, np.ndarray), name
                assert not value.flags.writeable, name
                assert value.ndim == 1 and value.shape[0] == len(items)
                if dtype is np.bool_:
                    assert value.dtype in (np.dtype(np.bool_), np.dtype(np.uint8)), value.dtype
                    assert [bool(x) for x in value] == [bool(x) for x in items]
                elif dtype in (np.float32, np.float64):
                    assert value.dtype == np.dtype(dtype).newbyteorder("<"), name
                    for g, w in zip(value.tolist(), items):
                        assert same_float(g, json_float(w), size), (name, g, w)
                else:
                    assert value.dtype == np.dtype(dtype).newbyteorder("<"), name
                    assert value.tolist() == items, name
                payload_len = size * len(items)
                # The array views the file's own bytes.
                assert value.tobytes() == file_range(part1, raw.value_offset, payload_len)
        else:
            _, dtype, size = VTYPES[e["type"]]
            assert raw.count == 1 and raw.element_type is None
            assert raw.value_offset == after_type, name
            w = e["value"]
            if e["type"] == "bool":
                assert value is w, name
            elif e["type"] in ("f32", "f64"):
                assert isinstance(value, float) and not isinstance(value, bool), name
                assert same_float(value, json_float(w), size), (name, value, w)
            else:
                assert type(value) is int, (name, type(value))
                assert value == w, name
            payload_len = size
        data = raw.data
        assert isinstance(data, np.ndarray) and data.dtype == np.uint8 and not data.flags.writeable
        assert data.tobytes() == file_range(part1, raw.value_offset, payload_len), name
        checked += 1
    return checked


def check_tensors(model, doc: dict, parts: list, tmp: Path, cli: Path, dump: bool = True) -> int:
    """Every tensor attribute, its bytes against the file, its values against the C++ library."""
    tensors = model.tensors
    want = doc.get("tensors", [])
    assert len(tensors) == len(want)
    assert [py_bytes(n) for n in tensors] == [text_bytes(t, "name") for t in want]
    dumped: dict = {}
    for name, t in zip(list(tensors), want):
        ten = tensors[name]
        assert name in tensors
        assert py_bytes(ten.name) == text_bytes(t, "name")
        assert ten.type == TensorType(t["type_id"]) and isinstance(ten.type, TensorType)
        assert ten.type.name.lower() == t["type"].lower()
        assert minfer.tensor_type_name(int(ten.type)) == t["type"]
        assert ten.n_dims == t["n_dims"]
        assert ten.shape == tuple(t["shape"])
        assert ten.numpy_shape == tuple(reversed(t["shape"]))
        assert ten.n_elements == t["n_elements"]
        assert ten.n_bytes == t["n_bytes"]
        assert ten.strides == tuple(t["nb"])
        assert ten.offset == t["absolute_offset"]
        assert ten.data_offset == t["offset"]
        assert ten.part == t["part"] - 1
        # the tensor's record in the table, read from the file: name, n_dims, ne, type, offset
        f = parts[t["part"] - 1]
        rec = ten.info_offset
        want_name = text_bytes(t, "name")
        (nlen,) = struct.unpack("<Q", file_range(f, rec, 8))
        assert nlen == len(want_name) and file_range(f, rec + 8, nlen) == want_name, name
        body = file_range(f, rec + 8 + nlen, 4 + 8 * t["n_dims"] + 12)
        nd, *rest = struct.unpack(f"<I{t['n_dims']}qIQ", body)
        assert (nd, tuple(rest[:-2]), rest[-2], rest[-1]) == (t["n_dims"], tuple(t["shape"]), t["type_id"], t["offset"])
        data = ten.data
        assert isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 1
        assert data.shape == (t["n_bytes"],) and not data.flags.writeable
        assert data.tobytes() == file_range(parts[t["part"] - 1], t["absolute_offset"], t["n_bytes"])
        if dump and minfer.can_dequantize(t["type_id"]):
            got = ten.to_numpy()
            assert got.dtype == np.float32 and got.shape == ten.numpy_shape
            got_bits = np.ascontiguousarray(got).reshape(-1).view(np.uint32)
            raw = np.frombuffer(file_range(parts[t["part"] - 1], t["absolute_offset"], t["n_bytes"]), np.uint8)
            if t["type"] == "f32":  # the file's own bits
                assert np.array_equal(got_bits, raw.view("<u4")), name
            elif t["type"] == "f16":  # widened exactly (NaN stays NaN)
                w = raw.view("<f2").astype(np.float32)
                assert np.array_equal(np.isnan(got.reshape(-1)), np.isnan(w)), name
                assert np.array_equal(got_bits[~np.isnan(w)], w.view(np.uint32)[~np.isnan(w)]), name
            # the C++ library's values (one process per tensor): every tensor of other types, and
            # the first two of each type
            dumped[t["type"]] = dumped.get(t["type"], 0) + 1
            if dumped[t["type"]] <= 2 or t["type"] not in ("f32", "f16"):
                ref = cli_dump(cli, parts[0], name, tmp / "dump.f32")
                assert got.size == ref.size
                assert np.array_equal(got_bits, ref.view(np.uint32)), name
    return len(want)


def check_parts(model, doc: dict):
    assert len(model.parts) == doc["n_parts"]
    assert model.file_bytes == doc["file_bytes"]
    assert not model.is_remote and model.fetched_bytes == 0 and model.requests == 0
    for p, w in zip(model.parts, doc["parts"]):
        assert isinstance(p, minfer.Part)
        assert py_bytes(p.path) == text_bytes(w, "path")
        assert (p.version, p.alignment, p.file_size, p.data_offset, p.data_size, p.n_kv, p.n_tensors,
                p.trailing_bytes) == (w["version"], w["alignment"], w["size"], w["data_offset"], w["data_size"],
                                      w["n_kv"], w["n_tensors"], w["trailing_bytes"])
        assert p.complete
        whole = p.data  # the whole file, zero-copy
        assert isinstance(whole, np.ndarray) and whole.dtype == np.uint8 and not whole.flags.writeable
        with open(p.path.encode("utf-8", "surrogateescape"), "rb") as fh:
            assert whole.tobytes() == fh.read()


# ---- the real files ---------------------------------------------------------------------------------

def test_there_are_real_files():
    if not REAL:
        pytest.skip("no real files (../shared/fixtures/real is absent): nothing to compare")
    assert ROWS, "REFERENCE.txt is missing beside the real files"
    assert {p.name for p in REAL} <= set(ROWS), "a real file without a REFERENCE.txt row"


@pytest.mark.parametrize("path", REAL, ids=_ids(REAL))
def test_real_file(path: Path, minfer_cli: Path, tmp_path: Path):
    verdict, ref = ROWS.get(path.name, (None, {}))
    rc, code, message = cli_verdict(minfer_cli, path)
    if rc != 0:
        # Refused by the C++ library: the same error from Python, with the tool's class and code.
        assert verdict != "ACCEPTED", f"llama.cpp accepts {path.name} but minfer info refuses it ({code})"
        cls = GGUFIOError if code in IO_CODES else InvalidFileError
        assert (rc == 3) == (cls is GGUFIOError)
        for mmap in (True, False):
            with pytest.raises(GGUFError) as ei:
                minfer.open(path, mmap=mmap)
            e = ei.value
            assert type(e) is cls, (type(e), cls)
            assert e.code == code
            assert e.exit_code == rc
            assert str(e) == message
            assert e.file == str(path)
            at = re.search(r" at byte (\d+):", message)
            if at:
                assert e.offset == int(at.group(1))
            assert isinstance(e, ValueError) == (cls is InvalidFileError)
            assert isinstance(e, OSError) == (cls is GGUFIOError)
        return

    doc = cli_json(minfer_cli, path)
    for mmap in (True, False):
        with minfer.open(path, mmap=mmap) as model:
            assert model.path == str(path)
            p = model.parts[0]
            if verdict == "ACCEPTED":  # llama.cpp's own parse
                assert p.n_kv == int(ref["n_kv"])
                assert p.n_tensors == int(ref["n_tensors"])
                assert p.data_offset == int(ref["data_offset"])
                assert p.alignment == int(ref["alignment"])
                assert p.version == int(ref["version"])
                assert p.file_size == int(ref["size"]) == path.stat().st_size
                assert len(model.tensors) == int(ref["n_tensors"])
                md = model.metadata
                toks = md["tokenizer.ggml.tokens"] if "tokenizer.ggml.tokens" in md else []
                assert len(toks) == int(ref["n_vocab"])
                arch = md["general.architecture"] if "general.architecture" in md else "(none)"
                assert arch == ref["arch"]
            check_parts(model, doc)
            check_metadata(model, doc, path)
            # values through the CLI once (mapped), bytes in both modes
            check_tensors(model, doc, [path], tmp_path, minfer_cli, dump=mmap)
        assert model.closed


def test_accepted_rows_all_open():
    """Every file llama.cpp accepts opens (the divergences of docs/DIFFERENTIAL.md are refusals of
    files llama.cpp also refuses, or extra checks on files not among these)."""
    if not REAL:
        pytest.skip("no real files")
    accepted = [p for p in REAL if ROWS.get(p.name, ("",))[0] == "ACCEPTED"]
    assert accepted
    for p in accepted:
        with minfer.open(p) as m:
            assert len(m.metadata) >= 0


# ---- the sample model (q4_0, q8_0, f16, f32 tensors) and split sets ---------------------------------

def test_sample_model_equals_the_cli(sample_model: Path, minfer_cli: Path, tmp_path: Path):
    doc = cli_json(minfer_cli, sample_model)
    with minfer.open(sample_model) as model:
        check_parts(model, doc)
        assert check_metadata(model, doc, sample_model) == 24
        assert check_tensors(model, doc, [sample_model], tmp_path, minfer_cli) == 27
        types = {model.tensors[n].type for n in model.tensors}
        assert {TensorType.Q4_0, TensorType.F32}.issubset(types), types


@pytest.mark.parametrize("how", [["--split-max-tensors", "5"], ["--split-max-size", "40K"],
                                 ["--split-max-tensors", "10", "--no-tensor-first-split"]],
                         ids=["max-tensors-5", "max-size-40K", "no-tensor-first-split"])
def test_split_set(how, sample_model: Path, minfer_cli: Path, tmp_path: Path):
    prefix = tmp_path / "sample"
    r = subprocess.run([str(minfer_cli), "split", str(sample_model), str(prefix), "--quiet", *how],
                       capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    files = sorted(tmp_path.glob("sample-*-of-*.gguf"))
    n = len(files)
    assert n >= 3, files
    assert [f.name for f in files] == [f"sample-{i:05d}-of-{n:05d}.gguf" for i in range(1, n + 1)]
    doc = cli_json(minfer_cli, files[0])
    assert doc["n_parts"] == n

    with minfer.open(sample_model) as whole, minfer.open(files[0]) as split:
        assert len(split.parts) == n
        assert [Path(p.path).name for p in split.parts] == [f.name for f in files]
        assert [p.file_size for p in split.parts] == [f.stat().st_size for f in files]
        assert split.file_bytes == sum(f.stat().st_size for f in files)
        check_parts(split, doc)
        check_metadata(split, doc, files[0])
        check_tensors(split, doc, files, tmp_path, minfer_cli, dump=False)
        md = split.metadata
        assert md["split.no"] == 0 and md["split.count"] == n and md["split.tensors.count"] == len(whole.tensors)
        assert md.raw("split.count").type == ValueType.UINT16
        # part 1 keeps the whole model's metadata
        for k in whole.metadata:
            assert k in md
        assert list(split.tensors) == list(whole.tensors)
        seen_parts = set()
        for name in split.tensors:
            t, w = split.tensors[name], whole.tensors[name]
            seen_parts.add(t.part)
            assert 0 <= t.part < n
            assert (t.type, t.shape, t.n_bytes, t.strides) == (w.type, w.shape, w.n_bytes, w.strides)
            assert t.data.tobytes() == w.data.tobytes(), name
            assert t.offset == split.parts[t.part].data_offset + t.data_offset
            if minfer.can_dequantize(int(t.type)):
                assert np.array_equal(t.to_numpy().view(np.uint32), w.to_numpy().view(np.uint32)), name
        if "--no-tensor-first-split" in how:
            assert 0 not in seen_parts and split.parts[0].n_tensors == 0
        assert seen_parts == set(range(1 if "--no-tensor-first-split" in how else 0, n))
        assert sum(p.n_tensors for p in split.parts) == len(whole.tensors)

    # A later part alone is refused as the tool refuses it.
    rc, code, message = cli_verdict(minfer_cli, files[1])
    assert rc == 1 and code == "split_not_first"
    with pytest.raises(InvalidFileError) as ei:
        minfer.open(files[1])
    assert ei.value.code == code and str(ei.value) == message

    # A part gone: GGUFIOError split_part_missing, as `minfer info` says (exit 3).
    os.remove(files[-1])
    rc, code, message = cli_verdict(minfer_cli, files[0])
    assert (rc, code) == (3, "split_part_missing")
    with pytest.raises(GGUFIOError) as ei:
        minfer.open(files[0])
    e = ei.value
    assert e.code == code and str(e) == message and e.exit_code == 3
    assert e.part == n and e.n_parts == n
    assert e.file == str(files[-1])
