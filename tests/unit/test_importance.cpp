// minfer::quant::read_importance: the weights llama-quantize hands its quantizer, from files this
// test writes in both of llama-imatrix's formats (GGUF through gguf::writer, the legacy .dat byte by
// byte as its legacy writer lays it out). The expected weights are written here as literals or as
// the one float division llama-quantize makes, never by calling the reader. Then every malformed
// file, each the smallest that trips its check.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gguf_bytes.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/errors.hpp"

namespace {

using namespace minfer::test;
namespace q = minfer::quant;
using gg::errc;
using gg::section;

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

// ---- the legacy .dat, byte by byte --------------------------------------------------------------
// i32 n_entries; per entry i32 len, name, i32 ncall, i32 nval, nval f32; then i32 chunk count,
// i32 dataset length, dataset (llama-imatrix's save_imatrix_legacy).
struct dat {
    bytes b;
    dat& i32(std::int32_t v) { return put(&v, 4); }
    dat& f32(float v) { return put(&v, 4); }
    dat& raw(std::string_view s) { return put(s.data(), s.size()); }
    dat& put(const void* p, std::size_t n) {
        const auto* c = static_cast<const std::byte*>(p);
        b.insert(b.end(), c, c + n);
        return *this;
    }
    dat& entry(std::string_view name, std::int32_t ncall, const std::vector<float>& sums) {
        i32(static_cast<std::int32_t>(name.size())).raw(name).i32(ncall).i32(static_cast<std::int32_t>(sums.size()));
        for (float v : sums) f32(v);
        return *this;
    }
    dat& trailer(std::int32_t chunks, std::string_view dataset) {
        return i32(chunks).i32(static_cast<std::int32_t>(dataset.size())).raw(dataset);
    }
};

// ---- the GGUF format, through the writer ------------------------------------------------------
std::span<const std::byte> floats(const std::vector<float>& v) { return std::as_bytes(std::span<const float>(v)); }

struct imatrix_gguf {
    gg::writer w;
    imatrix_gguf(bool keys = true) {
        w.set_string("general.type", "imatrix");
        if (keys) {
            const std::vector<std::string> ds = {"calibration.txt", "second.txt"};
            w.set_strings("imatrix.datasets", ds);
            w.set_u32("imatrix.chunk_count", 100);
            w.set_u32("imatrix.chunk_size", 512);
        }
    }
    // in_sum2 [ne0, n_mat] and counts [1, n_mat], as llama-imatrix's save_imatrix writes them.
    imatrix_gguf& entry(const std::string& name, std::int64_t ne0, const std::vector<float>& sums,
                        const std::vector<float>& counts) {
        const std::int64_t n_mat = static_cast<std::int64_t>(counts.size());
        const std::int64_t s_ne[] = {ne0, n_mat};
        const std::int64_t c_ne[] = {1, n_mat};
        w.add_tensor(name + ".in_sum2", gg::tensor_type::f32, s_ne, floats(sums));
        w.add_tensor(name + ".counts", gg::tensor_type::f32, c_ne, floats(counts));
        return *this;
    }
    bytes get() const { return to_bytes(w); }
};

class Importance : public ::testing::Test {
protected:
    temp_dir dir;
    std::filesystem::path file(const bytes& b, std::string_view name = "im") {
        const auto p = dir / name;
        write_file(p, b);
        return p;
    }
    q::importance_matrix ok(const bytes& b, const q::importance_filter& f = {}) {
        auto r = q::read_importance(file(b), f);
        EXPECT_TRUE(r.has_value()) << (r ? std::string() : describe(r.error()));
        return r ? std::move(*r) : q::importance_matrix{};
    }
    gg::error fails(const bytes& b, const q::importance_filter& f = {}) {
        auto r = q::read_importance(file(b), f);
        EXPECT_FALSE(r.has_value()) << "read unexpectedly succeeded";
        return error_of(r);
    }
};

std::vector<std::string> names(const q::importance_matrix& m) {
    std::vector<std::string> n;
    for (const auto& e : m.entries) n.push_back(e.name);
    return n;
}

// Bitwise equality, so that a NaN or a -0 would not slip through.
::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << ", want " << want.size();
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], 4) != 0)
            return ::testing::AssertionFailure() << "value " << i << ": " << got[i] << ", want " << want[i];
    return ::testing::AssertionSuccess();
}

// ---- GGUF ---------------------------------------------------------------------------------------

TEST_F(Importance, GgufDividesEachMatrixByItsCount) {
    imatrix_gguf g;
    g.entry("blk.0.attn_q.weight", 4, {2, 4, 6, 7}, {2});
    // A MoE entry, 3 experts of 2 columns: expert 1 saw no token (count 0 → weights 1), expert 2
    // a count of 3 (a division that rounds), expert 0 a negative count (→ 1 as well).
    g.entry("blk.0.ffn_down_exps.weight", 2, {3, 6, 5, 5, 1, 10}, {-2, 0, 3});
    // A count that is NaN is not > 0: weights 1; an infinite one gives 0.
    g.entry("blk.1.ffn_up.weight", 2, {8, 8}, {nan_f});
    g.entry("blk.2.ffn_up.weight", 2, {8, 8}, {inf_f});
    // llama-imatrix's other tensors are ignored.
    const std::int64_t ne[] = {4, 1};
    g.w.add_tensor("blk.0.attn_q.weight.in_sum", gg::tensor_type::f32, ne, floats({9, 9, 9, 9}));
    g.w.add_tensor("blk.0.attn_q.weight.stats", gg::tensor_type::f32, ne, floats({1, 2, 3, 4}));
    const auto m = ok(g.get());
    ASSERT_EQ(m.entries.size(), 4u);
    EXPECT_EQ(names(m), (std::vector<std::string>{"blk.0.attn_q.weight", "blk.0.ffn_down_exps.weight",
                                                  "blk.1.ffn_up.weight", "blk.2.ffn_up.weight"}));
    EXPECT_TRUE(same_bits(m.entries[0].values, {1, 2, 3, 3.5f}));
    EXPECT_TRUE(same_bits(m.entries[1].values, {1, 1, 1, 1, 1.0f / 3.0f, 10.0f / 3.0f}));
    EXPECT_TRUE(same_bits(m.entries[2].values, {1, 1}));
    EXPECT_TRUE(same_bits(m.entries[3].values, {0, 0}));
    EXPECT_EQ(m.dataset, "calibration.txt");  // the first dataset only, as llama-quantize
    EXPECT_TRUE(m.has_dataset);
    EXPECT_EQ(m.chunks_count, 100);
    EXPECT_EQ(m.file, (dir / "im").string());

    const q::importance_entry* e = m.find("blk.0.ffn_down_exps.weight");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->name, "blk.0.ffn_down_exps.weight");
    EXPECT_EQ(m.find("blk.0.ffn_down_exps"), nullptr);
    EXPECT_EQ(m.find("blk.0.attn_q.weight.in_sum2"), nullptr);
    EXPECT_EQ(m.find(""), nullptr);
    EXPECT_EQ(m.find("zzz"), nullptr);
}

TEST_F(Importance, GgufKeys) {
    {  // chunk_count is a u32 that llama-quantize keeps in an int
        imatrix_gguf g(false);
        g.w.set_strings("imatrix.datasets", std::vector<std::string>{});
        g.w.set_u32("imatrix.chunk_count", 0xFFFFFFFFu).set_u32("imatrix.chunk_size", 1);
        g.entry("a", 1, {1}, {1});
        const auto m = ok(g.get());
        EXPECT_EQ(m.chunks_count, -1);
        EXPECT_FALSE(m.has_dataset);  // an empty list names no dataset
        EXPECT_EQ(m.dataset, "");
    }
    {  // a plain string is one dataset (gguf_get_arr_n counts it as 1); cut at its first NUL
        imatrix_gguf g(false);
        g.w.set_string("imatrix.datasets", std::string_view("wiki\0hidden", 11));
        g.w.set_u32("imatrix.chunk_count", 3).set_u32("imatrix.chunk_size", 1);
        g.entry("a", 1, {1}, {1});
        const auto m = ok(g.get());
        EXPECT_EQ(m.dataset, "wiki");
        EXPECT_TRUE(m.has_dataset);
        EXPECT_EQ(m.chunks_count, 3);
    }
    {  // an empty dataset name is still a dataset: llama-quantize writes the key, empty
        imatrix_gguf g(false);
        g.w.set_strings("imatrix.datasets", std::vector<std::string>{""});
        g.w.set_u32("imatrix.chunk_count", 0).set_u32("imatrix.chunk_size", 1);
        g.entry("a", 1, {1}, {1});
        const auto m = ok(g.get());
        EXPECT_TRUE(m.has_dataset);
        EXPECT_EQ(m.dataset, "");
        EXPECT_EQ(m.chunks_count, 0);
    }
    {  // the kv override holds 127 bytes
        imatrix_gguf g(false);
        const std::string long_name(300, 'x');
        g.w.set_strings("imatrix.datasets", std::vector<std::string>{long_name});
        g.w.set_u32("imatrix.chunk_count", 1).set_u32("imatrix.chunk_size", 1);
        g.entry("a", 1, {1}, {1});
        EXPECT_EQ(ok(g.get()).dataset, std::string(127, 'x'));
    }
    {  // no tensor pairs at all: an empty matrix (llama-quantize then writes no key)
        imatrix_gguf g;
        const std::int64_t ne[] = {1};
        g.w.add_tensor("other", gg::tensor_type::f32, ne, floats({1}));
        const auto m = ok(g.get());
        EXPECT_TRUE(m.entries.empty());
    }
}

// ---- legacy ---------------------------------------------------------------------------------------

TEST_F(Importance, LegacyDividesByNcall) {
    dat d;
    d.i32(4);
    d.entry("blk.0.attn_k.weight", 3, {3, 1, 6, 9.5f});   // / 3
    d.entry("blk.0.attn_v.weight", 0, {2, 0.5f});         // ncall 0: the sums as they are
    d.entry("blk.0.ffn_gate_exps.weight", -4, {7, 8});    // negative: as they are
    d.entry("blk.0.ffn_down_exps.weight", 2, {1, 2, 3, 4, 5, 6});  // MoE: one ncall for all experts
    d.trailer(42, "calibration_datav3.txt");
    const auto m = ok(d.b);
    ASSERT_EQ(m.entries.size(), 4u);
    EXPECT_EQ(names(m), (std::vector<std::string>{"blk.0.attn_k.weight", "blk.0.attn_v.weight",
                                                  "blk.0.ffn_down_exps.weight", "blk.0.ffn_gate_exps.weight"}));
    EXPECT_TRUE(same_bits(m.find("blk.0.attn_k.weight")->values, {1, 1.0f / 3.0f, 2, 9.5f / 3.0f}));
    EXPECT_TRUE(same_bits(m.find("blk.0.attn_v.weight")->values, {2, 0.5f}));
    EXPECT_TRUE(same_bits(m.find("blk.0.ffn_gate_exps.weight")->values, {7, 8}));
    EXPECT_TRUE(same_bits(m.find("blk.0.ffn_down_exps.weight")->values, {0.5f, 1, 1.5f, 2, 2.5f, 3}));
    EXPECT_EQ(m.chunks_count, 42);
    EXPECT_EQ(m.dataset, "calibration_datav3.txt");
    EXPECT_TRUE(m.has_dataset);
}

TEST_F(Importance, LegacyTrailerNamesAndDuplicates) {
    {  // no trailer: no dataset, no chunk count
        dat d;
        d.i32(1).entry("a", 1, {5});
        const auto m = ok(d.b);
        EXPECT_FALSE(m.has_dataset);
        EXPECT_EQ(m.chunks_count, 0);
        EXPECT_TRUE(same_bits(m.entries.at(0).values, {5}));
    }
    {  // an empty dataset name is a dataset; bytes after the trailer are ignored
        dat d;
        d.i32(1).entry("a", 1, {5}).trailer(-7, "").raw("junk");
        const auto m = ok(d.b);
        EXPECT_TRUE(m.has_dataset);
        EXPECT_EQ(m.dataset, "");
        EXPECT_EQ(m.chunks_count, -7);
    }
    {  // the dataset is cut at its first NUL and at 127 bytes
        dat d;
        d.i32(1).entry("a", 1, {5}).trailer(1, std::string_view("data\0set", 8));
        EXPECT_EQ(ok(d.b).dataset, "data");
        dat e;
        e.i32(1).entry("a", 1, {5}).trailer(1, std::string(200, 'd'));
        EXPECT_EQ(ok(e.b).dataset, std::string(127, 'd'));
    }
    {  // a name ends at its first NUL; a name seen twice: the last entry wins whole
        dat d;
        d.i32(3);
        d.entry(std::string_view("w\0tail", 6), 1, {1, 2, 3});
        d.entry("x", 1, {4});
        d.entry("w", 2, {10, 20});
        const auto m = ok(d.b);
        EXPECT_EQ(names(m), (std::vector<std::string>{"w", "x"}));
        EXPECT_TRUE(same_bits(m.find("w")->values, {5, 10}));
    }
}

TEST_F(Importance, FilePathIsCutTo127Bytes) {
    dat d;
    d.i32(1).entry("a", 1, {5});
    const std::string name(150, 'n');
    auto r = q::read_importance(file(d.b, name));
    ASSERT_TRUE(r) << describe(r.error());
    const std::string full = (dir / name).string();
    EXPECT_EQ(r->file, full.substr(0, 127));
}

// ---- the filters (llama-quantize's --include-weights / --exclude-weights: substrings) ---------------

TEST_F(Importance, Filters) {
    dat d;
    d.i32(4);
    d.entry("blk.0.attn_q.weight", 1, {1});
    d.entry("blk.0.ffn_up.weight", 1, {2});
    d.entry("blk.1.attn_q.weight", 1, {3});
    d.entry("output.weight", 1, {4});
    d.trailer(9, "set");
    const bytes b = d.b;
    q::importance_filter f;
    f.include = {"attn"};
    EXPECT_EQ(names(ok(b, f)), (std::vector<std::string>{"blk.0.attn_q.weight", "blk.1.attn_q.weight"}));
    f.include = {"blk.1.", "output"};  // a union
    EXPECT_EQ(names(ok(b, f)), (std::vector<std::string>{"blk.1.attn_q.weight", "output.weight"}));
    f.include = {"nothing"};
    const auto none = ok(b, f);
    EXPECT_TRUE(none.entries.empty());
    EXPECT_EQ(none.chunks_count, 9);  // the file's facts stay; the caller writes no key then
    f = {};
    f.exclude = {"blk.0"};
    EXPECT_EQ(names(ok(b, f)), (std::vector<std::string>{"blk.1.attn_q.weight", "output.weight"}));
    f.exclude = {""};  // the empty string is in every name
    EXPECT_TRUE(ok(b, f).entries.empty());
    f.include = {"weight"};
    f.exclude = {"attn", "output"};
    EXPECT_EQ(names(ok(b, f)), (std::vector<std::string>{"blk.0.ffn_up.weight"}));
    // case matters (std::string::find)
    f = {};
    f.include = {"ATTN"};
    EXPECT_TRUE(ok(b, f).entries.empty());

    // A non-finite weight in an entry the filter drops is never computed: not an error.
    dat n;
    n.i32(2).entry("keep", 1, {1}).entry("drop", 1, {nan_f});
    f = {};
    f.exclude = {"drop"};
    EXPECT_EQ(names(ok(n.b, f)), (std::vector<std::string>{"keep"}));
    // ... but a structural fault anywhere is (llama-quantize refuses the file before filtering).
    dat s;
    s.i32(2).entry("keep", 1, {1}).i32(4).raw("drop").i32(1).i32(0);
    f.exclude = {"drop"};
    EXPECT_EQ(fails(s.b, f).code, minfer::quant::codes::bad_imatrix);
}

// ---- malformed legacy files: the smallest that trips each check -------------------------------------

TEST_F(Importance, LegacyMalformed) {
    // offsets: n_entries at 0, the first entry's len at 4, name at 8
    EXPECT_TRUE(error_is(fails({}), {errc::truncated, section::data, 0, 4, 0}));
    EXPECT_TRUE(error_is(fails(dat{}.raw("abc").b), {errc::truncated, section::data, 0, 4, 3}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(0).b), {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 0}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(-1).b), {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 0}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).b), {errc::truncated, section::data, 4, 4, 0}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(-1).b), {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 4}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(5).raw("ab").b), {errc::truncated, section::data, 8, 5, 2}));
    // ncall and nval: 8 bytes after the name
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(1).raw("a").i32(1).b),
                         {errc::truncated, section::data, 9, 8, 4, std::string("a")}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(1).raw("a").i32(1).i32(0).b),
                         {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 13, .subject = "a"}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(1).raw("a").i32(1).i32(-5).b),
                         {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 13, .subject = "a"}));
    // nval 2, one float
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(1).raw("a").i32(1).i32(2).f32(1).b),
                         {errc::truncated, section::data, 17, 8, 4, std::string("a")}));
    // a count larger than the file can hold is refused when the file ends, never allocated for
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(1).raw("a").i32(1).i32(0x7FFFFFFF).b),
                         {errc::truncated, section::data, 17, 0x7FFFFFFFull * 4, 0}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(65536).entry("a", 1, {1}).b), {errc::truncated, section::data, 21, 4, 0}));
    // a count above the reader's cap (65536 entries) is refused at once, before any entry is read
    EXPECT_TRUE(error_is(fails(dat{}.i32(0x7FFFFFFF).entry("a", 1, {1}).b),
                         {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 0}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).i32(0x7FFFFFFF).b), {errc::truncated, section::data, 8, 0x7FFFFFFF, 0}));
    // a trailer begun must be whole: 1 to 3 bytes of the chunk count, no length, a negative or
    // too long dataset length (entry "a" with one value ends at 21)
    const dat one = dat{}.i32(1).entry("a", 1, {1});
    for (int n = 1; n <= 3; ++n)
        EXPECT_TRUE(error_is(fails(dat(one).raw(std::string(static_cast<std::size_t>(n), '\x01')).b),
                             {errc::truncated, section::data, 21, 4, static_cast<std::uint64_t>(n)}));
    EXPECT_TRUE(error_is(fails(dat(one).i32(5).b), {errc::truncated, section::data, 25, 4, 0}));
    EXPECT_TRUE(error_is(fails(dat(one).i32(5).i32(-1).b), {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 25}));
    EXPECT_TRUE(error_is(fails(dat(one).i32(5).i32(10).raw("abc").b), {errc::truncated, section::data, 29, 10, 3}));
    // values that are not finite after the division
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).entry("a", 1, {1, nan_f}).b),
                         {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 21, .subject = "a"}));
    EXPECT_TRUE(error_is(fails(dat{}.i32(1).entry("a", 0, {-inf_f}).b),
                         {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .offset = 17, .subject = "a"}));
}

// ---- malformed GGUF files ---------------------------------------------------------------------------

TEST_F(Importance, GgufMalformed) {
    {  // the loader's own verdict, with the file named
        bytes b = {std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}};
        const auto e = fails(b);
        EXPECT_EQ(e.code, errc::truncated);
        EXPECT_EQ(e.where, section::header);
        EXPECT_EQ(e.file, (dir / "im").string());
    }
    {  // no tensor at all
        imatrix_gguf g;
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::header}));
    }
    for (const char* missing : {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"}) {
        imatrix_gguf g;
        g.w.erase(missing);
        g.entry("a", 1, {1}, {1});
        const auto e = fails(g.get());
        EXPECT_TRUE(error_is(e, {.code = minfer::quant::codes::bad_imatrix, .where = section::metadata})) << missing;
        EXPECT_NE(e.detail.find(missing), std::string::npos) << e.detail;
    }
    {  // chunk_count as a u64, chunk_size as an i32: llama-quantize's gguf_get_val_u32 asserts
        imatrix_gguf g;
        g.w.set_u64("imatrix.chunk_count", 1);
        g.entry("a", 1, {1}, {1});
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::metadata}));
        imatrix_gguf h;
        h.w.set_i32("imatrix.chunk_size", 1);
        h.entry("a", 1, {1}, {1});
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::metadata}));
    }
    {  // datasets as a number, or an array of numbers
        imatrix_gguf g;
        g.w.set_u32("imatrix.datasets", 1);
        g.entry("a", 1, {1}, {1});
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::metadata}));
        imatrix_gguf h;
        const std::vector<std::uint32_t> v = {1, 2};
        h.w.set_array("imatrix.datasets", gg::value_type::u32, std::span<const std::uint32_t>(v));
        h.entry("a", 1, {1}, {1});
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::metadata}));
    }
    const std::int64_t ne1[] = {1, 1};
    {  // a pair without its counts, or without its sums
        imatrix_gguf g;
        g.w.add_tensor("a.in_sum2", gg::tensor_type::f32, ne1, floats({1}));
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "a"}));
        imatrix_gguf h;
        h.w.add_tensor("b.counts", gg::tensor_type::f32, ne1, floats({1}));
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "b"}));
    }
    {  // not f32
        const std::vector<std::uint16_t> half = {0x3C00};
        imatrix_gguf g;
        g.w.add_tensor("a.in_sum2", gg::tensor_type::f16, ne1, std::as_bytes(std::span<const std::uint16_t>(half)));
        g.w.add_tensor("a.counts", gg::tensor_type::f32, ne1, floats({1}));
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "a"}));
        imatrix_gguf h;
        h.w.add_tensor("a.in_sum2", gg::tensor_type::f32, ne1, floats({1}));
        h.w.add_tensor("a.counts", gg::tensor_type::f16, ne1, std::as_bytes(std::span<const std::uint16_t>(half)));
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "a"}));
    }
    {  // in_sum2 of 3 dimensions
        imatrix_gguf g;
        const std::int64_t ne3[] = {1, 1, 2};
        g.w.add_tensor("a.in_sum2", gg::tensor_type::f32, ne3, floats({1, 1}));
        g.w.add_tensor("a.counts", gg::tensor_type::f32, ne1, floats({1}));
        EXPECT_TRUE(error_is(fails(g.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "a"}));
    }
    {  // counts not one per matrix: fewer (llama-quantize would read past them) or more
        imatrix_gguf g;
        g.entry("a", 1, {1, 1}, {1, 1});
        const std::int64_t ne2[] = {1, 2};
        g.w.add_tensor("b.in_sum2", gg::tensor_type::f32, ne2, floats({1, 1}));
        g.w.add_tensor("b.counts", gg::tensor_type::f32, ne1, floats({1}));
        const auto e = fails(g.get());
        EXPECT_TRUE(error_is(e, {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "b"}));
        imatrix_gguf h;
        h.w.add_tensor("b.in_sum2", gg::tensor_type::f32, ne1, floats({1}));
        h.w.add_tensor("b.counts", gg::tensor_type::f32, ne2, floats({1, 1}));
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "b"}));
    }
    {  // an empty in_sum2
        imatrix_gguf g;
        const std::int64_t ne0[] = {0, 1};
        g.w.add_tensor("a.in_sum2", gg::tensor_type::f32, ne0, std::span<const std::byte>());
        g.w.add_tensor("a.counts", gg::tensor_type::f32, ne1, floats({1}));
        auto b = g.w.to_bytes();
        if (b) {
            EXPECT_TRUE(error_is(fails(*b), {.code = minfer::quant::codes::bad_imatrix, .where = section::tensor_info, .subject = "a"}));
        }
    }
    {  // weights that are not finite: a NaN or Inf sum, and a finite sum over a tiny count
        imatrix_gguf g;
        g.entry("a", 2, {1, nan_f}, {1});
        auto e = fails(g.get());
        EXPECT_TRUE(error_is(e, {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .subject = "a"}));
        imatrix_gguf h;
        h.entry("a", 1, {inf_f}, {0});  // count 0 gives 1 whatever the sum
        h.entry("b", 1, {1e30f}, {1e-30f});
        EXPECT_TRUE(error_is(fails(h.get()), {.code = minfer::quant::codes::bad_imatrix, .where = section::data, .subject = "b"}));
    }
}

TEST_F(Importance, GgufNonFiniteOffsetIsTheSum) {
    imatrix_gguf g;
    g.entry("a", 3, {1, 2, nan_f}, {1});
    const bytes b = g.get();
    auto v = gg::file_view::parse(std::span<const std::byte>(b));
    ASSERT_TRUE(v);
    const gg::tensor_info* t = v->find_tensor("a.in_sum2");
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(error_is(fails(b), {.code = minfer::quant::codes::bad_imatrix, .where = section::data,
                                    .offset = v->data_offset() + t->offset + 8, .subject = "a"}));
}

// ---- the file itself ---------------------------------------------------------------------------------

TEST_F(Importance, FileErrors) {
    auto missing = q::read_importance(dir / "absent");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, errc::io_error);
    EXPECT_EQ(missing.error().file, (dir / "absent").string());
    auto directory = q::read_importance(dir.path());
    ASSERT_FALSE(directory);
    EXPECT_EQ(directory.error().code, errc::io_error);
    // A sparse file past the cap (16 GiB) is refused from its size, before any byte is read.
    const auto big = dir / "big";
    {
        const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ASSERT_GE(fd, 0);
        const bool sized = ::ftruncate(fd, (off_t{16} << 30) + 1) == 0;
        ::close(fd);
        if (!sized) GTEST_SKIP() << "the file system refuses a sparse 16 GiB file";
    }
    auto r = q::read_importance(big);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::input_too_large);
    EXPECT_EQ(r.error().expected, std::uint64_t{16} << 30);
    EXPECT_EQ(r.error().found, (std::uint64_t{16} << 30) + 1);
}

}  // namespace
