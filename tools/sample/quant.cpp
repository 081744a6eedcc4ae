// Scalar converters and Q4_0 / Q8_0 block quantizers (see quant.hpp). Built with
// -ffp-contract=off so that x * id + 8.5f is two roundings, as in the reference.
#include "quant.hpp"

#include <bit>
#include <cmath>

namespace minfer::sample {
namespace {

void store_f16(std::byte* p, std::uint16_t h) noexcept {
    p[0] = static_cast<std::byte>(h & 0xffu);
    p[1] = static_cast<std::byte>(h >> 8);
}
std::uint16_t load_f16(const std::byte* p) noexcept {
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) | (std::to_integer<unsigned>(p[1]) << 8));
}

}  // namespace

std::uint16_t f32_to_f16(float x) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520 (ties to even: inf) and inf
    if (a >= 0x38800000u) {
        // Normal in f16: rebias the exponent (127 -> 15), then drop 13 mantissa bits rounding to
        // nearest even. A carry out of the mantissa correctly bumps the exponent.
        const std::uint32_t r = a - 0x38000000u;
        return static_cast<std::uint16_t>(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) return sign;  // below 2^-25: rounds to zero (2^-25 itself is a tie, handled below)
    // Subnormal in f16: value = q * 2^-24 with q = mant * 2^(e - 126), e the biased f32 exponent.
    const std::uint32_t e = a >> 23;                          // 102 .. 112
    const std::uint32_t mant = (a & 0x007fffffu) | 0x00800000u;
    const std::uint32_t shift = 126u - e;                     // 14 .. 24
    std::uint32_t q = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u) != 0)) ++q;  // may reach 0x400, the smallest normal
    return static_cast<std::uint16_t>(sign | q);
}

float f16_to_f32(std::uint16_t h) noexcept {
    const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
    const std::uint32_t e = (static_cast<std::uint32_t>(h) >> 10) & 0x1fu;
    std::uint32_t m = static_cast<std::uint32_t>(h) & 0x3ffu;
    std::uint32_t bits;
    if (e == 0x1f) {
        bits = sign | 0x7f800000u | (m << 13) | (m != 0 ? 0x00400000u : 0u);
    } else if (e != 0) {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {
        bits = sign;
    } else {
        // Subnormal: m * 2^-24. Normalise so that bit 10 is the implicit one.
        std::uint32_t exp = 113;  // biased f32 exponent of 2^-14
        while ((m & 0x400u) == 0) {
            m <<= 1;
            --exp;
        }
        bits = sign | (exp << 23) | ((m & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(bits);
}

std::uint16_t f32_to_bf16(float x) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_f32(std::uint16_t h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

bool quantize_q4_0(std::span<const float> x, std::span<std::byte> y) noexcept {
    if (x.size() % block_elems != 0 || y.size() != q4_0_bytes(x.size())) return false;
    const std::size_t nb = x.size() / block_elems;
    for (std::size_t b = 0; b < nb; ++b) {
        const float* v = x.data() + b * block_elems;
        std::byte* out = y.data() + b * q4_0_block_bytes;
        float amax = 0.0f;
        float max = 0.0f;
        for (std::size_t j = 0; j < block_elems; ++j) {
            if (amax < std::fabs(v[j])) {  // strictly greater: the first of equal magnitudes wins
                amax = std::fabs(v[j]);
                max = v[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(out, f32_to_f16(d));
        for (std::size_t j = 0; j < block_elems / 2; ++j) {
            const float x0 = v[j] * id + 8.5f;
            const float x1 = v[j + block_elems / 2] * id + 8.5f;
            // Truncation toward zero, then clamp 16 (x == m exactly) to 15.
            const int q0 = static_cast<int>(x0) < 15 ? static_cast<int>(x0) : 15;
            const int q1 = static_cast<int>(x1) < 15 ? static_cast<int>(x1) : 15;
            out[2 + j] = static_cast<std::byte>(static_cast<unsigned>(q0) | (static_cast<unsigned>(q1) << 4));
        }
    }
    return true;
}

bool dequantize_q4_0(std::span<const std::byte> x, std::span<float> y) noexcept {
    if (y.size() % block_elems != 0 || x.size() != q4_0_bytes(y.size())) return false;
    const std::size_t nb = y.size() / block_elems;
    for (std::size_t b = 0; b < nb; ++b) {
        const std::byte* in = x.data() + b * q4_0_block_bytes;
        float* out = y.data() + b * block_elems;
        const float d = f16_to_f32(load_f16(in));
        for (std::size_t j = 0; j < block_elems / 2; ++j) {
            const unsigned byte = std::to_integer<unsigned>(in[2 + j]);
            const int q0 = static_cast<int>(byte & 0x0fu) - 8;
            const int q1 = static_cast<int>(byte >> 4) - 8;
            out[j] = static_cast<float>(q0) * d;
            out[j + block_elems / 2] = static_cast<float>(q1) * d;
        }
    }
    return true;
}

bool quantize_q8_0(std::span<const float> x, std::span<std::byte> y) noexcept {
    if (x.size() % block_elems != 0 || y.size() != q8_0_bytes(x.size())) return false;
    const std::size_t nb = x.size() / block_elems;
    for (std::size_t b = 0; b < nb; ++b) {
        const float* v = x.data() + b * block_elems;
        std::byte* out = y.data() + b * q8_0_block_bytes;
        float amax = 0.0f;
        for (std::size_t j = 0; j < block_elems; ++j) {
            const float a = std::fabs(v[j]);
            amax = amax > a ? amax : a;  // not fmax: a NaN propagates, as in the reference
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(out, f32_to_f16(d));
        for (std::size_t j = 0; j < block_elems; ++j) {
            const auto q = static_cast<std::int8_t>(std::round(v[j] * id));  // half away from zero
            out[2 + j] = static_cast<std::byte>(static_cast<std::uint8_t>(q));
        }
    }
    return true;
}

bool dequantize_q8_0(std::span<const std::byte> x, std::span<float> y) noexcept {
    if (y.size() % block_elems != 0 || x.size() != q8_0_bytes(y.size())) return false;
    const std::size_t nb = y.size() / block_elems;
    for (std::size_t b = 0; b < nb; ++b) {
        const std::byte* in = x.data() + b * q8_0_block_bytes;
        float* out = y.data() + b * block_elems;
        const float d = f16_to_f32(load_f16(in));
        for (std::size_t j = 0; j < block_elems; ++j) {
            const auto q = static_cast<std::int8_t>(std::to_integer<std::uint8_t>(in[2 + j]));
            out[j] = static_cast<float>(q) * d;
        }
    }
    return true;
}

bool convert_f32_to_f16(std::span<const float> x, std::span<std::uint16_t> y) noexcept {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = f32_to_f16(x[i]);
    return true;
}

bool convert_f16_to_f32(std::span<const std::uint16_t> x, std::span<float> y) noexcept {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = f16_to_f32(x[i]);
    return true;
}

}  // namespace minfer::sample
