#!/usr/bin/env bash
# edit / split / merge against `cp` of the same file, in the same run, on the same files: a dense
# model (incompressible tensor bytes: the copy path and the disk are measured) and a sparse one of
# several GB (all holes: what a tool does with holes, and the memory it holds whatever the size),
# then `edit --in-place` on models of three sizes (its cost must not depend on the size).
#
# Every copy ends durable: cp is followed by `sync FILE` (an fsync), as minfer fsyncs what it writes.
# The disk of a cloud VM is noisy (the same cp takes 2 s or 14 s minutes apart), so each command is
# timed as a pair with a cp made just before or just after it (alternating), and the ratio reported
# is the median of the pairs' ratios. The dense model is measured twice: on the disk (the real
# case) and on /dev/shm (no disk: the tool's own cost, as steady as the machine gets).
# Prints median wall time (bash's microsecond clock), median peak RSS (GNU time's %M), throughput;
# checks that split+merge gives the input back byte for byte.
#
#   scripts/bench-toolbox.sh [dense_MiB=2048] [sparse_MiB=8192] [runs=5]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dense_mib=${1:-2048}
sparse_mib=${2:-8192}
runs=${3:-5}

cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release --target minfer minfer-bench-make-model -j 2 >/dev/null
bin="$root/build/release"
minfer="$bin/cli/minfer"
make_model="$bin/bench/minfer-bench-make-model"

disk=$(mktemp -d -p "$root/build" bench-toolbox.XXXXXX)
shm=$(mktemp -d -p /dev/shm minfer-bench-toolbox.XXXXXX)
trap 'rm -rf "$disk" "$shm"' EXIT
res="$disk/results"
mkdir -p "$res"
"$make_model" "$disk/dense.gguf" "$dense_mib"
"$make_model" "$shm/dense.gguf" "$dense_mib"
"$make_model" "$disk/sparse.gguf" "$sparse_mib" --sparse
"$make_model" "$disk/small.gguf" 64

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# timed NAME CMD...: run once; append "seconds rss_kib" to $res/NAME.t and leave the seconds in $last
last=0
timed() {
  local name=$1; shift
  local t0 t1
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$res/rss" "$@" >/dev/null
  t1=$EPOCHREALTIME
  last=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  echo "$last $(tail -1 "$res/rss")" >>"$res/$name.t"
}
cp_synced() { cp "$1" "$2" && sync "$2"; }
export -f cp_synced

# pair KEY r CMD...: the command and a cp of the same input, in an order that alternates with r;
# appends the ratio command/cp to $res/KEY.ratio. $m is the input, $d the directory.
pair() {
  local key=$1 r=$2; shift 2
  local t_cmd t_cp
  if (( r % 2 == 0 )); then
    rm -f "$d/cp.gguf"; timed "$key.cp" bash -c "cp_synced '$m' '$d/cp.gguf'"; t_cp=$last; rm -f "$d/cp.gguf"
    timed "$key" "$@"; t_cmd=$last
  else
    timed "$key" "$@"; t_cmd=$last
    rm -f "$d/cp.gguf"; timed "$key.cp" bash -c "cp_synced '$m' '$d/cp.gguf'"; t_cp=$last; rm -f "$d/cp.gguf"
  fi
  awk -v a="$t_cmd" -v b="$t_cp" 'BEGIN { printf "%.4f\n", a / b }' >>"$res/$key.ratio"
}

for where in disk shm sparse; do
  case $where in
    disk) d=$disk; m=$disk/dense.gguf ;;
    shm) d=$shm; m=$shm/dense.gguf ;;
    sparse) d=$disk; m=$disk/sparse.gguf ;;
  esac
  for ((r = 0; r < runs; r++)); do
    rm -f "$d/out.gguf"; pair "$where.edit" "$r" "$minfer" edit "$m" -o "$d/out.gguf" --name "edited $r" --quiet
    rm -f "$d/out.gguf" "$d"/part-*
    pair "$where.split" "$r" "$minfer" split "$m" "$d/part" --split-max-size 1GiB --quiet
    rm -f "$d/merged.gguf"
    pair "$where.merge" "$r" "$minfer" merge "$(ls "$d"/part-00001-of-*.gguf)" "$d/merged.gguf" --quiet
    cmp "$m" "$d/merged.gguf" || { echo "bench-toolbox: split+merge of $m did not give it back" >&2; exit 1; }
    rm -f "$d/merged.gguf" "$d"/part-*
  done
done

# In place: the same edit on three sizes; each run sets a name of another length.
for kind in small dense sparse; do
  for ((r = 0; r < runs; r++)); do
    timed "$kind.inplace" "$minfer" edit "$disk/$kind.gguf" --in-place --name "in place $r$(printf '%*s' $((r * 7)) '')" --quiet
  done
done

printf '\n%-7s %-7s %10s %10s %9s %14s %12s\n' where command "median s" "GB/s" "cp s" "x cp (pairs)" "peak RSS KiB"
for where in disk shm sparse; do
  case $where in disk|shm) f=dense ;; sparse) f=sparse ;; esac
  bytes=$(stat -c %s "$disk/$f.gguf")
  for cmd in edit split merge; do
    t=$(awk '{print $1}' "$res/$where.$cmd.t" | median)
    cpt=$(awk '{print $1}' "$res/$where.$cmd.cp.t" | median)
    ratio=$(median <"$res/$where.$cmd.ratio")
    rss=$(awk '{print $2}' "$res/$where.$cmd.t" | median)
    awk -v w="$where" -v c="$cmd" -v t="$t" -v b="$bytes" -v cp="$cpt" -v q="$ratio" -v rss="$rss" \
      'BEGIN { printf "%-7s %-7s %10.3f %10.2f %9.3f %14.2f %12d\n", w, c, t, b / t / 1e9, cp, q, rss }'
  done
  rss=$(awk '{print $2}' "$res/$where.edit.cp.t" | median)
  echo "        (cp's own peak RSS: $rss KiB)"
done
printf '\n%-8s %14s %11s %12s\n' model "size MiB" "in-place s" "peak RSS KiB"
for kind in small dense sparse; do
  t=$(awk '{print $1}' "$res/$kind.inplace.t" | median)
  rss=$(awk '{print $2}' "$res/$kind.inplace.t" | median)
  printf '%-8s %14d %11.4f %12d\n' "$kind" $(( $(stat -c %s "$disk/$kind.gguf") / 1048576 )) "$t" "$rss"
done
echo "($runs runs each; dense = incompressible bytes ($dense_mib MiB), sparse = all holes ($sparse_mib MiB);"
echo " cp = cp + sync FILE; x cp = median over runs of (command time / the paired cp's time))"
