#!/usr/bin/env bash
# Print, as a markdown table, `minfer estimate` next to what llama.cpp itself allocates, for each
# synthetic architecture model of tests/estimate (minfer-make-arch-model), at three context sizes and
# two cache types: KV cache (+ recurrent state) bytes, exact on both sides, and the CPU compute buffer.
# llama.cpp's side is read by minfer-llama-memory (tests/estimate/README.md) with swa_full off, as
# llama-server and llama-cli run it.
#   scripts/estimate-vs-llama.sh [BUILD_DIR]      (default build/quick; needs the tests built)
# Needs python3 (JSON) and the llama.cpp library (scripts/llama-ref.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/quick}
minfer=$build/cli/minfer
make_model=$build/tests/estimate/minfer-make-arch-model
llama_mem=$build/tests/estimate/minfer-llama-memory
for b in "$minfer" "$make_model" "$llama_mem"; do
  [ -x "$b" ] || { echo "estimate-vs-llama: $b not built (cmake --build --preset quick --target minfer minfer-make-arch-model minfer-llama-memory)" >&2; exit 2; }
done
if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  MINFER_LLAMA_LIB=$("$root/scripts/llama-ref.sh") || { echo "estimate-vs-llama: llama.cpp library unavailable" >&2; exit 3; }
  export MINFER_LLAMA_LIB
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
archs="llama llama-moe qwen2 qwen3 qwen3moe gemma2 gemma3 phi3 deepseek2 mamba openelm"
echo "| architecture | ctx | cache | KV bytes: estimate | KV bytes: llama.cpp | KV | compute MiB: estimate | compute MiB: llama.cpp | compute diff |"
echo "|---|---:|---|---:|---:|---|---:|---:|---:|"
for arch in $archs; do
  model=$tmp/$arch.gguf
  "$make_model" "$arch" "$model"
  for ctx in 256 1000 4096; do
    for type in f16 q8_0; do
      est=$("$minfer" estimate "$model" --ctx "$ctx" --cache-type-k "$type" --cache-type-v "$type" --json)
      ref=$("$llama_mem" "$model" --ctx "$ctx" --cache-type-k "$type" --cache-type-v "$type" --swa-full off --no-decode)
      python3 - "$arch" "$ctx" "$type" "$est" "$ref" <<'PY'
import json, sys
arch, ctx, typ, est, ref = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
kv_e = est["kv_cache_bytes"]
kv_r = ref["kv_cache_bytes"] + ref["recurrent_state_bytes"]
c_e = est["cpu_only"]["cpu"]["compute_buffer_bytes"]
c_r = ref["compute_buffer_bytes"]
mib = lambda b: b / 1048576.0
if kv_e is None or c_e is None:
    print(f"| {arch} | {ctx} | {typ} | unknown architecture | {kv_r} | - | - | {mib(c_r):.2f} | - |")
    sys.exit(0)
print(f"| {arch} | {ctx} | {typ} | {kv_e} | {kv_r} | {'equal' if kv_e == kv_r else 'DIFFERENT'} | "
      f"{mib(c_e):.2f} | {mib(c_r):.2f} | {100.0 * (c_e - c_r) / c_r:+.1f} % |")
PY
    done
  done
done
