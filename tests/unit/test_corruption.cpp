// The corruption table: one row per kind of damage a GGUF file (or a split set) can carry, each
// with the smallest file that trips its check and the exact error it must produce (code, section,
// subject, and offset/expected/found where they are meaningful). The per-check tests in
// test_header/test_metadata/test_tensors/test_layout/test_split go deeper into single checks; this
// file is the one place that lists every kind of damage, so that a check without a row (or a row
// whose error drifts) is noticed.
//
// Rows come from three sources:
//   llama_*  the handcrafted failure cases of llama.cpp's tests/test-gguf.cpp, rebuilt as minimal
//            files of our own (same damage, no random filler);
//   the rest the classes of /work/shared/USERS.md "How GGUF parsers have been broken" (hostile
//            counts and lengths, size arithmetic overflow, out-of-table indices, data outside the
//            file, nested arrays, wrong types, names, version and magic mistakes);
//   split_*  split-set failures, opened through model::open on parts made by writer.
//
// Every single-file row is parsed with file_view::parse under an allocation probe (hostile counts
// must fail fast without allocating) and then opened with model::open from a temp file, which must
// report the same error located at that file.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"
#include "head_source.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

// ---- the row ----------------------------------------------------------------------------------

struct damage {
    const char* name;                   ///< the test name (letters, digits, underscores)
    std::function<bytes()> make{};      ///< single-file rows: the damaged file
    errc code;
    section where;
    std::string subject;                ///< exact; in split rows "{dir}" stands for the temp directory
    std::optional<std::uint64_t> offset{};
    std::optional<std::uint64_t> expected{};
    std::optional<std::uint64_t> found{};
    /// Split rows (make is empty): write the parts into `dir` and return the entry path.
    std::function<fs::path(const fs::path& dir)> open_set{};
    std::uint32_t part = 0;             ///< split rows: the 1-based part the error must name
};

void PrintTo(const damage& d, std::ostream* os) { *os << d.name; }

// ---- builders ---------------------------------------------------------------------------------

constexpr std::uint64_t u64max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint64_t p62 = 1ull << 62, p63 = 1ull << 63, p63m1 = p63 - 1, p64m1 = u64max;
constexpr std::uint64_t H = 24;  // the fixed header: magic, version, n_tensors, n_kv

// A v3 header with the given counts; the caller appends the records.
gguf_bytes gguf(std::int64_t n_tensors, std::int64_t n_kv) {
    gguf_bytes g;
    g.header(3, n_tensors, n_kv);
    return g;
}
// Counts given as raw 64-bit patterns (2^63 and up are negative on disk).
gguf_bytes gguf_raw(std::uint64_t n_tensors, std::uint64_t n_kv) {
    gguf_bytes g;
    g.magic().u32(3).u64(n_tensors).u64(n_kv);
    return g;
}
gguf_bytes version(std::uint32_t v) {
    gguf_bytes g;
    g.header(v, 0, 0);
    return g;
}

// Field offsets of a KV record at `r` with a key of `k` bytes.
constexpr std::uint64_t kv_type_at(std::uint64_t r, std::uint64_t k) { return r + 8 + k; }
constexpr std::uint64_t kv_value_at(std::uint64_t r, std::uint64_t k) { return r + 12 + k; }
// Field offsets of a tensor record at `r` with a name of `l` bytes and `nd` dimensions.
constexpr std::uint64_t t_dims_at(std::uint64_t r, std::uint64_t l) { return r + 8 + l; }
constexpr std::uint64_t t_ne_at(std::uint64_t r, std::uint64_t l, std::uint64_t d) { return r + 12 + l + 8 * d; }
constexpr std::uint64_t t_type_at(std::uint64_t r, std::uint64_t l, std::uint64_t nd) { return r + 12 + l + 8 * nd; }
constexpr std::uint64_t t_offset_at(std::uint64_t r, std::uint64_t l, std::uint64_t nd) { return r + 16 + l + 8 * nd; }
constexpr std::uint64_t t_size(std::uint64_t l, std::uint64_t nd) { return 24 + l + 8 * nd; }

constexpr std::uint32_t f32 = static_cast<std::uint32_t>(tensor_type::f32);
constexpr std::uint32_t vt(value_type t) { return static_cast<std::uint32_t>(t); }

// llama.cpp's handcrafted names.
const std::string l_key = "my_key_0";                 // 8 bytes
const std::string l_t0 = "my_tensor_0";               // 11 bytes
const std::string l_t1 = "my_tensor_1";
const std::string l_long = "my_tensor_0_with_a_very_long_name_which_is_longer_than_what_is_allowed_for_ggml_tensors";

// ---- split sets -------------------------------------------------------------------------------

fs::path part_path(const fs::path& dir, std::uint32_t i, std::uint32_t n) { return dir / split_file_name("m", i, n); }

// Writes m-0000i-of-0000n.gguf into `dir`: each part holds the split keys as llama-gguf-split
// writes them (u16 split.no, u16 split.count, i32 split.tensors.count, in that order) and one f32
// tensor "t<i>" of 2 elements. `tweak(w, i)` may change part i before it is written. Returns part 1.
fs::path write_parts(const fs::path& dir, std::uint32_t n,
                     const std::function<void(writer&, std::uint32_t)>& tweak = {}) {
    for (std::uint32_t i = 0; i < n; ++i) {
        writer w;
        w.set_u16("split.no", static_cast<std::uint16_t>(i))
            .set_u16("split.count", static_cast<std::uint16_t>(n))
            .set_i32("split.tensors.count", static_cast<std::int32_t>(n));
        const std::int64_t ne[] = {2};
        std::string name(1, 't');  // appended: GCC 12 -O3 reports a false -Wrestrict on `"t" + std::string`
        name += std::to_string(i);
        w.add_tensor(name, tensor_type::f32, ne, random_bytes(8, i));
        if (tweak) tweak(w, i);
        auto r = w.write(part_path(dir, i, n));
        EXPECT_TRUE(r) << (r ? "" : r.error().message());
    }
    return part_path(dir, 0, n);
}

// Rewrites a part's bytes through `edit`.
void edit_part(const fs::path& p, const std::function<void(bytes&)>& edit) {
    bytes b = read_file(p);
    edit(b);
    write_file(p, b);
}

// Offsets of the split keys in a part made by write_parts: the records follow the 24-byte header.
constexpr std::uint64_t split_no_at = H;                                   // 8 + 8 + 4 + 2 = 22 bytes
constexpr std::uint64_t split_count_at = split_no_at + 22;                 // 8 + 11 + 4 + 2 = 25 bytes
constexpr std::uint64_t split_tensors_count_at = split_count_at + 25;

// ---- the table --------------------------------------------------------------------------------

const std::vector<damage>& table() {
    static const std::vector<damage> rows = {
        // ======== llama.cpp tests/test-gguf.cpp, handcrafted failure cases ========
        // HEADER_*: the header alone (llama.cpp pads it to 32 bytes; 24 are enough).
        {.name = "llama_HEADER_BAD_MAGIC",
         .make = [] { gguf_bytes g; g.raw("FUGG").u32(3).i64(0).i64(0); return g.b; },
         .code = errc::bad_magic, .where = section::header, .subject = "",
         .offset = 0, .expected = 0x46554747u, .found = 0x47475546u},
        {.name = "llama_HEADER_BAD_VERSION_0", .make = [] { return version(0).b; },
         .code = errc::bad_version, .where = section::header, .subject = "", .offset = 4, .expected = 3, .found = 0},
        {.name = "llama_HEADER_BAD_VERSION_1", .make = [] { return version(1).b; },
         .code = errc::version_unsupported, .where = section::header, .subject = "", .offset = 4, .expected = 3,
         .found = 1},
        {.name = "llama_HEADER_BAD_VERSION_FUTURE", .make = [] { return version(4).b; },
         .code = errc::version_too_new, .where = section::header, .subject = "", .offset = 4, .expected = 3,
         .found = 4},
        {.name = "llama_HEADER_BAD_N_TENSORS", .make = [] { return gguf_raw(u64max, 0).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = u64max},
        {.name = "llama_HEADER_BAD_N_KV", .make = [] { return gguf_raw(0, u64max).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = u64max},
        // KV_*: one record after the header (two for the duplicate).
        {.name = "llama_KV_BAD_KEY_SIZE",  // 14 bytes after the header: the count bound admits one KV
         .make = [] { return gguf(0, 1).u64(u64max).raw("my_key").b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = u64max},
        {.name = "llama_KV_EMPTY_KEY", .make = [] { return gguf(0, 1).kv_u32("", 7).b; },
         .code = errc::empty_key, .where = section::metadata, .subject = "", .offset = H},
        {.name = "llama_KV_BAD_TYPE",  // type GGUF_TYPE_COUNT, followed by one byte as llama.cpp writes
         .make = [] { return gguf(0, 1).str(l_key).u32(13).u8(0).b; },
         .code = errc::bad_value_type, .where = section::metadata, .subject = l_key,
         .offset = kv_type_at(H, 8), .found = 13},
        // KV_BAD_VALUE_SIZE is commented out upstream ("can result in allocations > 1 TB"); here it
        // is one more hostile count that must fail before anything is sized by it.
        {.name = "llama_KV_BAD_VALUE_SIZE",
         .make = [] { return gguf(0, 1).kv_array(l_key, value_type::u64, 1ull << 37).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = l_key,
         .offset = kv_value_at(H, 8) + 4, .expected = max_array_elems, .found = 1ull << 37},
        {.name = "llama_KV_DUPLICATE_KEY", .make = [] { return gguf(0, 2).kv_u8(l_key, 1).kv_u8(l_key, 2).b; },
         .code = errc::duplicate_key, .where = section::metadata, .subject = l_key, .offset = H + 8 + 8 + 4 + 1,
         .expected = 0, .found = 1},
        {.name = "llama_KV_BAD_ALIGN", .make = [] { return gguf(0, 1).kv_u32("general.alignment", 13).b; },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 13},
        {.name = "llama_KV_WRONG_TYPE_ALIGN", .make = [] { return gguf(0, 1).kv_i32("general.alignment", 1).b; },
         .code = errc::alignment_wrong_type, .where = section::metadata, .subject = "general.alignment",
         .offset = H, .expected = vt(value_type::u32), .found = vt(value_type::i32)},
        // TENSORS_*: one tensor record (two for the duplicate and the inconsistent alignment).
        {.name = "llama_TENSORS_BAD_NAME_SIZE",
         .make = [] { return gguf(1, 0).tensor_info(l_long, {32}, f32, 0).b; },
         .code = errc::bad_name_length, .where = section::tensor_info, .subject = l_long, .offset = H,
         .expected = 63, .found = l_long.size()},
        {.name = "llama_TENSORS_BAD_N_DIMS",  // n_dims 5, followed by the one dimension llama.cpp writes
         .make = [] { return gguf(1, 0).str(l_t0).u32(5).i64(32).u32(f32).u64(0).b; },
         .code = errc::bad_n_dims, .where = section::tensor_info, .subject = l_t0, .offset = t_dims_at(H, 11),
         .expected = 4, .found = 5},
        {.name = "llama_TENSORS_BAD_SHAPE", .make = [] { return gguf(1, 0).tensor_info(l_t0, {-1}, f32, 0).b; },
         .code = errc::bad_dim, .where = section::tensor_info, .subject = l_t0, .offset = t_ne_at(H, 11, 0),
         .expected = 0, .found = u64max},
        {.name = "llama_TENSORS_NE_TOO_BIG",  // 2 x (4 * INT32_MAX) elements: more than INT64_MAX
         .make = [] {
             constexpr std::int64_t big = 4 * std::int64_t{std::numeric_limits<std::int32_t>::max()};
             return gguf(1, 0).tensor_info(l_t0, {big, big}, f32, 0).b;
         },
         .code = errc::shape_overflow, .where = section::tensor_info, .subject = l_t0,
         .offset = t_ne_at(H, 11, 0), .expected = 0, .found = 0},
        {.name = "llama_TENSORS_NBYTES_TOO_BIG",  // i64, about 1.02 * SIZE_MAX / 8 elements: fits int64, bytes do not
         .make = [] {
             return gguf(1, 0)
                 .tensor_info(l_t0, {1536000000, 1536000000}, static_cast<std::uint32_t>(tensor_type::i64), 0)
                 .b;
         },
         .code = errc::size_overflow, .where = section::tensor_info, .subject = l_t0,
         .offset = t_ne_at(H, 11, 0), .expected = 0, .found = 0},
        {.name = "llama_TENSORS_BAD_TYPE",  // GGML_TYPE_COUNT
         .make = [] { return gguf(1, 0).tensor_info(l_t0, {32}, tensor_type_count, 0).b; },
         .code = errc::bad_tensor_type, .where = section::tensor_info, .subject = l_t0,
         .offset = t_type_at(H, 11, 1), .found = tensor_type_count},
        {.name = "llama_TENSORS_BAD_OFFSET", .make = [] { return gguf(1, 0).tensor_info(l_t0, {32}, f32, u64max).b; },
         .code = errc::offset_mismatch, .where = section::tensor_info, .subject = l_t0,
         .offset = t_offset_at(H, 11, 1), .expected = 0, .found = u64max},
        {.name = "llama_TENSORS_DUPLICATE_NAME",
         .make = [] {
             return gguf(2, 0).tensor_info("my_tensor", {8}, f32, 0).tensor_info("my_tensor", {8}, f32, 32).b;
         },
         .code = errc::duplicate_tensor, .where = section::tensor_info, .subject = "my_tensor",
         .offset = H + t_size(9, 1), .expected = 0, .found = 1},
        {.name = "llama_TENSORS_BAD_ALIGN",
         .make = [] { return gguf(1, 1).kv_u32("general.alignment", 13).tensor_info(l_t0, {8}, f32, 0).b; },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 13},
        {.name = "llama_TENSORS_INCONSISTENT_ALIGN",  // offsets laid out with alignment 1, file says 32 (default)
         .make = [] { return gguf(2, 0).tensor_info(l_t0, {3}, f32, 0).tensor_info(l_t1, {3}, f32, 12).b; },
         .code = errc::offset_mismatch, .where = section::tensor_info, .subject = l_t1,
         .offset = t_offset_at(H + t_size(11, 1), 11, 1), .expected = 32, .found = 12},
        // TENSORS_SUCCESS is a table without its data section: llama.cpp's metadata-only parse
        // accepts it (it never checks that the data fits); we refuse it, deliberately.
        {.name = "llama_TENSORS_SUCCESS_without_its_data",
         .make = [] { return gguf(1, 0).tensor_info(l_t0, {8}, f32, 0).pad(32).b; },
         .code = errc::data_truncated, .where = section::data, .subject = l_t0, .offset = 96, .expected = 96 + 32,
         .found = 96},
        // DATA_*: a table and its data section.
        {.name = "llama_DATA_NOT_ENOUGH_DATA",  // one byte short
         .make = [] { return gguf(1, 0).tensor_info(l_t0, {8}, f32, 0).pad(32).zeros(31).b; },
         .code = errc::data_truncated, .where = section::data, .subject = l_t0, .offset = 96, .expected = 96 + 32,
         .found = 96 + 31},
        {.name = "llama_DATA_BAD_ALIGN",
         .make = [] {
             return gguf(1, 1).kv_u32("general.alignment", 13).tensor_info(l_t0, {8}, f32, 0).pad(32).zeros(32).b;
         },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 13},
        {.name = "llama_DATA_INCONSISTENT_ALIGN",
         .make = [] {
             return gguf(2, 0).tensor_info(l_t0, {3}, f32, 0).tensor_info(l_t1, {3}, f32, 12).pad(32).zeros(24).b;
         },
         .code = errc::offset_mismatch, .where = section::tensor_info, .subject = l_t1,
         .offset = t_offset_at(H + t_size(11, 1), 11, 1), .expected = 32, .found = 12},
        // Two i8 tensors of 0x7FFFFFFFFFFFFFC0 bytes (llama.cpp: the ggml context size overflows). The
        // padded sum still fits in 64 bits, so for us it is 32 bytes of data where 2^64 - 128 are
        // declared; the bytes needed (128 + 2^64 - 128) saturate at UINT64_MAX.
        {.name = "llama_DATA_MEM_SIZE_OVERFLOW",
         .make = [] {
             constexpr std::int64_t n = 0x7FFFFFFFFFFFFFC0;
             const auto i8 = static_cast<std::uint32_t>(tensor_type::i8);
             return gguf(2, 0)
                 .tensor_info(l_t0, {n}, i8, 0)
                 .tensor_info(l_t1, {n}, i8, static_cast<std::uint64_t>(n))
                 .pad(32)
                 .zeros(32)
                 .b;
         },
         .code = errc::data_truncated, .where = section::data, .subject = l_t0, .offset = 128, .expected = u64max,
         .found = 160},

        // ======== USERS.md 1: declared counts and lengths that no tiny file can back ========
        {.name = "n_kv_2p62", .make = [] { return gguf_raw(0, p62).b; },
         .code = errc::count_too_large, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = p62},
        {.name = "n_kv_2p63m1", .make = [] { return gguf_raw(0, p63m1).b; },
         .code = errc::count_too_large, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = p63m1},
        {.name = "n_kv_2p63_is_negative", .make = [] { return gguf_raw(0, p63).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = p63},
        {.name = "n_kv_2p64m1_is_negative", .make = [] { return gguf_raw(0, p64m1).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = p64m1},
        {.name = "n_tensors_2p62", .make = [] { return gguf_raw(p62, 0).b; },
         .code = errc::count_too_large, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = p62},
        {.name = "n_tensors_2p63m1", .make = [] { return gguf_raw(p63m1, 0).b; },
         .code = errc::count_too_large, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = p63m1},
        {.name = "n_tensors_2p63_is_negative", .make = [] { return gguf_raw(p63, 0).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = p63},
        {.name = "n_tensors_2p64m1_is_negative", .make = [] { return gguf_raw(p64m1, 0).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = p64m1},
        {.name = "negative_n_kv", .make = [] { return gguf(0, -5).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_kv", .offset = 16, .expected = 0,
         .found = static_cast<std::uint64_t>(std::int64_t{-5})},
        {.name = "negative_n_tensors", .make = [] { return gguf(-5, 0).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 0, .found = static_cast<std::uint64_t>(std::int64_t{-5})},
        {.name = "both_counts_negative_reports_n_tensors", .make = [] { return gguf(-1, -1).b; },
         .code = errc::negative_count, .where = section::header, .subject = "n_tensors", .offset = 8},
        {.name = "n_tensors_bounded_after_the_kvs_minimum",  // 1 KV (>= 14 bytes) + 2 tensors (>= 25 each) need 64
         .make = [] { return gguf(2, 1).zeros(63).b; },
         .code = errc::count_too_large, .where = section::header, .subject = "n_tensors", .offset = 8,
         .expected = 1, .found = 2},
        // key lengths (the key is not read, so there is no subject)
        {.name = "key_length_2p62", .make = [] { return gguf(0, 1).u64(p62).raw("abcdef").b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p62},
        {.name = "key_length_2p63m1", .make = [] { return gguf(0, 1).u64(p63m1).raw("abcdef").b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p63m1},
        {.name = "key_length_2p63", .make = [] { return gguf(0, 1).u64(p63).raw("abcdef").b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p63},
        {.name = "key_length_2p64m1", .make = [] { return gguf(0, 1).u64(p64m1).raw("abcdef").b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p64m1},
        {.name = "key_exceeds_file", .make = [] { return gguf(0, 1).str_len(100, "general.name").u32(8).b; },
         .code = errc::string_exceeds_file, .where = section::metadata, .subject = "", .offset = H,
         .expected = 16, .found = 100},
        // string value lengths
        {.name = "string_length_2p62", .make = [] { return gguf(0, 1).key("s", value_type::string).u64(p62).b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "s", .offset = kv_value_at(H, 1),
         .expected = max_string_bytes, .found = p62},
        {.name = "string_length_2p63m1", .make = [] { return gguf(0, 1).key("s", value_type::string).u64(p63m1).b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "s", .offset = kv_value_at(H, 1),
         .expected = max_string_bytes, .found = p63m1},
        {.name = "string_length_2p63", .make = [] { return gguf(0, 1).key("s", value_type::string).u64(p63).b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "s", .offset = kv_value_at(H, 1),
         .expected = max_string_bytes, .found = p63},
        {.name = "string_length_2p64m1", .make = [] { return gguf(0, 1).key("s", value_type::string).u64(p64m1).b; },
         .code = errc::string_too_long, .where = section::metadata, .subject = "s", .offset = kv_value_at(H, 1),
         .expected = max_string_bytes, .found = p64m1},
        {.name = "string_at_the_cap_exceeds_file",
         .make = [] { return gguf(0, 1).key("s", value_type::string).u64(max_string_bytes).raw("abc").b; },
         .code = errc::string_exceeds_file, .where = section::metadata, .subject = "s",
         .offset = kv_value_at(H, 1), .expected = 3, .found = max_string_bytes},
        // array counts: u8 elements and strings
        {.name = "u8_array_count_2p62", .make = [] { return gguf(0, 1).kv_array("a", value_type::u8, p62).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p62},
        {.name = "u8_array_count_2p63m1", .make = [] { return gguf(0, 1).kv_array("a", value_type::u8, p63m1).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p63m1},
        {.name = "u8_array_count_2p63", .make = [] { return gguf(0, 1).kv_array("a", value_type::u8, p63).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p63},
        {.name = "u8_array_count_2p64m1", .make = [] { return gguf(0, 1).kv_array("a", value_type::u8, p64m1).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p64m1},
        {.name = "string_array_count_2p62",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, p62).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p62},
        {.name = "string_array_count_2p63m1",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, p63m1).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p63m1},
        {.name = "string_array_count_2p63",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, p63).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p63},
        {.name = "string_array_count_2p64m1",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, p64m1).b; },
         .code = errc::array_too_long, .where = section::metadata, .subject = "a", .offset = kv_value_at(H, 1) + 4,
         .expected = max_array_elems, .found = p64m1},
        {.name = "u8_array_at_the_cap_exceeds_file",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::u8, max_array_elems).zeros(4).b; },
         .code = errc::array_exceeds_file, .where = section::metadata, .subject = "a",
         .offset = kv_value_at(H, 1) + 12, .expected = 4, .found = max_array_elems},
        {.name = "string_array_exceeds_file",  // every string needs its 8-byte length: 3 cannot fit in 16 bytes
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, 3).zeros(16).b; },
         .code = errc::array_exceeds_file, .where = section::metadata, .subject = "a",
         .offset = kv_value_at(H, 1) + 4, .expected = 16, .found = 3},
        {.name = "string_in_array_exceeds_file",
         .make = [] { return gguf(0, 1).kv_array("a", value_type::string, 2).str("x").str_len(50, "yz").b; },
         .code = errc::string_exceeds_file, .where = section::metadata, .subject = "a",
         .offset = kv_value_at(H, 1) + 12 + 9, .expected = 2, .found = 50},
        // tensor name lengths (the name is not read, so there is no subject)
        {.name = "tensor_name_length_2p62", .make = [] { return gguf(1, 0).u64(p62).zeros(17).b; },
         .code = errc::string_too_long, .where = section::tensor_info, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p62},
        {.name = "tensor_name_length_2p63m1", .make = [] { return gguf(1, 0).u64(p63m1).zeros(17).b; },
         .code = errc::string_too_long, .where = section::tensor_info, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p63m1},
        {.name = "tensor_name_length_2p63", .make = [] { return gguf(1, 0).u64(p63).zeros(17).b; },
         .code = errc::string_too_long, .where = section::tensor_info, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p63},
        {.name = "tensor_name_length_2p64m1", .make = [] { return gguf(1, 0).u64(p64m1).zeros(17).b; },
         .code = errc::string_too_long, .where = section::tensor_info, .subject = "", .offset = H,
         .expected = max_string_bytes, .found = p64m1},
        {.name = "tensor_name_exceeds_file", .make = [] { return gguf(1, 0).str_len(30, "blk.0.attn_q").zeros(5).b; },
         .code = errc::string_exceeds_file, .where = section::tensor_info, .subject = "", .offset = H,
         .expected = 17, .found = 30},

        // ======== USERS.md 2: overflow in size arithmetic ========
        {.name = "element_count_overflow",  // 2^32 * 2^31 = 2^63 elements: one more than INT64_MAX
         .make = [] { return gguf(1, 0).tensor_info("w", {1ll << 32, 1ll << 31}, f32, 0).b; },
         .code = errc::shape_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        {.name = "element_count_overflow_in_ne3",
         .make = [] { return gguf(1, 0).tensor_info("w", {2, 1, 1, i64max}, f32, 0).b; },
         .code = errc::shape_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        {.name = "byte_size_overflow",  // 2^62 f32 elements = 2^64 bytes
         .make = [] { return gguf(1, 0).tensor_info("w", {1ll << 62}, f32, 0).b; },
         .code = errc::size_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        {.name = "byte_size_overflow_in_the_last_product",  // strides 4, 4, 4 fit; 4 * 2^62 does not
         .make = [] { return gguf(1, 0).tensor_info("w", {1, 1, 1, 1ll << 62}, f32, 0).b; },
         .code = errc::size_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        // 0 elements, but nb[2] = 4 * 2^31 * 2^31 = 2^64 (llama.cpp divides INT64_MAX by ne[2] = 0 here)
        {.name = "stride_overflow_with_a_zero_dimension",
         .make = [] { return gguf(1, 0).tensor_info("w", {1ll << 31, 1ll << 31, 0}, f32, 0).b; },
         .code = errc::size_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        // 0 elements, but ne[0] * ne[1] = 2^80 before the zero: refused as ggml refuses it
        {.name = "element_count_prefix_overflow_before_a_zero_dimension",
         .make = [] { return gguf(1, 0).tensor_info("w", {1ll << 40, 1ll << 40, 0}, f32, 0).b; },
         .code = errc::shape_overflow, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 0)},
        // one tensor of 2^64 - 64 bytes at data offset 64: offset + size is 2^64; the file ends at 57
        {.name = "offset_plus_size_overflow",
         .make = [] { return gguf(1, 0).tensor_info("w", {(1ll << 62) - 16}, f32, 0).b; },
         .code = errc::data_truncated, .where = section::data, .subject = "w", .offset = H + t_size(1, 1),
         .expected = u64max, .found = H + t_size(1, 1)},
        {.name = "padded_sum_overflow",  // two tensors of 2^63 bytes: the second ends at 2^64
         .make = [] {
             return gguf(2, 0).tensor_info("a", {1ll << 61}, f32, 0).tensor_info("b", {1ll << 61}, f32, p63).b;
         },
         .code = errc::data_size_overflow, .where = section::tensor_info, .subject = "b",
         .offset = t_offset_at(H + t_size(1, 1), 1, 1), .expected = p63, .found = p63},
        {.name = "alignment_padding_overflow",  // alignment 2^31, a tensor of 2^64 - 2^30 + 4 bytes
         .make = [] {
             return gguf(1, 1)
                 .kv_u32("general.alignment", 1u << 31)
                 .tensor_info("w", {(1ll << 62) - (1ll << 28) + 1}, f32, 0)
                 .b;
         },
         .code = errc::data_size_overflow, .where = section::tensor_info, .subject = "w",
         .offset = t_offset_at(H + 8 + 17 + 4 + 4, 1, 1), .expected = 0, .found = u64max - (1ull << 30) + 5},

        // ======== USERS.md 3: values used as indices into fixed tables ========
        {.name = "n_dims_5", .make = [] { return gguf(1, 0).str("w").u32(5).zeros(40).u32(f32).u64(0).b; },
         .code = errc::bad_n_dims, .where = section::tensor_info, .subject = "w", .offset = t_dims_at(H, 1),
         .expected = 4, .found = 5},
        {.name = "n_dims_0xFFFFFFFF", .make = [] { return gguf(1, 0).str("w").u32(0xFFFFFFFFu).zeros(16).b; },
         .code = errc::bad_n_dims, .where = section::tensor_info, .subject = "w", .offset = t_dims_at(H, 1),
         .expected = 4, .found = 0xFFFFFFFFu},
        {.name = "tensor_type_4_removed_q4_2", .make = [] { return gguf(1, 0).tensor_info("w", {32}, 4, 0).b; },
         .code = errc::removed_tensor_type, .where = section::tensor_info, .subject = "w",
         .offset = t_type_at(H, 1, 1), .found = 4},
        {.name = "tensor_type_31_removed_q4_0_4_4", .make = [] { return gguf(1, 0).tensor_info("w", {32}, 31, 0).b; },
         .code = errc::removed_tensor_type, .where = section::tensor_info, .subject = "w",
         .offset = t_type_at(H, 1, 1), .found = 31},
        {.name = "tensor_type_43", .make = [] { return gguf(1, 0).tensor_info("w", {32}, 43, 0).b; },
         .code = errc::bad_tensor_type, .where = section::tensor_info, .subject = "w",
         .offset = t_type_at(H, 1, 1), .found = 43},
        {.name = "tensor_type_0xFFFFFFFF", .make = [] { return gguf(1, 0).tensor_info("w", {32}, 0xFFFFFFFFu, 0).b; },
         .code = errc::bad_tensor_type, .where = section::tensor_info, .subject = "w",
         .offset = t_type_at(H, 1, 1), .found = 0xFFFFFFFFu},
        {.name = "negative_dimension",
         .make = [] { return gguf(1, 0).tensor_info("w", {4, std::numeric_limits<std::int64_t>::min()}, f32, 0).b; },
         .code = errc::bad_dim, .where = section::tensor_info, .subject = "w", .offset = t_ne_at(H, 1, 1),
         .expected = 1, .found = p63},
        {.name = "row_not_a_block_multiple",
         .make = [] { return gguf(1, 0).tensor_info("w", {33}, static_cast<std::uint32_t>(tensor_type::q4_0), 0).b; },
         .code = errc::not_block_multiple, .where = section::tensor_info, .subject = "w",
         .offset = t_ne_at(H, 1, 0), .expected = 32, .found = 33},

        // ======== USERS.md 4: tensor data outside the file, or overlapping ========
        {.name = "tensor_data_past_end_of_file",
         .make = [] { return gguf(1, 0).tensor_info("w", {64}, f32, 0).pad(32).zeros(100).b; },
         .code = errc::data_truncated, .where = section::data, .subject = "w", .offset = 64,
         .expected = 64 + 256, .found = 64 + 100},
        {.name = "data_section_starts_past_end_of_file",  // the file ends with its table, unpadded
         .make = [] { return gguf(1, 0).tensor_info("w", {4}, f32, 0).b; },
         .code = errc::data_truncated, .where = section::data, .subject = "w", .offset = H + t_size(1, 1),
         .expected = 64 + 16, .found = H + t_size(1, 1)},
        {.name = "second_tensor_past_end_of_file",
         .make = [] {
             return gguf(2, 0).tensor_info("a", {8}, f32, 0).tensor_info("b", {8}, f32, 32).pad(32).zeros(40).b;
         },
         .code = errc::data_truncated, .where = section::data, .subject = "b", .offset = 96 + 32,
         .expected = 96 + 64, .found = 96 + 40},
        {.name = "overlapping_tensors",
         .make = [] {
             return gguf(2, 0).tensor_info("a", {8}, f32, 0).tensor_info("b", {8}, f32, 16).pad(32).zeros(64).b;
         },
         .code = errc::offset_mismatch, .where = section::tensor_info, .subject = "b",
         .offset = t_offset_at(H + t_size(1, 1), 1, 1), .expected = 32, .found = 16},
        {.name = "gap_between_tensors",
         .make = [] {
             return gguf(2, 0).tensor_info("a", {8}, f32, 0).tensor_info("b", {8}, f32, 64).pad(32).zeros(96).b;
         },
         .code = errc::offset_mismatch, .where = section::tensor_info, .subject = "b",
         .offset = t_offset_at(H + t_size(1, 1), 1, 1), .expected = 32, .found = 64},

        // ======== USERS.md 5: nested arrays ========
        {.name = "nested_array",
         .make = [] { return gguf(0, 1).kv_array("n", value_type::array, 1).type(value_type::u8).u64(0).b; },
         .code = errc::nested_array, .where = section::metadata, .subject = "n", .offset = kv_value_at(H, 1)},

        // ======== USERS.md 6: type confusion; general.alignment of the wrong type or value ========
        {.name = "alignment_type_u64", .make = [] { return gguf(0, 1).kv_u64("general.alignment", 32).b; },
         .code = errc::alignment_wrong_type, .where = section::metadata, .subject = "general.alignment",
         .offset = H, .expected = vt(value_type::u32), .found = vt(value_type::u64)},
        {.name = "alignment_type_i32", .make = [] { return gguf(0, 1).kv_i32("general.alignment", 32).b; },
         .code = errc::alignment_wrong_type, .where = section::metadata, .subject = "general.alignment",
         .offset = H, .expected = vt(value_type::u32), .found = vt(value_type::i32)},
        {.name = "alignment_type_string", .make = [] { return gguf(0, 1).kv_str("general.alignment", "32").b; },
         .code = errc::alignment_wrong_type, .where = section::metadata, .subject = "general.alignment",
         .offset = H, .expected = vt(value_type::u32), .found = vt(value_type::string)},
        {.name = "alignment_type_array",
         .make = [] { return gguf(0, 1).kv_array_of<std::uint32_t>("general.alignment", value_type::u32, {32}).b; },
         .code = errc::alignment_wrong_type, .where = section::metadata, .subject = "general.alignment",
         .offset = H, .expected = vt(value_type::u32), .found = vt(value_type::array)},
        {.name = "alignment_0", .make = [] { return gguf(0, 1).kv_u32("general.alignment", 0).b; },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 0},
        {.name = "alignment_3", .make = [] { return gguf(0, 1).kv_u32("general.alignment", 3).b; },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 3},
        {.name = "alignment_48", .make = [] { return gguf(0, 1).kv_u32("general.alignment", 48).b; },
         .code = errc::bad_alignment, .where = section::metadata, .subject = "general.alignment", .offset = H,
         .found = 48},
        {.name = "bool_byte_2", .make = [] { return gguf(0, 1).key("b", value_type::boolean).u8(2).b; },
         .code = errc::bad_bool, .where = section::metadata, .subject = "b", .offset = kv_value_at(H, 1),
         .expected = 1, .found = 2},
        {.name = "bool_array_byte_2",
         .make = [] { return gguf(0, 1).kv_array("b", value_type::boolean, 3).u8(1).u8(0).u8(2).b; },
         .code = errc::bad_bool, .where = section::metadata, .subject = "b", .offset = kv_value_at(H, 1) + 12 + 2,
         .expected = 1, .found = 2},
        {.name = "value_type_13", .make = [] { return gguf(0, 1).str("k").u32(13).u8(0).b; },
         .code = errc::bad_value_type, .where = section::metadata, .subject = "k", .offset = kv_type_at(H, 1),
         .found = 13},
        {.name = "value_type_0xFFFFFFFF", .make = [] { return gguf(0, 1).str("k").u32(0xFFFFFFFFu).u8(0).b; },
         .code = errc::bad_value_type, .where = section::metadata, .subject = "k", .offset = kv_type_at(H, 1),
         .found = 0xFFFFFFFFu},
        {.name = "array_element_type_13",
         .make = [] { return gguf(0, 1).key("k", value_type::array).u32(13).u64(1).u8(0).b; },
         .code = errc::bad_value_type, .where = section::metadata, .subject = "k", .offset = kv_value_at(H, 1),
         .found = 13},
        {.name = "array_element_type_0xFFFFFFFF",
         .make = [] { return gguf(0, 1).key("k", value_type::array).u32(0xFFFFFFFFu).u64(1).u8(0).b; },
         .code = errc::bad_value_type, .where = section::metadata, .subject = "k", .offset = kv_value_at(H, 1),
         .found = 0xFFFFFFFFu},

        // ======== names: empty, too long, duplicate, holding a NUL ========
        {.name = "empty_key", .make = [] { return gguf(0, 2).kv_u8("a", 1).kv_u32("", 2).b; },
         .code = errc::empty_key, .where = section::metadata, .subject = "", .offset = H + 14},
        {.name = "duplicate_key",
         .make = [] { return gguf(0, 3).kv_u8("general.name", 1).kv_u8("b", 2).kv_str("general.name", "x").b; },
         .code = errc::duplicate_key, .where = section::metadata, .subject = "general.name",
         .offset = H + (8 + 12 + 4 + 1) + 14, .expected = 0, .found = 2},
        {.name = "nul_inside_a_key",  // "general.alignment\0" would be the alignment key to a C reader
         .make = [] { return gguf(0, 1).kv_u32(std::string("general.alignment\0", 18), 64).b; },
         .code = errc::nul_in_name, .where = section::metadata, .subject = std::string("general.alignment\0", 18),
         .offset = H + 8 + 17, .found = 17},
        {.name = "empty_tensor_name", .make = [] { return gguf(1, 0).tensor_info("", {4}, f32, 0).b; },
         .code = errc::bad_name_length, .where = section::tensor_info, .subject = "", .offset = H, .expected = 63,
         .found = 0},
        {.name = "tensor_name_64_bytes",
         .make = [] { return gguf(1, 0).tensor_info(std::string(64, 'n'), {4}, f32, 0).b; },
         .code = errc::bad_name_length, .where = section::tensor_info, .subject = std::string(64, 'n'),
         .offset = H, .expected = 63, .found = 64},
        {.name = "duplicate_tensor_name",
         .make = [] {
             return gguf(3, 0)
                 .tensor_info("a", {8}, f32, 0)
                 .tensor_info("b", {8}, f32, 32)
                 .tensor_info("a", {8}, f32, 64)
                 .b;
         },
         .code = errc::duplicate_tensor, .where = section::tensor_info, .subject = "a",
         .offset = H + 2 * t_size(1, 1), .expected = 0, .found = 2},
        {.name = "nul_inside_a_tensor_name",
         .make = [] { return gguf(1, 0).tensor_info(std::string("w\0x", 3), {4}, f32, 0).b; },
         .code = errc::nul_in_name, .where = section::tensor_info, .subject = std::string("w\0x", 3),
         .offset = H + 8 + 1, .found = 1},

        // ======== versions and magic: real user mistakes ========
        {.name = "version_0", .make = [] { return version(0).b; },
         .code = errc::bad_version, .where = section::header, .subject = "", .offset = 4, .expected = 3, .found = 0},
        {.name = "version_1", .make = [] { return version(1).b; },
         .code = errc::version_unsupported, .where = section::header, .subject = "", .offset = 4, .expected = 3,
         .found = 1},
        {.name = "version_4", .make = [] { return version(4).b; },
         .code = errc::version_too_new, .where = section::header, .subject = "", .offset = 4, .expected = 3,
         .found = 4},
        {.name = "version_0x03000000_byte_swapped", .make = [] { return version(0x03000000u).b; },
         .code = errc::byte_swapped, .where = section::header, .subject = "", .offset = 4, .expected = 3,
         .found = 0x03000000u},
        {.name = "magic_html_page",  // an error page saved as model.gguf
         .make = [] {
             gguf_bytes g;
             g.raw("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n");
             return g.b;
         },
         .code = errc::bad_magic, .where = section::header, .subject = "", .offset = 0, .expected = 0x46554747u,
         .found = 0x4F44213Cu},
        {.name = "magic_zip_archive",  // a PyTorch .bin / zipped download
         .make = [] { gguf_bytes g; g.raw("PK\x03\x04").u16(20).zeros(26).raw("pytorch_model/data.pkl"); return g.b; },
         .code = errc::bad_magic, .where = section::header, .subject = "", .offset = 0, .expected = 0x46554747u,
         .found = 0x04034B50u},
        {.name = "magic_old_ggjt_file",  // a pre-GGUF ggml model: magic 'ggjt' written as a u32
         .make = [] { gguf_bytes g; g.u32(0x67676A74u).u32(3).zeros(32); return g.b; },
         .code = errc::bad_magic, .where = section::header, .subject = "", .offset = 0, .expected = 0x46554747u,
         .found = 0x67676A74u},

        // ======== a fixed-size field cut short ========
        {.name = "truncated_in_the_version", .make = [] { gguf_bytes g; g.magic().u16(3); return g.b; },
         .code = errc::truncated, .where = section::header, .subject = "", .offset = 4, .expected = 4, .found = 2},
        {.name = "truncated_in_a_scalar_value", .make = [] { return gguf(0, 1).key("x", value_type::u64).u32(7).b; },
         .code = errc::truncated, .where = section::metadata, .subject = "x", .offset = kv_value_at(H, 1),
         .expected = 8, .found = 4},
        {.name = "truncated_in_a_tensor_offset",  // 25 bytes: the record minimum, without its offset
         .make = [] { return gguf(1, 0).str("w").u32(1).i64(4).u32(f32).b; },
         .code = errc::truncated, .where = section::tensor_info, .subject = "w", .offset = t_offset_at(H, 1, 1),
         .expected = 8, .found = 0},

        // ======== split sets, through model::open ========
        {.name = "split_part_missing", .code = errc::split_part_missing, .where = section::split,
         .subject = "",
         .open_set = [](const fs::path& d) {
             const fs::path entry = write_parts(d, 3);
             fs::remove(part_path(d, 2, 3));
             return entry;
         },
         .part = 3},
        {.name = "split_no_mismatch", .code = errc::split_no_mismatch, .where = section::split,
         .subject = "", .expected = 1, .found = 0,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 1) w.set_u16("split.no", 0); });
         },
         .part = 2},
        {.name = "split_count_disagrees_with_the_file_name", .code = errc::split_count_mismatch,
         .where = section::split, .subject = "", .expected = 2, .found = 3,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 0) w.set_u16("split.count", 3); });
         },
         .part = 1},
        {.name = "split_count_disagrees_with_part_1", .code = errc::split_count_mismatch, .where = section::split,
         .subject = "", .expected = 2, .found = 1,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 1) w.set_u16("split.count", 1); });
         },
         .part = 2},
        {.name = "split_tensor_count_mismatch", .code = errc::split_tensor_count_mismatch, .where = section::split,
         .subject = "", .offset = split_tensors_count_at, .expected = 3, .found = 2,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) {
                 if (i == 0) w.set_i32("split.tensors.count", 3);
             });
         },
         .part = 1},
        {.name = "split_duplicate_tensor", .code = errc::split_duplicate_tensor, .where = section::split,
         .subject = "t0", .expected = 1, .found = 2,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) {
                 w.set_i32("split.tensors.count", 3);  // count the duplicate, so the counts agree
                 const std::int64_t ne[] = {2};
                 if (i == 1) w.add_tensor("t0", tensor_type::f32, ne, random_bytes(8, 7));
             });
         },
         .part = 2},
        {.name = "split_not_first", .code = errc::split_not_first, .where = section::split,
         .subject = "", .offset = split_no_at, .expected = 0, .found = 1,
         .open_set = [](const fs::path& d) {
             write_parts(d, 2);
             return part_path(d, 1, 2);
         },
         .part = 2},
        {.name = "split_bad_key_string_split_no", .code = errc::split_bad_key, .where = section::split,
         .subject = "split.no", .offset = split_no_at,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 1) w.set_string("split.no", "1"); });
         },
         .part = 2},
        {.name = "split_bad_key_negative_split_count", .code = errc::split_bad_key, .where = section::split,
         .subject = "split.count", .offset = split_count_at,
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 1) w.set_i32("split.count", -2); });
         },
         .part = 2},
        {.name = "split_bad_key_missing_split_count_in_part_2", .code = errc::split_bad_key, .where = section::split,
         .subject = "split.count",
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 1) w.erase("split.count"); });
         },
         .part = 2},
        {.name = "split_arch_mismatch", .code = errc::split_arch_mismatch, .where = section::split,
         .subject = "general.architecture",
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) {
                 w.set_string("general.architecture", i == 0 ? "llama" : "qwen2");
             });
         },
         .part = 2},
        {.name = "split_bad_name", .code = errc::split_bad_name, .where = section::split, .subject = "",
         .expected = 2, .found = 0,
         .open_set = [](const fs::path& d) {  // part 1 renamed: the other parts cannot be found from its name
             fs::rename(write_parts(d, 2), d / "model.gguf");
             return d / "model.gguf";
         },
         .part = 1},
        {.name = "split_bad_key_missing_tensor_count", .code = errc::split_bad_key, .where = section::split,
         .subject = "split.tensors.count",
         .open_set = [](const fs::path& d) {
             return write_parts(d, 2, [](writer& w, std::uint32_t i) { if (i == 0) w.erase("split.tensors.count"); });
         },
         .part = 1},
        {.name = "split_part_2_data_truncated", .code = errc::data_truncated, .where = section::data,
         .subject = "t1",
         .open_set = [](const fs::path& d) {
             const fs::path entry = write_parts(d, 2);
             edit_part(part_path(d, 1, 2), [](bytes& b) {  // keep 7 of t1's 8 bytes
                 auto v = file_view::parse(b);
                 ASSERT_TRUE(v);
                 const auto keep = static_cast<std::size_t>(v->data_offset() + 7);
                 b.resize(keep);
             });
             return entry;
         },
         .part = 2},
        {.name = "split_part_2_is_an_html_page",  // one shard's download saved an error page
         .code = errc::bad_magic, .where = section::header, .subject = "", .offset = 0, .expected = 0x46554747u,
         .found = 0x4F44213Cu,
         .open_set = [](const fs::path& d) {
             const fs::path entry = write_parts(d, 2);
             edit_part(part_path(d, 1, 2), [](bytes& b) {
                 gguf_bytes g;
                 g.raw("<!DOCTYPE html><html><body>rate limited</body></html>\n");
                 b = g.b;
             });
             return entry;
         },
         .part = 2},
    };
    return rows;
}

std::string substitute_dir(std::string s, const fs::path& dir) {
    const std::string tag = "{dir}";
    if (const auto at = s.find(tag); at != std::string::npos) s.replace(at, tag.size(), dir.string());
    return s;
}

want want_of(const damage& d, std::string subject) {
    return {.code = d.code, .where = d.where, .offset = d.offset, .expected = d.expected, .found = d.found,
            .subject = std::move(subject)};
}

// ---- the tests --------------------------------------------------------------------------------

class Corruption : public ::testing::TestWithParam<damage> {};

TEST_P(Corruption, FailsWithItsError) {
    const damage& d = GetParam();
    temp_dir dir;
    if (d.open_set) {
        const fs::path entry = d.open_set(dir.path());
        auto m = model::open(entry);
        ASSERT_FALSE(m.has_value()) << "the set opened";
        const error& e = m.error();
        EXPECT_TRUE(error_is(e, want_of(d, substitute_dir(d.subject, dir.path()))));
        EXPECT_EQ(e.part, d.part) << describe(e);
        EXPECT_GT(e.n_parts, 1u) << describe(e);
        EXPECT_EQ(e.file.rfind(dir.path().string() + "/", 0), 0u) << "the error names a file of the set: " << e.file;
        EXPECT_FALSE(e.message().empty());
        return;
    }

    ASSERT_TRUE(d.make) << "a row needs make or open_set";
    const bytes b = d.make();
    ASSERT_FALSE(b.empty());
    std::optional<error> parsed;
    std::size_t largest = 0, total = 0;
    std::chrono::steady_clock::duration elapsed{};
    {
        alloc_probe probe;
        const auto start = std::chrono::steady_clock::now();
        auto r = file_view::parse(b);
        elapsed = std::chrono::steady_clock::now() - start;
        largest = probe.largest();
        total = probe.total();
        if (!r) parsed = r.error();
    }
    ASSERT_TRUE(parsed.has_value()) << "the file parsed (" << b.size() << " bytes)";
    EXPECT_TRUE(error_is(*parsed, want_of(d, d.subject)));
    EXPECT_EQ(parsed->part, 0u);
    EXPECT_TRUE(parsed->file.empty());
    // Hostile counts and lengths must not turn into allocations or work: every row is a tiny file.
    EXPECT_LT(largest, 4096u) << "largest single allocation while parsing a " << b.size() << "-byte file";
    EXPECT_LT(total, 16384u) << "bytes allocated while parsing a " << b.size() << "-byte file";
    EXPECT_LT(elapsed, std::chrono::seconds(1));

    // The same bytes opened as a file: the same error, located at that file.
    const fs::path path = dir / "damaged.gguf";
    write_file(path, b);
    auto m = model::open(path);
    ASSERT_FALSE(m.has_value()) << "model::open accepted what parse refused";
    const error& e = m.error();
    EXPECT_TRUE(error_is(e, want_of(d, d.subject)));
    EXPECT_EQ(e.file, path.string());
    EXPECT_EQ(e.part, 0u);
    EXPECT_EQ(e.n_parts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Table, Corruption, ::testing::ValuesIn(table()),
                         [](const ::testing::TestParamInfo<damage>& row) { return std::string(row.param.name); });

// Every code that opening a file or a set can produce has at least one row, so a new check without
// a row fails here. Accessor-only codes and the environment's codes are not damage to a file.
TEST(CorruptionTable, EveryOpenErrorCodeHasARow) {
    // The loader's codes only: every library's own codes (minfer/<library>/errors.hpp) are returned
    // by functions other than open.
    const std::set<errc> not_damage = {errc::key_not_found, errc::type_mismatch, errc::tensor_not_found,
                                       errc::index_out_of_range, errc::io_error, errc::out_of_memory,
                                       errc::value_out_of_range, errc::bad_value_text, errc::buffer_size_mismatch,
                                       errc::head_incomplete, errc::fetch_budget_exceeded, errc::http_status,
                                       errc::transfer_failed, errc::bad_hyperparameter, errc::model_incomplete,
                                       errc::input_too_large};
    std::set<errc> covered;
    for (const damage& d : table()) covered.insert(d.code);
    int checked = 0;
    for (int i = 1; i <= static_cast<int>(last_code); ++i) {
        const auto code = static_cast<errc>(i);
        if (to_string(code) == "unknown" || not_damage.count(code) != 0) continue;  // a number that moved
        ++checked;
        EXPECT_EQ(covered.count(code), 1u) << "no row of the corruption table produces " << to_string(code);
    }
    EXPECT_GE(checked, 39);
    EXPECT_EQ(covered.count(errc::ok), 0u);
}

TEST(CorruptionTable, RowsAreWellFormed) {
    std::set<std::string> names;
    for (const damage& d : table()) {
        SCOPED_TRACE(d.name);
        EXPECT_TRUE(names.insert(d.name).second) << "two rows named " << d.name;
        EXPECT_NE(static_cast<bool>(d.make), static_cast<bool>(d.open_set)) << "a row is a file or a set";
        EXPECT_EQ(d.part != 0, static_cast<bool>(d.open_set)) << "split rows name a part, file rows do not";
        for (const char c : std::string_view(d.name))
            EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') << c;
    }
}

// The handcrafted cases of llama.cpp's test-gguf.cpp that must load, as minimal files: the
// counterpart of the llama_* rows (our checks refuse no more than llama.cpp does there).
TEST(CorruptionTable, LlamaSuccessCasesLoad) {
    // HEADER_EMPTY: a header without records, padded to 32 bytes
    const bytes empty = gguf(0, 0).pad(32).b;
    EXPECT_TRUE(file_view::parse(empty));
    // TENSORS_ZERO_DIM: tensors with a zero second dimension (no bytes), all at offset 0; the
    // file ends at the (empty) data section
    const bytes zero_dim = gguf(2, 0).tensor_info(l_t0, {32, 0}, f32, 0).tensor_info(l_t1, {64, 0}, f32, 0).pad(32).b;
    auto z = file_view::parse(zero_dim);
    ASSERT_TRUE(z) << z.error().message();
    EXPECT_EQ(z->tensors()[1].n_bytes, 0u);
    EXPECT_EQ(z->data_offset(), zero_dim.size());
    EXPECT_EQ(z->data_size(), 0u);
    // TENSORS_CUSTOM_ALIGN / DATA_CUSTOM_ALIGN: general.alignment 1, offsets without padding
    const bytes align1 = gguf(2, 1)
                             .kv_u32("general.alignment", 1)
                             .tensor_info(l_t0, {3}, f32, 0)
                             .tensor_info(l_t1, {3}, f32, 12)
                             .zeros(24)
                             .b;
    auto a = file_view::parse(align1);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->alignment(), 1u);
    EXPECT_EQ(a->data_size(), 24u);
}

}  // namespace

// A remote file is judged from its head (file_view::parse_head): every head of every damaged file
// gives the whole file's error, field by field, or asks for more bytes; fetch_head, growing from
// a few bytes, ends with exactly the whole file's error.
TEST_P(Corruption, EveryHeadGivesTheWholeFilesError) {
    const damage& d = GetParam();
    if (d.open_set) {
        // A damaged set: the same files behind an opener of growing heads give the same error.
        temp_dir dir;
        const fs::path entry = d.open_set(dir.path());
        memory_opener mem;
        for (const auto& f : fs::directory_iterator(dir.path()))
            if (f.is_regular_file()) mem.files[std::string("mem://set/") + f.path().filename().string()] = read_file(f.path());
        auto on_disk = model::open(entry);
        auto heads = model::open(mem, std::string("mem://set/") + entry.filename().string());
        ASSERT_FALSE(on_disk.has_value());
        ASSERT_FALSE(heads.has_value()) << "the set opened from heads";
        error a = on_disk.error();
        const error& h = heads.error();
        const std::string disk_dir = dir.path().string() + "/";
        if (a.detail.rfind(disk_dir, 0) == 0) a.detail = std::string("mem://set/") + a.detail.substr(disk_dir.size());  // a path named in the text
        EXPECT_TRUE(same_error(a, h));
        EXPECT_EQ(a.part, h.part);
        EXPECT_EQ(fs::path(a.file).filename(), fs::path(h.file).filename()) << describe(h);
        return;
    }
    const bytes b = d.make();
    auto whole = file_view::parse(b);
    ASSERT_FALSE(whole.has_value());
    for (std::uint64_t L = 0; L <= b.size(); ++L) expect_head_agrees(b, L, whole);
    growing_source src(b);
    head_options o;
    o.first_read = 1;  // fetch_head reads at least 64 bytes first
    auto h = fetch_head(src, o);
    ASSERT_FALSE(h.has_value());
    EXPECT_TRUE(same_error(whole.error(), h.error()));
}
