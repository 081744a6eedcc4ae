#!/usr/bin/env bash
# Build and run minfer's open-time benchmark (bench/, Google Benchmark) and print its summary:
# minfer::gguf::model::open vs llama.cpp's gguf_init_from_file vs a bare-walk floor, on generated
# Qwen2.5-0.5B-shaped fixtures (one file and a 2-part split), plus lookups, RSS and page faults;
# then `minfer info` in each output mode on the same fixture (scripts/bench-cli.sh).
#
#   scripts/bench.sh [--smoke] [minfer-bench flags…]
#     --smoke   one repetition with a short min time (CI: only checks that it runs and exits 0)
#   Other flags go to minfer-bench, e.g. --large (fixtures with 262k tokens, 100k tensors, 1M KVs),
#   --keep-fixtures, --no-rss, --benchmark_filter=open.
#
# The llama.cpp reference library comes from scripts/llama-ref.sh (npm); without it those rows
# are skipped. Set MINFER_LLAMA_LIB to use a library of your own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

smoke=0
args=()
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1 ;;
    *) args+=("$a") ;;
  esac
done

cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer-bench -j 2

if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  if lib=$(bash scripts/llama-ref.sh); then
    export MINFER_LLAMA_LIB="$lib"
  else
    echo "bench: llama.cpp reference unavailable; its benchmarks will be skipped" >&2
  fi
fi

bin="$root/build/release/bench/minfer-bench"
if [ "$smoke" = 1 ]; then
  exec "$bin" --benchmark_repetitions=1 --benchmark_min_time=0.01 ${args[@]+"${args[@]}"}
fi
# Interleaving the repetitions of all benchmarks spreads load from other processes evenly over
# them, which keeps the ratios honest on a shared machine.
"$bin" --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true ${args[@]+"${args[@]}"}
# Then the command line on the same fixture: info --json against info --full, and the floor.
echo
echo "== minfer info on the Qwen-shaped fixture (scripts/bench-cli.sh)"
bash scripts/bench-cli.sh
