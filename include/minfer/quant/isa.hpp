#pragma once
// Which kernels minfer::quant runs: a scalar reference for every type (the oracle; portable C++)
// and SIMD kernels per instruction set, chosen at run time from what the CPU supports. The SIMD
// kernels agree with the scalar ones bit for bit (tests/unit/test_quant_isa.cpp, fuzz/fuzz_quant.cpp).
//
// The environment variable MINFER_QUANT_ISA, read once on first use, caps the choice: "scalar"
// forces the reference kernels (CI runs the whole suite both ways), "avx2" at most AVX2, "auto" or
// unset the best available. An unknown value or one the CPU lacks falls back to the best the CPU
// supports below it, and isa_env_note() says so (the library never prints; the CLI does).
#include <cstddef>
#include <span>
#include <string_view>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::quant {

/// Instruction sets with kernels, weakest first. Only scalar and avx2 are built today; avx512 and
/// neon are named so that files and tests can grow into them.
enum class isa : unsigned char { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };

/// "scalar", "avx2", "avx512", "neon".
std::string_view to_string(isa i) noexcept;
/// Whether this build has kernels for `i` and this CPU can run them (scalar: always).
bool isa_supported(isa i) noexcept;
/// The kernels dequantize() uses now.
isa active_isa() noexcept;
/// Use the kernels of `i` from now on (all threads). false, and nothing changes, when
/// !isa_supported(i).
bool select_isa(isa i) noexcept;
/// Why MINFER_QUANT_ISA was not followed as written ("" when it was, or is unset).
std::string_view isa_env_note() noexcept;

/// dequantize() with the kernels of `i`, whatever is active (tests, fuzzers, benchmarks).
/// Additionally returns type_not_convertible when !isa_supported(i) (detail says so).
gguf::result<void> dequantize_with(isa i, gguf::tensor_type type, std::span<const std::byte> src,
                             std::span<float> dst) noexcept;

}  // namespace minfer::quant
