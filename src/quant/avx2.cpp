// The AVX2 kernels (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file):
// floats, the legacy and k-quant formats, fp4 and ternary types. The iq2/iq3/iq1 kernels are in
// avx2_iq.cpp; avx2_kernels() joins both tables.
#include "kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

constexpr kernel_table own_table() {
    kernel_table t{};
    return t;
}

kernel_table joined() noexcept {
    kernel_table t = own_table();
    const kernel_table& iq = avx2_iq_kernels();
    for (unsigned i = 0; i < gguf::tensor_type_count; ++i)
        if (t.by_type[i] == nullptr) t.by_type[i] = iq.by_type[i];
    return t;
}

}  // namespace

const kernel_table* avx2_kernels() noexcept {
    static const kernel_table table = joined();
    return &table;
}
#else
const kernel_table* avx2_kernels() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
