// convert's F16 conversion against numpy's astype(np.float16) (what gguf-py writes), value by value:
// tests/convert/data/f16_numpy.bin holds numpy's answers for every exponent, ties at every half
// exponent, the subnormal and overflow edges and NaN payloads (make_f16_expected.py, numpy 1.24).
// Both paths: the row function (F16C where the CPU has it) and the scalar one, with the rows cut at
// every length so that the vector loop's tail is exercised.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "half_rows.hpp"

namespace {

struct pair16 {
    std::uint32_t in;
    std::uint16_t out;
};

std::vector<pair16> expected() {
    std::ifstream f(std::filesystem::path(MINFER_CONVERT_TEST_DATA) / "f16_numpy.bin", std::ios::binary);
    std::vector<pair16> v;
    unsigned char rec[6];
    while (f.read(reinterpret_cast<char*>(rec), 6))
        v.push_back({std::uint32_t{rec[0]} | std::uint32_t{rec[1]} << 8 | std::uint32_t{rec[2]} << 16 | std::uint32_t{rec[3]} << 24,
                     static_cast<std::uint16_t>(std::uint32_t{rec[4]} | std::uint32_t{rec[5]} << 8)});
    return v;
}

float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

TEST(HalfRows, EveryValueIsNumpys) {
    const auto v = expected();
    ASSERT_GT(v.size(), 30000u);
    std::size_t differ = 0;
    for (const pair16& p : v) {
        const std::uint16_t got = minfer::convert::detail::f32_to_f16_numpy(from_bits(p.in));
        if (got != p.out && ++differ <= 10)
            ADD_FAILURE() << std::hex << "0x" << p.in << ": numpy 0x" << p.out << ", ours 0x" << got;
    }
    EXPECT_EQ(differ, 0u);
}

TEST(HalfRows, RowsOfEveryLengthAreNumpys) {
    const auto v = expected();
    std::vector<float> in;
    for (const pair16& p : v) in.push_back(from_bits(p.in));
    std::vector<std::byte> out(2 * in.size());
    minfer::convert::detail::f32_to_f16_numpy_row(in.data(), out.data(), in.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto got = static_cast<std::uint16_t>(std::to_integer<unsigned>(out[2 * i]) | std::to_integer<unsigned>(out[2 * i + 1]) << 8);
        if (got != v[i].out && ++differ <= 10) ADD_FAILURE() << std::hex << "0x" << v[i].in << ": numpy 0x" << v[i].out << ", ours 0x" << got;
    }
    EXPECT_EQ(differ, 0u);
    // every tail length, at an odd offset (unaligned output)
    for (std::size_t n = 0; n < 20; ++n) {
        std::vector<std::byte> o(2 * n + 1);
        minfer::convert::detail::f32_to_f16_numpy_row(in.data() + 3, o.data() + 1, n);
        for (std::size_t i = 0; i < n; ++i) {
            const auto got = static_cast<std::uint16_t>(std::to_integer<unsigned>(o[1 + 2 * i]) | std::to_integer<unsigned>(o[2 + 2 * i]) << 8);
            EXPECT_EQ(got, v[3 + i].out) << n << " " << i;
        }
    }
}

}  // namespace
