// The streaming JSON writer: RFC 8259 escaping, number forms, layout, and the lossless text of
// strings that are not UTF-8. Each document is checked by parsing it back with nlohmann-json.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "print/json_writer.hpp"

namespace {

using minfer::cli::json_writer;
using minfer::cli::out_buffer;

// Run `body` against a writer whose out_buffer goes to a temporary file; return what was written.
template <class F>
std::string written(F&& body) {
    std::FILE* f = std::tmpfile();
    {
        out_buffer out(f);
        json_writer w(out);
        body(w);
        out.flush();
    }
    std::rewind(f);
    std::string s;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
}

std::string one_string(const std::string& s) {
    return written([&](json_writer& w) { w.string(s); });
}

TEST(JsonWriter, EscapesPerRfc8259) {
    EXPECT_EQ(one_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(one_string("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
    EXPECT_EQ(one_string(std::string("\0\x01\x1b\x1f", 4)), "\"\\u0000\\u0001\\u001b\\u001f\"");
    EXPECT_EQ(one_string("\x7f"), "\"\x7f\"");  // DEL needs no escape in JSON
    EXPECT_EQ(one_string("caf\xc3\xa9 \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");  // UTF-8 kept
    EXPECT_EQ(one_string("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");
    // Invisible characters are JSON escapes: the same string once parsed, but visible in a terminal.
    EXPECT_EQ(one_string("general.architecture\xe2\x80\x8b"), "\"general.architecture\\u200b\"");
    EXPECT_EQ(one_string("\xc2\x85\xef\xbb\xbf"), "\"\\u0085\\ufeff\"");
    EXPECT_EQ(nlohmann::json::parse(one_string("a\xe2\x80\xae" "b")).get<std::string>(), "a\xe2\x80\xae" "b");
    // Every control character round-trips through a real parser.
    std::string all;
    for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
    EXPECT_EQ(nlohmann::json::parse(one_string(all)).get<std::string>(), all);
}

TEST(JsonWriter, InvalidBytesNeverMakeInvalidJson) {
    const std::string s = one_string("a\xff" "b");
    EXPECT_EQ(s, "\"a\\ufffdb\"");
    EXPECT_TRUE(nlohmann::json::accept(s));
}

TEST(JsonWriter, Numbers) {
    const std::string s = written([](json_writer& w) {
        w.begin_array(true);
        w.number(std::numeric_limits<std::uint64_t>::max());
        w.number(std::numeric_limits<std::int64_t>::min());
        w.number(0.1f);
        w.number(1e-5f);
        w.number(2.0);
        w.number(3.141592653589793);
        w.number(std::nan(""));
        w.number(-std::numeric_limits<double>::infinity());
        w.boolean(true);
        w.null();
        w.end_array();
    });
    EXPECT_EQ(s, "[18446744073709551615, -9223372036854775808, 0.1, 1e-05, 2.0, 3.141592653589793, \"nan\", "
                 "\"-inf\", true, null]");
    const auto j = nlohmann::json::parse(s);
    EXPECT_EQ(j[2].get<float>(), 0.1f);
    EXPECT_EQ(j[3].get<float>(), 1e-5f);
    EXPECT_TRUE(j[4].is_number_float());
}

TEST(JsonWriter, Layout) {
    const std::string s = written([](json_writer& w) {
        w.begin_object();
        w.key("a");
        w.begin_object(true);
        w.key("x");
        w.number(std::uint64_t{1});
        w.key("y");
        w.begin_array();  // inside a compact object: stays on the line
        w.end_array();
        w.end_object();
        w.key("b");
        w.begin_array();
        w.string("s");
        w.end_array();
        w.key("c");
        w.begin_object();
        w.end_object();
        w.end_object();
    });
    EXPECT_EQ(s, "{\n  \"a\": {\"x\": 1, \"y\": []},\n  \"b\": [\n    \"s\"\n  ],\n  \"c\": {}\n}");
}

TEST(JsonText, InjectiveForInvalidStrings) {
    using minfer::cli::json_text;
    EXPECT_EQ(json_text("abc\xff\xfe"), "abc\\xFF\\xFE");
    EXPECT_EQ(json_text("\\xFF\xfe"), "\\\\xFF\\xFE");  // a literal \xFF no longer reads like the byte
    EXPECT_NE(json_text("\xff\xfe"), json_text("\\xFF\xfe"));
    EXPECT_EQ(json_text("\xc3\xa9\xc3"), "\xc3\xa9\\xC3");  // valid sequences kept, the cut one escaped
    EXPECT_EQ(minfer::cli::hex_bytes("k\xff"), "6bff");
    EXPECT_TRUE(minfer::cli::valid_utf8("caf\xc3\xa9"));
    EXPECT_FALSE(minfer::cli::valid_utf8("\xed\xa0\x80"));  // a surrogate
}

}  // namespace
