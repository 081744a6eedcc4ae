#!/usr/bin/env bash
# `minfer tensor FILE T --dump -` as a whole process against the plain program that reads the tensor
# with ggml's to_float in chunks (minfer-bench-ggml-dump, bench/ggml_dump.cpp; libggml-base.so from
# scripts/llama-ref.sh), on one 64 Mi-value tensor per type (minfer-bench-make-model --dump-types,
# 1.3 GB in a temporary directory, in the page cache after the first read). Output to /dev/null on
# both sides; runs interleaved, N each (default 5), median wall time and median peak RSS (GNU time).
# The outputs of both are compared once per type (SHA-256 of the f32 stream).
#
#   scripts/bench-dump.sh [runs] [types…]      (builds the release preset)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-5}
shift || true
cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer minfer-bench-make-model minfer-bench-ggml-dump -j 2 >/dev/null
if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  MINFER_LLAMA_LIB=$(scripts/llama-ref.sh)
fi
export MINFER_LLAMA_LIB
bin="$root/build/release"
dir=$(mktemp -d "${TMPDIR:-/tmp}/minfer-bench-dump.XXXXXX")
trap 'rm -rf "$dir"' EXIT
model="$dir/types.gguf"
"$bin/bench/minfer-bench-make-model" "$model" --dump-types
cat "$model" >/dev/null  # in the page cache for both sides
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K iq2_xxs iq2_xs iq2_s
                                 iq3_xxs iq3_s iq1_s iq1_m iq4_nl iq4_xs tq1_0 tq2_0 mxfp4)
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
time_run() {  # prints "seconds rss_kib"; status of the command
  local t0 t1
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$dir/rss" "$@" >/dev/null 2>>"$dir/err" || return 1
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') $(tail -1 "$dir/rss")"
}
printf '%-8s %10s %10s %8s %12s %12s %6s\n' type "ggml s" "minfer s" ratio "ggml RSS KiB" "minfer RSS" same
for t in "${types[@]}"; do
  : >"$dir/g"; : >"$dir/m"
  for ((r = 0; r < runs; r++)); do
    if ((r % 2 == 0)); then
      time_run "$bin/bench/minfer-bench-ggml-dump" "$model" "$t" >>"$dir/g" || echo "x x" >>"$dir/g"
      time_run "$bin/cli/minfer" tensor "$model" "$t" --dump - >>"$dir/m"
    else
      time_run "$bin/cli/minfer" tensor "$model" "$t" --dump - >>"$dir/m"
      time_run "$bin/bench/minfer-bench-ggml-dump" "$model" "$t" >>"$dir/g" || echo "x x" >>"$dir/g"
    fi
  done
  if grep -q x "$dir/g"; then
    gt=absent; gm=absent; ratio="-"; same="-"
  else
    gt=$(awk '{print $1}' "$dir/g" | median); gm=$(awk '{print $2}' "$dir/g" | median)
    ratio=$(awk -v g="$gt" -v m="$(awk '{print $1}' "$dir/m" | median)" 'BEGIN { printf "%.2f", g / m }')
    a=$("$bin/bench/minfer-bench-ggml-dump" "$model" "$t" | sha256sum | cut -c1-16)
    b=$("$bin/cli/minfer" tensor "$model" "$t" --dump - | sha256sum | cut -c1-16)
    same=$([ "$a" = "$b" ] && echo yes || echo NO)
  fi
  printf '%-8s %10s %10s %8s %12s %12s %6s\n' "$t" "$gt" "$(awk '{print $1}' "$dir/m" | median)" "$ratio" "$gm" \
    "$(awk '{print $2}' "$dir/m" | median)" "$same"
done
echo "ratio = ggml s / minfer s (> 1: minfer faster); the issue's bound: >= 1.0 every type, >= 1.5 q6_K, IQ, f16; RSS <= 32768 KiB"
