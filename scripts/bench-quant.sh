#!/usr/bin/env bash
# Dequantization speed against ggml's to_float (bench/bench_quant.cpp): builds minfer-bench-quant in
# release and runs it with llama.cpp's libggml-base.so (scripts/llama-ref.sh) for the ggml columns
# and the bit check. Without the library the ggml columns say "absent".
#
#   scripts/bench-quant.sh [--values N] [--reps K] [--types a,b,c] [--markdown] [--check]
#
# --markdown prints the tables for docs/PERFORMANCE.md. The machine should be otherwise idle: the
# numbers are single-threaded rates against the store bandwidth measured in the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer-bench-quant -j 2 >/dev/null
if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  MINFER_LLAMA_LIB=$(scripts/llama-ref.sh) || MINFER_LLAMA_LIB=""
fi
export MINFER_LLAMA_LIB
exec "$root/build/release/bench/minfer-bench-quant" "$@"
