#pragma once
// float32 → IEEE binary16 as numpy's astype(np.float16) converts (what gguf-py writes for F16):
// round to nearest even, overflow to infinity, subnormals rounded; a NaN keeps its sign and the top
// 10 bits of its payload (0x7c00 + (payload >> 13), made 0x7c01 if that would be an infinity) —
// unlike ggml's conversion, which writes every NaN as 0x7e00. F16C where the CPU has it (the same
// rounding; NaNs then fixed to numpy's rule), else the same arithmetic on integers. Internal to
// minfer::convert.
#include <cstddef>
#include <cstdint>

namespace minfer::convert::detail {

/// One value, as numpy converts it.
std::uint16_t f32_to_f16_numpy(float f) noexcept;

/// n values (`out` may be unaligned: stored little-endian as bytes).
void f32_to_f16_numpy_row(const float* in, std::byte* out, std::size_t n) noexcept;

}  // namespace minfer::convert::detail
