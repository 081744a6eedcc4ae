// The AVX2 kernels (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file).
// (Being written: none yet, so every type runs its scalar kernel.)
#include "kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {
constexpr kernel_table table{};
}  // namespace
const kernel_table* avx2_kernels() noexcept { return &table; }
#else
const kernel_table* avx2_kernels() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
