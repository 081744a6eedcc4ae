// The reference kernels: one per convertible type, written from the block layouts of docs/QUANT.md.
// (Being written: only f32 so far.)
#include <cstring>

#include "kernels.hpp"

namespace minfer::quant::detail {
namespace {

void f32(const std::uint8_t* src, float* dst, std::size_t n) { std::memcpy(dst, src, n * sizeof(float)); }

constexpr kernel_table make_table() {
    kernel_table t{};
    t.by_type[static_cast<unsigned>(gguf::tensor_type::f32)] = f32;
    return t;
}
constexpr kernel_table table = make_table();

}  // namespace

const kernel_table& scalar_kernels() noexcept { return table; }

}  // namespace minfer::quant::detail
