// half_rows.hpp: numpy's float16 conversion, with F16C.
#include "half_rows.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace minfer::convert::detail {
namespace {

std::uint32_t bits(float f) noexcept {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// numpy's npy_floatbits_to_halfbits (numpy/core/src/npymath/halffloat.c), without its floating-point
// exception flags.
std::uint16_t numpy_half(std::uint32_t f) noexcept {
    const std::uint16_t h_sgn = static_cast<std::uint16_t>((f & 0x80000000u) >> 16);
    std::uint32_t f_exp = f & 0x7f800000u;
    if (f_exp >= 0x47800000u) {  // exponent overflow / NaN
        if (f_exp == 0x7f800000u) {
            const std::uint32_t f_sig = f & 0x007fffffu;
            if (f_sig != 0) {
                std::uint16_t ret = static_cast<std::uint16_t>(0x7c00u + (f_sig >> 13));
                if (ret == 0x7c00u) ++ret;  // stays a NaN
                return static_cast<std::uint16_t>(h_sgn + ret);
            }
            return static_cast<std::uint16_t>(h_sgn + 0x7c00u);  // infinity
        }
        return static_cast<std::uint16_t>(h_sgn + 0x7c00u);  // overflow to infinity
    }
    if (f_exp <= 0x38000000u) {  // a subnormal half, or zero
        if (f_exp < 0x33000000u) return h_sgn;  // below half the smallest subnormal: signed zero
        f_exp >>= 23;
        std::uint32_t f_sig = 0x00800000u + (f & 0x007fffffu);
        f_sig >>= (113 - f_exp);  // 1 to 11 more bits than a normal half loses
        // round to nearest even: add half an ulp unless it is a tie that is already even (the bits
        // the extra shift dropped count: a dropped 1 means it was above the tie)
        if ((f_sig & 0x00003fffu) != 0x00001000u || (f & 0x000007ffu) != 0) f_sig += 0x00001000u;
        return static_cast<std::uint16_t>(h_sgn + static_cast<std::uint16_t>(f_sig >> 13));  // a carry makes it normal: right
    }
    // a normal half; a carry of the rounding into the exponent is right, up to infinity
    const std::uint16_t h_exp = static_cast<std::uint16_t>((f_exp - 0x38000000u) >> 13);
    std::uint32_t f_sig = f & 0x007fffffu;
    if ((f_sig & 0x00003fffu) != 0x00001000u) f_sig += 0x00001000u;  // round to nearest even
    return static_cast<std::uint16_t>(h_sgn + static_cast<std::uint16_t>(h_exp + (f_sig >> 13)));
}

void store(std::byte* out, std::uint16_t h) noexcept {
    out[0] = static_cast<std::byte>(h & 0xff);
    out[1] = static_cast<std::byte>(h >> 8);
}

#if defined(__x86_64__)
bool has_f16c() noexcept {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0 && (c & bit_AVX) != 0;
}

__attribute__((target("avx,f16c"))) void row_f16c(const float* in, std::byte* out, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(in + i);
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
        // a NaN: F16C sets the quiet bit, numpy keeps the payload as it is
        const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        if (_mm256_movemask_ps(nan) != 0)
            for (std::size_t k = i; k < i + 8; ++k) store(out + 2 * k, numpy_half(bits(in[k])));
    }
    for (; i < n; ++i) store(out + 2 * i, numpy_half(bits(in[i])));
}
#endif

}  // namespace

std::uint16_t f32_to_f16_numpy(float f) noexcept { return numpy_half(bits(f)); }

void f32_to_f16_numpy_row(const float* in, std::byte* out, std::size_t n) noexcept {
#if defined(__x86_64__)
    static const bool f16c = has_f16c();
    if (f16c) {
        row_f16c(in, out, n);
        return;
    }
#endif
    for (std::size_t i = 0; i < n; ++i) store(out + 2 * i, numpy_half(bits(in[i])));
}

}  // namespace minfer::convert::detail
