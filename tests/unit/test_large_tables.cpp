// Large tables: the parser's counting pre-pass (tables above 4096 records are sized once, for the
// records really in the file) and its delayed index inserts (a window of 16 names whose slots are
// prefetched), which must report exactly what immediate inserts would: the first failure in file
// order, with a repeated name ahead of any later check of the same or a later record.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"
#include "name_index_impl.hpp"  // internal: the index is tested directly

namespace {
using namespace minfer::test;
using namespace minfer::gguf;

std::uint64_t slot_offset(int i) { return 32 * static_cast<std::uint64_t>(i); }  // of an f32 [8] tensor
std::string key_name(int i) { return "key." + std::to_string(i); }

constexpr std::uint64_t header_bytes = 24;
// A kv_u8 record with key "key.<i>": 8 + len + 4 + 1 bytes.
std::uint64_t kv_u8_bytes(int i) { return 8 + key_name(i).size() + 4 + 1; }
std::uint64_t kv_offset(int i) {
    std::uint64_t at = header_bytes;
    for (int k = 0; k < i; ++k) at += kv_u8_bytes(k);
    return at;
}

// ---- the delayed inserts report in file order --------------------------------------------------

// Records 0..n-1 are "key.<i>" except record `dup`, which repeats key.<first>; record `bad` (if
// >= 0) has an unknown value type tag (99) instead of u8.
gguf_bytes keys_with(int n, int first, int dup, int bad) {
    gguf_bytes g;
    g.header(3, 0, n);
    for (int i = 0; i < n; ++i) {
        const std::string k = i == dup ? key_name(first) : key_name(i);
        if (i == bad)
            g.str(k).u32(99).u8(0);
        else
            g.kv_u8(k, 0);
    }
    return g;
}

TEST(DelayedInserts, ARepeatedKeyIsFoundAtEveryDistance) {
    // Distances below, at and above the window's depth (16), and far past it.
    for (int gap : {1, 2, 15, 16, 17, 31, 32, 33, 100, 5000}) {
        const int n = gap + 20;
        const gguf_bytes g = keys_with(n, 0, gap, -1);
        const std::uint64_t at = header_bytes + [&] {
            std::uint64_t s = 0;
            for (int k = 0; k < gap; ++k) s += kv_u8_bytes(k);
            return s;
        }();
        EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata, .offset = at,
                                              .expected = 0, .found = static_cast<std::uint64_t>(gap),
                                              .subject = "key.0", .index = gap, .detail = ""}))
            << "gap " << gap;
    }
}

TEST(DelayedInserts, ARepeatedKeyComesBeforeALaterFailure) {
    // The repeat at record 20 is still queued when record 20 + d fails: the repeat is reported.
    for (int d : {0, 1, 5, 15, 16, 40}) {
        const gguf_bytes g = keys_with(80, 3, 20, 20 + d);
        EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata,
                                              .offset = kv_offset(20), .expected = 3, .found = 20, .subject = "key.3",
                                              .index = 20, .detail = ""}))
            << "failure " << d << " records later";
    }
}

TEST(DelayedInserts, AnEarlierFailureComesBeforeALaterRepeat) {
    for (int d : {1, 5, 16, 40}) {
        const int bad = 30;
        const gguf_bytes g = keys_with(100, 0, bad + d, bad);
        EXPECT_TRUE(error_is(parse_error(g), {.code = errc::bad_value_type, .where = section::metadata,
                                              .found = 99, .subject = key_name(bad), .index = bad}))
            << "repeat " << d << " records later";
    }
}

TEST(DelayedInserts, ARepeatedKeyComesBeforeAnEmptyOrTruncatedNextKey) {
    gguf_bytes g = keys_with(10, 2, 9, -1);
    g.b[16] = std::byte{11};  // declare 11 KVs: the 11th is missing entirely
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata, .expected = 2,
                                          .found = 9, .subject = "key.2", .index = 9}));
    g.str("");  // now present, with an empty key
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata, .expected = 2,
                                          .found = 9, .subject = "key.2", .index = 9}));
}

TEST(DelayedInserts, ARepeatedTensorNameComesBeforeItsOwnBadShape) {
    // Tensor 20 repeats tensor 4's name and also has n_dims = 5: the repeat is checked first.
    for (int bad_dims_at : {20, 21, 36}) {
        gguf_bytes g;
        g.header(3, 60, 0);
        for (int i = 0; i < 60; ++i) {
            const std::string name = i == 20 ? "t.4" : "t." + std::to_string(i);
            if (i == bad_dims_at)
                g.str(name).u32(5);
            else
                g.tensor_info(name, {8}, tensor_type::f32, slot_offset(i));
        }
        EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_tensor, .where = section::tensor_info,
                                              .expected = 4, .found = 20, .subject = "t.4", .index = 20, .detail = ""}))
            << "bad n_dims at " << bad_dims_at;
        EXPECT_EQ(parse_error(g).shape, (std::array<std::int64_t, 4>{}));
    }
}

TEST(DelayedInserts, LookupsFindEveryNameAfterTheWindowDrains) {
    gguf_bytes g;
    const int n = 37;  // not a multiple of the window
    g.header(3, 0, n);
    for (int i = 0; i < n; ++i) g.kv_u8(key_name(i), static_cast<std::uint8_t>(i));
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    for (int i = 0; i < n; ++i) EXPECT_EQ(r->get<std::uint8_t>(key_name(i)).value_or(255), i);
    EXPECT_EQ(r->find("key.37"), nullptr);
}

// ---- the counting pre-pass sizes large tables once ---------------------------------------------

constexpr std::size_t n_tensors_field = 8;
constexpr std::size_t n_kv_field = 16;

// Append 32 MiB of zeros and make the header count at `field` claim as many records of the
// smallest size (`min_record` bytes) as the rest of the file could hold: the largest count the
// header check lets through.
void declare_as_many_as_fit(gguf_bytes& g, std::size_t field, std::uint64_t min_record) {
    g.zeros(32u << 20);
    const auto declared = static_cast<std::int64_t>((g.size() - header_bytes) / min_record);
    std::memcpy(g.b.data() + field, &declared, 8);
}

TEST(CountingPrePass, ALargeValidTableIsAllocatedOnce) {
    const int n = 20000;
    gguf_bytes g;
    g.header(3, 0, n);
    for (int i = 0; i < n; ++i) g.kv_u8(key_name(i), 1);
    alloc_probe probe;
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    // The records once, in one allocation (a vector grown by doubling would request about twice
    // that in all and copy), and a name index of a few words a record; no pin on the index's
    // layout or slot count, only these bounds.
    EXPECT_LE(probe.largest(), n * sizeof(kv));
    EXPECT_GE(probe.largest(), n * sizeof(kv) / 2);  // the table is one block, not one per record
    EXPECT_LE(probe.total(), n * sizeof(kv) + n * 32 + 4096);
    EXPECT_LT(probe.total(), 2 * n * sizeof(kv));  // less than a doubling vector's growth alone
    EXPECT_EQ(r->metadata().size(), static_cast<std::size_t>(n));
}

TEST(CountingPrePass, ALargeTensorTableIsAllocatedOnce) {
    const int n = 6000;
    gguf_bytes g;
    g.header(3, n, 0);
    for (int i = 0; i < n; ++i) g.tensor_info("t." + std::to_string(i), {8}, tensor_type::f32, slot_offset(i));
    g.pad(32).zeros(32u * n);
    alloc_probe probe;
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_LE(probe.largest(), n * sizeof(tensor_info));
    EXPECT_GE(probe.largest(), n * sizeof(tensor_info) / 2);
    EXPECT_LE(probe.total(), n * sizeof(tensor_info) + n * 32 + 4096);
    EXPECT_LT(probe.total(), 2 * n * sizeof(tensor_info));
    EXPECT_EQ(r->find_tensor("t.5999"), &r->tensors()[n - 1]);
}

TEST(CountingPrePass, AHostileCountIsSizedByTheRecordsPresent) {
    // 5000 real records, then 32 MiB of zeros, and a count claiming 2.4 M records: the parse fails
    // at record 5000 having sized its tables for 5000, not for the count.
    const int real = 5000;
    gguf_bytes g;
    g.header(3, 0, 0);
    for (int i = 0; i < real; ++i) g.kv_u8(key_name(i), 1);
    const std::uint64_t at = g.size();
    declare_as_many_as_fit(g, n_kv_field, 14);
    alloc_probe probe;
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::empty_key, .where = section::metadata, .offset = at,
                                          .index = real}));
    EXPECT_LE(probe.largest(), real * sizeof(kv));
    EXPECT_LT(probe.total(), 1u << 20);
}

TEST(CountingPrePass, AHostileTensorCountIsSizedByTheRecordsPresent) {
    const int real = 5000;
    gguf_bytes g;
    g.header(3, 0, 0);
    for (int i = 0; i < real; ++i) g.tensor_info("t." + std::to_string(i), {8}, tensor_type::f32, slot_offset(i));
    const std::uint64_t at = g.size();
    declare_as_many_as_fit(g, n_tensors_field, 25);
    alloc_probe probe;
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::bad_name_length, .where = section::tensor_info, .offset = at,
                                          .found = 0, .index = real}));
    EXPECT_LE(probe.largest(), real * sizeof(tensor_info));
    EXPECT_LT(probe.total(), 1u << 20);
}

TEST(CountingPrePass, ARecordThePrePassCannotStepOverStillGetsItsOwnError) {
    // The pre-pass stops at record 4500 (string value longer than the file); the parser reports
    // that record's precise error, as it would for a small table.
    const int n = 5000;
    gguf_bytes g;
    g.header(3, 0, n);
    for (int i = 0; i < 4500; ++i) g.kv_u8(key_name(i), 1);
    const std::uint64_t at = g.size() + 8 + key_name(4500).size() + 4;
    g.key(key_name(4500), value_type::string).str_len(1u << 20, "abc");
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::string_exceeds_file, .where = section::metadata, .offset = at,
                                          .found = 1u << 20, .subject = key_name(4500), .index = 4500}));
}

// ---- the index itself grows when it must ------------------------------------------------------

TEST(NameIndex, GrowsPastItsInitialSizeAndKeepsEveryName) {
    std::vector<std::string> names;
    for (int i = 0; i < 10000; ++i) {  // appended: GCC 12 -O3 reports a false -Wrestrict on `"n" + std::string`
        names.emplace_back(1, 'n');
        names.back() += std::to_string(i);
    }
    auto name_of = [&](std::uint32_t k) { return std::string_view(names[k]); };
    detail::name_index index;
    index.reset(1);
    for (std::uint32_t i = 0; i < names.size(); ++i) ASSERT_EQ(index.insert(names[i], i, name_of), -1);
    for (std::uint32_t i = 0; i < names.size(); ++i) EXPECT_EQ(index.find(names[i], name_of), i);
    EXPECT_EQ(index.insert(names[1234], 99999, name_of), 1234);
    EXPECT_EQ(index.find("n10000", name_of), -1);
}

}  // namespace
