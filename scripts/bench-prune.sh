#!/usr/bin/env bash
# `minfer prune` as a whole process against `cp` of its own output, in the same run (issue 30: a
# prune of a local model at >= 0.8x the speed of cp of the output, peak RSS <= 64 MiB whatever the
# model size). Two cases on the bench models of bench/make_quant_model.cpp (made once in DIR):
#   layers   the 4-layer f16 llama model (586 MiB), --layers 1-2 removed (kernel-copied ranges)
#   experts  a 4-layer f16 MoE of 8 experts (bench-L4-E8), --experts 0-3 removed (each expert tensor
#            gathered from the kept experts' ranges through the writer's buffer)
#   passthrough  `minfer assemble` of a mergekit passthrough config stacking layers [0, 2) and [2, 4)
#            of the 4-layer model (the same model, every tensor a kernel-copied range)
#
#   scripts/bench-prune.sh
#   ROUNDS=5 DIR=/var/tmp/minfer-bench scripts/bench-prune.sh
#   LAYERS=180 CASES="layers passthrough" ROUNDS=2 scripts/bench-prune.sh   # a 15 GiB model: outputs
#       larger than the page cache takes dirty (vm.dirty_ratio), where cp too waits for the device
#
# LAYERS (default 4) sizes the dense model (about 86 MiB a layer); the experts case keeps the 4-layer MoE.
#
# The input is read once first (cat > /dev/null) so both sides start with it in the page cache.
# Each round runs prune into a fresh OUT (fsync and rename included: minfer's outputs are durable),
# then `cp OUT COPY` (coreutils: copy_file_range, no fsync) and `cp OUT COPY2 && sync COPY2` (the
# same copy made durable: what prune promises); the table keeps the faster run of each side and the
# largest peak RSS. ratio = cp s / prune s and (cp + sync) s / prune s (>= 0.8 is the requirement).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${ROUNDS:-5}
layers=${LAYERS:-4}
cases=${CASES:-layers experts passthrough}
dir=${DIR:-/var/tmp/minfer-bench}
[ -x /usr/bin/time ] || { echo "bench-prune: needs GNU time (apt-get install -y time)" >&2; exit 1; }
cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target minfer minfer-bench-quant-model >/dev/null
bin="$root/build/release"
mkdir -p "$dir"
dense="$dir/bench-L$layers-f16.gguf"
moe="$dir/bench-L4-E8-f16.gguf"
[ -s "$dense" ] || "$bin/bench/minfer-bench-quant-model" "$dense" --layers "$layers"
[ -s "$moe" ] || "$bin/bench/minfer-bench-quant-model" "$moe" --layers 4 --experts 8
res=$(mktemp -d -p "$dir" prune.XXXXXX)
trap 'rm -rf "$res"' EXIT

best() { sort -n | head -1; }
printf '| case | input MiB | output MiB | prune s | cp s | cp + sync s | ratio to cp | ratio to cp + sync | prune peak RSS MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
cfg="$res/stack.yaml"
half=$((layers / 2))
printf 'merge_method: passthrough\nslices:\n  - sources:\n      - model: %s\n        layer_range: [0, %d]\n  - sources:\n      - model: %s\n        layer_range: [%d, %d]\n' "$dense" "$half" "$dense" "$half" "$layers" >"$cfg"
for case in $cases; do
  case $case in
    layers) in=$dense; cmd=(prune "$dense" --layers 1-2) ;;
    experts) in=$moe; cmd=(prune "$moe" --experts 0-3) ;;
    passthrough) in=$dense; cmd=(assemble "$cfg") ;;
  esac
  out="$res/out.gguf"; copy="$res/copy.gguf"
  cat "$in" >/dev/null
  : >"$res/prune"; : >"$res/cp"; : >"$res/cps"; : >"$res/rss"
  for ((r = 0; r < rounds; r++)); do
    rm -f "$out"
    /usr/bin/time -f "%e %M" -o "$res/t" "$bin/cli/minfer" "${cmd[@]}" -o "$out" --quiet
    read -r s kib <"$res/t"; echo "$s" >>"$res/prune"; echo "$kib" >>"$res/rss"
    rm -f "$copy"
    /usr/bin/time -f "%e" -o "$res/t" cp "$out" "$copy"
    cat "$res/t" >>"$res/cp"
    rm -f "$copy"
    /usr/bin/time -f "%e" -o "$res/t" sh -c 'cp "$1" "$2" && sync "$2"' sh "$out" "$copy"
    cat "$res/t" >>"$res/cps"
    rm -f "$copy"
  done
  p=$(best <"$res/prune"); c=$(best <"$res/cp"); cs=$(best <"$res/cps"); rss=$(sort -n "$res/rss" | tail -1)
  in_mib=$(( $(stat -c %s "$in") / 1048576 )); out_mib=$(( $(stat -c %s "$out") / 1048576 ))
  ratio=$(awk -v c="$c" -v p="$p" 'BEGIN { printf "%.2f", (p > 0 ? c / p : 0) }')
  ratio_sync=$(awk -v c="$cs" -v p="$p" 'BEGIN { printf "%.2f", (p > 0 ? c / p : 0) }')
  printf '| %s | %d | %d | %s | %s | %s | %s | %s | %d |\n' "$case" "$in_mib" "$out_mib" "$p" "$c" "$cs" "$ratio" "$ratio_sync" $((rss / 1024))
  rm -f "$out"
done
echo "rounds: $rounds (best of each side); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
