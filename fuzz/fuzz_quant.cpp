// The SIMD kernels against the scalar reference on arbitrary bytes: the first byte picks a
// convertible type (modulo their number, in id order: make_seeds writes one seed per type with
// the same rule), the rest, cut to whole blocks, is converted with isa::scalar and, when the CPU
// has it, isa::avx2. Any value whose bits differ (two NaNs count as equal) is a finding: the type,
// block and value are printed and the process traps. Without AVX2 the scalar kernels still run,
// under ASan/UBSan, on every input.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"

namespace {

using minfer::gguf::tensor_type;
namespace quant = minfer::quant;

const std::vector<tensor_type>& convertible() {
    static const std::vector<tensor_type> types = [] {
        std::vector<tensor_type> v;
        for (std::uint32_t id = 0; id < minfer::gguf::tensor_type_count; ++id)
            if (quant::can_dequantize(static_cast<tensor_type>(id))) v.push_back(static_cast<tensor_type>(id));
        return v;
    }();
    return types;
}

std::uint32_t bits(float f) {
    std::uint32_t x = 0;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

[[noreturn]] void mismatch(tensor_type t, std::size_t block, std::size_t index, float simd, float ref) {
    const std::string_view name = minfer::gguf::to_string(t);
    std::fprintf(stderr, "fuzz_quant: %.*s block %zu value %zu: avx2 0x%08x (%g), scalar 0x%08x (%g)\n",
                 static_cast<int>(name.size()), name.data(), block, index, bits(simd), static_cast<double>(simd),
                 bits(ref), static_cast<double>(ref));
    __builtin_trap();
}

// A kernel that fails a dequantize_with whose sizes are right is a bug too.
void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz_quant: %s\n", what);
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<tensor_type>& types = convertible();
    if (size == 0 || types.empty()) return 0;
    const tensor_type t = types[data[0] % types.size()];
    const minfer::gguf::type_traits* tr = minfer::gguf::traits(t);
    const std::size_t n_blocks = (size - 1) / tr->block_bytes;
    const std::size_t n = n_blocks * tr->block_elems;
    // data + 1: the blocks start at an odd address, as a tensor in a mapped file may.
    const std::span<const std::byte> src(reinterpret_cast<const std::byte*>(data + 1), n_blocks * tr->block_bytes);

    std::vector<float> ref(n), simd(n);
    require(quant::dequantize_with(quant::isa::scalar, t, src, ref).has_value(), "scalar conversion refused");
    if (!quant::isa_supported(quant::isa::avx2)) return 0;
    require(quant::dequantize_with(quant::isa::avx2, t, src, simd).has_value(), "avx2 conversion refused");
    for (std::size_t i = 0; i < n; ++i) {
        if (ref[i] != ref[i] && simd[i] != simd[i]) continue;  // both NaN
        if (bits(ref[i]) != bits(simd[i])) mismatch(t, i / tr->block_elems, i % tr->block_elems, simd[i], ref[i]);
    }
    return 0;
}
