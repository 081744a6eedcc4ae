#!/usr/bin/env bash
# examples/c against the CLI on the project's sample model (single file and a 3-part split set):
# gguf_info prints minfer info's header lines, metadata keys and tensor table; gguf_dequantize writes
# every tensor's values as `minfer tensor --dump` does, byte for byte; both refuse a truncated file.
#   usage: examples_test.sh MINFER MINFER_SAMPLE GGUF_INFO GGUF_DEQUANTIZE WORKDIR
set -euo pipefail
minfer=$1 sample=$2 info=$3 deq=$4 work=$5
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$sample" sample.gguf >/dev/null
"$sample" set.gguf --split 3 >/dev/null
fail() { echo "FAIL: $*"; exit 1; }

# The tensor table: minfer info's rows with runs of spaces collapsed, against the example's rows.
rows() { awk '/^tensors \(/{t=1; getline; next} t && NF==0{t=0} t' | sed 's/  */ /g; s/^ //'; }
"$minfer" info sample.gguf > info.txt
"$info" sample.gguf > example.txt
diff <(rows < info.txt) <(rows < example.txt) > rows.diff || { cat rows.diff; fail "tensor tables differ"; }
grep -q "^$(grep '^GGUF: ' info.txt)\$" example.txt || fail "the GGUF: line differs"
grep -q "^$(grep '^version ' info.txt)\$" example.txt || fail "the version line differs"
keys() { awk '/^metadata \(/{m=1; next} m && NF==0{m=0} m {print $1}' | sort; }
diff <(keys < info.txt) <(keys < example.txt) || fail "metadata keys differ"
n=$(rows < info.txt | wc -l)
[ "$n" -gt 0 ] || fail "no tensors"
echo "gguf_info: $n tensor rows and $(keys < info.txt | wc -l) keys as minfer info"

# Every tensor's values, single file and through the split set.
for t in $(rows < info.txt | cut -d' ' -f1); do
  "$minfer" tensor sample.gguf "$t" --dump ref.f32 --force > /dev/null
  "$deq" sample.gguf "$t" ours.f32 > /dev/null
  cmp -s ref.f32 ours.f32 || fail "$t: values differ from minfer tensor --dump"
  "$deq" set-00001-of-00003.gguf "$t" set.f32 > /dev/null
  cmp -s ref.f32 set.f32 || fail "$t: values from the split set differ"
done
echo "gguf_dequantize: $n tensors equal to minfer tensor --dump, from the file and from the split set"
"$info" set-00001-of-00003.gguf | grep -q "in 3 parts" || fail "the split set is not opened whole"
[ "$("$info" set-00001-of-00003.gguf | rows | wc -l)" -eq "$n" ] || fail "the split set has another tensor count"

head -c $(( $(stat -c %s sample.gguf) - 1 )) sample.gguf > cut.gguf  # the last tensor byte missing
set +e
"$info" cut.gguf > /dev/null 2> err.txt; s1=$?
"$deq" cut.gguf x > /dev/null 2>> err.txt; s2=$?
set -e
[ $s1 -eq 1 ] && [ $s2 -eq 1 ] || fail "a truncated file: exit $s1 and $s2, expected 1"
[ "$(grep -c 'cut.gguf: .*byte' err.txt)" -eq 2 ] || { cat err.txt; fail "the refusals do not say where"; }
echo "a truncated file: $(head -1 err.txt)"
echo "examples: ok"
