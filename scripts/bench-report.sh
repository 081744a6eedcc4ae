#!/usr/bin/env bash
# `minfer report` against its reference (issue 31: --values and comparing at dequantization speed,
# >= 0.8x the time of `minfer tensor --stats` over every tensor; peak RSS <= 128 MiB whatever the
# model), whole processes in the same run:
#   values   `report M --values -o page.html` against `minfer tensor M NAME --stats` for every tensor
#            of M (one process per tensor, their times summed: what a user runs today)
#   compare  `report F16 Q4 -o page.html` (every tensor of both read once) against the same for
#            every tensor of both models
# M is the 4-layer f16 llama bench model (586 MiB) and Q4 its Q4_K_M quantization by minfer; both
# in the page cache first (cat > /dev/null, also timed for scale).
#
#   scripts/bench-report.sh
#   ROUNDS=3 DIR=/var/tmp/minfer-bench scripts/bench-report.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${ROUNDS:-3}
dir=${DIR:-/var/tmp/minfer-bench}
[ -x /usr/bin/time ] || { echo "bench-report: needs GNU time (apt-get install -y time)" >&2; exit 1; }
cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target minfer minfer-bench-quant-model >/dev/null
bin="$root/build/release"
mkdir -p "$dir"
f16="$dir/bench-L4-f16.gguf"
q4="$dir/bench-L4-Q4_K_M.gguf"
[ -s "$f16" ] || "$bin/bench/minfer-bench-quant-model" "$f16" --layers 4
[ -s "$q4" ] || "$bin/cli/minfer" quantize "$f16" "$q4" Q4_K_M --quiet
res=$(mktemp -d -p "$dir" report.XXXXXX)
trap 'rm -rf "$res"' EXIT
names() { "$bin/cli/minfer" info "$1" --json | python3 -c 'import json,sys; [print(t["name"]) for t in json.load(sys.stdin)["tensors"]]'; }
best() { sort -n | head -1; }
stats_all() {  # every tensor of each model given, one process each; prints the summed seconds
  local total=0 t
  for m in "$@"; do
    while read -r n; do
      /usr/bin/time -f "%e" -o "$res/t1" "$bin/cli/minfer" tensor "$m" "$n" --stats >/dev/null
      t=$(cat "$res/t1"); total=$(awk -v a="$total" -v b="$t" 'BEGIN { printf "%.2f", a + b }')
    done < <(names "$m")
  done
  echo "$total"
}
printf '| case | models MiB | report s | tensor --stats, every tensor s | ratio | cat s | report peak RSS MiB | page MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n'
for case in values compare; do
  case $case in
    values) models=("$f16"); cmd=(report "$f16" --values) ;;
    compare) models=("$f16" "$q4"); cmd=(report "$f16" "$q4") ;;
  esac
  cat "${models[@]}" >/dev/null
  : >"$res/r"; : >"$res/s"; : >"$res/c"; rss=0
  for ((r = 0; r < rounds; r++)); do
    rm -f "$res/page.html"
    /usr/bin/time -f "%e %M" -o "$res/t" "$bin/cli/minfer" "${cmd[@]}" -o "$res/page.html" --quiet
    read -r s kib <"$res/t"; echo "$s" >>"$res/r"; [ "$kib" -gt "$rss" ] && rss=$kib
    stats_all "${models[@]}" >>"$res/s"
    /usr/bin/time -f "%e" -o "$res/t" cat "${models[@]}" >/dev/null; cat "$res/t" >>"$res/c"
  done
  rs=$(best <"$res/r"); ss=$(best <"$res/s"); cs=$(best <"$res/c")
  mib=$(stat -c %s "${models[@]}" | awk '{ n += $1 } END { printf "%d", n / 1048576 }')
  ratio=$(awk -v a="$ss" -v b="$rs" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  page=$(awk -v b="$(stat -c %s "$res/page.html")" 'BEGIN { printf "%.2f", b / 1048576 }')
  printf '| %s | %d | %s | %s | %s | %s | %d | %s |\n' "$case" "$mib" "$rs" "$ss" "$ratio" "$cs" $((rss / 1024)) "$page"
done
echo "rounds: $rounds (best of each side); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
