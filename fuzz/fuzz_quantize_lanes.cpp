// The quantizers' searches in AVX2 lanes (the k-quants' in src/quant/avx2_fit.cpp, with their final
// requantization and q3_K's high-bit split, the IQ types' in
// src/quant/avx2_iq_search.cpp and avx2_iq1_search.cpp) against the scalar searches, on arbitrary
// values: byte 0 picks the type (q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, iq2_xxs, iq2_xs,
// iq2_s, iq3_xxs, iq3_s, modulo 12) and, by the next bit of byte 0 / 12, whether the last 256 values
// are importance weights (always for iq2_xxs and iq2_xs, which require them). Byte 0 from 240 on
// picks iq1_s (even) or iq1_m (odd) instead, weighted unless bit 1 is set (iq1_s always: it requires
// weights); the seeds written before iq1 keep their meaning. The rest are f32 values, cut to whole
// rows of 256. Both instruction sets must write the same bytes, or both refuse the same row (the
// codebook types fail where ggml would assert, e.g. on squares that overflow): a difference is
// printed (row, block, byte) and the process traps. Without AVX2 the scalar searches still run
// under ASan/UBSan.
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
#include <string>
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

// The bytes, or empty when quantize_rows refused (then `error` holds its message). The k-quants
// never refuse finite rows; the codebook types may, where ggml asserts.
std::vector<std::byte> quantize_with(quant::isa i, tensor_type t, const std::vector<float>& values,
                                     const std::vector<float>& importance, std::string& error) {
    require(quant::select_isa(i), "select_isa refused a supported set");
    std::vector<std::byte> out(quant::bytes_for(t, values.size()));
    const auto r = quant::quantize_rows(t, values, row, importance, out);
    if (!r.has_value()) {
        error = r.error().message();
        out.clear();
    }
    return out;
}

}  // namespace

// The codebook lattices (and their neighbour tables) are built once per process, on the first row
// of their type: seconds under ASan and coverage, which libFuzzer's per-input timeout (10 s in
// scripts/fuzz.sh) counted against whichever input came first. Built here, before any input.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
    const std::vector<float> values(row, 1.f), importance(row, 1.f);
    for (tensor_type t : {tensor_type::iq2_xxs, tensor_type::iq2_xs, tensor_type::iq2_s, tensor_type::iq3_xxs,
                          tensor_type::iq3_s, tensor_type::iq1_s, tensor_type::iq1_m}) {
        std::vector<std::byte> out(quant::bytes_for(t, row));
        (void)quant::quantize_rows(t, values, row, importance, out);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const tensor_type types[] = {tensor_type::q2_k,    tensor_type::q3_k,   tensor_type::q4_k,
                                        tensor_type::q5_k,    tensor_type::q6_k,   tensor_type::iq4_nl,
                                        tensor_type::iq4_xs,  tensor_type::iq2_xxs, tensor_type::iq2_xs,
                                        tensor_type::iq2_s,   tensor_type::iq3_xxs, tensor_type::iq3_s};
    const bool iq1 = data[0] >= 240;
    const tensor_type t = iq1 ? (data[0] % 2 == 0 ? tensor_type::iq1_s : tensor_type::iq1_m) : types[data[0] % 12];
    const bool needs_importance = t == tensor_type::iq2_xxs || t == tensor_type::iq2_xs || t == tensor_type::iq1_s;
    const bool k_quant = !iq1 && data[0] % 12 < 5;
    const bool weighted = needs_importance || (iq1 ? (data[0] & 2) == 0 : (data[0] / 12) % 2 == 1);
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
    std::string scalar_error, lanes_error;
    const std::vector<std::byte> scalar = quantize_with(quant::isa::scalar, t, all, importance, scalar_error);
    require(!k_quant || scalar_error.empty(), "quantize_rows refused finite rows");
    if (quant::isa_supported(quant::isa::avx2)) {
        const std::vector<std::byte> lanes = quantize_with(quant::isa::avx2, t, all, importance, lanes_error);
        require(scalar_error == lanes_error, "the instruction sets disagree on refusing a row");
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
