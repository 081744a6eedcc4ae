#!/usr/bin/env bash
# The command line on the Qwen2.5-0.5B-shaped fixture (the one scripts/bench.sh times open on):
# `minfer info` in each output mode, whole process, output discarded, against the process that only
# maps and walks the file (`minfer-bench-floor`, the floor) and the process that parses it with
# llama.cpp's gguf_init_from_file (`minfer-bench-llama-parse`, libggml-base.so from
# scripts/llama-ref.sh; both in bench/parse_process.cpp). Runs are interleaved, N each;
# prints the median wall time and the median peak RSS (GNU time's %M) of every command, and the
# ratios that matter: --json / --full (streaming JSON: the issue's bound is ≤ 2×) and
# --no-mmap / default (what immunity to SIGBUS costs).
#
#   scripts/bench-cli.sh [runs]      (default 15; builds the release preset)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-15}

cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer minfer-bench minfer-bench-floor minfer-bench-llama-parse -j 2 >/dev/null
if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  MINFER_LLAMA_LIB=$(scripts/llama-ref.sh)
fi
export MINFER_LLAMA_LIB
bin="$root/build/release"

out=$("$bin/bench/minfer-bench" --keep-fixtures --no-rss --benchmark_filter='^$' 2>&1)
dir=$(printf '%s\n' "$out" | sed -n 's/^fixtures kept in //p')
[ -n "$dir" ] || { echo "bench-cli: no fixture directory in minfer-bench's output" >&2; exit 1; }
trap 'rm -rf "$dir"' EXIT
model="$dir/qwen2.5-0.5b-instruct-q4_0.gguf"
[ -f "$model" ] || model=$(ls "$dir"/qwen2.5-0.5b-instruct-q4_0*.gguf | grep -v -- '-of-' | head -1)

echo "ldd minfer: $(ldd "$bin/cli/minfer" | awk '{print $1}' | tr '\n' ' ')"
declare -a names=("floor (map+walk)" "info" "info --full" "info --json" "info --no-mmap --full" "llama.cpp parse")
declare -a cmds=("$bin/bench/minfer-bench-floor $model"
                 "$bin/cli/minfer info $model"
                 "$bin/cli/minfer info --full $model"
                 "$bin/cli/minfer info --json $model"
                 "$bin/cli/minfer info --no-mmap --full $model"
                 "$bin/bench/minfer-bench-llama-parse $model")
tmp=$(mktemp -d)
trap 'rm -rf "$dir" "$tmp"' EXIT
# Wall time from bash's microsecond clock around the whole process (GNU time's %e has 10 ms steps);
# peak RSS from GNU time's %M.
for ((r = 0; r < runs; r++)); do
  for i in "${!cmds[@]}"; do
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$tmp/rss" ${cmds[$i]} >/dev/null 2>>"$tmp/err$i" || true
    t1=$EPOCHREALTIME
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') $(tail -1 "$tmp/rss")" >>"$tmp/$i"
  done
done
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-26s %12s %14s\n' "command ($(( $(stat -c %s "$model") / 1048576 )) MiB file, $runs runs)" "median s" "median RSS KiB"
declare -a t m
for i in "${!cmds[@]}"; do
  t[$i]=$(awk '{print $1}' "$tmp/$i" | median)
  m[$i]=$(awk '{print $2}' "$tmp/$i" | median)
  printf '%-26s %12s %14s\n' "${names[$i]}" "${t[$i]}" "${m[$i]}"
done
awk -v j="${t[3]}" -v f="${t[2]}" -v n="${t[4]}" -v i="${t[1]}" -v fl="${t[0]}" 'BEGIN {
  if (f > 0) printf "info --json / info --full: %.2fx time\n", j / f;
  if (f > 0) printf "info --no-mmap --full / info --full: %.2fx time\n", n / f;
  if (fl > 0) printf "info / floor: %.2fx time (bound: <= 1.3)\n", i / fl }'
awk -v i="${t[1]}" -v l="${t[5]}" 'BEGIN { if (i > 0) printf "llama.cpp parse / info: %.2fx time (bound: >= 10)\n", l / i }'
awk -v i="${m[1]}" -v fl="${m[0]}" 'BEGIN { if (fl > 0) printf "info / floor: %.2fx peak RSS (bound: <= 1.3)\n", i / fl }'
awk -v j="${m[3]}" -v f="${m[2]}" 'BEGIN { if (f > 0) printf "info --json / info --full: %.2fx peak RSS\n", j / f }'
