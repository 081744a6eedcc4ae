// gguf::escape (src/text.cpp): characters a reader cannot see, or that reorder a line, are escaped so
// that two different keys never look the same.
#include <gtest/gtest.h>

#include <string>

#include "minfer/gguf/text.hpp"

namespace {

using minfer::gguf::escape;

TEST(TextEscape, ZeroWidthCharacters) {
    EXPECT_EQ(escape("general.architecture\xe2\x80\x8b"), "general.architecture\\u200B");
    EXPECT_EQ(escape("a\xe2\x80\x8c" "b\xe2\x80\x8d"), "a\\u200Cb\\u200D");
    EXPECT_EQ(escape("\xe2\x81\xa0\xe2\x81\xa4"), "\\u2060\\u2064");  // word joiner, invisible plus
    EXPECT_EQ(escape("\xef\xbb\xbfkey"), "\\uFEFFkey");                // BOM
}

TEST(TextEscape, BidiMarksOverridesAndIsolates) {
    EXPECT_EQ(escape("\xd8\x9c"), "\\u061C");                           // Arabic letter mark
    EXPECT_EQ(escape("\xe2\x80\x8e\xe2\x80\x8f"), "\\u200E\\u200F");    // LRM, RLM
    EXPECT_EQ(escape("\xe2\x80\xaa\xe2\x80\xae"), "\\u202A\\u202E");    // LRE, RLO
    EXPECT_EQ(escape("\xe2\x81\xa6\xe2\x81\xa9"), "\\u2066\\u2069");    // LRI, PDI
}

TEST(TextEscape, LineAndParagraphSeparators) {
    EXPECT_EQ(escape("a\xe2\x80\xa8" "b\xe2\x80\xa9"), "a\\u2028b\\u2029");
}

TEST(TextEscape, NeighboursStayVisible) {
    EXPECT_EQ(escape("\xe2\x80\x8a"), "\xe2\x80\x8a");  // U+200A hair space: visible width, kept
    EXPECT_EQ(escape("\xe2\x80\x90"), "\xe2\x80\x90");  // U+2010 hyphen
    EXPECT_EQ(escape("\xe2\x81\xa5"), "\xe2\x81\xa5");  // U+2065 unassigned, not in the list
    EXPECT_EQ(escape("\xd8\x9b"), "\xd8\x9b");          // U+061B Arabic semicolon
    EXPECT_EQ(escape("\xe4\xb8\xad"), "\xe4\xb8\xad");
}

}  // namespace
