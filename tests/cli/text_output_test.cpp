// `minfer info` as text: the startup lines, metadata, escaping, alignment, sizes, names of ids, the
// chat template, --key, the tensor table and the totals.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace minfer_cli_test {

TEST(CliText, StartupLinesExactly) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const auto r = run({"info", f.model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u);
    const std::uint64_t size = fs::file_size(f.model);
    EXPECT_EQ(lines[0], "Loading model: " + f.model.string());
    EXPECT_EQ(lines[1], "File: " + std::to_string(size) + " bytes (" + mb_text(size) + ") in 1 part");
    EXPECT_EQ(lines[2], "GGUF: 18 KV, 4 tensors");
    EXPECT_EQ(lines[3], "version 3, alignment 32, data offset " + std::to_string(m->metadata().data_offset()));
}

TEST(CliText, MetadataLines) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "general.architecture string \"llama\"")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u8 u8 200"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i8 i8 -5"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u16 u16 60000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i16 i16 -30000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u32 u32 4000000000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i32 i32 -2000000000"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.f32 f32 0.1"));  // shortest round-trip text of 0.1f
    EXPECT_TRUE(has_squeezed_line(r.out, "t.bool bool true"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.u64 u64 18446744073709551615"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.i64 i64 -9223372036854775808"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.f64 f64 3.141592653589793"));
    EXPECT_TRUE(has_squeezed_line(r.out, "t.str string \"say \\\"hi\\\"\""));
    // Columns are aligned: the type column starts at the same place on every metadata line.
    const auto lines = lines_of(r.out);
    std::size_t col = std::string::npos;
    for (const std::string& l : lines) {
        if (l.rfind("  t.u8 ", 0) == 0) col = l.find("u8", 6);
    }
    ASSERT_NE(col, std::string::npos);
    for (const std::string& l : lines) {
        if (l.rfind("  general.architecture ", 0) == 0) {
            EXPECT_EQ(l.find("string"), col) << l;
        }
    }
}

TEST(CliText, EscapesControlCharactersAndInvalidUtf8) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "bad\\x1Bkey u32 7")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.bad_utf8 string \"abc\\xFF\\xFE\""));
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw ESC reached the terminal";
    EXPECT_EQ(r.out.find('\xff'), std::string::npos) << "raw invalid UTF-8 reached the terminal";
}

TEST(CliText, LongStringCutUnlessFull) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "t.long string \"" + long_string.substr(0, 60) + "\"… (200 bytes)"))
        << r.out;
    const auto full = run({"info", "--full", fx().model.string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_squeezed_line(full.out, "t.long string \"" + long_string + "\""));
}

TEST(CliText, ArrayPreviewAndFull) {
    const auto r = run({"info", fx().model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(
        r.out, "t.tokens [string x 20] \"tok0\", \"tok1\", \"tok2\", \"q\\\"uote\", \"tok4\", \"tok5\", \"tok6\", "
               "\"tok7\", …"))
        << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "t.nums [u32 x 10] 1, 2, 3, 4, 5, 6, 7, 8, …"));
    EXPECT_EQ(r.out.find("tok8"), std::string::npos);

    const auto full = run({"info", "--full", fx().model.string()});
    ASSERT_EQ(full.rc, 0);
    EXPECT_TRUE(has_squeezed_line(full.out, "t.tokens [string x 20]"));
    for (int i = 0; i < 20; ++i) {
        const std::string item = i == 3 ? "\"q\\\"uote\"" : "\"tok" + std::to_string(i) + "\"";
        EXPECT_TRUE(has_line(full.out, "      [" + std::to_string(i) + "] " + item)) << i;
    }
    EXPECT_TRUE(has_line(full.out, "      [9] 10"));
}

TEST(CliText, TensorTableAndTotals) {
    const auto& f = fx();
    auto m = gguf::model::open(f.model);
    ASSERT_TRUE(m.has_value());
    const std::uint64_t d = m->metadata().data_offset();
    const auto r = run({"info", f.model.string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "name type shape bytes offset")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "a.weight f32 [4, 3] 48 " + std::to_string(d + 0)));
    EXPECT_TRUE(has_squeezed_line(r.out, "b.weight f16 [8] 16 " + std::to_string(d + 64)));
    EXPECT_TRUE(has_squeezed_line(r.out, "c.weight q8_0 [32, 2] 68 " + std::to_string(d + 96)));
    EXPECT_TRUE(has_squeezed_line(r.out, "d.weight q4_0 [64] 36 " + std::to_string(d + 192)));
    // 12 + 8 + 64 + 64 = 148 parameters in 48 + 16 + 68 + 36 = 168 bytes: 168*8/148 = 9.08 bits.
    EXPECT_TRUE(has_line(r.out, "total: 4 tensors, 148 parameters, 168 bytes (0.0 MiB), 9.08 bits per weight"));
}

TEST(CliText, NoMmapGivesIdenticalOutput) {
    const auto a = run({"info", fx().model.string()});
    const auto b = run({"info", "--no-mmap", fx().model.string()});
    ASSERT_EQ(a.rc, 0);
    ASSERT_EQ(b.rc, 0);
    EXPECT_EQ(a.out, b.out);
    const auto c = run({"info", "--json", fx().model.string()});
    const auto d = run({"info", "--json", "--no-mmap", fx().model.string()});
    ASSERT_EQ(c.rc, 0);
    EXPECT_EQ(c.out, d.out);
    const auto e = run({"info", "--full", "--no-mmap", fx().model.string()});
    const auto g = run({"info", "--full", fx().model.string()});
    EXPECT_EQ(e.out, g.out);
}

TEST(CliText, SplitSetIsOneModel) {
    const auto& f = fx();
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 3; ++i) total += fs::file_size(f.dir / gguf::split_file_name("x", i, 3));
    const auto r = run({"info", f.split1.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[1], "File: " + std::to_string(total) + " bytes (" + mb_text(total) + ") in 3 parts");
    EXPECT_EQ(lines[2], "GGUF: 4 KV, 3 tensors");
    EXPECT_TRUE(has_squeezed_line(r.out, "name type shape bytes offset part"));
    auto m = gguf::model::open(f.split1);
    ASSERT_TRUE(m.has_value());
    for (std::uint32_t p = 0; p < 3; ++p) {
        const std::uint64_t off = m->parts()[p].view.data_offset();
        EXPECT_TRUE(has_squeezed_line(r.out, "part" + std::to_string(p + 1) + ".weight f32 [8] 32 " +
                                                 std::to_string(off) + " " + std::to_string(p + 1)))
            << r.out;
    }
}

TEST(CliText, InvisibleCharactersAreEscaped) {
    const auto r = run({"info", text_model().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_squeezed_line(r.out, "general.architecture\\u200B string \"fake\"")) << r.out;
    EXPECT_EQ(r.out.find("\xe2\x80\x8b"), std::string::npos) << "a raw U+200B reached the terminal";
}

TEST(CliText, ColumnsAlignByDisplayWidth) {
    const auto r = run({"info", text_model().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    // The type column starts at the same terminal column on every metadata row: "中文.key" is 8 bytes
    // wide in columns (2 + 2 + 4) but 10 bytes long.
    // "café.key" (e + U+0301) is 10 bytes and 8 columns.
    std::size_t col_ascii = 0, col_cjk = 0, col_combining = 0;
    for (const std::string& l : lines_of(r.out)) {
        if (l.rfind("  t.bytes ", 0) == 0) col_ascii = l.find("[u8 x 3]");
        if (l.rfind("  \xe4\xb8\xad\xe6\x96\x87.key ", 0) == 0) col_cjk = l.find("u32");
        if (l.rfind("  cafe\xcc\x81.key ", 0) == 0) col_combining = l.find("u32");
    }
    ASSERT_NE(col_ascii, 0u);
    ASSERT_NE(col_cjk, 0u);
    ASSERT_NE(col_combining, 0u);
    EXPECT_EQ(col_cjk, col_ascii + 2) << "the 2 extra bytes of the CJK key are 2 columns fewer, not more";
    EXPECT_EQ(col_combining, col_ascii + 2) << "the combining accent takes bytes but no column\n" << r.out;
}

TEST(CliText, SizesSayMiBAndMeanIt) {
    const auto r = run({"info", text_model().string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::uint64_t size = fs::file_size(text_model());
    ASSERT_GT(size, 3145728u);
    ASSERT_LT(size, 3145728u + 50000u);  // 3.0 MiB but 3.1 MB: the label must match the divisor
    EXPECT_EQ(lines_of(r.out)[1], "File: " + std::to_string(size) + " bytes (3.0 MiB) in 1 part");
}

TEST(CliText, FileTypeByName) {
    const auto r = run({"info", text_model().string()});
    EXPECT_TRUE(has_squeezed_line(r.out, "general.file_type u32 15 MOSTLY_Q4_K_M (Q4_K - Medium)")) << r.out;
}

TEST(CliText, PerTypeSummary) {
    const auto r = run({"info", text_model().string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "type tensors bytes MiB bits/weight")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "f32 1 3145728 3.0 32.00"));
    EXPECT_TRUE(has_squeezed_line(r.out, "q4_0 1 36 0.0 4.50"));
    EXPECT_TRUE(has_squeezed_line(r.out, "q8_0 2 136 0.0 8.50"));
}

TEST(CliText, SpecialTokensResolved) {
    const auto r = run({"info", text_model().string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_squeezed_line(r.out, "tokenizer.ggml.bos_token_id u32 1 = \"<s>\"")) << r.out;
    EXPECT_TRUE(has_squeezed_line(r.out, "tokenizer.ggml.eos_token_id u32 2 = \"</s>\""));
    EXPECT_TRUE(has_squeezed_line(r.out, "tokenizer.ggml.padding_token_id i32 -1 (not a token: the vocabulary has 4)"));
    EXPECT_TRUE(
        has_squeezed_line(r.out, "tokenizer.ggml.seperator_token_id u32 70000 (not a token: the vocabulary has 4)"));
}

TEST(CliText, ChatTemplateReadableWithFull) {
    const auto r = run({"info", "--full", text_model().string()});
    ASSERT_EQ(r.rc, 0);
    EXPECT_TRUE(has_line(r.out, "      | {% for m in messages %}")) << r.out;
    EXPECT_TRUE(has_line(r.out, "      | {{ m['content'] + '\\n' }}\\x1B"));
    EXPECT_TRUE(has_line(r.out, "      | {% endfor %}"));
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(CliText, KeyPrintsOneValueRaw) {
    const auto s = run({"info", "--key", "t.raw", text_model().string()});
    EXPECT_EQ(s.rc, 0);
    EXPECT_EQ(s.out, "line1\nline2\t\xff");  // exactly the bytes: no newline added
    EXPECT_EQ(run({"info", "--key", "general.file_type", text_model().string()}).out, "15\n");
    EXPECT_EQ(run({"info", "--key", "t.bytes", text_model().string()}).out, "1\n2\n3\n");
    EXPECT_EQ(run({"info", "--key", "tokenizer.ggml.tokens", text_model().string()}).out, "<unk>\n<s>\n</s>\nhello\n");
    const auto missing = run({"info", "--key", "no.such", text_model().string()});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_EQ(missing.out, "");
    EXPECT_NE(missing.err.find("no key 'no.such'"), std::string::npos) << missing.err;
}

}  // namespace minfer_cli_test

namespace minfer_cli_test {

// Bytes after the data section are accepted (as llama.cpp does) but reported, in text and JSON.
TEST(CliText, TrailingBytesAreReported) {
    const fs::path p = temp_root() / "trailing.gguf";
    fs::copy_file(fx().model, p, fs::copy_options::overwrite_existing);
    const auto plain = run({"info", p.string()});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_EQ(plain.out.find("after the data section"), std::string::npos);
    {
        std::FILE* f = std::fopen(p.c_str(), "ab");
        ASSERT_NE(f, nullptr);
        std::fputs("extra", f);
        std::fclose(f);
    }
    auto m = gguf::model::open(p);
    ASSERT_TRUE(m.has_value());
    const std::uint64_t extra = m->parts()[0].trailing_bytes();
    ASSERT_GE(extra, 5u);  // "extra" plus whatever padding the last tensor's end lacked
    const auto r = run({"info", p.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("note: " + std::to_string(extra) + " bytes after the data section (ignored)"), std::string::npos)
        << r.out;
    const auto j = run({"info", "--json", p.string()});
    ASSERT_EQ(j.rc, 0) << j.err;
    EXPECT_EQ(json::parse(j.out)["parts"][0]["trailing_bytes"].get<std::uint64_t>(), extra);
}

}  // namespace minfer_cli_test
