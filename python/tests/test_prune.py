"""minfer.prune: the same library call as ``minfer prune``, so the same bytes; its arguments, its
report, its errors (with the command's exit codes), and nothing written on any error.

The model is the README's Qwen2-shaped sample (2 blocks, F32/F16/Q4_0/Q8_0 tensors), written by the
project's C++ writer. llama.cpp's view of pruned files is tested in C++ (tests/toolbox: stories260K
pruned by layers, experts and MTP, and against llama-quantize --prune-layers).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

import minfer
from minfer.errors import GGUFError, RequestError


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_prune_a_layer_matches_the_command(tmp_path, sample_model, minfer_cli):
    out = tmp_path / "py.gguf"
    r = minfer.prune(sample_model, out, layers=[1])
    assert r.written
    assert (r.blocks_before, r.blocks_after) == (2, 1)
    assert r.outputs[0]["file_size"] == out.stat().st_size == r.file_size
    assert all(not n.startswith("blk.1.") for n in (t["name"] for t in r.tensors))
    assert r.removed and all(n.startswith("blk.1.") for n in r.removed)
    keys = {k["key"]: k for k in r.metadata}
    assert keys["qwen2.block_count"]["before"] == "2" and keys["qwen2.block_count"]["after"] == "1"
    assert keys["minfer.recipe"]["after"] == '"prune --layers 1"'
    cli = tmp_path / "cli.gguf"
    subprocess.run([str(minfer_cli), "prune", str(sample_model), "-o", str(cli), "--layers", "1", "--quiet"], check=True)
    assert sha(cli) == sha(out)
    m = minfer.open(out)
    assert m.metadata["qwen2.block_count"] == 1
    assert m.metadata["general.base_model.count"] == 1
    src = minfer.open(sample_model)
    for t in r.tensors:  # every kept tensor's bytes are the source's
        assert bytes(m.tensors[t["name"]].data) == bytes(src.tensors[t["source"]].data)


def test_list_forms_dry_run_and_no_provenance(tmp_path, sample_model):
    out = tmp_path / "o.gguf"
    a = minfer.prune(sample_model, out, layers="0", dry_run=True)
    b = minfer.prune(sample_model, out, layers=0, dry_run=True)
    assert not a.written and not out.exists()
    assert a.tensors == b.tensors and a.file_size == b.file_size
    w = minfer.prune(sample_model, out, layers=(0,), provenance=False)
    assert w.file_size == out.stat().st_size
    assert w.file_size < a.file_size  # no provenance keys
    assert "general.base_model.count" not in minfer.open(out).metadata


def test_tensors_regex_and_split(tmp_path, sample_model):
    r = minfer.prune(sample_model, tmp_path / "s.gguf", tensors=r"\.bias$", split_max_tensors=4)
    assert r.removed and all(n.endswith(".bias") for n in r.removed)
    assert len(r.outputs) > 1
    for o in r.outputs:
        assert Path(o["path"]).stat().st_size == o["file_size"]
    m = minfer.open(r.outputs[0]["path"])
    assert len(m.tensors) == len(r.tensors)


@pytest.mark.parametrize("kwargs, said", [
    ({"layers": "2"}, "layer 2 does not exist"),
    ({"layers": "0-1"}, "all 2"),
    ({"layers": "x"}, "is not an index or a range"),
    ({"experts": "0"}, "has no experts"),
    ({"mtp": True}, "no MTP layers"),
    ({}, "nothing to remove"),
])
def test_bad_selections_are_refused_with_exit_2(tmp_path, sample_model, kwargs, said):
    out = tmp_path / "never.gguf"
    with pytest.raises(RequestError) as e:
        minfer.prune(sample_model, out, **kwargs)
    assert e.value.code == "bad_selection"
    assert e.value.exit_code == 2
    assert said in str(e.value)
    assert not out.exists()


def test_bad_arguments(tmp_path, sample_model):
    with pytest.raises(TypeError):
        minfer.prune(sample_model, tmp_path / "o.gguf", layers=[1.5])
    with pytest.raises(ValueError):
        minfer.prune(sample_model, tmp_path / "o.gguf", layers=[-1])
    with pytest.raises(RequestError) as e:
        minfer.prune(sample_model, tmp_path / "o.gguf", tensors="(")
    assert e.value.code == "bad_value_text"
    out = tmp_path / "exists.gguf"
    out.write_bytes(b"keep me")
    with pytest.raises(RequestError) as e:
        minfer.prune(sample_model, out, layers=1)
    assert e.value.exit_code == 2
    assert out.read_bytes() == b"keep me"
    minfer.prune(sample_model, out, layers=1, overwrite=True)
    assert minfer.open(out).metadata["qwen2.block_count"] == 1


def test_progress_exception_cancels_and_writes_nothing(tmp_path, sample_model):
    out = tmp_path / "o.gguf"

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        minfer.prune(sample_model, out, layers=1, progress=stop)
    assert not out.exists()


def test_the_output_is_never_the_input(tmp_path, sample_model):
    copy = tmp_path / "m.gguf"
    copy.write_bytes(Path(sample_model).read_bytes())
    with pytest.raises(GGUFError) as e:
        minfer.prune(copy, copy, layers=1, overwrite=True)
    assert "one of the input files" in str(e.value)
    assert copy.read_bytes() == Path(sample_model).read_bytes()
