#!/usr/bin/env bash
# `minfer quantize` against llama.cpp's llama_model_quantize (issue 23), in the same run, on the same
# model, with the same threads: wall time, peak RSS and whether the two outputs have the same SHA-256.
#
#   scripts/bench-quantize.sh
#   TYPES="Q4_K_M IQ4_XS" THREADS=2 ROUNDS=2 LAYERS=4 DIR=/var/tmp/minfer-bench scripts/bench-quantize.sh
#
# The model (bench/make_quant_model.cpp: llama, n_embd 2048, n_ff 5632, n_vocab 32000, LAYERS blocks,
# f16, heavy-tailed deterministic weights; 614 MiB with 4 layers) and its imatrix are made once in DIR
# (not the repository) and kept for the next run. llama.cpp's side is bench/llama_quantize_ref.cpp,
# which does what llama-quantize does around llama_model_quantize (the imatrix handed over with the
# tool's quantize.imatrix.* keys) with libllama beside $MINFER_LLAMA_LIB. MINFER_CMD replaces the
# minfer side (default: build/release/cli/minfer quantize ... --quiet; build/release/bench/minfer-bench-quantize-run
# is toolbox::quantize without the CLI).
#
# The input is read once before the runs (cat > /dev/null) so both sides start with it in the page
# cache; nothing is dropped from the cache. Each round runs every type on both sides, llama first in
# even rounds and minfer first in odd ones; the table keeps the faster run of each side (the machine
# may be shared) and the largest peak RSS, and says whether the last round's outputs were identical.
# CPU s (user + sys of the faster run) is printed too: on a loaded machine it moves less than the wall time.
# ratio = llama s / minfer s (> 1: minfer is faster). The requirement (issue 29): every k-quant file
# type at least 3x faster than llama.cpp (ratio >= 3), every IQ type at least 1.5x (ratio >= 1.5),
# Q8_0 and Q4_0 at least as fast (ratio >= 1).
# The types that need an importance matrix (IQ1_*, IQ2_*, IQ3_XXS, IQ3_XS, Q2_K_S) get the model's imatrix on both sides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
types=${TYPES:-"Q4_0 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS IQ3_M IQ3_S IQ3_XS IQ3_XXS IQ2_M IQ2_S IQ2_XS IQ2_XXS IQ1_M IQ1_S"}
threads=${THREADS:-2}
rounds=${ROUNDS:-2}
layers=${LAYERS:-4}
dir=${DIR:-/var/tmp/minfer-bench}

if [ -z "${MINFER_LLAMA_LIB:-}" ]; then
  MINFER_LLAMA_LIB=$(scripts/llama-ref.sh) || { echo "bench-quantize: llama.cpp's library is needed (scripts/llama-ref.sh)" >&2; exit 1; }
fi
export MINFER_LLAMA_LIB
[ -x /usr/bin/time ] || { echo "bench-quantize: needs GNU time (apt-get install -y time)" >&2; exit 1; }

cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target minfer minfer-bench-quant-model minfer-bench-llama-quantize minfer-bench-quantize-run >/dev/null
bin="$root/build/release"
llama_q="$bin/bench/minfer-bench-llama-quantize"
# side_cmd SIDE: the command of one side, in the array cmd (followed by IN OUT TYPE [--imatrix F])
side_cmd() {
  case $1 in
    llama) cmd=("$llama_q") ;;
    minfer) if [ -n "${MINFER_CMD:-}" ]; then read -r -a cmd <<<"$MINFER_CMD"; else cmd=("$bin/cli/minfer" quantize --quiet); fi ;;
  esac
}

mkdir -p "$dir"
model="$dir/bench-L$layers-f16.gguf"
imatrix="$dir/bench-L$layers.imatrix.gguf"
if [ ! -s "$model" ] || [ ! -s "$imatrix" ]; then
  "$bin/bench/minfer-bench-quant-model" "$model" --layers "$layers" --imatrix "$imatrix"
fi
# The raw lines ("seconds rss_kib user_s sys_s" per run, the SHA-256 of each side) stay in $res.
res=$(mktemp -d -p "$dir" results.XXXXXX)
cat "$model" >/dev/null

needs_imatrix() { case $1 in IQ1_*|IQ2_*|IQ3_XXS|IQ3_XS|Q2_K_S) return 0 ;; *) return 1 ;; esac; }
cmd=()
# run SIDE TYPE: one timed run; appends "seconds rss_kib user_s sys_s" to $res/TYPE.SIDE, the output's SHA-256 to $res/TYPE.SIDE.sha
run() {
  local side=$1 type=$2 out="$dir/out-$1-$2.gguf" extra=()
  needs_imatrix "$type" && extra=(--imatrix "$imatrix")
  rm -f "$out"
  side_cmd "$side"
  if ! /usr/bin/time -f "%e %M %U %S" -o "$res/time" "${cmd[@]}" "$model" "$out" "$type" --threads "$threads" "${extra[@]}" >"$res/log" 2>&1; then
    echo "bench-quantize: $side $type failed:" >&2; tail -20 "$res/log" >&2; exit 1
  fi
  tail -1 "$res/time" >>"$res/$type.$side"
  sha256sum "$out" | cut -d' ' -f1 >"$res/$type.$side.sha"
  rm -f "$out"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; r++)); do
  for type in $types; do
    if (( r % 2 == 0 )); then run llama "$type"; run minfer "$type"; else run minfer "$type"; run llama "$type"; fi
    echo "round $((r + 1)) $type: llama $(tail -1 "$res/$type.llama" | cut -d' ' -f1) s, minfer $(tail -1 "$res/$type.minfer" | cut -d' ' -f1) s" >&2
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "Model: $(basename "$model"), $(( $(stat -c %s "$model") / 1048576 )) MiB, $layers layers; threads $threads; best of $rounds rounds"
echo "Raw results: $res"
echo "Machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'); load average before $load_before, after $load_after"
echo
echo "| type | llama s | minfer s | ratio | llama RSS MiB | minfer RSS MiB | SHA-256 equal | requirement | llama CPU s | minfer CPU s |"
echo "|---|---:|---:|---:|---:|---:|---|---|---:|---:|"
for type in $types; do
  # the faster run of each side, with its CPU seconds (user + sys)
  read -r lt lc <<<"$(awk '{print $1, $3 + $4}' "$res/$type.llama" | sort -g | head -1)"
  read -r mt mc <<<"$(awk '{print $1, $3 + $4}' "$res/$type.minfer" | sort -g | head -1)"
  lr=$(cut -d' ' -f2 "$res/$type.llama" | sort -g | tail -1)
  mr=$(cut -d' ' -f2 "$res/$type.minfer" | sort -g | tail -1)
  if cmp -s "$res/$type.llama.sha" "$res/$type.minfer.sha"; then eq=yes; else eq=no; fi
  case $type in IQ*) need=1.5; what=">= 1.5x" ;; Q*_K*) need=3; what=">= 3x" ;; *) need=1; what="at least as fast" ;; esac
  awk -v t="$type" -v lt="$lt" -v mt="$mt" -v lr="$lr" -v mr="$mr" -v eq="$eq" -v lc="$lc" -v mc="$mc" -v need="$need" -v what="$what" 'BEGIN {
    ratio = lt / mt
    printf "| %s | %.2f | %.2f | %.2f | %.0f | %.0f | %s | %s: %s | %.1f | %.1f |\n", t, lt, mt, ratio, lr / 1024, mr / 1024, eq, what,
           (ratio >= need ? "met" : "MISSED"), lc, mc }'
done
