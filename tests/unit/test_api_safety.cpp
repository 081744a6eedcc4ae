// Nothing reachable through the public API crashes (issue 8, §1): a file rewritten after it was
// verified, handles from another file, kv records built by hand, a failed result dereferenced, a
// result bound to a reference, and the accessors' errors built without allocating. Each test here
// failed (crash, ASan report or wrong result) before the change it covers.
#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/auxv.h>
#include <unistd.h>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"
#include "name_index_impl.hpp"  // internal: the seed's source is checked directly

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

// A file with one string array "toks" of `n` strings and one tensor, so handles exist.
gguf_bytes strings_file(int n) {
    gguf_bytes g;
    g.header(3, 1, 1).kv_array("toks", value_type::string, static_cast<std::uint64_t>(n));
    for (int i = 0; i < n; ++i) g.str("tok" + std::to_string(i));
    g.tensor_info("w", {8}, tensor_type::f32, 0).pad(32).zeros(32);
    return g;
}

// Where the string records of "toks" start: after the header, the key, tag, element tag, count.
constexpr std::size_t toks_records_at = 24 + 8 + 4 + 4 + 4 + 8;

bool inside(std::string_view s, std::span<const std::byte> all) {
    const auto* b = reinterpret_cast<const char*>(all.data());
    return s.empty() || (s.data() >= b && s.data() + s.size() <= b + all.size());
}

// ---- double fetch: bounds are the verified ones, whatever the bytes become -----------------------

TEST(DoubleFetch, RewrittenLengthsNeverLeaveTheVerifiedRange) {
    for (std::uint64_t evil : {~0ull, 1ull << 40, 1000ull, 13ull, 12ull, 5ull, 0ull}) {
        // Heap bytes, so ASan reports any read past them; the view is parsed once, then the
        // lengths are rewritten under it as another process would rewrite a mapped file.
        gguf_bytes g = strings_file(5);
        auto view = file_view::parse(g.span());
        ASSERT_TRUE(view) << view.error().message();
        const auto arr = view->get<array_view>("toks");
        ASSERT_TRUE(arr);
        const std::span<const std::byte> records = arr->raw();
        std::size_t at = toks_records_at;
        for (int i = 0; i < 5; ++i) {  // rewrite every length
            patch_u64(g.b, at, evil);
            at += 8 + 4;  // the original records were "tokN" (4 bytes)
        }
        std::size_t seen = 0;
        for (std::string_view s : arr->strings()) {
            EXPECT_TRUE(inside(s, records)) << "length " << evil;
            ASSERT_LE(++seen, 64u) << "iteration does not end";
        }
        for (std::uint64_t i = 0; i < 5; ++i) {
            auto s = arr->string_at(i);
            if (s) {
                EXPECT_TRUE(inside(*s, records));
            }
        }
        auto table = arr->string_table();
        ASSERT_TRUE(table);
        for (std::string_view s : *table) EXPECT_TRUE(inside(s, records));
    }
}

TEST(DoubleFetch, LengthPrefixCutByTheRangeEndsIteration) {
    // A record's 8-byte length that no longer fits (the previous length shrank by a few bytes so the
    // next prefix straddles the end): the iterator stops at the end instead of reading past it.
    gguf_bytes g = strings_file(2);  // records: [8|tok0][8|tok1] = 24 bytes
    auto view = file_view::parse(g.span());
    ASSERT_TRUE(view);
    const auto arr = view->get<array_view>("toks");
    ASSERT_TRUE(arr);
    patch_u64(g.b, toks_records_at, 8);  // first string now claims 8 bytes: the next prefix has 4 left
    std::vector<std::string_view> got(arr->strings().begin(), arr->strings().end());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].size(), 8u);
    EXPECT_TRUE(got[1].empty());
    for (std::string_view s : got) EXPECT_TRUE(inside(s, arr->raw()));
}

TEST(DoubleFetch, MappedFileRewrittenInPlaceAfterOpen) {
    temp_dir dir;
    const auto path = dir / "m.gguf";
    gguf_bytes g = strings_file(50);
    write_file(path, g.span());
    auto m = model::open(path);
    ASSERT_TRUE(m) << m.error().message();
    // Another process rewrites every length in the file (a resumed download, an in-place edit).
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    std::size_t at = toks_records_at;
    for (int i = 0; i < 50; ++i) {
        const std::uint64_t evil = ~std::uint64_t{0} - static_cast<std::uint64_t>(i);
        ASSERT_EQ(::pwrite(fd, &evil, 8, static_cast<off_t>(at)), 8);
        at += 8 + 3 + (i >= 10 ? 1 : 0) + 1;  // "tokN" or "tokNN"
    }
    ::close(fd);
    const auto arr = m->get<array_view>("toks");
    ASSERT_TRUE(arr);
    const auto file = m->parts()[0].file.bytes();
    std::size_t seen = 0;
    for (std::string_view s : arr->strings()) {
        EXPECT_TRUE(inside(s, arr->raw()));
        EXPECT_TRUE(inside(s, file));
        ASSERT_LE(++seen, 50u);
    }
}

// ---- foreign handles ----------------------------------------------------------------------------

TEST(ForeignHandles, TensorInfoOfAnotherViewGetsNoBytes) {
    gguf_bytes a = strings_file(1);
    gguf_bytes b;
    b.header(3, 1, 0).tensor_info("w", {1 << 20}, tensor_type::f32, 0).pad(32);  // claims 4 MiB…
    b.zeros(4u << 20);
    auto va = file_view::parse(a.span());
    auto vb = file_view::parse(b.span());
    ASSERT_TRUE(va);
    ASSERT_TRUE(vb);
    const tensor_info& big = vb->tensors()[0];
    EXPECT_EQ(vb->tensor_data(big).size(), 4u << 20);
    EXPECT_TRUE(va->tensor_data(big).empty());  // …which a's 100 bytes cannot hold: no read at all
    tensor_info copy = va->tensors()[0];        // a copy, even of a's own entry, is not a's entry
    copy.n_bytes = 1ull << 40;
    EXPECT_TRUE(va->tensor_data(copy).empty());
    EXPECT_FALSE(va->owns(copy));
    EXPECT_TRUE(va->owns(va->tensors()[0]));
}

TEST(ForeignHandles, TensorRefOfAnotherModelOrPartGetsNoBytes) {
    temp_dir dir;
    gguf_bytes a = strings_file(1);
    gguf_bytes b;
    b.header(3, 1, 0).tensor_info("big", {1 << 16}, tensor_type::f32, 0).pad(32).zeros(1u << 18);
    write_file(dir / "a.gguf", a.span());
    write_file(dir / "b.gguf", b.span());
    auto ma = model::open(dir / "a.gguf");
    auto mb = model::open(dir / "b.gguf");
    ASSERT_TRUE(ma);
    ASSERT_TRUE(mb);
    const tensor_ref& rb = mb->tensors()[0];
    EXPECT_EQ(mb->tensor_data(rb).size(), 1u << 18);
    EXPECT_TRUE(ma->tensor_data(rb).empty());
    tensor_ref bad_part = ma->tensors()[0];
    bad_part.part = 7;
    EXPECT_TRUE(ma->tensor_data(bad_part).empty());
    tensor_ref null_info{nullptr, 0};
    EXPECT_TRUE(ma->tensor_data(null_info).empty());
}

// ---- kv records built or altered by hand ----------------------------------------------------------

TEST(HandMadeKv, GettersNeverReadPastThePayload) {
    const std::uint32_t four = 7;
    const auto payload = std::as_bytes(std::span(&four, 1));
    kv e{"k", value_type::array, value_type::u32, 1000, payload, 0};  // claims 1000 u32 in 4 bytes
    EXPECT_EQ(error_of(e.get<array_view>()).code, errc::type_mismatch);
    e.count = 1;
    auto a = e.get<array_view>();
    ASSERT_TRUE(a);
    EXPECT_EQ(*a->at<std::uint32_t>(0), 7u);
    EXPECT_EQ(error_of(a->at<std::uint32_t>(1)).code, errc::index_out_of_range);

    kv s{"k", value_type::u64, value_type::u64, 1, payload, 0};  // a u64 in 4 bytes
    EXPECT_EQ(error_of(s.get<std::uint64_t>()).code, errc::type_mismatch);
    EXPECT_EQ(error_of(s.as_u64()).code, errc::type_mismatch);
    EXPECT_EQ(error_of(s.as_i64()).code, errc::type_mismatch);
    EXPECT_EQ(error_of(s.as<std::uint32_t>()).code, errc::type_mismatch);

    // A string array whose records claim more than its payload: iteration stays inside.
    gguf_bytes recs;
    recs.str_len(1ull << 50, "abc");
    kv t{"k", value_type::array, value_type::string, 3, recs.span(), 0};
    auto ta = t.get<array_view>();
    ASSERT_TRUE(ta);
    for (std::string_view x : ta->strings()) EXPECT_TRUE(inside(x, recs.span()));
}

// ---- misuse of a result ------------------------------------------------------------------------

TEST(ResultMisuseDeathTest, ValueOfAnErrorSaysWhyBeforeAborting) {
    gguf_bytes g = strings_file(1);
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v);
    // Used to die with "Illegal instruction" and no word.
    EXPECT_DEATH((void)*v->get<std::uint32_t>("typo"), "key 'typo' not found \\[key_not_found\\]");
    EXPECT_DEATH((void)v->get<std::uint32_t>("toks").value(), "type_mismatch");
    auto ok = v->get<array_view>("toks");
    EXPECT_DEATH((void)ok.error(), "error\\(\\) called on a result that holds a value");
}

TEST(ResultLifetime, ReferenceToADereferencedTemporaryIsSafe) {
    temp_dir dir;
    gguf_bytes g = strings_file(3);
    write_file(dir / "m.gguf", g.span());
    // Used to bind to the inside of a destroyed temporary (ASan: stack-use-after-scope). Now the
    // temporary's value is moved out and the reference extends its life.
    const model& m = *model::open(dir / "m.gguf");
    EXPECT_EQ(m.tensors().size(), 1u);
    EXPECT_EQ(m.find("toks")->count, 3u);
    const error& e = model::open(dir / "absent.gguf").error();
    EXPECT_EQ(e.code, errc::io_error);
    EXPECT_NE(e.message().find("absent.gguf"), std::string::npos);
}

// ---- accessors' failures allocate nothing ---------------------------------------------------------

TEST(AccessorErrors, AreBuiltWithoutAllocating) {
    gguf_bytes g;
    const std::string long_key(300, 'k');
    g.header(3, 0, 2).kv_u32(long_key, 1).kv_array_of<std::uint8_t>("a", value_type::u8, {1, 2, 3});
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v) << v.error().message();
    const std::string absent(1000, 'x');
    alloc_probe probe;
    const error e1 = v->get<std::uint32_t>(absent).error();
    const error e2 = v->get<float>(long_key).error();
    const error e3 = v->get<array_view>("a")->at<std::uint8_t>(9).error();
    const error e4 = v->get_as<std::int8_t>("a").error();
    // Each failed result boxes its error (result.hpp: one allocation of sizeof(error)); nothing
    // else may allocate: the subject is cut into the error's inline buffer, not copied to the heap,
    // however long the key. Four errors, four boxes at most (moving a result moves its box).
    EXPECT_LE(probe.largest(), sizeof(error)) << "an accessor's error allocated more than its box";
    EXPECT_LE(probe.total(), 4 * sizeof(error)) << "an accessor's error allocated more than one box";
    EXPECT_EQ(e1.code, errc::key_not_found);
    EXPECT_EQ(e1.subject.size(), max_subject_bytes);  // cut, not allocated
    EXPECT_EQ(e2.code, errc::type_mismatch);
    EXPECT_EQ(e2.subject, std::string_view(long_key).substr(0, max_subject_bytes));
    EXPECT_EQ(e3.code, errc::index_out_of_range);
    EXPECT_EQ(e4.code, errc::type_mismatch);
}

// ---- the hash seed -------------------------------------------------------------------------------

TEST(HashSeed, IsNotTheStackProtectorCanary) {
    // AT_RANDOM's 16 bytes seed glibc's stack-protector canary (and pointer guard): a hash whose
    // collisions a file can probe through timings must not be keyed by them.
    const auto at = ::getauxval(AT_RANDOM);
    ASSERT_NE(at, 0u);
    std::uint64_t first = 0, second = 0;
    std::memcpy(&first, reinterpret_cast<const void*>(at), 8);
    std::memcpy(&second, reinterpret_cast<const void*>(at + 8), 8);
    const std::uint64_t seed = detail::hash_seed();
    EXPECT_NE(seed, first);
    EXPECT_NE(seed, second);
    EXPECT_EQ(seed, detail::hash_seed());  // one seed per process
}

}  // namespace
