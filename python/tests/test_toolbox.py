"""minfer.toolbox: edit, split, merge, hash, verify, estimate, diff as Python functions.

Every result is checked against something computed without the code under test: the minfer tool's
own output (--json, its lines, or the files it writes, byte for byte), files written byte by byte
with gguf_bytes.py, and hashlib / numpy formulas."""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import os
import re
import shutil
import struct
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import gguf_bytes as gb
from minfer import toolbox
from minfer.errors import GGUFError, GGUFIOError, InvalidFileError, RequestError


# ------------------------------------------------------------------------------------------ helpers


# The tool carries its own sanitizer runtime in an ASan build: the one preloaded into the
# interpreter (python/tests/CMakeLists.txt) must not reach it.
_TOOL_ENV = dict(os.environ)  # conftest took the sanitizer preload out


def cli(minfer_cli, *args, check=None):
    """Run the minfer tool; returns the CompletedProcess (stdout/stderr as bytes)."""
    r = subprocess.run([str(minfer_cli), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=_TOOL_ENV)
    if check is not None:
        assert r.returncode == check, (r.returncode, r.stderr.decode(errors="replace"))
    return r


def cli_json(minfer_cli, *args, check=None):
    return json.loads(cli(minfer_cli, *args, "--json", check=check).stdout)


def jsonish(o):
    """A result as JSON gives it: NaN/Inf floats as the strings the tool writes, tuples as lists."""
    if isinstance(o, float):
        if math.isnan(o):
            return "nan"
        if math.isinf(o):
            return "inf" if o > 0 else "-inf"
        return o
    if isinstance(o, dict):
        return {k: jsonish(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonish(v) for v in o]
    return o


def sha256(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def f16_bits(x: float) -> bytes:
    return np.array([x], dtype="<f2").tobytes()


@pytest.fixture()
def sample(sample_model, tmp_path) -> Path:
    """A private copy of the sample model (tests may write beside it)."""
    return Path(shutil.copy(sample_model, tmp_path / "sample.gguf"))


def small_model(tmp_path, name="small.gguf", extra_kvs=(), tensors=None) -> Path:
    """A hand-made model: one key of every scalar type, a string array, and f32/f16/q8_0 tensors."""
    kvs = [("general.architecture", gb.STRING, "llama"),
           ("t.u8", gb.U8, 200), ("t.i8", gb.I8, -100), ("t.u16", gb.U16, 60000), ("t.i16", gb.I16, -30000),
           ("t.u32", gb.U32, 4000000000), ("t.i32", gb.I32, -2000000000), ("t.f32", gb.F32, 0.5),
           ("t.bool", gb.BOOL, 1), ("t.str", gb.STRING, "hello"), ("t.u64", gb.U64, 2**63 + 5),
           ("t.i64", gb.I64, -2**62), ("t.f64", gb.F64, 0.1),
           ("tokenizer.ggml.tokens", gb.ARRAY, (gb.STRING, ["<s>", "</s>", "hi", "42"])),
           ("t.arr", gb.ARRAY, (gb.U32, [1, 2, 3]))] + list(extra_kvs)
    if tensors is None:
        tensors = [("a", [8], 0, np.arange(8, dtype="<f4").tobytes()),
                   ("b", [4, 2], 1, np.arange(8, dtype="<f2").tobytes()),
                   ("c", [32], 8, f16_bits(0.5) + bytes(range(32)))]
    return write(tmp_path / name, gb.gguf(kvs, tensors))


# --------------------------------------------------------------------------------------------- edit


def test_edit_output_is_byte_identical_to_the_cli(minfer_cli, sample, tmp_path):
    py_out, cli_out = tmp_path / "py.gguf", tmp_path / "cli.gguf"
    r = toolbox.edit(sample, py_out, set={"qwen2.context_length": 8192, "x.y": ("u32", 5)},
                     delete=["general.size_label"], chat_template="{{ x }}",
                     special_tokens={"eos": "<|endoftext|>"}, name="My model")
    cli(minfer_cli, "edit", sample, "-o", cli_out, "--set", "qwen2.context_length=8192", "--set", "x.y:u32=5",
        "--delete", "general.size_label", "--chat-template", "{{ x }}", "--special-token", "eos", "<|endoftext|>",
        "--name", "My model", check=0)
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert r.written and r.output == str(py_out) and r.file_size == py_out.stat().st_size
    assert r.n_tensors == 27
    changes = {c.key: c for c in r.diff}
    assert changes["general.name"].before == {"type": "string", "value": "Minfer Sample Qwen2"}
    assert changes["general.name"].after == {"type": "string", "value": "My model"}
    assert changes["general.size_label"].change == "removed" and changes["general.size_label"].after is None
    assert changes["x.y"].change == "added" and changes["x.y"].after == {"type": "u32", "value": 5}
    assert changes["qwen2.context_length"].after == {"type": "u32", "value": 8192}
    assert changes["tokenizer.ggml.eos_token_id"].before["value"] == 511
    assert changes["tokenizer.ggml.eos_token_id"].after["value"] == 509


def test_edit_cli_texts_and_typed_values_of_every_type(minfer_cli, tmp_path):
    src = small_model(tmp_path)
    out = tmp_path / "out.gguf"
    typed = {"n.u8": ("u8", 255), "n.i8": ("i8", -128), "n.u16": ("u16", 65535), "n.i16": ("i16", -32768),
             "n.u32": ("u32", 2**32 - 1), "n.i32": ("i32", -2**31), "n.u64": ("u64", 2**64 - 1),
             "n.i64": ("i64", -2**63), "n.f32": ("f32", 0.1), "n.f64": ("f64", 0.1), "n.bool": ("bool", False),
             "n.str": ("str", "ü → x")}
    existing = {"t.u8": 7, "t.i8": -7, "t.f32": 1.5, "t.bool": False, "t.str": "bye", "t.u64": 2**64 - 1}
    toolbox.edit(src, out, set={**existing, **typed})
    meta = cli_json(minfer_cli, "info", out, check=0)["metadata"]
    for k, (t, v) in typed.items():
        assert meta[k]["type"] == {"str": "string"}.get(t, t)
        if t == "f32":
            assert np.float32(meta[k]["value"]) == np.float32(v)
        else:
            assert meta[k]["value"] == v
    for k, v in existing.items():
        assert meta[k]["value"] == v
    assert meta["t.u8"]["type"] == "u8"  # an existing key keeps its type
    # The same through the command's texts gives the same bytes.
    out2, out3 = tmp_path / "texts.gguf", tmp_path / "cli.gguf"
    toolbox.edit(src, out2, set=["t.u8=7", "n.k:i16=-5", "n.s:str=a=b"])
    cli(minfer_cli, "edit", src, "-o", out3, "--set", "t.u8=7", "--set", "n.k:i16=-5", "--set", "n.s:str=a=b", check=0)
    assert out2.read_bytes() == out3.read_bytes()


@pytest.mark.parametrize("kwargs, code, exit_code", [
    (dict(set={"no.such": 1}), "key_not_found", 1),
    (dict(delete=["no.such"]), "key_not_found", 1),
    (dict(set={"t.u8": 300}), "bad_value_text", 2),
    (dict(set={"t.u32": -1}), "bad_value_text", 2),
    (dict(set={"t.bool": 1}), "bad_value_text", 2),
    (dict(set={"t.f32": float("nan")}), "bad_value_text", 2),
    (dict(set={"t.arr": 1}), "bad_value_text", 2),
    (dict(set={"a.b": ("u33", 1)}), "bad_value_text", 2),
    (dict(set=["no equals sign"]), "bad_value_text", 2),
    (dict(set={"general.alignment": ("u32", 3)}), "bad_value_text", 2),
    (dict(special_tokens={"eos": 99}), "token_not_found", 1),
    (dict(special_tokens={"eos": "absent"}), "token_not_found", 1),
    (dict(special_tokens={"nonsense": 1}), "bad_value_text", 2),
])
def test_edit_refusals_carry_the_cli_code(minfer_cli, tmp_path, kwargs, code, exit_code):
    src = small_model(tmp_path)
    out = tmp_path / "out.gguf"
    with pytest.raises(RequestError) as e:
        toolbox.edit(src, out, **kwargs)
    assert e.value.code == code and e.value.exit_code == exit_code
    assert isinstance(e.value, ValueError) and isinstance(e.value, GGUFError)
    assert not out.exists()


def test_edit_cli_names_the_same_codes(minfer_cli, tmp_path):
    src = small_model(tmp_path)
    for args, code, exit_code in [(["--set", "no.such=1"], "key_not_found", 1),
                                  (["--set", "t.u8=300"], "bad_value_text", 2),
                                  (["--special-token", "eos", "99"], "token_not_found", 1)]:
        r = cli(minfer_cli, "edit", src, "-o", tmp_path / "o.gguf", *args)
        assert r.returncode == exit_code and f"[{code}]".encode() in r.stderr


def test_edit_usage_errors(sample, tmp_path):
    out = tmp_path / "out.gguf"
    out.write_bytes(b"old")
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, out, name="x")
    assert e.value.code == "usage" and e.value.exit_code == 2 and out.read_bytes() == b"old"
    toolbox.edit(sample, out, name="x", overwrite=True)
    assert out.read_bytes()[:4] == b"GGUF"
    for kwargs in (dict(output=sample), dict(output=tmp_path / "link.gguf")):
        if kwargs["output"].name == "link.gguf":
            os.link(sample, kwargs["output"])  # the same file by inode
        before = sha256(sample)
        with pytest.raises(RequestError) as e:
            toolbox.edit(sample, name="x", overwrite=True, **kwargs)
        assert e.value.code == "usage" and sha256(sample) == before
    with pytest.raises(RequestError, match="no change"):
        toolbox.edit(sample, tmp_path / "n.gguf")
    with pytest.raises(RequestError, match="no output"):
        toolbox.edit(sample, name="x")
    with pytest.raises(RequestError):
        toolbox.edit(sample, tmp_path / "r.gguf", name="x", reserve="2GiB")


def test_edit_failed_write_leaves_no_output(sample, tmp_path):
    out = tmp_path / "missing-dir" / "out.gguf"
    with pytest.raises(GGUFIOError) as e:
        toolbox.edit(sample, out, name="x")
    assert e.value.code == "io_error" and e.value.exit_code == 3 and isinstance(e.value, OSError)
    assert not out.parent.exists()


def test_edit_in_place_without_room_changes_nothing(minfer_cli, sample, tmp_path):
    before = sha256(sample)
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, in_place=True, description="x" * 200)
    assert e.value.code == "no_room_in_place" and e.value.exit_code == 1
    assert e.value.found - e.value.expected > 0
    assert sha256(sample) == before
    assert not Path(str(sample) + ".minfer-undo").exists()
    # The dry run says so with the same figures as the tool.
    r = toolbox.edit(sample, dry_run=True, in_place=True, description="x" * 200)
    assert not r.written and r.in_place_fits is False and r.in_place_error == "no_room_in_place"
    text = cli(minfer_cli, "edit", sample, "--dry-run", "--in-place", "--description", "x" * 200, check=0).stdout
    assert f"does not fit: {r.in_place_missing} bytes missing".encode() in text
    assert sha256(sample) == before


def test_edit_in_place_with_reserve_matches_the_cli(minfer_cli, sample, tmp_path):
    roomy = tmp_path / "roomy.gguf"
    r = toolbox.edit(sample, roomy, reserve="4KiB", name="Roomy")
    assert r.reserve == 4096
    cli_roomy = tmp_path / "cli-roomy.gguf"
    cli(minfer_cli, "edit", sample, "-o", cli_roomy, "--reserve", "4KiB", "--name", "Roomy", check=0)
    assert roomy.read_bytes() == cli_roomy.read_bytes()
    dry = toolbox.edit(roomy, dry_run=True, in_place=True, chat_template="{{ messages }}" * 20)
    assert dry.in_place_fits is True and dry.in_place_padding > 0
    r = toolbox.edit(roomy, in_place=True, chat_template="{{ messages }}" * 20)
    assert r.written and r.in_place and r.output == str(roomy) and r.in_place_padding == dry.in_place_padding
    cli(minfer_cli, "edit", cli_roomy, "--in-place", "--chat-template", "{{ messages }}" * 20, check=0)
    assert roomy.read_bytes() == cli_roomy.read_bytes()
    assert roomy.stat().st_size == sample.stat().st_size + (r.head_bytes - 13664)
    assert toolbox.edit_recover(roomy) == "nothing_to_do"


def test_edit_refuses_a_model_with_an_undo_journal(sample, tmp_path):
    journal = Path(str(sample) + ".minfer-undo")
    journal.write_bytes(b"not a journal")
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, tmp_path / "o.gguf", name="x")
    assert e.value.code == "journal_present"
    with pytest.raises(RequestError) as e:
        toolbox.edit_recover(sample)
    assert e.value.code == "journal_invalid"


# ---- issue 21: edit never writes a model its loader or llama.cpp's refuses ----


def test_edit_known_keys_keep_llama_cpps_type(minfer_cli, sample, tmp_path):
    out = tmp_path / "o.gguf"
    for change, expected in (({"qwen2.context_length": ("str", "hello")}, "u32"),
                             ({"qwen2.block_count": ("bool", True)}, "u32"),
                             ({"general.name": ("u32", 5)}, "str"),
                             ({"tokenizer.ggml.tokens": ("str", "x")}, "an array of str")):
        with pytest.raises(RequestError) as e:
            toolbox.edit(sample, out, set=change)
        assert e.value.code == "bad_value_text"
        assert f"expected {expected}, given " in str(e.value)
        assert not out.exists()
    # The same refusal through the command's texts, as the CLI.
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, out, set=["qwen2.context_length:str=hello"])
    assert "llama.cpp reads qwen2.context_length as a u32" in str(e.value)
    cli(minfer_cli, "edit", sample, "-o", out, "--set", "qwen2.context_length:str=hello", check=2)
    assert not out.exists()
    # The right type is an edit as before.
    r = toolbox.edit(sample, out, set={"qwen2.context_length": ("u32", 12345)})
    [d] = [d for d in r.diff if d.key == "qwen2.context_length"]
    assert r.written and d.forced_over is None and d.after == {"type": "u32", "value": 12345}


def test_edit_allow_type_change_forces_and_marks(minfer_cli, sample, tmp_path):
    out = tmp_path / "o.gguf"
    r = toolbox.edit(sample, out, set={"qwen2.context_length": ("str", "hello")}, allow_type_change=True)
    assert r.written
    [d] = [d for d in r.diff if d.key == "qwen2.context_length"]
    assert d.forced_over == "u32" and d.after == {"type": "string", "value": "hello"}
    assert any("llama.cpp reads it as u32" in w for w in r.warnings)
    cli_out = tmp_path / "cli.gguf"
    text = cli(minfer_cli, "edit", sample, "-o", cli_out, "--set", "qwen2.context_length:str=hello",
               "--allow-type-change", check=0).stdout
    assert b"[type forced by --allow-type-change; expected u32]" in text
    assert out.read_bytes() == cli_out.read_bytes()


def test_edit_split_keys_are_refused(minfer_cli, sample, tmp_path):
    out = tmp_path / "o.gguf"
    for change in ({"split.count": ("u16", 3)}, {"split.no": ("u16", 0)}):
        for allow in (False, True):
            with pytest.raises(RequestError) as e:
                toolbox.edit(sample, out, set=change, allow_type_change=allow)
            assert e.value.code == "bad_value_text"
            assert "only minfer split and minfer merge write them" in str(e.value)
    assert not out.exists()


def test_edit_reserve_alone_is_an_edit(minfer_cli, sample, tmp_path):
    out = tmp_path / "roomy.gguf"
    r = toolbox.edit(sample, out, reserve="4KiB")
    assert r.written and r.reserve == 4096
    cli_out = tmp_path / "cli-roomy.gguf"
    cli(minfer_cli, "edit", sample, "-o", cli_out, "--reserve", "4KiB", check=0)
    assert out.read_bytes() == cli_out.read_bytes()
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, tmp_path / "none.gguf")
    assert e.value.code == "usage"


def test_edit_in_place_without_change_writes_nothing(sample, tmp_path):
    roomy = tmp_path / "roomy.gguf"
    toolbox.edit(sample, roomy, reserve="4KiB", name="Roomy")
    before = roomy.read_bytes()
    mtime = roomy.stat().st_mtime_ns
    r = toolbox.edit(roomy, in_place=True, name="Roomy")
    assert r.diff == [] and r.written is False and r.head_bytes is None
    assert roomy.read_bytes() == before and roomy.stat().st_mtime_ns == mtime
    assert not Path(str(roomy) + ".minfer-undo").exists()


def test_edit_damaged_journal_says_what_to_do(sample, tmp_path):
    journal = Path(str(sample) + ".minfer-undo")
    journal.write_bytes(b"not a journal")
    before = sample.read_bytes()
    with pytest.raises(RequestError) as e:
        toolbox.edit_recover(sample)
    assert e.value.code == "journal_invalid"
    assert "minfer verify" in str(e.value) and "edit_discard_journal" in str(e.value)
    assert toolbox.edit_discard_journal(sample) is True
    assert not journal.exists() and sample.read_bytes() == before
    assert toolbox.edit_discard_journal(sample) is False
    assert toolbox.edit(sample, tmp_path / "o.gguf", name="x").written


def test_edit_wrong_python_types_raise_type_error(sample, tmp_path):
    out = tmp_path / "o.gguf"
    for kwargs in (dict(set={"general.name": object()}), dict(set={1: "x"}), dict(set="general.name=x"),
                   dict(delete="general.name"), dict(name=5), dict(special_tokens={"eos": 1.5}),
                   dict(special_tokens=["eos"]), dict(set={"x": ("u32",)}), dict(set={"x": (3.5, 1)}),
                   dict(name="x", in_place="yes"), dict(name="x", reserve=1.5)):
        with pytest.raises(TypeError):
            toolbox.edit(sample, out, **kwargs)
    with pytest.raises(TypeError):
        toolbox.edit(12345, out, name="x")
    with pytest.raises(TypeError):
        toolbox.edit_recover(None)
    assert not out.exists()


def test_edit_of_a_split_set(minfer_cli, sample, tmp_path):
    r = toolbox.split(sample, tmp_path / "s", max_size="60K")
    first = r.parts[0].path
    with pytest.raises(RequestError) as e:  # a lone part 1 would load only beside the others
        toolbox.edit(first, tmp_path / "o.gguf", name="x")
    assert e.value.code == "usage" and not (tmp_path / "o.gguf").exists()
    assert cli(minfer_cli, "edit", first, "-o", tmp_path / "o.gguf", "--name", "x").returncode == 2
    with pytest.raises(RequestError) as e:  # the split keys describe the set
        toolbox.edit(first, in_place=True, set={"split.count": 5})
    assert e.value.code == "bad_value_text"
    others = [sha256(p.path) for p in r.parts[1:]]
    (tmp_path / "cli").mkdir()
    copy = [Path(shutil.copy(p.path, tmp_path / "cli")) for p in r.parts][0]
    done = toolbox.edit(first, in_place=True, delete=["general.size_label"], name="x")
    assert done.written and [sha256(p.path) for p in r.parts[1:]] == others
    cli(minfer_cli, "edit", copy, "--in-place", "--delete", "general.size_label", "--name", "x", check=0)
    assert Path(first).read_bytes() == copy.read_bytes()
    assert toolbox.diff(first, sample)["summary"]["tensors_identical"] == 27


def test_the_extension_module_refuses_wrong_types_itself():
    from minfer import _toolbox

    with pytest.raises(TypeError):
        _toolbox.edit(1, 2, 3, 4, 5, 6, 7)
    with pytest.raises(TypeError):
        _toolbox.hash(b"x", "xxh64", True, None, False, [], 0)
    with pytest.raises(TypeError):
        _toolbox.split(b"x", b"p", -1, None, False, True, False)
    with pytest.raises(TypeError):
        _toolbox.estimate(b"x", None, 2048, 512, "f16", "f16", 1, "auto", None, "soon")
    with pytest.raises(ValueError):
        _toolbox.edit(b"x", b"", [("bogus", b"", b"", b"")], 0, False, True, False, False)


# ---------------------------------------------------------------------------------- split and merge


@pytest.mark.parametrize("py_kwargs, cli_args", [
    (dict(max_size="60K"), ["--split-max-size", "60K"]),
    (dict(max_size=50_000), ["--split-max-size", "50000"]),
    (dict(max_tensors=10), ["--split-max-tensors", "10"]),
    (dict(max_tensors=8, no_tensor_first_split=True), ["--split-max-tensors", "8", "--no-tensor-first-split"]),
])
def test_split_is_byte_identical_to_the_cli_and_merges_back(minfer_cli, sample, tmp_path, py_kwargs, cli_args):
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    plan = toolbox.split(sample, tmp_path / "py" / "m", dry_run=True, **py_kwargs)
    assert not plan.written and not list((tmp_path / "py").iterdir())
    r = toolbox.split(sample, tmp_path / "py" / "m", **py_kwargs)
    cli(minfer_cli, "split", sample, tmp_path / "cli" / "m", *cli_args, check=0)
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert sorted(p.name for p in (tmp_path / "py").iterdir()) == names
    assert [Path(p.path).name for p in r.parts] == names
    for n in names:
        assert (tmp_path / "py" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes()
    assert [p.file_size for p in plan.parts] == [(tmp_path / "py" / n).stat().st_size for n in names]
    assert r.total_bytes == sum(p.file_size for p in r.parts)
    assert sum(p.n_tensors for p in r.parts) == r.n_tensors == 27
    if "max_size" in py_kwargs:
        limit = toolbox.parse_size(py_kwargs["max_size"])
        assert all(p.file_size <= limit for p in r.parts)
    # merge: the original bytes back, as the tool writes them
    merged, cli_merged = tmp_path / "merged.gguf", tmp_path / "cli-merged.gguf"
    dry = toolbox.merge(r.parts[0].path, merged, dry_run=True)
    assert not merged.exists() and dry.file_size == sample.stat().st_size
    m = toolbox.merge(r.parts[0].path, merged)
    cli(minfer_cli, "merge", tmp_path / "cli" / names[0], cli_merged, check=0)
    assert merged.read_bytes() == cli_merged.read_bytes() == sample.read_bytes()
    assert m.written and m.n_parts == len(names) and m.n_tensors == 27 and m.file_size == sample.stat().st_size


def test_split_oversized_tensor_warns(minfer_cli, sample, tmp_path):
    r = toolbox.split(sample, tmp_path / "o", max_size="20K", dry_run=True)
    over = [p for p in r.parts if p.oversized]
    assert over and len(r.warnings) == len(over)
    text = cli(minfer_cli, "split", sample, tmp_path / "o", "--split-max-size", "20K", "--dry-run", check=0).stderr
    assert text.count(b"Warning: part") == len(over)
    assert r.warnings[0].replace("max_size", "--split-max-size").encode() in text


def test_split_refusals(sample, tmp_path):
    existing = tmp_path / "o-00002-of-00003.gguf"
    existing.write_bytes(b"keep")
    with pytest.raises(RequestError) as e:
        toolbox.split(sample, tmp_path / "o", max_size="60K")
    assert e.value.code == "usage" and existing.read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([existing.name, sample.name])
    for bad in ("G", "-1", "0", "10k", "1.5", " 5", "1e3", "10X", 2**64, 0):
        with pytest.raises(RequestError):
            toolbox.split(sample, tmp_path / "p", max_size=bad)
    with pytest.raises(RequestError):
        toolbox.split(sample, tmp_path / "p", max_tensors=0)
    with pytest.raises(RequestError):
        toolbox.split(sample, tmp_path / "p", max_tensors=1, max_size=100000)
    with pytest.raises(GGUFIOError):
        toolbox.split(sample, tmp_path / "no-dir" / "p", max_size="60K")
    assert not (tmp_path / "no-dir").exists()
    for bad in (dict(max_size=1.5), dict(max_tensors="3"), dict(dry_run=1)):
        with pytest.raises(TypeError):
            toolbox.split(sample, tmp_path / "p", **bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([existing.name, sample.name])


def test_parse_size_matches_the_documented_examples():
    assert toolbox.parse_size("2G") == 2_000_000_000
    assert toolbox.parse_size("1.5GiB") == 1_610_612_736
    assert toolbox.parse_size("500000") == 500_000
    assert toolbox.parse_size("300K") == 300_000
    assert toolbox.parse_size("0.5KiB") == 512
    assert toolbox.parse_size("1.0009K") == 1000


def test_parse_size_reads_as_the_cli_does(minfer_cli, sample, tmp_path):
    # one parser (minfer::toolbox::parse_size) for both: the same refusals and the same reasons
    for text, why in (("1." + "0" * 19 + "K", "too many decimals"), ("1.5", "a number of bytes must be whole"),
                      ("1kb", "unknown unit 'kb'"), ("0K", "at least 1 byte"), ("G", "must start with a number")):
        with pytest.raises(RequestError) as e:
            toolbox.parse_size(text, "max_size")
        assert e.value.code == "usage" and why in str(e.value), (text, str(e.value))
        res = cli(minfer_cli, "split", sample, tmp_path / "p", "--split-max-size", text)
        assert res.returncode == e.value.exit_code == 2 and why.encode() in res.stderr, (text, res.stderr)


def test_merge_refusals(minfer_cli, sample, tmp_path):
    with pytest.raises(InvalidFileError) as e:
        toolbox.merge(sample, tmp_path / "m.gguf")
    assert e.value.code == "split_bad_key"
    res = cli(minfer_cli, "merge", sample, tmp_path / "m.gguf")
    assert res.returncode == e.value.exit_code == 1 and b"[split_bad_key]" in res.stderr
    r = toolbox.split(sample, tmp_path / "s", max_size="60K")
    with pytest.raises(RequestError) as e:
        toolbox.merge(r.parts[0].path, r.parts[1].path, overwrite=True)
    assert e.value.code == "usage"
    os.remove(r.parts[2].path)
    with pytest.raises(GGUFIOError) as e:
        toolbox.merge(r.parts[0].path, tmp_path / "m.gguf")
    assert e.value.code == "split_part_missing" and e.value.exit_code == 3
    res = cli(minfer_cli, "merge", r.parts[0].path, tmp_path / "m.gguf")
    assert res.returncode == 3 and b"[split_part_missing]" in res.stderr
    assert not (tmp_path / "m.gguf").exists()


# --------------------------------------------------------------------------------------------- hash


@pytest.mark.parametrize("kinds, flags", [
    (None, []), (["all"], ["--all"]), (["xxh3", "uuid"], ["--xxh3", "--uuid"]), (["sha256"], ["--sha256"]),
])
def test_hash_lines_equal_the_cli(minfer_cli, sample, kinds, flags):
    for per_tensor in (True, False):
        r = toolbox.hash(sample, kinds=kinds, per_tensor=per_tensor)
        out = cli(minfer_cli, "hash", sample, *flags, *([] if per_tensor else ["--no-layer"]), check=0).stdout
        assert r.text().encode() == out and r.exit_code == 0


def test_hash_digests_are_hashlib_s(tmp_path):
    src = small_model(tmp_path)
    r = toolbox.hash(src, kinds=["sha1", "sha256"], file_sha256=True)
    datas = {"a": np.arange(8, dtype="<f4").tobytes(), "b": np.arange(8, dtype="<f2").tobytes(),
             "c": f16_bits(0.5) + bytes(range(32))}
    assert [t["name"] for t in r.tensors] == ["a", "b", "c"]
    for t in r.tensors:
        assert t["hashes"]["sha256"] == hashlib.sha256(datas[t["name"]]).hexdigest()
        assert t["hashes"]["sha1"] == hashlib.sha1(datas[t["name"]]).hexdigest()
    assert r.model["sha256"] == hashlib.sha256(b"".join(datas.values())).hexdigest()
    assert r.files == [{"part": 1, "path": str(src), "sha256": sha256(src), "expected": None, "match": None}]


def test_hash_check_and_expect(minfer_cli, sample, tmp_path):
    manifest = tmp_path / "m.manifest"
    manifest.write_bytes(cli(minfer_cli, "hash", "--sha256", sample, check=0).stdout)
    r = toolbox.hash(sample, check=manifest)
    out = cli(minfer_cli, "hash", sample, "--check", manifest, check=0).stdout
    assert r.text().encode() == out
    assert r.exit_code == 0 and r.check["outcome"] == "Success" and r.kinds == ["sha256"]
    # one tensor changed: a mismatch, as the tool says
    lines = manifest.read_text().splitlines()
    lines[1] = lines[1][:10] + ("0" if lines[1][10] != "0" else "1") + lines[1][11:]
    manifest.write_text("\n".join(lines) + "\n")
    r = toolbox.hash(sample, check=manifest)
    res = cli(minfer_cli, "hash", sample, "--check", manifest)
    assert r.text().encode() == res.stdout and r.exit_code == res.returncode == 1
    assert [l["status"] for l in r.check["lines"]].count("Mismatch") == 1
    # --expect
    good = sha256(sample)
    assert toolbox.hash(sample, expect=[good]).files[0]["match"] is True
    bad = toolbox.hash(sample, expect=["0" * 64])
    res = cli(minfer_cli, "hash", sample, "--expect", "0" * 64)
    assert bad.exit_code == res.returncode == 1 and bad.text().encode() == res.stdout
    with pytest.raises(RequestError) as e:
        toolbox.hash(sample, expect=["xyz"])
    assert e.value.code == "usage"
    with pytest.raises(RequestError):
        toolbox.hash(sample, expect=[good, good])
    # either case, as the CLI's --expect (one reading of a SHA-256, minfer::toolbox::parse_sha256)
    upper = toolbox.hash(sample, expect=[good.upper()])
    res = cli(minfer_cli, "hash", sample, "--expect", good.upper())
    assert upper.files[0]["match"] is True and upper.exit_code == res.returncode == 0
    assert upper.text().encode() == res.stdout


def test_hash_manifest_errors_keep_the_cli_exit_codes(minfer_cli, sample, tmp_path):
    empty = write(tmp_path / "empty.manifest", b"nothing known here\n")
    with pytest.raises(RequestError) as e:
        toolbox.hash(sample, check=empty)
    assert e.value.exit_code == cli(minfer_cli, "hash", sample, "--check", empty).returncode == 4
    malformed = write(tmp_path / "bad.manifest", b"sha256  nothex  x.gguf\n")
    with pytest.raises(RequestError) as e:
        toolbox.hash(sample, check=malformed)
    assert e.value.code == "manifest_bad_line"
    assert e.value.exit_code == cli(minfer_cli, "hash", sample, "--check", malformed).returncode == 5
    with pytest.raises(GGUFIOError) as e:
        toolbox.hash(sample, check=tmp_path / "absent.manifest")
    assert e.value.exit_code == 5


def test_hash_of_a_split_set_equals_the_merged_model(sample, tmp_path):
    r = toolbox.split(sample, tmp_path / "s", max_size="60K")
    a = toolbox.hash(r.parts[0].path, kinds=["sha256", "xxh64"])
    b = toolbox.hash(sample, kinds=["sha256", "xxh64"])
    assert a.model == b.model and a.tensors == b.tensors
    files = toolbox.hash(r.parts[0].path, file_sha256=True).files
    assert [f["sha256"] for f in files] == [sha256(p.path) for p in r.parts]


def test_hash_wrong_types_and_urls(sample):
    with pytest.raises(TypeError):
        toolbox.hash(sample, kinds=[1])
    with pytest.raises(TypeError):
        toolbox.hash(sample, threads="2")
    with pytest.raises(TypeError):
        toolbox.hash(object())
    with pytest.raises(RequestError):
        toolbox.hash(sample, kinds=["md5"])
    with pytest.raises(RequestError) as e:
        toolbox.hash("http://127.0.0.1:9/x.gguf")
    assert e.value.code == "bad_value_text"


@pytest.mark.parametrize("what", ["hash", "verify", "diff_values", "split"])
def test_long_work_releases_the_gil(tmp_path, what):
    """Another Python thread runs while the C++ work goes on."""
    big = np.zeros(6 << 20, dtype="<f4")
    kvs = [("general.architecture", gb.STRING, "llama")]
    src = write(tmp_path / "big.gguf", gb.gguf(kvs, [("z", [big.size], 0, big.tobytes())]))
    big[7] = 1.0
    other = write(tmp_path / "other.gguf", gb.gguf(kvs, [("z", [big.size], 0, big.tobytes())]))
    if what == "verify":  # every value of a q4_0 tensor converted (the scan of f32 is too quick to see)
        src = write(tmp_path / "q.gguf", gb.gguf(kvs, [("q", [32 << 20], 2, bytes(18) * (1 << 20))]))
    if what == "split":  # a part per tensor: 40 atomic writes, each synced
        src = write(tmp_path / "many.gguf", gb.gguf(kvs, [(f"t{i}", [8], 0, bytes(32)) for i in range(40)]))
    call = {"hash": lambda: toolbox.hash(src, kinds=["sha256", "sha1"], threads=1),
            "verify": lambda: toolbox.verify(src, values=True, threads=1),
            "diff_values": lambda: toolbox.diff(src, other, values=True),
            "split": lambda: toolbox.split(src, tmp_path / "s", max_tensors=1)}[what]
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    th.start()
    time.sleep(0.02)
    windows = []  # the calls, repeated until 0.3 s have passed (a release build is quick)
    while sum(t1 - t0 for t0, t1 in windows) < 0.3 and len(windows) < 40:
        if what == "split":
            for f in tmp_path.glob("s-*"):
                f.unlink()
        t0 = time.monotonic()
        call()
        windows.append((t0, time.monotonic()))
    stop.set()
    th.join()
    margin = 0.002  # the Python around the C++ call, where a held GIL may be handed over anyway
    inside = [t for t in ticks if any(t0 + margin < t < t1 - margin for t0, t1 in windows)]
    assert len(inside) >= 3, (windows, len(inside))


# ------------------------------------------------------------------------------------------- verify


def planted_model(tmp_path) -> Path:
    a = np.arange(8, dtype="<f4")
    a[3] = np.nan
    a[5] = np.inf
    b = np.array([1, 2, -np.inf, 4], dtype="<f2")
    c = f16_bits(0.5) + bytes(32) + f16_bits(np.nan) + bytes(32)
    tensors = [("ok", [4], 0, np.ones(4, dtype="<f4").tobytes()), ("a", [8], 0, a.tobytes()),
               ("b", [4], 1, b.tobytes()), ("c", [64], 8, c), ("z", [4], 0, bytes(16))]
    return write(tmp_path / "planted.gguf", gb.gguf([("general.architecture", gb.STRING, "llama")], tensors))


def test_verify_finds_what_was_planted_as_the_cli_does(minfer_cli, tmp_path):
    src = planted_model(tmp_path)
    r = toolbox.verify(src)
    assert r["verdict"] == "failed" and r["exit_code"] == 1
    assert r["findings"] == 4 and r["tensors_with_findings"] == 3 and r["warnings"] == 1
    reports = {t["name"]: t for t in r["tensor_reports"]}
    assert sorted(reports) == ["a", "b", "c", "z"]
    assert [(f["index"], f["kind"]) for f in reports["a"]["examples"]] == [(3, "nan"), (5, "inf")]
    assert math.isnan(reports["a"]["examples"][0]["value"]) and reports["a"]["examples"][1]["value"] == math.inf
    assert reports["b"]["examples"][0]["value"] == -math.inf and reports["b"]["examples"][0]["bits"] == "0xfc00"
    assert reports["c"]["blocks_poisoned"] == 1 and reports["c"]["examples"][0]["index"] == 1
    assert reports["c"]["examples"][0]["field"] == "d"
    assert reports["z"]["all_zero"] and reports["z"]["findings"] == 0
    res = cli(minfer_cli, "verify", src, "--json")
    assert res.returncode == 1 and jsonish(r) == json.loads(res.stdout)
    for kw, flags in ((dict(values=True, max_examples=1), ["--values", "--max-examples", "1"]),
                      (dict(max_examples=0, threads=1), ["--max-examples", "0", "--threads", "1"])):
        assert jsonish(toolbox.verify(src, **kw)) == cli_json(minfer_cli, "verify", src, *flags)


def test_verify_clean_model_with_download_checks(minfer_cli, sample, tmp_path):
    manifest = write(tmp_path / "m.manifest", cli(minfer_cli, "hash", "--sha256", sample, check=0).stdout)
    r = toolbox.verify(sample, manifest=manifest, file_sha256=[sha256(sample).upper()], mmap=False)
    assert r["verdict"] == "clean" and r["exit_code"] == 0
    assert r["manifest"]["outcome"] == "Success" and r["file_sha256"][0]["match"] is True
    assert jsonish(r) == cli_json(minfer_cli, "verify", sample, "--manifest", manifest, "--file-sha256",
                                  sha256(sample).upper(), "--no-mmap", check=0)
    bad = toolbox.verify(sample, file_sha256=["0" * 64])
    assert bad["verdict"] == "failed" and bad["file_sha256"][0]["match"] is False
    for kwargs in (dict(file_sha256=["xyz"]), dict(file_sha256=["0" * 64, "0" * 64]), dict(max_examples=10**7)):
        with pytest.raises(RequestError) as e:
            toolbox.verify(sample, **kwargs)
        assert e.value.code == "usage"
    with pytest.raises(TypeError):
        toolbox.verify(sample, values="yes")
    with pytest.raises(TypeError):
        toolbox.verify(sample, file_sha256=[123])


# ----------------------------------------------------------------------------------------- estimate


@pytest.mark.parametrize("kwargs, flags", [
    ({}, []),
    (dict(ctx=1000), ["--ctx", "1000"]),
    (dict(ctx=8192, cache_type_k="f32", cache_type_v="bf16"), ["--ctx", "8192", "--cache-type-k", "f32",
                                                              "--cache-type-v", "bf16"]),
    (dict(ctx=4096, parallel=4, flash_attn="off", batch=1024, ubatch=256),
     ["--ctx", "4096", "--parallel", "4", "--flash-attn", "off", "--batch", "1024", "--ubatch", "256"]),
])
def test_estimate_equals_the_cli_json(minfer_cli, sample, kwargs, flags):
    r = toolbox.estimate(sample, **kwargs)
    assert jsonish(r) == cli_json(minfer_cli, "estimate", sample, *flags, check=0)
    assert r["weights_bytes"] == 120576  # the sum of the tensor table's sizes


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    root: Path

    def log_message(self, *args):
        pass

    def do_GET(self):
        data = (self.root / self.path.lstrip("/")).read_bytes()
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start = int(m.group(1))
        end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end + 1 - start))
        self.end_headers()
        self.wfile.write(data[start:end + 1])


def test_estimate_of_a_url_equals_the_local_file(sample, tmp_path):
    handler = type("H", (_RangeHandler,), {"root": tmp_path})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/{sample.name}"
        remote = toolbox.estimate(url, ctx=1000, max_fetch="1MiB", timeout=10)
        local = toolbox.estimate(sample, ctx=1000)
        assert remote.pop("model") == url
        local.pop("model")
        assert remote == local
        with pytest.raises(GGUFIOError) as e:
            toolbox.estimate(url, max_fetch=1000)
        assert e.value.code == "fetch_budget_exceeded"
        with pytest.raises(RequestError):  # the data of a URL is not fetched
            toolbox.hash(url)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_estimate_of_a_split_set_equals_its_merged_file(sample, tmp_path):
    r = toolbox.split(sample, tmp_path / "s", max_size="60K")
    a, b = toolbox.estimate(r.parts[0].path, ctx=2048), toolbox.estimate(sample, ctx=2048)
    a.pop("model"), b.pop("model")
    assert a == b


def test_estimate_errors(minfer_cli, sample, tmp_path):
    with pytest.raises(RequestError) as e:
        toolbox.estimate(sample, ubatch=4096)
    assert e.value.code == "usage" and e.value.exit_code == 2
    for kwargs, flags in ((dict(cache_type_v="q8_0", flash_attn="off"), ["--cache-type-v", "q8_0", "--flash-attn", "off"]),
                          (dict(cache_type_k="q8_0"), ["--cache-type-k", "q8_0"])):  # head size 16: no q8_0 row
        with pytest.raises(RequestError) as e:
            toolbox.estimate(sample, **kwargs)
        assert e.value.exit_code == cli(minfer_cli, "estimate", sample, *flags).returncode == 2
    for kwargs in (dict(cache_type_k="q4_K"), dict(flash_attn="maybe"), dict(parallel=300), dict(ctx=0)):
        with pytest.raises(RequestError):
            toolbox.estimate(sample, **kwargs)
    for kwargs in (dict(ctx="1000"), dict(cache_type_k=8), dict(timeout="1")):
        with pytest.raises(TypeError):
            toolbox.estimate(sample, **kwargs)
    # an architecture llama.cpp knows but without its keys: the tool's code and exit code
    bad = write(tmp_path / "bad.gguf", gb.gguf([("general.architecture", gb.STRING, "qwen2"),
                                                ("qwen2.block_count", gb.U32, 2)]))
    with pytest.raises(InvalidFileError) as e:
        toolbox.estimate(bad)
    assert e.value.code == "key_not_found" and e.value.subject == "qwen2.context_length"
    assert cli(minfer_cli, "estimate", bad).returncode == e.value.exit_code == 1
    heads = write(tmp_path / "heads.gguf", gb.gguf([
        ("general.architecture", gb.STRING, "llama"), ("llama.block_count", gb.U32, 1),
        ("llama.context_length", gb.U32, 256), ("llama.embedding_length", gb.U32, 64),
        ("llama.feed_forward_length", gb.U32, 128), ("llama.attention.head_count", gb.U32, 4),
        ("llama.attention.head_count_kv", gb.U32, 3)]))
    with pytest.raises(InvalidFileError) as e:
        toolbox.estimate(heads)
    res = cli(minfer_cli, "estimate", heads)
    assert res.returncode == e.value.exit_code == 1 and e.value.code == "bad_hyperparameter"
    with pytest.raises(GGUFIOError):
        toolbox.estimate(tmp_path / "absent.gguf")


def test_estimate_unknown_architecture(minfer_cli, tmp_path):
    src = write(tmp_path / "u.gguf", gb.gguf([("general.architecture", gb.STRING, "nonesuch")],
                                            [("w", [8], 0, bytes(32))]))
    r = toolbox.estimate(src)
    assert r["architecture_known"] is False and r["weights_bytes"] == 32
    assert r["kv_cache_bytes"] is None and r["cpu_only"]["cpu"]["total_bytes"] is None
    assert jsonish(r) == cli_json(minfer_cli, "estimate", src, check=0)


# --------------------------------------------------------------------------------------------- diff


def test_diff_equals_the_cli_json(minfer_cli, sample, tmp_path):
    edited = tmp_path / "edited.gguf"
    toolbox.edit(sample, edited, name="Other", set={"my.flag": ("bool", True)}, delete=["general.size_label"])
    r = toolbox.diff(sample, edited)
    res = cli(minfer_cli, "diff", sample, edited, "--json")
    assert res.returncode == 1 and jsonish(r) == json.loads(res.stdout)
    assert r["identical"] is False and r["summary"]["metadata_added"] == 1
    same = toolbox.diff(sample, sample, values=True)
    assert same["identical"] is True and same["summary"]["tensors_identical"] == 27
    assert jsonish(same) == cli_json(minfer_cli, "diff", sample, sample, "--values", check=0)


def test_diff_values_against_numpy(minfer_cli, tmp_path):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(64).astype("<f4")
    y = x + rng.standard_normal(64).astype("<f4") * np.float32(0.01)
    y[5] = np.nan
    toks_a, toks_b = ["a", "b", "c"], ["a", "B", "c", "d"]
    kv = lambda toks, n: [("general.architecture", gb.STRING, "llama"), ("n", gb.U32, n),
                          ("tokenizer.ggml.tokens", gb.ARRAY, (gb.STRING, toks))]
    a = write(tmp_path / "a.gguf", gb.gguf(kv(toks_a, 1), [("w", [64], 0, x.tobytes()), ("h", [64], 1, x.astype("<f2").tobytes()),
                                                          ("only_a", [4], 0, bytes(16))]))
    b = write(tmp_path / "b.gguf", gb.gguf(kv(toks_b, 2), [("w", [64], 0, y.tobytes()), ("h", [64], 0, y.tobytes()),
                                                          ("only_b", [2, 2], 0, bytes(16))]))
    r = toolbox.diff(a, b, values=True)
    assert jsonish(r) == cli_json(minfer_cli, "diff", a, b, "--values", check=1)
    t = {e["name"]: e for e in r["tensors"]}
    assert t["only_a"]["change"] == "only_in_a" and t["only_b"]["change"] == "only_in_b"
    assert t["h"]["change"] == "type_changed" and t["w"]["change"] == "data_differs"
    v = t["w"]["values"]
    fin = np.isfinite(y)
    d = x[fin].astype(np.float64) - y[fin].astype(np.float64)
    assert v["count"] == 64 and v["compared"] == 63 and v["non_finite_mismatches"] == 1
    assert v["max_abs_diff"] == pytest.approx(np.abs(d).max(), rel=1e-12)
    assert v["rmse"] == pytest.approx(math.sqrt((d * d).mean()), rel=1e-12)
    xa, ya = x[fin].astype(np.float64), y[fin].astype(np.float64)
    assert v["cosine"] == pytest.approx(xa @ ya / (np.linalg.norm(xa) * np.linalg.norm(ya)), rel=1e-12)
    assert v["relative_error"] == pytest.approx(np.linalg.norm(d) / np.linalg.norm(ya), rel=1e-12)
    m = {e["key"]: e for e in r["metadata"]}
    assert m["n"]["change"] == "value_changed" and (m["n"]["a"]["value"], m["n"]["b"]["value"]) == (1, 2)
    toks = m["tokenizer.ggml.tokens"]
    assert toks["change"] == "array_changed" and toks["first_difference"] == 1
    assert (toks["item_a"], toks["item_b"]) == ("b", "B") and toks["b"]["count"] == 4


def test_diff_errors(sample, tmp_path):
    bad = write(tmp_path / "bad.gguf", b"PK\x03\x04" + bytes(60))
    with pytest.raises(InvalidFileError) as e:
        toolbox.diff(sample, bad)
    assert e.value.code == "bad_magic" and e.value.exit_code == 1
    with pytest.raises(GGUFIOError) as e:
        toolbox.diff(sample, tmp_path / "absent.gguf")
    assert e.value.code == "io_error"
    with pytest.raises(TypeError):
        toolbox.diff(sample, None)
    with pytest.raises(TypeError):
        toolbox.diff(sample, sample, values=None)


# ------------------------------------------------------------------------------------ hostile input


@pytest.mark.parametrize("data, code", [
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + gb.gstr("k") + struct.pack("<I", 13) + bytes(8), "bad_value_type"),
    (b"GGUF" + struct.pack("<IQQ", 3, 2**62, 0), "count_too_large"),
    (gb.gguf([("general.architecture", gb.STRING, "llama")], [("t", [8], 0, bytes(32))])[:-8], "data_truncated"),
    (b"GGUF" + struct.pack("<I", 0), "bad_version"),
])
def test_hostile_files_raise_the_loader_error_in_every_function(tmp_path, data, code):
    src = write(tmp_path / "hostile.gguf", data)
    calls = [lambda: toolbox.edit(src, tmp_path / "o.gguf", name="x"),
             lambda: toolbox.split(src, tmp_path / "s"), lambda: toolbox.merge(src, tmp_path / "m.gguf"),
             lambda: toolbox.hash(src), lambda: toolbox.verify(src), lambda: toolbox.estimate(src),
             lambda: toolbox.diff(src, src)]
    for call in calls:
        with pytest.raises(InvalidFileError) as e:
            call()
        assert e.value.code == code and e.value.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.gguf"]


# ------------------------------------------------------------------------------------- real files

from conftest import real_files  # noqa: E402


@pytest.mark.parametrize("path", real_files(), ids=lambda p: p.name)
def test_real_files_hash_and_verify_as_the_cli(minfer_cli, path):
    """Every real file: the same hash lines and verify document as the tool, or the same error."""
    res = cli(minfer_cli, "hash", "--all", "--uuid", path)
    if res.returncode != 0:
        m = re.search(rb"\[([a-z_0-9]+)\]\s*$", res.stderr)
        with pytest.raises(GGUFError) as e:
            toolbox.hash(path, kinds=["all", "uuid"])
        assert m and e.value.code == m.group(1).decode() and e.value.exit_code == res.returncode
        return
    assert toolbox.hash(path, kinds=["all", "uuid"]).text().encode() == res.stdout
    res = cli(minfer_cli, "verify", path, "--json", "--values")
    assert jsonish(toolbox.verify(path, values=True)) == json.loads(res.stdout)


@pytest.mark.parametrize("path", real_files(), ids=lambda p: p.name)
def test_real_files_estimate_as_the_cli(minfer_cli, path):
    res = cli(minfer_cli, "estimate", path, "--ctx", "512", "--json")
    if res.returncode != 0:
        with pytest.raises(GGUFError) as e:
            toolbox.estimate(path, ctx=512)
        assert e.value.exit_code == res.returncode
        m = re.search(rb"\[([a-z_0-9]+)\]\s*$", res.stderr)
        if m:
            assert e.value.code == m.group(1).decode()
        return
    assert jsonish(toolbox.estimate(path, ctx=512)) == json.loads(res.stdout)


def test_names_that_are_not_utf8_come_back_as_their_bytes(minfer_cli, tmp_path):
    a = np.zeros(4, dtype="<f4")
    a[1] = np.nan
    src = write(tmp_path / "raw.gguf", gb.gguf([("general.architecture", gb.STRING, "llama"),
                                                (b"k\xff", gb.STRING, b"v\xfe")],
                                               [(b"t\xff", [4], 0, a.tobytes())]))
    r = toolbox.verify(src)
    name = r["tensor_reports"][0]["name"]
    assert name.encode("utf-8", "surrogateescape") == b"t\xff"
    doc = cli_json(minfer_cli, "verify", src, check=1)
    assert bytes.fromhex(doc["tensor_reports"][0]["name_hex"]) == b"t\xff"
    h = toolbox.hash(src, kinds=["sha256"])
    assert h.text().encode("utf-8", "surrogateescape") == cli(minfer_cli, "hash", "--sha256", src, check=0).stdout
    other = tmp_path / "other.gguf"
    toolbox.edit(src, other, set={"k\udcff": "w"})  # the key as the file spells it (it keeps its type)
    d = toolbox.diff(src, other)
    assert d["metadata"][0]["key"].encode("utf-8", "surrogateescape") == b"k\xff"
    assert d["metadata"][0]["a"]["value"].encode("utf-8", "surrogateescape") == b"v\xfe"
    with pytest.raises(RequestError) as e:  # a new key must be valid UTF-8, as the tool requires
        toolbox.edit(src, tmp_path / "o.gguf", set={"n\udcff": ("u8", 1)})
    assert e.value.code == "bad_value_text"
    with pytest.raises(RequestError) as e:  # and so must a string value
        toolbox.edit(src, tmp_path / "o.gguf", set={"general.architecture": "x\udcff"})
    assert e.value.code == "bad_value_text"


def test_the_toolbox_is_minfers():
    import minfer

    for n in ("edit", "split", "merge", "hash", "verify", "estimate", "diff"):
        assert getattr(minfer, n) is getattr(toolbox, n)
        assert getattr(toolbox, n).__doc__ and len(getattr(toolbox, n).__doc__) > 200


# ------------------------------------------------------------------ outputs that are no regular file

def _special_outputs(d: Path) -> dict:
    """A FIFO, a character device (mknod 1,3: what /dev/null is; left out where mknod is not
    allowed), a UNIX socket, a directory, a dangling link and a link to the FIFO, in `d`."""
    import socket
    import stat
    made = {}
    os.mkfifo(d / "fifo")
    made["fifo"] = stat.S_ISFIFO
    try:
        os.mknod(d / "chr", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        made["chr"] = stat.S_ISCHR
    except PermissionError:
        print("note: mknod not allowed here; the character-device case is left out")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(d / "sock"))
    s.close()
    made["sock"] = stat.S_ISSOCK
    (d / "dir").mkdir()
    made["dir"] = stat.S_ISDIR
    os.symlink(d / "nowhere", d / "dangling")
    os.symlink(d / "fifo", d / "to-fifo")
    made["dangling"] = made["to-fifo"] = stat.S_ISLNK
    return made


def test_outputs_never_replace_what_is_no_regular_file(minfer_cli, sample, tmp_path):
    """edit, split and merge refuse a FIFO, a device, a socket, a directory or a dangling link as an
    output, even with overwrite=True, as the tool does (exit 2, output_not_regular): as root, a rename
    over /dev/null would have replaced the system's /dev/null."""
    d = tmp_path / "special"
    d.mkdir()
    made = _special_outputs(d)
    parts = toolbox.split(sample, tmp_path / "s", max_size="60K").parts
    for name, is_kind in made.items():
        out = d / name
        for overwrite in (True, False):
            calls = {
                "edit": lambda: toolbox.edit(sample, out, name="x", overwrite=overwrite),
                "merge": lambda: toolbox.merge(parts[0].path, out, overwrite=overwrite),
            }
            for what, call in calls.items():
                with pytest.raises(RequestError) as e:
                    call()
                assert e.value.code == "output_not_regular", (name, what, e.value)
                assert e.value.exit_code == 2 and e.value.file == str(out)
                assert is_kind(os.lstat(out).st_mode), (name, what)
        res = cli(minfer_cli, "edit", sample, "-o", out, "--name", "x", "--force")
        assert res.returncode == 2 and b"[output_not_regular]" in res.stderr, (name, res.stderr)
    assert not (d / "nowhere").exists()
    assert sorted(os.listdir(d)) == sorted(made)  # no temporary left behind

    # A split part that is a FIFO: refused before anything is written.
    n = len(parts)
    shutil.rmtree(tmp_path / "t", ignore_errors=True)
    (tmp_path / "t").mkdir()
    fifo_part = tmp_path / "t" / f"p-00002-of-{n:05d}.gguf"
    os.mkfifo(fifo_part)
    with pytest.raises(RequestError) as e:
        toolbox.split(sample, tmp_path / "t" / "p", max_size="60K", overwrite=True)
    assert e.value.code == "output_not_regular" and e.value.exit_code == 2
    assert os.listdir(tmp_path / "t") == [fifo_part.name] and os.path.exists(fifo_part)


def test_output_link_replaces_its_target(sample, tmp_path):
    """An output that is a link to a regular file: with overwrite=True the target is replaced and the
    link stays (as cp writes through a link); without it, the existing target is refused."""
    (tmp_path / "store").mkdir()
    target = write(tmp_path / "store" / "model.gguf", b"old")
    link = tmp_path / "link.gguf"
    os.symlink(Path("store") / "model.gguf", link)
    with pytest.raises(RequestError) as e:
        toolbox.edit(sample, link, name="x")
    assert e.value.code == "usage" and target.read_bytes() == b"old"
    toolbox.edit(sample, link, name="x", overwrite=True)
    assert link.is_symlink() and os.readlink(link) == str(Path("store") / "model.gguf")
    assert target.read_bytes()[:4] == b"GGUF" and os.listdir(tmp_path / "store") == ["model.gguf"]
    first = toolbox.split(sample, tmp_path / "s", max_size="60K").parts[0].path
    toolbox.merge(first, tmp_path / "m.gguf")
    write(target, b"old")
    toolbox.merge(first, link, overwrite=True)
    assert link.is_symlink() and target.read_bytes() == (tmp_path / "m.gguf").read_bytes()


# ------------------------------------------------------------------ findings that tell the truth


def test_verify_reports_a_vocabulary_llama_cpp_aborts_on(minfer_cli, tmp_path):
    def model(name, tokens, extra=()):
        kvs = [("general.architecture", gb.STRING, "llama"), ("tokenizer.ggml.model", gb.STRING, "llama"),
               ("tokenizer.ggml.tokens", gb.ARRAY, (gb.STRING, tokens))] + list(extra)
        return write(tmp_path / name, gb.gguf(kvs, [("a", [4], 0, np.arange(4, dtype="<f4").tobytes())]))

    good = model("good.gguf", ["<s>", "</s>", "hi"])
    r = toolbox.verify(good)
    assert r["verdict"] == "clean" and r["vocabulary"] == [] and r["vocabulary_findings"] == 0
    # A repeated token: llama.cpp's GGML_ASSERT(id_to_token.size() == token_to_id.size()) aborts.
    dup = model("dup.gguf", ["<s>", "</s>", "hi", "</s>"],
                [("tokenizer.ggml.scores", gb.ARRAY, (gb.F32, [0.0, 0.0])),
                 ("tokenizer.ggml.eos_token_id", gb.U32, 9)])
    r = toolbox.verify(dup)
    assert r["verdict"] == "failed" and r["exit_code"] == 1
    assert r["vocabulary_findings"] == 2 and r["vocabulary_warnings"] == 1
    first, second, third = r["vocabulary"]
    assert (first["problem"], first["key"], first["index"], first["severity"]) == \
        ("duplicate_token", "tokenizer.ggml.tokens", 3, "finding")
    assert (second["problem"], second["key"], second["index"]) == ("array_short", "tokenizer.ggml.scores", 2)
    assert (third["problem"], third["severity"], third["index"]) == ("special_id_out_of_range", "warning", 9)
    assert jsonish(r) == cli_json(minfer_cli, "verify", dup, "--json", check=1)


def test_diff_values_lead_with_non_finite_mismatches(minfer_cli, tmp_path):
    a = small_model(tmp_path, "a.gguf", tensors=[("a", [4], 0, np.array([1, np.nan, 3, 4], dtype="<f4").tobytes())])
    b = small_model(tmp_path, "b.gguf", tensors=[("a", [4], 0, np.array([1, 2, 3, 4], dtype="<f4").tobytes())])
    v = toolbox.diff(a, b, values=True)["tensors"][0]["values"]
    assert list(v)[0] == "non_finite_mismatches" and v["non_finite_mismatches"] == 1
    f = v["first_non_finite_mismatch"]
    assert f["index"] == 1 and math.isnan(f["a"]) and f["b"] == 2.0
    assert v["max_abs_diff"] == 0.0  # over the finite pairs only: why the mismatches come first
