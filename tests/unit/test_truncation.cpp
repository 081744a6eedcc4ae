// Truncation and corruption sweeps over small valid files made by the writer: every prefix is
// refused with a size-related code (except prefixes that only drop the last tensor's trailing
// padding), and single-byte corruptions never crash (run under ASan to prove the bounds).
#include <gtest/gtest.h>

#include <set>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

struct sample {
    std::string name;
    bytes b;
};

std::vector<sample> samples() {
    std::vector<sample> out;
    {
        writer w;  // header only
        out.push_back({"empty", to_bytes(w)});
    }
    {
        writer w;  // tensor-less, every value kind
        const std::uint32_t u[] = {1, 2, 3};
        const std::string_view s[] = {"<s>", "", "hello world"};
        w.set_string("general.architecture", "llama")
            .set_u8("a.u8", 1)
            .set_i16("a.i16", -2)
            .set_u32("a.u32", 3)
            .set_f32("a.f32", 4.5f)
            .set_bool("a.bool", true)
            .set_u64("a.u64", 5)
            .set_f64("a.f64", 6.5)
            .set_array("a.arr", value_type::u32, std::span<const std::uint32_t>(u))
            .set_strings("tokenizer.ggml.tokens", std::span<const std::string_view>(s));
        out.push_back({"tensorless", to_bytes(w)});
    }
    {
        writer w;  // tensors of several types, default alignment
        const std::int64_t n3[] = {3}, q[] = {32, 2}, m[] = {4, 2};
        w.set_string("general.architecture", "test").set_u32("test.block_count", 1);
        w.add_tensor("a", tensor_type::f32, n3, random_bytes(12, 1));
        w.add_tensor("blk.0.q", tensor_type::q4_0, q, random_bytes(36, 2));
        w.add_tensor("m", tensor_type::f16, m, random_bytes(16, 3));
        out.push_back({"tensors", to_bytes(w)});
    }
    {
        writer w;  // alignment 64, a last tensor with a long padding tail
        const std::int64_t n[] = {5};
        w.set_u32("general.alignment", 64).set_strings("names", std::span<const std::string_view>());
        w.add_tensor("x", tensor_type::i8, n, random_bytes(5, 4));
        out.push_back({"align64", to_bytes(w)});
    }
    {
        writer w;  // alignment 1: no padding anywhere
        const std::int64_t n[] = {3};
        w.set_u32("general.alignment", 1);
        w.add_tensor("y", tensor_type::i16, n, random_bytes(6, 5));
        w.add_tensor("scalar", tensor_type::f32, std::span<const std::int64_t>(), random_bytes(4, 6));
        out.push_back({"align1", to_bytes(w)});
    }
    return out;
}

// The codes a prefix of a valid file can produce: every read either succeeds with the original
// value or runs out of bytes.
const std::set<errc> size_codes = {errc::truncated, errc::string_exceeds_file, errc::array_exceeds_file,
                                   errc::count_too_large, errc::data_truncated};

TEST(Truncation, EveryPrefixIsRefusedWithASizeCode) {
    for (const sample& s : samples()) {
        SCOPED_TRACE(s.name);
        auto full = file_view::parse(s.b);
        ASSERT_TRUE(full) << full.error().message();
        // the shortest acceptable prefix: the end of the last tensor's bytes (no trailing padding)
        std::uint64_t min_ok = s.b.size();
        if (!full->tensors().empty()) {
            const tensor_info& last = full->tensors().back();
            min_ok = full->data_offset() + last.offset + last.n_bytes;
        }
        ASSERT_LE(min_ok, s.b.size());
        std::size_t accepted = 0;
        for (std::size_t n = 0; n < s.b.size(); ++n) {
            const bytes cut(s.b.begin(), s.b.begin() + static_cast<std::ptrdiff_t>(n));
            auto r = file_view::parse(cut);
            if (n >= min_ok) {
                ASSERT_TRUE(r) << "prefix " << n << " only cuts trailing padding: " << r.error().message();
                EXPECT_EQ(r->data_offset(), full->data_offset());
                EXPECT_EQ(r->tensors().size(), full->tensors().size());
                ++accepted;
                continue;
            }
            ASSERT_FALSE(r) << "prefix " << n << " of " << s.b.size() << " was accepted";
            const error& e = r.error();
            EXPECT_TRUE(size_codes.count(e.code)) << "prefix " << n << ": " << describe(e);
            EXPECT_LE(e.offset, n) << "prefix " << n << ": the error points past the end: " << describe(e);
            EXPECT_FALSE(e.description().empty());
        }
        EXPECT_EQ(accepted, s.b.size() - min_ok);
    }
}

TEST(Truncation, TensorlessFilesHaveNoSlack) {
    // the writer adds no padding after a tensor-less table, so even the last byte matters
    for (const sample& s : samples()) {
        auto full = file_view::parse(s.b);
        ASSERT_TRUE(full);
        if (!full->tensors().empty()) continue;
        SCOPED_TRACE(s.name);
        EXPECT_EQ(full->data_offset(), s.b.size());
        const bytes cut(s.b.begin(), s.b.end() - 1);
        EXPECT_FALSE(file_view::parse(cut));
    }
}

// Every view handed out by a successful parse stays inside the parsed bytes.
void check_views(const file_view& v, std::span<const std::byte> b) {
    const std::byte* lo = b.data();
    const std::byte* hi = b.data() + b.size();
    for (const kv& e : v.metadata()) {
        ASSERT_GE(reinterpret_cast<const std::byte*>(e.key.data()), lo);
        ASSERT_LE(reinterpret_cast<const std::byte*>(e.key.data() + e.key.size()), hi);
        ASSERT_GE(e.payload.data(), lo);
        ASSERT_LE(e.payload.data() + e.payload.size(), hi);
        if (e.is_array()) {
            auto a = e.get<array_view>();
            ASSERT_TRUE(a);
            if (a->element_type() == value_type::string) {
                std::uint64_t n = 0;
                for (std::string_view s : a->strings()) {
                    ASSERT_LE(reinterpret_cast<const std::byte*>(s.data() + s.size()), hi);
                    ++n;
                }
                ASSERT_EQ(n, a->size());
            }
        }
    }
    for (const tensor_info& t : v.tensors()) {
        const auto d = v.tensor_data(t);
        ASSERT_EQ(d.size(), t.n_bytes);
        ASSERT_GE(d.data(), lo);
        ASSERT_LE(d.data() + d.size(), hi);
        if (!d.empty()) {
            volatile std::byte first = d.front();  // touched so ASan checks the bounds
            volatile std::byte last = d.back();
            (void)first;
            (void)last;
        }
    }
}

TEST(Corruption, EverySingleByteChangeIsHandled) {
    const std::uint8_t values[] = {0x00, 0x01, 0x7F, 0x80, 0xFF};
    std::size_t refused = 0, accepted = 0;
    for (const sample& s : samples()) {
        SCOPED_TRACE(s.name);
        // only the parsed region matters: the data bytes are never read
        auto full = file_view::parse(s.b);
        ASSERT_TRUE(full);
        const std::size_t end = static_cast<std::size_t>(std::min<std::uint64_t>(full->data_offset(), s.b.size()));
        for (std::size_t i = 0; i < end; ++i) {
            for (std::uint8_t v : values) {
                bytes m = s.b;
                m[i] = static_cast<std::byte>(v);
                // copy into an exactly-sized heap buffer so ASan sees any read past the end
                std::unique_ptr<std::byte[]> exact(new std::byte[m.size()]);
                std::copy(m.begin(), m.end(), exact.get());
                const std::span<const std::byte> span(exact.get(), m.size());
                auto r = file_view::parse(span);
                if (r) {
                    ++accepted;
                    check_views(*r, span);
                } else {
                    ++refused;
                    EXPECT_NE(r.error().code, errc::ok);
                    EXPECT_NE(r.error().code, errc::out_of_memory) << describe(r.error());
                    EXPECT_FALSE(r.error().message().empty());
                }
            }
        }
    }
    EXPECT_GT(refused, 0u);
    EXPECT_GT(accepted, 0u);  // e.g. changed value bytes
}

TEST(Corruption, ExactBufferPrefixesUnderAsan) {
    // the prefix sweep again, but each prefix in its own exactly-sized allocation
    for (const sample& s : samples()) {
        for (std::size_t n = 0; n <= s.b.size(); ++n) {
            std::unique_ptr<std::byte[]> exact(new std::byte[n == 0 ? 1 : n]);
            std::copy(s.b.begin(), s.b.begin() + static_cast<std::ptrdiff_t>(n), exact.get());
            auto r = file_view::parse(std::span<const std::byte>(exact.get(), n));
            if (r) check_views(*r, std::span<const std::byte>(exact.get(), n));
        }
    }
}

}  // namespace
