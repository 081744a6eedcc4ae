#!/usr/bin/env bash
# Run the libFuzzer targets. Usage: scripts/fuzz.sh [seconds-per-target] [target ...]
# Builds the `fuzz` preset (clang, ASan+UBSan with -fno-sanitize-recover=all, libFuzzer), seeds each
# corpus from the writer-made seeds, the committed regression corpus and the real fixtures, then
# fuzzes each target in turn. Without target names it runs every target listed in
# MINFER_FUZZ_TARGETS (fuzz/CMakeLists.txt, written to build/fuzz/fuzz/targets.txt at configure).
# A target is named without its fuzz_ prefix (parse, access, split, ...).
# New crashes land in build/fuzz/findings/<target>/; copy minimised ones to fuzz/corpus/<target>/.
# Exits non-zero when any target finds a crash, a leak, undefined behaviour or a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
. scripts/ccache-env.sh
secs=${1:-60}; shift || true
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  read -r -a declared < <(tr ';' ' ' < build/fuzz/fuzz/targets.txt)
  for t in "${declared[@]}"; do targets+=("${t#fuzz_}"); done
  # a fuzz_*.cpp with an entry point that is not in the list would never run: refuse it
  for src in fuzz/fuzz_*.cpp; do
    grep -q LLVMFuzzerTestOneInput "$src" || continue
    name=$(basename "$src" .cpp)
    [[ " ${declared[*]} " == *" $name "* ]] || { echo "fuzz: $src is not in MINFER_FUZZ_TARGETS" >&2; exit 1; }
  done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets" >&2; exit 1; }
# The seed writer is a plain program (not instrumented): the one a dev, quick or release build made,
# else a release build of it.
make_seeds=""
for preset in dev quick release; do
  if [ -x "build/$preset/fuzz/fuzz_make_seeds" ]; then
    cmake --build "build/$preset" --target fuzz_make_seeds >/dev/null && make_seeds=build/$preset/fuzz/fuzz_make_seeds && break
  fi
done
if [ -z "$make_seeds" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target fuzz_make_seeds
  make_seeds=build/release/fuzz/fuzz_make_seeds
fi
seeds=build/fuzz/seeds
"$make_seeds" "$seeds" >/dev/null
# One target: seed its corpus, fuzz it, leave its log and its exit status in $findings.
fuzz_one() {
  local t=$1 corpus=build/fuzz/corpus/$1 findings=build/fuzz/findings/$1
  mkdir -p "$corpus" "$findings"
  local seed_dir=$t  # targets that read GGUF files share the parse seeds (fuzz/CMakeLists.txt says the same)
  case $t in roundtrip|edit|head) seed_dir=parse ;; esac
  cp -n "$seeds/$seed_dir"/* "$corpus"/ 2>/dev/null || true
  cp -n fuzz/corpus/"$seed_dir"/* "$corpus"/ 2>/dev/null || true
  case $t in access|journal|quant|manifest|value_check|content_range|quantize_args|assemble_config|safetensors|hf_config|sentencepiece|bpe_tokenizer|model_card) ;; *) cp -n ../shared/fixtures/real/*.gguf "$corpus"/ 2>/dev/null || true ;; esac
  local dict=fuzz/gguf.dict  # a target's own dictionary when it has one (fuzz/<target>.dict)
  [ -f "fuzz/$t.dict" ] && dict=fuzz/$t.dict
  local rc=0
  build/fuzz/fuzz/fuzz_"$t" "$corpus" -dict="$dict" -max_total_time="$secs" -max_len=65536 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/" > "$findings/log.txt" 2>&1 || rc=$?
  echo "$rc" > "$findings/status"
}
# FUZZ_JOBS targets at a time (default: one per core): each fuzzer is single-threaded.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  rm -f "build/fuzz/findings/$t/status"
  echo "== fuzz_$t for ${secs}s"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
status=0
for t in "${targets[@]}"; do
  findings=build/fuzz/findings/$t
  echo "== fuzz_$t"
  if [ "$(cat "$findings/status" 2>/dev/null || echo missing)" != 0 ]; then
    echo "fuzz_$t FAILED (log: $findings/log.txt):"; status=1
  fi
  tail -25 "$findings/log.txt"
done
exit $status
