// Display width: the columns a terminal gives text, used to align tables.
#include <gtest/gtest.h>

#include "common/display_width.hpp"

namespace {

using minfer::cli::display_width;

TEST(DisplayWidth, AsciiAndLatin) {
    EXPECT_EQ(display_width(""), 0u);
    EXPECT_EQ(display_width("token_embd.weight"), 17u);
    EXPECT_EQ(display_width("caf\xc3\xa9"), 4u);  // é precomposed
}

TEST(DisplayWidth, EastAsianWideIsTwo) {
    EXPECT_EQ(display_width("\xe4\xb8\xad\xe6\x96\x87"), 4u);        // 中文
    EXPECT_EQ(display_width("\xea\xb0\x80"), 2u);                    // 가 (Hangul)
    EXPECT_EQ(display_width("\xef\xbc\xa1"), 2u);                    // Ａ (fullwidth A)
    EXPECT_EQ(display_width("\xf0\x9f\x98\x80"), 2u);                // 😀
    EXPECT_EQ(display_width("\xe3\x81\x82" "a"), 3u);                // あa
}

TEST(DisplayWidth, CombiningAndZeroWidthAreZero) {
    EXPECT_EQ(display_width("e\xcc\x81"), 1u);        // e + U+0301
    EXPECT_EQ(display_width("a\xe2\x80\x8b" "b"), 2u);  // U+200B
    EXPECT_EQ(display_width("\xef\xbb\xbf"), 0u);     // BOM
}

TEST(DisplayWidth, Padding) {
    EXPECT_EQ(minfer::cli::pad_right("\xe4\xb8\xad", 4), "\xe4\xb8\xad  ");
    EXPECT_EQ(minfer::cli::pad_right("abcdef", 4), "abcdef");
    EXPECT_EQ(minfer::cli::pad_left("\xe4\xb8\xad", 3), " \xe4\xb8\xad");
}

}  // namespace
