// The smallest file of every divergence class docs/DIFFERENTIAL.md documents, built byte by byte:
// each test shows the class exists (llama.cpp accepts, we refuse with that code) and gives the doc
// its reproducer. The last tests are divergences in the other direction that are NOT justified:
// llama.cpp treats names as C strings, so an embedded NUL changes what it sees.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <iostream>
#include <string_view>

#include "harness.hpp"
#include "llama_ref.hpp"
#include "minfer/gguf.hpp"
#include "snapshot.hpp"

namespace minfer::reference {
namespace {

namespace gg = minfer::gguf;

struct builder {
    std::vector<std::byte> b;
    template <class T>
    builder& put(T v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        b.insert(b.end(), p, p + sizeof v);
        return *this;
    }
    builder& raw(std::string_view s) {
        for (char c : s) b.push_back(static_cast<std::byte>(c));
        return *this;
    }
    builder& str(std::string_view s) { return put<std::uint64_t>(s.size()).raw(s); }
    builder& header(std::int64_t n_tensors, std::int64_t n_kv) {
        return raw("GGUF").put<std::uint32_t>(3).put<std::int64_t>(n_tensors).put<std::int64_t>(n_kv);
    }
    builder& tensor(std::string_view name, std::initializer_list<std::int64_t> ne, std::uint32_t type, std::uint64_t off) {
        str(name).put<std::uint32_t>(static_cast<std::uint32_t>(ne.size()));
        for (std::int64_t d : ne) put(d);
        return put(type).put(off);
    }
    builder& pad_to(std::size_t align) {
        while (b.size() % align != 0) b.push_back(std::byte{0});
        return *this;
    }
    builder& zeros(std::size_t n) {
        b.resize(b.size() + n);
        return *this;
    }
};

struct verdicts {
    ref_verdict theirs;
    gg::result<gg::file_view> ours;
};

verdicts run(const llama_lib& lib, const std::vector<std::byte>& bytes) {
    scratch_dir dir;
    const auto path = dir / "case.gguf";
    write_bytes(path, bytes);
    return {ref_read(lib, path), gg::file_view::parse(bytes)};
}

// llama.cpp accepts, we refuse with `code`.
void expect_stricter(const llama_lib& lib, const char* name, const std::vector<std::byte>& bytes, gg::errc code) {
    const verdicts v = run(lib, bytes);
    EXPECT_TRUE(v.theirs.accepted) << name << ": llama.cpp refuses it now:\n" << v.theirs.log;
    ASSERT_FALSE(v.ours.has_value()) << name << ": we accept it";
    EXPECT_EQ(v.ours.error().code, code) << name << ": " << v.ours.error().message();
    std::cout << "[ " << name << " ] " << bytes.size() << " bytes, ours: " << v.ours.error().message()
              << "\n  hex: " << hex(bytes) << "\n";
}

TEST(Stricter, BoolByteOtherThanZeroOrOne) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(0, 1).str("b").put<std::uint32_t>(7).put<std::uint8_t>(2);
    expect_stricter(*lib, "bad_bool", f.b, gg::errc::bad_bool);
}

TEST(Stricter, TensorDataPastTheEndOfTheFile) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(1, 0).tensor("t", {8}, 0, 0).pad_to(32);  // 32 bytes of f32 data missing
    expect_stricter(*lib, "data_truncated", f.b, gg::errc::data_truncated);
}

TEST(Stricter, EmptyTensorName) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(1, 0).tensor("", {8}, 0, 0).pad_to(32).zeros(32);
    expect_stricter(*lib, "bad_name_length:empty", f.b, gg::errc::bad_name_length);
}

TEST(Stricter, ShapeWhoseProductOverflowsBeforeAZeroDimension) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(1, 0).tensor("t", {1ll << 62, 1ll << 62, 0}, 24, 0).pad_to(32);  // i8, zero elements
    expect_stricter(*lib, "shape_overflow:zero_dim", f.b, gg::errc::shape_overflow);
}

TEST(Stricter, ShapeWhoseElementCountWrapsToZero) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(1, 0).tensor("t", {1ll << 32, 1ll << 32}, 24, 0).pad_to(32);  // i8: 2^64 elements, "0 bytes"
    expect_stricter(*lib, "shape_overflow:nelements_wraps", f.b, gg::errc::shape_overflow);
    const verdicts v = run(*lib, f.b);
    if (v.theirs.accepted) {
        ASSERT_EQ(v.theirs.content.tensors.size(), 1u);
        std::cout << "  llama.cpp: tensor of 2^64 elements with size " << v.theirs.content.tensors[0].size << "\n";
    }
}

TEST(Stricter, ShapeWhoseElementCountWrapsNegative) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(1, 0).tensor("t", {INT64_MAX, 3, 2}, 24, 0).pad_to(32);  // i8: ggml_nelements() == -6
    expect_stricter(*lib, "shape_overflow:nelements_wraps (negative)", f.b, gg::errc::shape_overflow);
    const verdicts v = run(*lib, f.b);
    if (v.theirs.accepted) {
        ASSERT_EQ(v.theirs.content.tensors.size(), 1u);
        std::cout << "  llama.cpp: tensor of ~2^65 elements with size " << v.theirs.content.tensors[0].size << "\n";
    }
}

// ggml_nbytes() computes ne[0] * nb[0] / block size: for q4_0 (32 values in 18 bytes) and
// ne[0] = (2^67 + 448) / 18 the product wraps and llama.cpp takes a tensor of 2^62 + 14 bytes for
// 14 bytes, so the next tensor "fits" at offset 32. We compute the true size: offset_mismatch.
TEST(Stricter, TensorSizeThatGgmlNbytesWraps) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    f.header(2, 0).tensor("big", {8198552921648689632ll}, 2, 0).tensor("next", {8}, 0, 32).pad_to(32).zeros(64);
    expect_stricter(*lib, "offset_mismatch:ggml_nbytes_wraps", f.b, gg::errc::offset_mismatch);
    const verdicts v = run(*lib, f.b);
    if (v.theirs.accepted) {
        ASSERT_EQ(v.theirs.content.tensors.size(), 2u);
        EXPECT_EQ(v.theirs.content.tensors[0].size, 14u);
        std::cout << "  llama.cpp: q4_0 tensor of 2^62+14 bytes with size " << v.theirs.content.tensors[0].size << "\n";
    }
}

// ---- names with an embedded NUL: llama.cpp compares them as C strings, so it would see other names --

// Two tensor names that differ only after a NUL are one name to ggml (char name[64], strcmp):
// llama.cpp refuses the file as a duplicate. We refuse any name holding a NUL, for the reason.
TEST(CStrings, TensorNamesEqualUpToANulAreDuplicatesToLlama) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    using namespace std::string_view_literals;
    f.header(2, 0).tensor("a\0x"sv, {8}, 0, 0).tensor("a\0y"sv, {8}, 0, 32).pad_to(32).zeros(64);
    const verdicts v = run(*lib, f.b);
    EXPECT_FALSE(v.theirs.accepted);
    ASSERT_FALSE(v.ours.has_value()) << "hex: " << hex(f.b);
    EXPECT_EQ(v.ours.error().code, gg::errc::nul_in_name) << v.ours.error().message();
    EXPECT_EQ(v.ours.error().found, 1u);
}

// A key "general.alignment\0" is found by gguf_find_key (strcmp) as general.alignment: llama.cpp
// lays the data out for 64 and would read the file differently from a byte-exact reader. We refuse
// it (nul_in_name) rather than pick one of the two readings.
TEST(CStrings, KeyEqualToGeneralAlignmentUpToANul) {
    MINFER_REQUIRE_LLAMA(lib);
    builder f;
    using namespace std::string_view_literals;
    f.header(1, 1).str("general.alignment\0"sv).put<std::uint32_t>(4).put<std::uint32_t>(64);
    f.tensor("t", {8}, 0, 0).pad_to(64).zeros(32 + 32);
    const verdicts v = run(*lib, f.b);
    ASSERT_TRUE(v.theirs.accepted) << v.theirs.log;
    EXPECT_EQ(v.theirs.content.alignment, 64u);
    ASSERT_FALSE(v.ours.has_value()) << "hex: " << hex(f.b);
    EXPECT_EQ(v.ours.error().code, gg::errc::nul_in_name) << v.ours.error().message();
    EXPECT_EQ(v.ours.error().found, 17u);
}

}  // namespace
}  // namespace minfer::reference
