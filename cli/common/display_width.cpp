#include "display_width.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

#include "minfer/gguf/text.hpp"

namespace minfer::cli {
namespace {

struct range {
    char32_t first, last;
};

// Combining and zero-width code points (general categories Mn, Me, Cf in the blocks that occur in
// model vocabularies and names), sorted.
constexpr std::array<range, 40> zero_width{{
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2},
    {0x05C4, 0x05C5}, {0x05C7, 0x05C7}, {0x0610, 0x061A}, {0x061C, 0x061C}, {0x064B, 0x065F},
    {0x0670, 0x0670}, {0x06D6, 0x06DC}, {0x06DF, 0x06E4}, {0x06E7, 0x06E8}, {0x06EA, 0x06ED},
    {0x0900, 0x0902}, {0x093A, 0x093A}, {0x093C, 0x093C}, {0x0941, 0x0948}, {0x094D, 0x094D},
    {0x0951, 0x0957}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF},
    {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F},
    {0x20D0, 0x20FF}, {0x302A, 0x302D}, {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0x1D167, 0x1D169}, {0x1D173, 0x1D182}, {0xE0001, 0xE007F}, {0xE0100, 0xE01EF},
}};

// East Asian Wide (W) and Fullwidth (F) blocks, sorted.
constexpr std::array<range, 22> wide{{
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x2E80, 0x303E},
    {0x3041, 0x3247},   {0x3250, 0x4DBF},   {0x4E00, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
    {0x16FE0, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F900, 0x1F9FF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}};

template <std::size_t N>
bool in(const std::array<range, N>& table, char32_t cp) noexcept {
    auto it = std::upper_bound(table.begin(), table.end(), cp,
                               [](char32_t c, const range& r) { return c < r.first; });
    return it != table.begin() && cp <= std::prev(it)->last;
}

char32_t decode(std::string_view s, std::size_t i, std::size_t n) noexcept {
    static constexpr unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    char32_t cp = static_cast<unsigned char>(s[i]) & lead_mask[n];
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    return cp;
}

}  // namespace

int code_point_width(char32_t cp) noexcept {
    if (cp < 0x300) return 1;  // ASCII and Latin: the common case, no search
    if (in(zero_width, cp)) return 0;
    if (in(wide, cp)) return 2;
    return 1;
}

std::size_t display_width(std::string_view s) noexcept {
    std::size_t w = 0;
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII, nearly every name: no decoding
            ++w;
            ++i;
            continue;
        }
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) {
            ++w;
            ++i;
            continue;
        }
        w += static_cast<std::size_t>(code_point_width(decode(s, i, n)));
        i += n;
    }
    return w;
}

std::string pad_right(std::string_view s, std::size_t width) {
    std::string out(s);
    const std::size_t w = display_width(s);
    if (w < width) out.append(width - w, ' ');
    return out;
}

std::string pad_left(std::string_view s, std::size_t width) {
    const std::size_t w = display_width(s);
    std::string out(w < width ? width - w : 0, ' ');
    out += s;
    return out;
}

}  // namespace minfer::cli
