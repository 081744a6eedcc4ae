"""A stub `transformers` for running llama.cpp's convert_hf_to_gguf.py without PyPI.

Part of minfer's convert_hf_to_gguf.py reference harness (docs/CONVERT_REFERENCE.md). scripts/convert-ref.sh copies
this package to build/convert-ref/stubs/transformers/, which build/convert-ref/run_convert.py puts first on sys.path.

What it provides, and why it cannot change the converter's output for the architectures the harness covers
(LlamaForCausalLM / MistralForCausalLM with a SentencePiece tokenizer.model or a Llama-3 BPE tokenizer.json,
Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM):

* `AutoConfig.from_pretrained` always raises. ModelBase.load_hparams catches the exception and reads config.json
  itself, so the hyperparameters are the file's own keys. Real transformers would give `to_dict()` of its config
  class: the same keys plus the class defaults the file lacks. The harness's configs are complete (every key the
  converter reads for these classes is in the file), so the two agree; see docs/CONVERT_REFERENCE.md.

* `AutoTokenizer.from_pretrained(dir)` returns `FastTokenizer`: what PreTrainedTokenizerFast (transformers 4.x/5.x)
  gives for a directory with tokenizer.json, with every answer about tokens taken from Hugging Face tokenizers'
  Rust core (npm @anush008/tokenizers, run as a node subprocess by hf_tokenizer.js): `vocab`/`get_vocab()`,
  `encode()` (the pre-tokenizer hash of get_vocab_base_pre), `decode()`, `convert_tokens_to_ids()`,
  `vocab_size`, `len()`. The added tokens (`added_tokens_decoder`, `get_added_vocab()`) are read from
  tokenizer.json's "added_tokens", which is where the Rust core takes them from; transformers would let
  tokenizer_config.json's "added_tokens_decoder" and special tokens add or re-flag tokens, so the stub checks that
  tokenizer_config.json agrees with tokenizer.json and refuses the directory when it does not.

Anything else the converter might ask of a tokenizer raises AttributeError naming the attribute: a path the stub does
not cover fails loudly instead of producing a different file.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

__version__ = "0.0.0+minfer-convert-ref-stub"

_HERE = Path(__file__).resolve().parent


def _helper_path() -> Path:
    env = os.environ.get("CONVERT_REF_TOKENIZER_HELPER")
    if env:
        return Path(env)
    # build/convert-ref/stubs/transformers/__init__.py -> build/convert-ref/hf_tokenizer.js
    return _HERE.parent.parent / "hf_tokenizer.js"


class AutoConfig:
    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> Any:
        raise OSError("transformers stub (minfer convert-ref): AutoConfig is not available; "
                      "convert_hf_to_gguf.py falls back to reading config.json")


class AddedToken:
    """The fields of tokenizers.AddedToken that transformers exposes in added_tokens_decoder."""

    def __init__(self, content: str, single_word: bool = False, lstrip: bool = False, rstrip: bool = False,
                 normalized: bool = True, special: bool = False):
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.normalized = normalized
        self.special = special

    def key(self) -> tuple:
        return (self.content, self.single_word, self.lstrip, self.rstrip, self.normalized, self.special)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return (f"AddedToken({self.content!r}, rstrip={self.rstrip}, lstrip={self.lstrip}, "
                f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})")


def _clean_up_tokenization(out_string: str) -> str:
    # transformers.PreTrainedTokenizerBase.clean_up_tokenization
    return (out_string.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",")
            .replace(" ' ", "'").replace(" n't", "n't").replace(" 'm", "'m").replace(" 's", "'s")
            .replace(" 've", "'ve").replace(" 're", "'re"))


class _RustCore:
    """One node process holding tokenizers' Rust Tokenizer for one tokenizer.json."""

    def __init__(self, tokenizer_json: Path):
        helper = _helper_path()
        if not helper.is_file():
            raise OSError(f"transformers stub: tokenizer helper {helper} is missing (run scripts/convert-ref.sh)")
        node = os.environ.get("NODE", "node")
        self._proc = subprocess.Popen([node, str(helper), str(tokenizer_json)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        self._lock = threading.Lock()

    def ask(self, **req: Any) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(req) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"transformers stub: the tokenizer helper ended (exit {self._proc.poll()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"transformers stub: the tokenizer helper failed on {req.get('op')}: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=30)


_SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


class FastTokenizer:
    """The PreTrainedTokenizerFast surface convert_hf_to_gguf.py uses, backed by the Rust core."""

    is_fast = True

    def __init__(self, path: Path):
        self.name_or_path = str(path)
        tokenizer_json = path / "tokenizer.json"
        if not tokenizer_json.is_file():
            raise OSError(f"transformers stub: {tokenizer_json} not found (the stub only loads tokenizer.json)")
        with open(tokenizer_json, encoding="utf-8") as f:
            tj = json.load(f)
        self._config: dict[str, Any] = {}
        config_file = path / "tokenizer_config.json"
        if config_file.is_file():
            with open(config_file, encoding="utf-8") as f:
                self._config = json.load(f)

        decoder: dict[int, AddedToken] = {}
        for at in tj.get("added_tokens", []):
            decoder[int(at["id"])] = AddedToken(at["content"], single_word=at.get("single_word", False),
                                                lstrip=at.get("lstrip", False), rstrip=at.get("rstrip", False),
                                                normalized=at.get("normalized", True),
                                                special=at.get("special", False))
        self._added_tokens_decoder = dict(sorted(decoder.items()))
        self._check_config_agrees()

        self._core = _RustCore(tokenizer_json)
        self._vocab: dict[str, int] | None = None

        contents = {t.content for t in self._added_tokens_decoder.values()}
        for name in self._special_token_strings():
            if name not in contents and self.convert_tokens_to_ids(name) is None:
                raise ValueError(f"transformers stub: special token {name!r} of tokenizer_config.json is not in "
                                 "tokenizer.json; transformers would add it, the stub does not")

    # -- consistency with tokenizer_config.json (transformers applies it on top of tokenizer.json) --

    def _special_token_strings(self) -> list[str]:
        out: list[str] = []
        for key in _SPECIAL_KEYS:
            v = self._config.get(key)
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str):
                out.append(v)
        for v in self._config.get("additional_special_tokens", []) or []:
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str):
                out.append(v)
        return out

    def _check_config_agrees(self) -> None:
        for sid, entry in (self._config.get("added_tokens_decoder") or {}).items():
            want = AddedToken(entry["content"], single_word=entry.get("single_word", False),
                              lstrip=entry.get("lstrip", False), rstrip=entry.get("rstrip", False),
                              normalized=entry.get("normalized", True), special=entry.get("special", False))
            have = self._added_tokens_decoder.get(int(sid))
            if have is None or have.key() != want.key():
                raise ValueError(f"transformers stub: tokenizer_config.json's added token {sid} {want!r} differs from "
                                 f"tokenizer.json's {have!r}; transformers would re-add it, the stub does not")

    # -- what convert_hf_to_gguf.py reads --

    def get_vocab(self) -> dict[str, int]:
        if self._vocab is None:
            self._vocab = {str(k): int(v) for k, v in self._core.ask(op="vocab")["vocab"].items()}
        return dict(self._vocab)

    @property
    def vocab(self) -> dict[str, int]:
        return self.get_vocab()

    @property
    def vocab_size(self) -> int:
        return int(self._core.ask(op="vocab_size", with_added=False)["size"])

    def __len__(self) -> int:
        return int(self._core.ask(op="vocab_size", with_added=True)["size"])

    @property
    def added_tokens_decoder(self) -> dict[int, AddedToken]:
        return dict(self._added_tokens_decoder)

    def get_added_vocab(self) -> dict[str, int]:
        return {tok.content: idx for idx, tok in sorted(self._added_tokens_decoder.items())}

    def encode(self, text: str, text_pair: Any = None, add_special_tokens: bool = True, **kwargs: Any) -> list[int]:
        if text_pair is not None or any(v not in (None, False) for v in kwargs.values()):
            raise NotImplementedError(f"transformers stub: encode() with {text_pair=!r} {kwargs=!r}")
        if not isinstance(text, str):
            raise NotImplementedError("transformers stub: encode() of pre-tokenized input")
        return [int(i) for i in self._core.ask(op="encode", text=text, add_special_tokens=add_special_tokens)["ids"]]

    def decode(self, token_ids: Any, skip_special_tokens: bool = False,
               clean_up_tokenization_spaces: bool | None = None, **kwargs: Any) -> str:
        if kwargs:
            raise NotImplementedError(f"transformers stub: decode() with {kwargs=!r}")
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        text = self._core.ask(op="decode", ids=[int(i) for i in token_ids],
                              skip_special_tokens=skip_special_tokens)["text"]
        if clean_up_tokenization_spaces is None:
            configured = self._config.get("clean_up_tokenization_spaces")
            if configured is None and _clean_up_tokenization(text) != text:
                # transformers' default for a missing key changed between versions (True before 4.45, then False)
                raise NotImplementedError("transformers stub: decode() result depends on the transformers version "
                                          f"(clean_up_tokenization_spaces unset): {text!r}")
            clean_up_tokenization_spaces = bool(configured)
        return _clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self._core.ask(op="token_to_id", token=tokens)["id"]
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes the class does not define
        raise AttributeError(f"transformers stub: the tokenizer has no {name!r} (not needed by the architectures the "
                             "minfer convert-ref harness covers; extend scripts/convert_ref/transformers)")

    def __del__(self) -> None:
        core = self.__dict__.get("_core")
        if core is not None:
            try:
                core.close()
            except Exception:
                pass


class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> FastTokenizer:
        allowed = {"trust_remote_code", "cache_dir", "local_files_only"}
        if args or set(kwargs) - allowed:
            raise NotImplementedError(f"transformers stub: AutoTokenizer.from_pretrained{args!r} {kwargs!r}")
        path = Path(pretrained_model_name_or_path)
        if not path.is_dir():
            raise OSError(f"transformers stub: {path} is not a local directory")
        return FastTokenizer(path)


__all__ = ["AutoConfig", "AutoTokenizer", "AddedToken"]
