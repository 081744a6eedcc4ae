#!/usr/bin/env bash
# Run the libFuzzer targets. Usage: scripts/fuzz.sh [seconds-per-target] [target ...]
# Builds the `fuzz` preset (clang, ASan+UBSan, libFuzzer), seeds each corpus from the writer-made
# seeds, the committed regression corpus and the real fixtures, then fuzzes each target in turn.
# New crashes land in build/fuzz/findings/<target>/; copy minimised ones to fuzz/corpus/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
secs=${1:-60}; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(parse access split)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
cmake --preset release >/dev/null
cmake --build --preset release --target fuzz_make_seeds
seeds=build/fuzz/seeds
build/release/fuzz/fuzz_make_seeds "$seeds" >/dev/null
for t in "${targets[@]}"; do
  corpus=build/fuzz/corpus/$t; findings=build/fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  cp -n "$seeds/$t"/* "$corpus"/ 2>/dev/null || true
  cp -n fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  [ "$t" = access ] || cp -n ../shared/fixtures/real/*.gguf "$corpus"/ 2>/dev/null || true
  echo "== fuzz_$t for ${secs}s"
  build/fuzz/fuzz/fuzz_"$t" "$corpus" -dict=fuzz/gguf.dict -max_total_time="$secs" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/" 2>&1 | tail -25
done
