// The k-quants' scale searches in AVX2 lanes (src/quant/avx2_fit.cpp) against the scalar searches,
// on arbitrary values: byte 0 picks the type (q2_K, q3_K, q4_K, q5_K, q6_K, modulo 5) and, by its
// next bit, whether the last 256 values are importance weights; the rest are f32 values, cut to
// whole rows of 256. Both instruction sets must write the same bytes: a difference is printed (row,
// block, byte) and the process traps. Without AVX2 the scalar searches still run under ASan/UBSan.
//
// Non-finite bit patterns become finite (the exponent bits cleared: a subnormal with the same sign
// and mantissa): with a NaN or an Inf in a row, which NaN (and which sign of it) reaches a scale
// depends on operand order inside ggml too; tests/unit/test_quantize_ggml.cpp checks those rows
// against ggml itself. Everything else, ties, zeros, subnormals, huge and tiny magnitudes, is fuzzed.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"
#include "minfer/quant/quantize.hpp"

namespace {

using minfer::gguf::tensor_type;
namespace quant = minfer::quant;

constexpr std::int64_t row = 256;

float finite_from(const std::uint8_t* p) {
    std::uint32_t u = 0;
    std::memcpy(&u, p, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) u &= 0x807fffffu;
    float f = 0;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz_quantize_lanes: %s\n", what);
    __builtin_trap();
}

std::vector<std::byte> quantize_with(quant::isa i, tensor_type t, const std::vector<float>& values,
                                     const std::vector<float>& importance) {
    require(quant::select_isa(i), "select_isa refused a supported set");
    std::vector<std::byte> out(quant::bytes_for(t, values.size()));
    require(quant::quantize_rows(t, values, row, importance, out).has_value(), "quantize_rows refused finite rows");
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const tensor_type types[] = {tensor_type::q2_k, tensor_type::q3_k, tensor_type::q4_k, tensor_type::q5_k,
                                        tensor_type::q6_k};
    const tensor_type t = types[data[0] % 5];
    const bool weighted = (data[0] / 5) % 2 == 1;
    std::vector<float> all((size - 1) / 4);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = finite_from(data + 1 + 4 * i);
    std::vector<float> importance;
    if (weighted) {
        if (all.size() < static_cast<std::size_t>(row)) return 0;
        importance.assign(all.end() - row, all.end());
        all.resize(all.size() - static_cast<std::size_t>(row));
    }
    all.resize(all.size() / row * row);
    if (all.empty()) return 0;

    const quant::isa before = quant::active_isa();
    const std::vector<std::byte> scalar = quantize_with(quant::isa::scalar, t, all, importance);
    if (quant::isa_supported(quant::isa::avx2)) {
        const std::vector<std::byte> lanes = quantize_with(quant::isa::avx2, t, all, importance);
        for (std::size_t i = 0; i < scalar.size(); ++i) {
            if (scalar[i] == lanes[i]) continue;
            const std::size_t row_bytes = quant::bytes_for(t, static_cast<std::uint64_t>(row));
            const std::size_t block_bytes = minfer::gguf::traits(t)->block_bytes;
            const std::string_view name = minfer::gguf::to_string(t);
            std::fprintf(stderr, "fuzz_quantize_lanes: %.*s%s row %zu block %zu byte %zu: avx2 0x%02x, scalar 0x%02x\n",
                         static_cast<int>(name.size()), name.data(), weighted ? " (importance)" : "", i / row_bytes,
                         (i % row_bytes) / block_bytes, i % block_bytes, static_cast<unsigned>(lanes[i]),
                         static_cast<unsigned>(scalar[i]));
            __builtin_trap();
        }
    }
    quant::select_isa(before);
    return 0;
}
