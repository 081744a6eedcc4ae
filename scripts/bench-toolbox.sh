#!/usr/bin/env bash
# edit / split / merge against `cp` of the same file, in the same run, on the same files: a dense
# model (incompressible tensor bytes: the disk and the copy path are measured) and a sparse one of
# several GB (all holes: what a tool does with holes, and the memory it holds whatever the size),
# then `edit --in-place` on models of three sizes (its cost must not depend on the size).
# Every copy ends durable: cp is followed by `sync FILE` (an fsync), as minfer fsyncs what it writes.
# Prints median wall time (bash's microsecond clock) and median peak RSS (GNU time's %M) per command,
# throughput, and the ratio to cp; checks that split+merge gives the input back byte for byte.
#
#   scripts/bench-toolbox.sh [dense_MiB=2048] [sparse_MiB=8192] [runs=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dense_mib=${1:-2048}
sparse_mib=${2:-8192}
runs=${3:-3}

cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer minfer-bench-make-model -j 2 >/dev/null
bin="$root/build/release"
minfer="$bin/cli/minfer"
make_model="$bin/bench/minfer-bench-make-model"

dir=$(mktemp -d -p "$root/build" bench-toolbox.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$make_model" "$dir/dense.gguf" "$dense_mib"
"$make_model" "$dir/sparse.gguf" "$sparse_mib" --sparse
"$make_model" "$dir/small.gguf" 64

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# timed NAME CMD...: run once, append "seconds rss_kib" to $dir/NAME.t
timed() {
  local name=$1; shift
  local t0 t1
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$dir/rss" "$@" >/dev/null
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') $(tail -1 "$dir/rss")" >>"$dir/$name.t"
}
cp_synced() { cp "$1" "$2" && sync "$2"; }

for kind in dense sparse; do
  m="$dir/$kind.gguf"
  for ((r = 0; r < runs; r++)); do
    rm -f "$dir/out.gguf"; timed "$kind.cp" bash -c "$(declare -f cp_synced); cp_synced '$m' '$dir/out.gguf'"
    rm -f "$dir/out.gguf"; timed "$kind.edit" "$minfer" edit "$m" -o "$dir/out.gguf" --name "edited $r" --quiet
    rm -f "$dir/out.gguf" "$dir"/part-*; timed "$kind.split" "$minfer" split "$m" "$dir/part" --split-max-size 1GiB --quiet
    rm -f "$dir/merged.gguf"; timed "$kind.merge" "$minfer" merge "$(ls "$dir"/part-00001-of-*.gguf)" "$dir/merged.gguf" --quiet
    cmp "$m" "$dir/merged.gguf" || { echo "bench-toolbox: split+merge of $kind did not give the input back" >&2; exit 1; }
    rm -f "$dir/merged.gguf" "$dir"/part-*
  done
done

# In place: the same edit on three sizes; each run sets a name of another length.
for kind in small dense sparse; do
  for ((r = 0; r < runs; r++)); do
    timed "$kind.inplace" "$minfer" edit "$dir/$kind.gguf" --in-place --name "in place $r$(printf '%*s' $((r * 7)) '')" --quiet
  done
done

size_of() { stat -c %s "$dir/$1.gguf"; }
printf '\n%-8s %-8s %11s %10s %10s %12s\n' model command "median s" "GB/s" "x cp time" "peak RSS KiB"
for kind in dense sparse; do
  bytes=$(size_of "$kind")
  cp_t=$(awk '{print $1}' "$dir/$kind.cp.t" | median)
  for cmd in cp edit split merge; do
    t=$(awk '{print $1}' "$dir/$kind.$cmd.t" | median)
    rss=$(awk '{print $2}' "$dir/$kind.$cmd.t" | median)
    awk -v k="$kind" -v c="$cmd" -v t="$t" -v b="$bytes" -v cp="$cp_t" -v rss="$rss" \
      'BEGIN { printf "%-8s %-8s %11.3f %10.2f %10.2f %12d\n", k, c, t, b / t / 1e9, t / cp, rss }'
  done
done
printf '\n%-8s %14s %11s %12s\n' model "size MiB" "in-place s" "peak RSS KiB"
for kind in small dense sparse; do
  t=$(awk '{print $1}' "$dir/$kind.inplace.t" | median)
  rss=$(awk '{print $2}' "$dir/$kind.inplace.t" | median)
  printf '%-8s %14d %11.4f %12d\n' "$kind" $(( $(size_of "$kind") / 1048576 )) "$t" "$rss"
done
echo "($runs runs each; dense = incompressible bytes, sparse = all holes; cp = cp + sync FILE)"
