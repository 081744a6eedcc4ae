#!/usr/bin/env bash
# Install llama.cpp's prebuilt ggml (npm @node-llama-cpp/linux-x64, pinned) into build/llama-ref and
# print the path of libggml-base.so. Used by the reference tests and benchmarks; never committed.
# Exits 1 (printing nothing on stdout) when npm or the registry is unavailable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/build/llama-ref"
lib="$dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so"
if [ ! -f "$lib" ]; then
  command -v npm >/dev/null 2>&1 || { echo "llama-ref: npm not found" >&2; exit 1; }
  mkdir -p "$dir"
  npm install --silent --no-save --no-audit --no-fund --prefix "$dir" @node-llama-cpp/linux-x64@3.22.1 >&2 \
    || { echo "llama-ref: npm install failed" >&2; exit 1; }
fi
[ -f "$lib" ] || { echo "llama-ref: $lib missing after install" >&2; exit 1; }
echo "$lib"
