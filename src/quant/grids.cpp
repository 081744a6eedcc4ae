// The iq* codebooks, rebuilt at compile time from their compact codes. grids_data.inc gives each
// grid point as the indices of its bytes in the format's alphabet, lowest bits first; the point is
// the alphabet values at those indices, byte 0 lowest. Nothing here runs at load time: the tables
// are constant-initialised data.
#include "grids.hpp"

#include <cstddef>

namespace minfer::quant::detail {
namespace {

#include "grids_data.inc"

struct grid_tables {
    std::uint64_t iq2xxs[256];
    std::uint64_t iq2xs[512];
    std::uint64_t iq2s[1024];
    std::uint32_t iq3xxs[256];
    std::uint32_t iq3s[512];
    std::uint64_t iq1s[2048];
    std::uint8_t signs[128];
};

template <class Word, std::size_t N, std::size_t A>
constexpr void expand(Word (&out)[N], const std::uint16_t (&codes)[N], const std::uint8_t (&alphabet)[A], unsigned bits,
                      unsigned n_bytes) {
    for (std::size_t i = 0; i < N; ++i) {
        Word w = 0;
        for (unsigned b = 0; b < n_bytes; ++b) {
            const unsigned index = (codes[i] >> (bits * b)) & ((1u << bits) - 1);
            w |= static_cast<Word>(static_cast<Word>(alphabet[index]) << (8 * b));
        }
        out[i] = w;
    }
}

constexpr std::uint8_t iq2_alphabet[3] = {0x08, 0x19, 0x2b};
constexpr std::uint8_t iq3xxs_alphabet[8] = {0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3e};
constexpr std::uint8_t iq3s_alphabet[8] = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0b, 0x0d, 0x0f};
constexpr std::uint8_t iq1_alphabet[3] = {0xff, 0x00, 0x01};  // -1, 0, 1 as bytes

constexpr grid_tables build() {
    grid_tables t{};
    expand(t.iq2xxs, iq2xxs_grid_codes, iq2_alphabet, 2, 8);
    expand(t.iq2xs, iq2xs_grid_codes, iq2_alphabet, 2, 8);
    expand(t.iq2s, iq2s_grid_codes, iq2_alphabet, 2, 8);
    expand(t.iq3xxs, iq3xxs_grid_codes, iq3xxs_alphabet, 3, 4);
    expand(t.iq3s, iq3s_grid_codes, iq3s_alphabet, 3, 4);
    expand(t.iq1s, iq1s_grid_codes, iq1_alphabet, 2, 8);
    // iq2 signs: the 7 stored bits and their parity as the eighth.
    for (unsigned i = 0; i < 128; ++i) {
        const unsigned parity = static_cast<unsigned>(__builtin_popcount(i)) & 1u;
        t.signs[i] = static_cast<std::uint8_t>(i | (parity << 7));
    }
    return t;
}

constexpr grid_tables tables = build();

// Spot checks against ggml-common.h, so a wrong alphabet or bit order fails the build.
static_assert(tables.iq2xxs[0] == 0x0808080808080808ull && tables.iq2xxs[1] == 0x080808080808082bull);
static_assert(tables.iq2xs[1] == 0x080808080808082bull && tables.iq2s[2] == 0x0808080808081919ull);
static_assert(tables.iq3xxs[0] == 0x04040404u && tables.iq3xxs[1] == 0x04040414u);
static_assert(tables.iq3s[0] == 0x01010101u && tables.iq3s[3] == 0x0101010bu);
static_assert(tables.iq1s[0] == 0xffffffffffffffffull && tables.iq1s[1] == 0xffffffffffffff01ull);
static_assert(tables.signs[1] == 129 && tables.signs[3] == 3 && tables.signs[127] == 255);

}  // namespace

const std::uint64_t (&iq2xxs_grid)[256] = tables.iq2xxs;
const std::uint64_t (&iq2xs_grid)[512] = tables.iq2xs;
const std::uint64_t (&iq2s_grid)[1024] = tables.iq2s;
const std::uint32_t (&iq3xxs_grid)[256] = tables.iq3xxs;
const std::uint32_t (&iq3s_grid)[512] = tables.iq3s;
const std::uint64_t (&iq1s_grid)[2048] = tables.iq1s;
const std::uint8_t (&iq2_signs)[128] = tables.signs;
const std::int8_t iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const std::int8_t fp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace minfer::quant::detail
