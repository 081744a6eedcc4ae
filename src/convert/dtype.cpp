// The safetensors dtype table.
#include "minfer/convert/dtype.hpp"

#include <array>

namespace minfer::convert {
namespace {

struct dtype_row {
    std::string_view name;
    std::uint32_t bits;
};

// In the enum's order.
constexpr std::array<dtype_row, dtype_count> rows{{
    {"F64", 64}, {"F32", 32}, {"F16", 16}, {"BF16", 16}, {"I64", 64}, {"I32", 32}, {"I16", 16}, {"I8", 8},
    {"U8", 8}, {"BOOL", 8},
    {"U16", 16}, {"U32", 32}, {"U64", 64}, {"C64", 64},
    {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
    {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6},
}};

constexpr std::size_t convertible_count = 10;

}  // namespace

std::string_view to_string(dtype t) noexcept {
    const auto i = static_cast<std::size_t>(t);
    return i < rows.size() ? rows[i].name : std::string_view("unknown");
}

std::optional<dtype> dtype_from_name(std::string_view name) noexcept {
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].name == name) return static_cast<dtype>(i);
    return std::nullopt;
}

std::uint32_t bit_size(dtype t) noexcept {
    const auto i = static_cast<std::size_t>(t);
    return i < rows.size() ? rows[i].bits : 0;
}

bool is_convertible(dtype t) noexcept { return static_cast<std::size_t>(t) < convertible_count; }

std::string_view convertible_dtype_names() noexcept { return "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL"; }

}  // namespace minfer::convert
