#!/usr/bin/env bash
# The Python module's benchmark (bench/python/bench_open.py), in one run against the C++ library:
# writes the Qwen2.5-0.5B-shaped fixture (bench/fixtures.cpp: 151,936 tokens, 151,387 merges, 291
# tensors, metadata laid out as the real file's) and times, each in its own process and without
# process start-up: model::open (C++) against minfer.open, the vocabulary walk against iterating it
# from Python, quant::dequantize_parallel against Tensor.to_numpy(); with gguf-py's published open
# time (issue 13) as the 1000x goal.
#
#   scripts/bench-python.sh [runs]     (default 30; builds the release preset with the Python module)
#   MINFER_GGUF_PY=/path/to/llama.cpp/gguf-py scripts/bench-python.sh   also times gguf-py's GGUFReader
#   MINFER_BENCH_PRESET=quick ...     use an existing build instead (numbers of an -O0 build!)
#
# Prints a table; exits non-zero only when something fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-30}
preset=${MINFER_BENCH_PRESET:-release}
python=${Python_EXECUTABLE:-/usr/bin/python3}

if [ "$preset" = release ]; then
  cmake --preset release -DMINFER_BUILD_PYTHON=ON >/dev/null
fi
cmake --build --preset "$preset" -j 2 \
  --target minfer minfer_py_core minfer_py_toolbox minfer_py_package minfer-py-bench-ref >/dev/null
bin="$root/build/$preset"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
model=$("$bin/python/bench/minfer-py-bench-ref" fixture "$dir")
PYTHONPATH="$bin/python" PYTHONDONTWRITEBYTECODE=1 "$python" "$root/bench/python/bench_open.py" \
  --ref "$bin/python/bench/minfer-py-bench-ref" --cli "$bin/cli/minfer" --model "$model" --reps "$runs" \
  ${MINFER_GGUF_PY:+--gguf-py "$MINFER_GGUF_PY"}
