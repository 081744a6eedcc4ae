#!/usr/bin/env bash
# Build the release tools, make the sample model with our own writer, and show it with `minfer info`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target minfer minfer-sample
mkdir -p build/sample
build/release/tools/sample/minfer-sample build/sample/qwen2-sample.gguf >/dev/null
build/release/cli/minfer info build/sample/qwen2-sample.gguf "$@"
