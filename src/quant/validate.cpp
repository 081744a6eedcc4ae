// ggml_validate_row_data's rules as a table: where each block holds the numbers that can be
// infinite or NaN. Offsets are those of ggml's block structs (docs/QUANT.md's layouts).
#include "minfer/quant/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace minfer::quant {
namespace {

using gguf::tensor_type;

enum class scale_kind : std::uint8_t {
    none,      // nothing to check (integers)
    values16,  // every value an f16
    bf16,      // every value a bf16
    values32,  // every value an f32
    values64,  // every value an f64
    d16,       // an f16 at `first` in each block
    dm16,      // f16s at `first` and `first + 2`
    d32,       // an f32 at `first` (q8_K)
    iq1m,      // iq1_m's f16 scale, four nibbles from the top of its four u16 scales at `first`
    e8m0,      // mxfp4's exponent byte at `first`
};

struct rule {
    scale_kind kind = scale_kind::none;
    std::uint32_t first = 0;  // byte offset within the block
    bool known = false;
};

rule rule_of(tensor_type t) noexcept {
    auto r = [](scale_kind k, std::uint32_t first = 0) { return rule{k, first, true}; };
    switch (t) {
        case tensor_type::f32: return r(scale_kind::values32);
        case tensor_type::f16: return r(scale_kind::values16);
        case tensor_type::bf16: return r(scale_kind::bf16);
        case tensor_type::f64: return r(scale_kind::values64);
        case tensor_type::q1_0:  // d, then the bits
        case tensor_type::q2_0:  // d, then the 2-bit quants
        case tensor_type::q4_0:
        case tensor_type::q5_0:
        case tensor_type::q8_0:
        case tensor_type::iq1_s:
        case tensor_type::iq2_xxs:
        case tensor_type::iq2_xs:
        case tensor_type::iq2_s:
        case tensor_type::iq3_xxs:
        case tensor_type::iq3_s:
        case tensor_type::iq4_xs:
        case tensor_type::iq4_nl: return r(scale_kind::d16, 0);
        case tensor_type::q4_1:
        case tensor_type::q5_1:
        case tensor_type::q4_k:
        case tensor_type::q5_k: return r(scale_kind::dm16, 0);
        case tensor_type::q2_k: return r(scale_kind::dm16, 80);  // scales[16], qs[64], d, dmin
        case tensor_type::q3_k: return r(scale_kind::d16, 108);  // hmask[32], qs[64], scales[12], d
        case tensor_type::q6_k: return r(scale_kind::d16, 208);  // ql[128], qh[64], scales[16], d
        case tensor_type::tq1_0: return r(scale_kind::d16, 52);  // qs[48], qh[4], d
        case tensor_type::tq2_0: return r(scale_kind::d16, 64);  // qs[64], d
        case tensor_type::q8_k: return r(scale_kind::d32, 0);
        case tensor_type::iq1_m: return r(scale_kind::iq1m, 48);  // qs[32], qh[16], scales[8]
        case tensor_type::mxfp4: return r(scale_kind::e8m0, 0);
        case tensor_type::nvfp4: return r(scale_kind::none);  // UE4M3 scales: every byte is a number
        case tensor_type::i8:
        case tensor_type::i16:
        case tensor_type::i32:
        case tensor_type::i64: return r(scale_kind::none);
        default: return rule{};
    }
}

std::uint16_t u16_at(const std::byte* p) noexcept {
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) | (std::to_integer<unsigned>(p[1]) << 8));
}

// f16: exponent all ones is an infinity (mantissa 0) or a NaN.
std::optional<invalid_value> check_f16(std::uint16_t h, std::uint64_t at) noexcept {
    if ((h & 0x7c00u) != 0x7c00u) return std::nullopt;
    return invalid_value{at, (h & 0x03ffu) != 0};
}

std::optional<invalid_value> check_bits32(std::uint32_t b, std::uint64_t at) noexcept {
    if ((b & 0x7f800000u) != 0x7f800000u) return std::nullopt;
    return invalid_value{at, (b & 0x007fffffu) != 0};
}

}  // namespace

bool can_validate(tensor_type type) noexcept { return rule_of(type).known; }

std::optional<invalid_value> validate_bytes(tensor_type type, std::span<const std::byte> bytes) noexcept {
    const rule ru = rule_of(type);
    const gguf::type_traits* tr = gguf::traits(type);
    if (!ru.known || tr == nullptr || tr->block_bytes == 0 || bytes.size() % tr->block_bytes != 0)
        return invalid_value{0, true};
    const std::uint64_t size = tr->block_bytes;
    const std::uint64_t n = bytes.size() / size;
    const std::byte* p = bytes.data();
    switch (ru.kind) {
        case scale_kind::none: return std::nullopt;
        case scale_kind::values16:
            for (std::uint64_t i = 0; i < n; ++i)
                if (auto bad = check_f16(u16_at(p + 2 * i), i)) return bad;
            return std::nullopt;
        case scale_kind::bf16:
            // ggml counts NaNs first, then infinities, over the whole row: a NaN anywhere is reported
            // before an infinity that comes earlier. The first NaN, else the first infinity.
            for (int pass = 0; pass < 2; ++pass)
                for (std::uint64_t i = 0; i < n; ++i) {
                    const unsigned v = u16_at(p + 2 * i) & 0x7fffu;
                    if (pass == 0 ? v > 0x7f80u : v == 0x7f80u) return invalid_value{i, pass == 0};
                }
            return std::nullopt;
        case scale_kind::values32:
            for (std::uint64_t i = 0; i < n; ++i) {
                std::uint32_t b;
                std::memcpy(&b, p + 4 * i, 4);
                if (auto bad = check_bits32(b, i)) return bad;
            }
            return std::nullopt;
        case scale_kind::values64:
            for (std::uint64_t i = 0; i < n; ++i) {
                std::uint64_t b;
                std::memcpy(&b, p + 8 * i, 8);
                if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
                    return invalid_value{i, (b & 0x000fffffffffffffull) != 0};
            }
            return std::nullopt;
        case scale_kind::d16:
        case scale_kind::dm16:
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::byte* b = p + i * size + ru.first;
                if (auto bad = check_f16(u16_at(b), i)) return bad;
                if (ru.kind == scale_kind::dm16)
                    if (auto bad = check_f16(u16_at(b + 2), i)) return bad;
            }
            return std::nullopt;
        case scale_kind::d32:
            for (std::uint64_t i = 0; i < n; ++i) {
                std::uint32_t b;
                std::memcpy(&b, p + i * size + ru.first, 4);
                if (auto bad = check_bits32(b, i)) return bad;
            }
            return std::nullopt;
        case scale_kind::iq1m:
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::byte* sc = p + i * size + ru.first;
                const auto s0 = u16_at(sc), s1 = u16_at(sc + 2), s2 = u16_at(sc + 4), s3 = u16_at(sc + 6);
                const auto h = static_cast<std::uint16_t>((s0 >> 12) | ((s1 >> 8) & 0x00f0u) | ((s2 >> 4) & 0x0f00u) |
                                                          (s3 & 0xf000u));
                if (auto bad = check_f16(h, i)) return bad;
            }
            return std::nullopt;
        case scale_kind::e8m0:
            for (std::uint64_t i = 0; i < n; ++i)
                if (std::to_integer<unsigned>(p[i * size + ru.first]) == 0xffu) return invalid_value{i, true};
            return std::nullopt;
    }
    return std::nullopt;
}

std::size_t first_non_finite(std::span<const float> values) noexcept {
    constexpr std::size_t stretch = 4096;
    for (std::size_t begin = 0; begin < values.size(); begin += stretch) {
        const std::size_t end = std::min(values.size(), begin + stretch);
        std::uint32_t all_ones_exponent = 0;  // NaN and Inf are the values whose exponent bits are all set
        for (std::size_t i = begin; i < end; ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, &values[i], sizeof bits);
            all_ones_exponent |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
        }
        if (all_ones_exponent == 0) continue;
        for (std::size_t i = begin; i < end; ++i)
            if (!std::isfinite(values[i])) return i;
    }
    return values.size();
}

}  // namespace minfer::quant
