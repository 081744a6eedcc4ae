// Type tables. Tensor block sizes and bytes are sizeof() of ggml-common.h's block structs.
#include <array>
#include <cctype>

#include "minfer/gguf/types.hpp"

namespace minfer::gguf {
namespace {

constexpr std::array<type_traits, tensor_type_count> tensor_table{{
    {"f32", 1, 4, {}},
    {"f16", 1, 2, {}},
    {"q4_0", 32, 18, {}},       // f16 d + 16 B of nibbles
    {"q4_1", 32, 20, {}},       // f16 d, m + 16 B
    {"q4_2", 0, 0, "q4_0"},     // removed from ggml in 2023
    {"q4_3", 0, 0, "q4_1"},     // removed from ggml in 2023
    {"q5_0", 32, 22, {}},       // f16 d + 4 B high bits + 16 B
    {"q5_1", 32, 24, {}},       // f16 d, m + 4 B + 16 B
    {"q8_0", 32, 34, {}},       // f16 d + 32 B
    {"q8_1", 32, 36, {}},       // f16 d, s + 32 B
    {"q2_K", 256, 84, {}},
    {"q3_K", 256, 110, {}},
    {"q4_K", 256, 144, {}},
    {"q5_K", 256, 176, {}},
    {"q6_K", 256, 210, {}},
    {"q8_K", 256, 292, {}},     // f32 d + 256 B + 16 x i16 bsums
    {"iq2_xxs", 256, 66, {}},
    {"iq2_xs", 256, 74, {}},
    {"iq3_xxs", 256, 98, {}},
    {"iq1_s", 256, 50, {}},
    {"iq4_nl", 32, 18, {}},
    {"iq3_s", 256, 110, {}},
    {"iq2_s", 256, 82, {}},
    {"iq4_xs", 256, 136, {}},
    {"i8", 1, 1, {}},
    {"i16", 1, 2, {}},
    {"i32", 1, 4, {}},
    {"i64", 1, 8, {}},
    {"f64", 1, 8, {}},
    {"iq1_m", 256, 56, {}},
    {"bf16", 1, 2, {}},
    {"q4_0_4_4", 0, 0, "q4_0"},  // removed from GGUF files: ggml repacks q4_0 at load time
    {"q4_0_4_8", 0, 0, "q4_0"},
    {"q4_0_8_8", 0, 0, "q4_0"},
    {"tq1_0", 256, 54, {}},
    {"tq2_0", 256, 66, {}},
    {"iq4_nl_4_4", 0, 0, "iq4_nl"},  // removed likewise: repacked from iq4_nl at load time
    {"iq4_nl_4_8", 0, 0, "iq4_nl"},
    {"iq4_nl_8_8", 0, 0, "iq4_nl"},
    {"mxfp4", 32, 17, {}},      // e8m0 scale + 16 B
    {"nvfp4", 64, 36, {}},      // 4 ue4m3 scales + 32 B
    {"q1_0", 128, 18, {}},      // f16 d + 16 B of bits
    {"q2_0", 64, 18, {}},       // f16 d + 16 B of 2-bit codes
}};

constexpr std::array<std::string_view, value_type_count> value_names{
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
constexpr std::array<std::uint32_t, value_type_count> value_sizes{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

}  // namespace

std::string_view to_string(value_type t) noexcept {
    const auto i = static_cast<std::uint32_t>(t);
    return i < value_type_count ? value_names[i] : std::string_view("invalid");
}

std::uint32_t value_size(value_type t) noexcept {
    const auto i = static_cast<std::uint32_t>(t);
    return i < value_type_count ? value_sizes[i] : 0;
}

const type_traits* traits(std::uint32_t type_id) noexcept {
    return type_id < tensor_type_count ? &tensor_table[type_id] : nullptr;
}

std::string_view to_string(tensor_type t) noexcept {
    const type_traits* tr = traits(t);
    return tr != nullptr ? tr->name : std::string_view("unknown");
}

std::optional<tensor_type> tensor_type_from_name(std::string_view name) noexcept {
    for (std::uint32_t i = 0; i < tensor_type_count; ++i) {
        const std::string_view n = tensor_table[i].name;
        if (n.size() != name.size()) continue;
        bool same = true;
        for (std::size_t j = 0; j < n.size() && same; ++j)
            same = std::tolower(static_cast<unsigned char>(n[j])) == std::tolower(static_cast<unsigned char>(name[j]));
        if (same) return static_cast<tensor_type>(i);
    }
    return std::nullopt;
}

}  // namespace minfer::gguf
