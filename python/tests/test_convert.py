"""minfer.convert: the same library call as ``minfer convert`` (toolbox::convert), so the file
llama.cpp's convert_hf_to_gguf.py writes; its arguments, its report (the keys of ``minfer convert
--json``), its errors (with the command's exit codes), and nothing written on any error.

Two sets of inputs:

- The converter's test checkpoints (tests/convert/make_models.py, made by scripts/convert-models.sh,
  which prints their folder; ctest passes MINFER_CONVERT_MODELS through from the environment as the
  C++ tests read it). Outputs are compared with the SHA-256 and size that convert_hf_to_gguf.py
  itself produced for those inputs, recorded in tests/convert/reference.tsv with the command that
  reproduces each (docs/CONVERT_REFERENCE.md) — never with values minfer produced. Without the
  variable these tests are skipped, with the reason.
- A tiny Llama checkpoint written here (numpy, make_models.py's safetensors layout, the small
  byte-level BPE tokenizer of tests/convert/data/bpe_small_llama.json), so that something runs
  without them: values against the arrays written, the report against the command's --json.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import minfer
from minfer.errors import GGUFError, InvalidFileError, RequestError
from minfer.types import TensorType

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_TSV = ROOT / "tests" / "convert" / "reference.tsv"
MODEL_NAME = "minfer convert test"  # the --model-name of every reference.tsv command


def sha(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def reference() -> dict:
    """reference.tsv: (model, outtype) -> (sha256, size) of convert_hf_to_gguf.py's output."""
    rows = {}
    for line in REFERENCE_TSV.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("model\t"):
            continue
        cols = line.split("\t")
        rows[(cols[0], cols[1])] = (cols[2], int(cols[3]))
    return rows


@pytest.fixture(scope="module")
def models() -> Path:
    d = os.environ.get("MINFER_CONVERT_MODELS")
    if not d and os.environ.get("MINFER_REQUIRE_REFERENCE", "0") not in ("", "0"):
        pytest.fail("MINFER_REQUIRE_REFERENCE is set and MINFER_CONVERT_MODELS is not")  # CI: no green without evidence
    if not d:
        pytest.skip("MINFER_CONVERT_MODELS is not set: not compared with convert_hf_to_gguf.py's recorded outputs "
                    "(scripts/convert-models.sh makes tests/convert/make_models.py's checkpoints and prints the folder)")
    if not Path(d).is_dir():
        pytest.skip(f"MINFER_CONVERT_MODELS={d} is not a directory (scripts/convert-models.sh makes it)")
    return Path(d)


def copy_model(models: Path, name: str, dest: Path) -> Path:
    """A private copy of a test checkpoint (the shared folder is never written to, nor removed from)."""
    out = dest / name
    shutil.copytree(models / name, out)
    return out


# ------------------------------------------------------------------ against the reference's SHA-256

@pytest.mark.parametrize("model, outtype, file_type", [
    ("Tiny-Llama-SPM-Sharded", "f16", "F16"),   # three shards with an index; SentencePiece; Q/K permuted
    ("Tiny-Qwen3-BF16", "auto", "BF16"),        # a BF16 checkpoint: auto keeps BF16
    ("Tiny-Qwen3-BF16", "f32", "F32"),
    ("Tiny-Qwen3-MoE", "q8_0", "Q8_0"),         # experts stacked
])
def test_the_reference_bytes(tmp_path, models, model, outtype, file_type):
    want_sha, want_size = reference()[(model, outtype)]
    out = tmp_path / f"{model}-{outtype}.gguf"
    plan = minfer.convert(models / model, out, outtype=outtype, model_name=MODEL_NAME, dry_run=True)
    assert not plan.written and not out.exists()
    assert plan.file_size == want_size == plan.outputs[0]["file_size"]  # the exact size, nothing written
    r = minfer.convert(models / model, out, outtype=outtype, model_name=MODEL_NAME)
    assert r.written
    assert out.stat().st_size == want_size
    assert sha(out) == want_sha
    assert r.file_type == file_type
    assert r.outputs == [{"path": str(out), "file_size": want_size, "tensor_count": len(r.tensors)}]
    assert r.tensors == plan.tensors
    assert r.output_tensor_bytes == sum(t["bytes"] for t in r.tensors)
    with minfer.open(out) as m:
        assert m.metadata["general.architecture"] == r.gguf_architecture
        assert m.metadata["general.name"] == MODEL_NAME
        assert [n for n in m.tensors] == [t["name"] for t in r.tensors]
        for t in r.tensors:
            assert m.tensors[t["name"]].type == t["type"]


def test_report_fields(tmp_path, models):
    r = minfer.convert(models / "Tiny-Qwen3-BF16", tmp_path / "o.gguf", dry_run=True)
    assert (r.architecture, r.gguf_architecture, r.file_type) == ("Qwen3ForCausalLM", "qwen3", "BF16")
    ckpt = models / "Tiny-Qwen3-BF16" / "model.safetensors"
    (header_len,) = struct.unpack("<Q", ckpt.read_bytes()[:8])
    assert r.input_tensor_bytes == ckpt.stat().st_size - 8 - header_len
    emb = next(t for t in r.tensors if t["name"] == "token_embd.weight")
    assert emb["source"] == "model.embed_tokens.weight" and emb["source_dtype"] == "BF16"
    assert emb["type"] is TensorType.BF16 and isinstance(emb["ne"], tuple)
    assert all(isinstance(w, str) for w in r.warnings)


def test_split_output_merges_to_the_reference(tmp_path, models):
    want_sha, want_size = reference()[("Tiny-Llama-SPM", "q8_0")]
    prefix = tmp_path / "split.gguf"
    plan = minfer.convert(models / "Tiny-Llama-SPM", prefix, outtype="q8_0", model_name=MODEL_NAME,
                          split_max_tensors=5, dry_run=True)
    r = minfer.convert(models / "Tiny-Llama-SPM", prefix, outtype="q8_0", model_name=MODEL_NAME, split_max_tensors=5)
    assert len(r.outputs) > 1 and r.outputs == plan.outputs
    assert [o["path"] for o in r.outputs][0] == str(tmp_path / f"split-00001-of-{len(r.outputs):05d}.gguf")
    for o in r.outputs:
        assert Path(o["path"]).stat().st_size == o["file_size"] and o["tensor_count"] <= 5
    merged = tmp_path / "merged.gguf"
    minfer.merge(r.outputs[0]["path"], merged)
    assert merged.stat().st_size == want_size and sha(merged) == want_sha


def test_a_llama_quantize_outtype_is_the_f32_file_quantized(tmp_path, models):
    """Q4_K_M in one pass equals the reference's f32 file (checked by its SHA-256) put through
    minfer.quantize, which test_quantize.py compares with llama.cpp's llama_model_quantize."""
    f32_sha, _ = reference()[("Tiny-Llama-SPM", "f32")]
    f32 = tmp_path / "f32.gguf"
    minfer.convert(models / "Tiny-Llama-SPM", f32, outtype="f32", model_name=MODEL_NAME)
    assert sha(f32) == f32_sha
    two_pass = tmp_path / "two-pass.gguf"
    minfer.quantize(f32, two_pass, "Q4_K_M")
    seen = []
    one_pass = tmp_path / "one-pass.gguf"
    r = minfer.convert(models / "Tiny-Llama-SPM", one_pass, outtype="q4_k_m", model_name=MODEL_NAME, threads=1,
                       progress=lambda done, total: seen.append((done, total)))
    assert r.written and r.file_type == "Q4_K_M"
    assert sha(one_pass) == sha(two_pass)
    assert seen and seen[-1][0] == seen[-1][1]
    assert r.outputs[0]["file_size"] == one_pass.stat().st_size
    with minfer.open(one_pass) as m:
        assert m.metadata["general.file_type"] == 15  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    assert {t["type"] for t in r.tensors} >= {TensorType.F32}


def test_a_llama_quantize_outtype_against_llama_cpp(tmp_path, models):
    """The same, with llama.cpp's own llama_model_quantize on the reference's f32 file (when
    MINFER_LLAMA_LIB names scripts/llama-ref.sh's library; test_quantize.py's harness)."""
    from test_quantize import llama_quantize
    path = os.environ.get("MINFER_LLAMA_LIB")
    lib = Path(path).parent / "libllama.v0.5.0.so" if path else None
    if lib is None or not lib.exists():
        pytest.skip("MINFER_LLAMA_LIB is not set (or has no libllama beside it): Q4_K_M is not compared with "
                    "llama_model_quantize")
    f32_sha, _ = reference()[("Tiny-Qwen3-MoE", "f32")]
    f32 = tmp_path / "f32.gguf"
    minfer.convert(models / "Tiny-Qwen3-MoE", f32, outtype="f32", model_name=MODEL_NAME)
    assert sha(f32) == f32_sha
    want = llama_quantize(lib, f32, tmp_path / "llama.gguf", 15)  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    out = tmp_path / "one-pass.gguf"
    r = minfer.convert(models / "Tiny-Qwen3-MoE", out, outtype="Q4_K_M", model_name=MODEL_NAME)
    assert r.file_type == "Q4_K_M" and r.written
    assert out.read_bytes() == want


def test_missing_config_and_missing_weights(tmp_path, models):
    no_config = copy_model(models, "Tiny-Qwen3", tmp_path)
    (no_config / "config.json").unlink()
    out = tmp_path / "never.gguf"
    with pytest.raises(InvalidFileError) as e:
        minfer.convert(no_config, out)
    assert e.value.code == "bad_model_config" and e.value.exit_code == 1
    assert e.value.file == str(no_config / "config.json")
    assert str(e.value) == f"{no_config / 'config.json'}: invalid model config: the file is missing [bad_model_config]"
    assert not out.exists()

    no_weights = copy_model(models, "Tiny-Qwen3", tmp_path / "w")
    (no_weights / "model.safetensors").unlink()
    with pytest.raises(InvalidFileError) as e:
        minfer.convert(no_weights, out)
    assert e.value.code == "no_weights" and e.value.exit_code == 1
    assert e.value.file == str(no_weights)
    assert "no model*.safetensors and no model.safetensors.index.json in the directory" in str(e.value)
    assert not out.exists()


def test_the_output_is_never_a_checkpoint_file(tmp_path, models):
    d = copy_model(models, "Tiny-Llama-SPM-Sharded", tmp_path)
    shard = d / "model-00002-of-00003.safetensors"
    before = sha(shard)
    for overwrite in (False, True):
        with pytest.raises(RequestError) as e:
            minfer.convert(d, shard, overwrite=overwrite)
        assert e.value.code == "usage" and e.value.exit_code == 2
        assert sha(shard) == before
    assert "one of the checkpoint's files" in str(e.value)


# ------------------------------------------------------------------------- a checkpoint of its own

def write_safetensors(path: Path, tensors: dict) -> None:
    """make_models.py's layout: 8-byte little-endian header length, JSON header padded with spaces
    to 8 bytes, the data in name order."""
    header: dict = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


@pytest.fixture
def tiny(tmp_path) -> tuple:
    """A 1-layer LlamaForCausalLM with a 264-token byte-level BPE tokenizer: (directory, tensors)."""
    d = tmp_path / "Tiny-Own-Llama"
    d.mkdir()
    tok = json.loads((ROOT / "tests" / "convert" / "data" / "bpe_small_llama.json").read_text(encoding="utf-8"))
    V = len(tok["model"]["vocab"]) + len(tok["added_tokens"])
    H, F, nh, nkv = 64, 128, 4, 2
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H, "intermediate_size": F,
           "num_attention_heads": nh, "num_key_value_heads": nkv, "num_hidden_layers": 1, "head_dim": H // nh,
           "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "rope_scaling": None,
           "tie_word_embeddings": False, "vocab_size": V, "bos_token_id": 0, "eos_token_id": V - 1,
           "hidden_act": "silu", "torch_dtype": "float32"}
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "tokenizer.json").write_text(json.dumps(tok))
    (d / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
    rng = np.random.default_rng(7)
    hd = H // nh
    t = {"model.embed_tokens.weight": rng.standard_normal((V, H), dtype=np.float32),
         "model.norm.weight": rng.standard_normal(H, dtype=np.float32),
         "lm_head.weight": rng.standard_normal((V, H), dtype=np.float32),
         "model.layers.0.input_layernorm.weight": rng.standard_normal(H, dtype=np.float32),
         "model.layers.0.post_attention_layernorm.weight": rng.standard_normal(H, dtype=np.float32),
         "model.layers.0.self_attn.q_proj.weight": rng.standard_normal((nh * hd, H), dtype=np.float32),
         "model.layers.0.self_attn.k_proj.weight": rng.standard_normal((nkv * hd, H), dtype=np.float32),
         "model.layers.0.self_attn.v_proj.weight": rng.standard_normal((nkv * hd, H), dtype=np.float32),
         "model.layers.0.self_attn.o_proj.weight": rng.standard_normal((H, nh * hd), dtype=np.float32),
         "model.layers.0.mlp.gate_proj.weight": rng.standard_normal((F, H), dtype=np.float32),
         "model.layers.0.mlp.up_proj.weight": rng.standard_normal((F, H), dtype=np.float32),
         "model.layers.0.mlp.down_proj.weight": rng.standard_normal((H, F), dtype=np.float32)}
    write_safetensors(d / "model.safetensors", t)
    return d, t


def test_own_checkpoint_values(tmp_path, tiny):
    d, t = tiny
    out = tmp_path / "own.gguf"
    r = minfer.convert(d, out, outtype="f32", pre="llama-bpe")
    assert r.written and (r.architecture, r.gguf_architecture, r.file_type) == ("LlamaForCausalLM", "llama", "F32")
    assert r.input_tensor_bytes == sum(a.nbytes for a in t.values())
    assert r.output_tensor_bytes == r.input_tensor_bytes
    with minfer.open(out) as m:
        assert m.metadata["general.architecture"] == "llama"
        assert m.metadata["tokenizer.ggml.pre"] == "llama-bpe"
        assert len(m.metadata["tokenizer.ggml.tokens"]) == t["model.embed_tokens.weight"].shape[0]
        for gguf_name, hf_name in [("token_embd.weight", "model.embed_tokens.weight"), ("output.weight", "lm_head.weight"),
                                   ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"),
                                   ("blk.0.attn_v.weight", "model.layers.0.self_attn.v_proj.weight")]:
            assert np.array_equal(m.tensors[gguf_name].to_numpy(), t[hf_name])
        # Q and K rows permuted as the reference does for llama (the same values, another order)
        q = m.tensors["blk.0.attn_q.weight"].to_numpy()
        assert not np.array_equal(q, t["model.layers.0.self_attn.q_proj.weight"])
        assert np.array_equal(np.sort(q, axis=None), np.sort(t["model.layers.0.self_attn.q_proj.weight"], axis=None))
    for e in r.tensors:
        assert e["source_dtype"] == "F32" and e["type"] is TensorType.F32


def test_own_checkpoint_report_equals_the_command_json(tmp_path, tiny, minfer_cli):
    d, _ = tiny
    out = tmp_path / "x.gguf"
    for kwargs, flags in [({"outtype": "f16", "dry_run": True}, ["--outtype", "f16", "--dry-run"]),
                          ({"outtype": "Q4_K_M", "model_name": "tiny", "split_max_tensors": 4},
                           ["--outtype", "Q4_K_M", "--model-name", "tiny", "--split-max-tensors", "4"])]:
        py = minfer.convert(d, out, pre="llama-bpe", overwrite=True, **kwargs)
        cli = json.loads(subprocess.run([str(minfer_cli), "convert", str(d), "-o", str(out), "--pre", "llama-bpe", "--json",
                                         "--force", *flags], check=True, capture_output=True, text=True).stdout)
        mine = {k: v for k, v in vars(py).items() if k not in ("file_size", "fetched")}
        assert py.fetched == {"head_bytes": 0, "tensor_bytes_planned": 0, "bytes": 0, "requests": 0}  # a directory
        # the JSON names types as ggml does ("q4_K"), TensorType as gguf-py does ("Q4_K")
        mine["tensors"] = [dict(e, type=str(e["type"]).lower(), ne=list(e["ne"])) for e in py.tensors]
        cli["tensors"] = [dict(e, type=e["type"].lower()) for e in cli["tensors"]]
        assert mine == cli
        assert py.file_size == sum(o["file_size"] for o in cli["outputs"])


def test_own_checkpoint_progress_and_cancel(tmp_path, tiny):
    d, _ = tiny
    seen = []
    out = tmp_path / "p.gguf"
    r = minfer.convert(d, out, pre="llama-bpe", progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))

    def stop(done, total):
        raise KeyboardInterrupt

    again = tmp_path / "cancelled.gguf"
    with pytest.raises(KeyboardInterrupt):
        minfer.convert(d, again, pre="llama-bpe", progress=stop)
    assert not again.exists()
    with pytest.raises(KeyboardInterrupt):
        minfer.convert(d, out, pre="llama-bpe", overwrite=True, progress=stop)
    assert out.stat().st_size == r.file_size  # the existing output as it was


def test_own_checkpoint_errors(tmp_path, tiny):
    d, _ = tiny
    out = tmp_path / "never.gguf"
    with pytest.raises(RequestError) as e:  # an unknown pre-tokenizer hash: refused, never guessed
        minfer.convert(d, out)
    assert e.value.code == "unsupported_tokenizer" and e.value.exit_code == 1
    assert e.value.file == str(d / "tokenizer.json")
    assert re.search(r"the pre-tokenizer's check hash [0-9a-f]{64} is not one convert_hf_to_gguf.py knows", str(e.value))
    assert "(one of: llama-bpe, qwen2, smaug-bpe)" in str(e.value)
    for outtype in ("q3", "COPY", ""):
        with pytest.raises(RequestError) as e:
            minfer.convert(d, out, outtype=outtype, pre="llama-bpe")
        assert e.value.code == "bad_value_text" and e.value.exit_code == 2
        assert f"outtype: '{outtype}' is neither convert_hf_to_gguf.py's f32, f16, bf16, q8_0, auto nor a llama-quantize type" \
            in str(e.value)
    with pytest.raises(RequestError) as e:
        minfer.convert(d, out, outtype="f16", imatrix=tmp_path / "x.imatrix", pre="llama-bpe")
    assert e.value.code == "bad_value_text" and e.value.exit_code == 2
    assert "imatrix: an importance matrix is for a llama-quantize --outtype" in str(e.value)
    with pytest.raises(RequestError) as e:
        minfer.convert(d, out, split_max_size="0", pre="llama-bpe")
    assert e.value.code == "usage"
    with pytest.raises(TypeError):
        minfer.convert(d, out, outtype=1)
    with pytest.raises(TypeError):
        minfer.convert(d, out, vocab_only="yes")
    with pytest.raises(TypeError):
        minfer.convert(d, out, progress=3)
    assert not out.exists()
    out.write_bytes(b"keep me")
    with pytest.raises(RequestError) as e:
        minfer.convert(d, out, pre="llama-bpe")
    assert e.value.code == "usage" and e.value.exit_code == 2 and "overwrite=True" in str(e.value)
    assert out.read_bytes() == b"keep me"
    with pytest.raises(GGUFError) as e:
        minfer.convert(tmp_path / "absent", tmp_path / "a.gguf")
    assert not (tmp_path / "a.gguf").exists()


def test_own_checkpoint_vocab_only(tmp_path, tiny):
    d, _ = tiny
    p = tmp_path / "vocab.gguf"
    r = minfer.convert(d, p, vocab_only=True, pre="llama-bpe")
    assert r.written and r.tensors == [] and r.output_tensor_bytes == 0
    assert r.outputs == [{"path": str(p), "file_size": p.stat().st_size, "tensor_count": 0}]
    with minfer.open(p) as m:
        assert len(m.tensors) == 0 and m.metadata["tokenizer.ggml.model"] == "gpt2"


def test_a_url_gives_the_directorys_file_fetching_each_byte_once(tmp_path, tiny):
    """The checkpoint served over HTTP (test_remote.py's range server): the same bytes as the directory,
    and what was fetched is the checkpoint's files, each once."""
    import http.server
    import threading

    from test_remote import RangeHandler

    d, _ = tiny
    local = minfer.convert(d, tmp_path / "local.gguf", pre="llama-bpe", outtype="q8_0")
    handler = type("H", (RangeHandler,), {"root": d, "sent": 0, "ignore_ranges": False})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/{d.name}/"
        handler.root = d.parent
        out = tmp_path / "remote.gguf"
        r = minfer.convert(url, out, pre="llama-bpe", outtype="q8_0", timeout=30)
        assert out.read_bytes() == (tmp_path / "local.gguf").read_bytes()
        assert r.fetched["bytes"] == handler.sent > 0
        # every byte needed once: the files the converter reads, whole (model.safetensors in ranges)
        read = [p for p in d.iterdir() if p.name in ("config.json", "model.safetensors", "tokenizer.json",
                                                      "tokenizer_config.json", "special_tokens_map.json",
                                                      "generation_config.json")]
        assert r.fetched["bytes"] == sum(p.stat().st_size for p in read)
        assert r.fetched["tensor_bytes_planned"] == local.input_tensor_bytes
        with pytest.raises(minfer.GGUFIOError, match="more than the fetch budget of 1000"):
            minfer.convert(url, tmp_path / "small.gguf", pre="llama-bpe", max_fetch=1000)
        assert not (tmp_path / "small.gguf").exists()
    finally:
        httpd.shutdown()
        httpd.server_close()
