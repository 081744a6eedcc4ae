// The AVX2 kernels of the codebook formats: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m
// (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file).
#include "grids.hpp"
#include "kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

constexpr kernel_table make_table() {
    kernel_table t{};
    return t;
}
constexpr kernel_table table = make_table();

}  // namespace

const kernel_table& avx2_iq_kernels() noexcept { return table; }
#endif

}  // namespace minfer::quant::detail
