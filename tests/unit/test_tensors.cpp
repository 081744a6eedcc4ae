// Tensor table: names, dimensions, types, sizes and strides; the ggml type table itself.
#include <gtest/gtest.h>

#include <limits>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

// A file with one tensor record (plus whatever data `data_bytes` says), no metadata.
gguf_bytes one_tensor(std::string_view name, std::initializer_list<std::int64_t> ne, std::uint32_t type_id,
                      std::size_t data_bytes = 0) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info(name, ne, type_id, 0);
    if (data_bytes > 0) g.pad(32).zeros(data_bytes);
    return g;
}
constexpr std::uint32_t id(tensor_type t) { return static_cast<std::uint32_t>(t); }
// Offsets inside a single-tensor record that starts at byte 24.
constexpr std::uint64_t rec = 24;
constexpr std::uint64_t dims_at(std::size_t name_len) { return rec + 8 + name_len; }
constexpr std::uint64_t ne_at(std::size_t name_len, std::size_t d) { return dims_at(name_len) + 4 + 8 * d; }
constexpr std::uint64_t type_at(std::size_t name_len, std::size_t n_dims) { return ne_at(name_len, n_dims); }

// ---- names -----------------------------------------------------------------------------------

TEST(TensorNames, EmptyName) {
    const error e = parse_error(one_tensor("", {4}, 0));
    EXPECT_TRUE(error_is(e, {.code = errc::bad_name_length, .where = section::tensor_info, .offset = 24,
                             .expected = 63, .found = 0, .subject = "", .index = 0}));
    EXPECT_EQ(e.description(), "tensor 0 has an empty name");
}

TEST(TensorNames, NameWithANul) {
    // llama.cpp keeps names in char[64] and compares with strcmp: "a\0x" would be "a" to it.
    const std::string name("a\0x", 3);
    const error e = parse_error(one_tensor(name, {4}, 0));
    EXPECT_TRUE(error_is(e, {.code = errc::nul_in_name, .where = section::tensor_info, .offset = 24 + 8 + 1,
                             .found = 1, .subject = name, .index = 0}));
    EXPECT_EQ(e.description(), "tensor name 'a\\x00x' holds a NUL byte at position 1, so C readers would see another name");
    writer w;
    const std::int64_t ne[] = {4};
    w.add_zero_tensor(name, tensor_type::f32, ne);
    EXPECT_EQ(error_of(w.to_bytes()).code, errc::nul_in_name);
}

TEST(TensorNames, SixtyFourBytesIsTooLong) {
    const std::string name(64, 'n');
    const error e = parse_error(one_tensor(name, {4}, 0));
    EXPECT_TRUE(error_is(e, {.code = errc::bad_name_length, .where = section::tensor_info, .offset = 24,
                             .expected = 63, .found = 64, .subject = name, .index = 0}));
    EXPECT_EQ(e.description(), "tensor name '" + name + "' is 64 bytes, more than the maximum 63");
}

TEST(TensorNames, SixtyThreeBytesIsFine) {
    const std::string name(63, 'n');
    auto g = one_tensor(name, {4}, 0, 16);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->tensors()[0].name, name);
    EXPECT_EQ(r->find_tensor(name), &r->tensors()[0]);
}

TEST(TensorNames, Duplicate) {
    gguf_bytes g;
    g.header(3, 3, 0)
        .tensor_info("a", {8}, tensor_type::f32, 0)
        .tensor_info("b", {8}, tensor_type::f32, 32)
        .tensor_info("a", {8}, tensor_type::f32, 64);
    const std::uint64_t third = 24 + 2 * (8 + 1 + 4 + 8 + 4 + 8);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::duplicate_tensor, .where = section::tensor_info, .offset = third,
                             .expected = 0, .found = 2, .subject = "a", .index = 2}));
    EXPECT_EQ(e.description(), "duplicate tensor name 'a' for tensors 0 and 2");
}

// Two repeats more than the insert window's depth (16) apart: the first is reported, not the one
// the window still held queued when it found the first (a regression found by fuzz_head).
TEST(TensorNames, TheFirstOfTwoDuplicatesFarApartIsReported) {
    gguf_bytes g;
    const int n = 24;
    g.header(3, n, 0);
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back(std::string("t") + std::to_string(i));
    names[6] = names[2];   // the first repeat
    names[17] = names[9];  // a later one, still queued when the window meets the first
    for (int i = 0; i < n; ++i) g.tensor_info(names[static_cast<std::size_t>(i)], {8}, tensor_type::f32, 32u * static_cast<std::uint64_t>(i));
    const std::uint64_t record = 8 + 2 + 4 + 8 + 4 + 8;  // a 2-byte name
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::duplicate_tensor, .where = section::tensor_info, .offset = 24 + 6 * record,
                             .expected = 2, .found = 6, .subject = "t2", .index = 6}));
}

TEST(TensorNames, NameExceedsFile) {
    gguf_bytes g;
    g.header(3, 1, 0).str_len(40, "blk.0.attn").zeros(20);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::string_exceeds_file, .where = section::tensor_info,
                                          .offset = 24, .expected = 30, .found = 40, .index = 0,
                                          .detail = "tensor name"}));
}

// ---- dimensions ------------------------------------------------------------------------------

TEST(TensorDims, TooManyDims) {
    for (std::uint32_t n : {5u, 64u, 0xFFFFFFFFu}) {
        SCOPED_TRACE(n);
        gguf_bytes g;
        g.header(3, 1, 0).str("w").u32(n).zeros(64);
        const error e = parse_error(g);
        EXPECT_TRUE(error_is(e, {.code = errc::bad_n_dims, .where = section::tensor_info, .offset = dims_at(1),
                                 .expected = 4, .found = n, .subject = "w", .index = 0}));
        EXPECT_EQ(e.description(), "tensor 'w' has invalid number of dimensions: " + std::to_string(n) + " > 4");
    }
}

TEST(TensorDims, ZeroDimsIsAScalar) {
    auto g = one_tensor("s", {}, 0, 4);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    const tensor_info& t = r->tensors()[0];
    EXPECT_EQ(t.n_dims, 0u);
    EXPECT_EQ(t.ne, (std::array<std::int64_t, 4>{1, 1, 1, 1}));
    EXPECT_EQ(t.nb, (std::array<std::uint64_t, 4>{4, 4, 4, 4}));
    EXPECT_EQ(t.n_elements, 1u);
    EXPECT_EQ(t.n_bytes, 4u);
}

TEST(TensorDims, UnusedDimsAreOne) {
    auto g = one_tensor("v", {6, 2}, 0, 48);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->tensors()[0].n_dims, 2u);
    EXPECT_EQ(r->tensors()[0].ne, (std::array<std::int64_t, 4>{6, 2, 1, 1}));
}

TEST(TensorDims, NegativeDim) {
    for (std::size_t d = 0; d < 4; ++d) {
        SCOPED_TRACE(d);
        std::array<std::int64_t, 4> ne{4, 4, 4, 4};
        ne[d] = d == 3 ? std::numeric_limits<std::int64_t>::min() : -3;
        auto g = one_tensor("w", {ne[0], ne[1], ne[2], ne[3]}, 0);
        const error e = parse_error(g);
        EXPECT_TRUE(error_is(e, {.code = errc::bad_dim, .where = section::tensor_info, .offset = ne_at(1, d),
                                 .expected = d, .found = static_cast<std::uint64_t>(ne[d]), .subject = "w"}));
        EXPECT_EQ(e.shape, ne);
        if (d == 1) {
            EXPECT_EQ(e.description(), "tensor 'w' has invalid number of elements: -3 in dimension 1");
        }
    }
}

TEST(TensorDims, ElementCountOverflow) {
    auto g = one_tensor("big", {1ll << 32, 1ll << 32}, 0);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::shape_overflow, .where = section::tensor_info, .offset = ne_at(3, 0),
                             .subject = "big", .index = 0}));
    EXPECT_EQ(e.shape, (std::array<std::int64_t, 4>{1ll << 32, 1ll << 32, 1, 1}));
    EXPECT_EQ(e.description(),
              "tensor 'big' with shape (4294967296, 4294967296, 1, 1) has more than INT64_MAX elements");
    // the product may overflow only in the last multiply
    EXPECT_EQ(parse_error(one_tensor("big", {5, 1ll << 61, 1, 1}, 24)).code, errc::shape_overflow);
    EXPECT_NE(parse_error(one_tensor("big", {3, 1ll << 61, 1, 1}, 24)).code, errc::shape_overflow);  // 3 * 2^61 fits
    EXPECT_EQ(parse_error(one_tensor("big", {2, 2, 2, 1ll << 61}, 24)).code, errc::shape_overflow);
}

TEST(TensorDims, ByteSizeOverflow) {
    // 2^62 f32 elements fit in int64, but 2^64 bytes do not fit in 64 bits
    auto g = one_tensor("huge", {1ll << 62}, id(tensor_type::f32));
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::size_overflow, .where = section::tensor_info, .offset = ne_at(4, 0),
                             .subject = "huge", .index = 0}));
    EXPECT_EQ(e.description(),
              "tensor 'huge' with shape (4611686018427387904, 1, 1, 1) has a size in bytes > 18446744073709551615");
    // f64: 2^61 elements of 8 bytes; a block type: 2^62 q8_0 elements are 2^57 blocks of 34 bytes, which fits
    EXPECT_EQ(parse_error(one_tensor("huge", {1ll << 30, 1ll << 31}, id(tensor_type::f64))).code, errc::size_overflow);
    EXPECT_EQ(parse_error(one_tensor("huge", {1ll << 62}, id(tensor_type::q8_0))).code, errc::data_truncated);
    // int64 elements that fit exactly: INT64_MAX bytes of i8 would be the largest size; not an overflow
    const error fits = parse_error(one_tensor("i8", {std::numeric_limits<std::int64_t>::max()}, id(tensor_type::i8)));
    EXPECT_EQ(fits.code, errc::data_truncated);  // the shape is valid, the file just does not hold it
}

TEST(TensorDims, StrideOverflowWithAnEmptyDimension) {
    // n_bytes is 0 (ne[2] = 0) but the stride nb[2] = nb[1] * ne[1] does not fit in 64 bits
    const error e = parse_error(one_tensor("s", {1ll << 31, 1ll << 31, 0}, id(tensor_type::f32)));
    EXPECT_TRUE(error_is(e, {.code = errc::size_overflow, .where = section::tensor_info, .subject = "s"}));
}

TEST(TensorDims, TruncatedInsideTheRecord) {
    // record of a 30-byte name: length 0..8 | name 8..38 | n_dims 38..42 | ne 42..58 | type 58..62 | offset 62..70
    const std::string name(30, 'w');
    gguf_bytes full;
    full.header(3, 1, 0).tensor_info(name, {4, 4}, tensor_type::f32, 0);
    ASSERT_EQ(full.size(), 24u + 70u);
    struct c {
        std::size_t keep;
        errc code;
        const char* field;
        std::uint64_t at;
    };
    const c cases[] = {{24, errc::count_too_large, "", 8},
                       {30, errc::string_exceeds_file, "tensor name", 24},
                       {40, errc::truncated, "n_dims", 24 + 38},
                       {50, errc::truncated, "tensor dimension", 24 + 50},
                       {60, errc::truncated, "tensor type", 24 + 58},
                       {65, errc::truncated, "tensor offset", 24 + 62}};
    for (const c& x : cases) {
        SCOPED_TRACE(x.keep);
        const bytes b(full.b.begin(), full.b.begin() + static_cast<std::ptrdiff_t>(24 + x.keep));
        const error e = parse_error(b);
        if (x.code == errc::count_too_large) {
            EXPECT_TRUE(error_is(e, {.code = x.code, .where = section::header, .offset = x.at}));
            continue;
        }
        EXPECT_TRUE(error_is(e, {.code = x.code, .where = section::tensor_info, .offset = x.at, .index = 0,
                                 .detail = x.field}));
        // once the name is read, every later failure of the record names the tensor
        if (x.code == errc::truncated) {
            EXPECT_EQ(e.subject, name);
        }
    }
}

// ---- types -----------------------------------------------------------------------------------

TEST(TensorTypes, UnknownIds) {
    for (std::uint32_t t : {43u, 44u, 1000u, 0xFFFFFFFFu}) {
        SCOPED_TRACE(t);
        const error e = parse_error(one_tensor("w", {32}, t));
        EXPECT_TRUE(error_is(e, {.code = errc::bad_tensor_type, .where = section::tensor_info,
                                 .offset = type_at(1, 1), .found = t, .subject = "w", .index = 0}));
        EXPECT_EQ(e.description(), "tensor 'w' has invalid ggml type " + std::to_string(t));
    }
}

TEST(TensorTypes, RemovedIdsNameTheReplacement) {
    struct c {
        std::uint32_t id;
        const char* name;
        const char* replacement;
    };
    const c cases[] = {{4, "q4_2", "q4_0"},         {5, "q4_3", "q4_1"},         {31, "q4_0_4_4", "q4_0"},
                       {32, "q4_0_4_8", "q4_0"},     {33, "q4_0_8_8", "q4_0"},     {36, "iq4_nl_4_4", "iq4_nl"},
                       {37, "iq4_nl_4_8", "iq4_nl"}, {38, "iq4_nl_8_8", "iq4_nl"}};
    for (const c& x : cases) {
        SCOPED_TRACE(x.name);
        const error e = parse_error(one_tensor("w", {256}, x.id, 1024));
        EXPECT_TRUE(error_is(e, {.code = errc::removed_tensor_type, .where = section::tensor_info,
                                 .offset = type_at(1, 1), .found = x.id, .subject = "w"}));
        EXPECT_EQ(e.description(), "tensor 'w' has type " + std::to_string(x.id) + " (" + x.name +
                                       "), which ggml no longer supports in files; re-convert it as " + x.replacement);
        const type_traits* t = traits(x.id);
        ASSERT_NE(t, nullptr);
        EXPECT_TRUE(t->removed());
        EXPECT_EQ(t->name, x.name);
        EXPECT_EQ(t->replaced_by, x.replacement);
    }
}

TEST(TensorTypes, NotABlockMultiple) {
    const error e = parse_error(one_tensor("w", {895, 2}, id(tensor_type::q4_0)));
    EXPECT_TRUE(error_is(e, {.code = errc::not_block_multiple, .where = section::tensor_info, .offset = ne_at(1, 0),
                             .expected = 32, .found = 895, .subject = "w", .index = 0}));
    EXPECT_EQ(e.description(),
              "tensor 'w' of type 2 (q4_0) has 895 elements per row, not a multiple of block size (32)");
    // K-quants need 256 per row; a scalar of a block type is a row of 1
    EXPECT_TRUE(error_is(parse_error(one_tensor("k", {128}, id(tensor_type::q4_k))),
                         {.code = errc::not_block_multiple, .where = section::tensor_info, .expected = 256,
                          .found = 128}));
    EXPECT_TRUE(error_is(parse_error(one_tensor("s", {}, id(tensor_type::q8_0))),
                         {.code = errc::not_block_multiple, .where = section::tensor_info, .expected = 32,
                          .found = 1}));
    // only ne[0] matters: other dimensions need not be multiples
    auto ok = one_tensor("w", {32, 3, 5}, id(tensor_type::q4_0), 18 * 15);
    EXPECT_TRUE(file_view::parse(ok.span()));
}

// The full type table: id, ggml name, values per block, bytes per block (0/0 for removed ids).
struct type_row {
    std::uint32_t id;
    const char* name;
    std::uint32_t block_elems, block_bytes;
};
constexpr type_row type_table[] = {
    {0, "f32", 1, 4},          {1, "f16", 1, 2},          {2, "q4_0", 32, 18},      {3, "q4_1", 32, 20},
    {4, "q4_2", 0, 0},         {5, "q4_3", 0, 0},         {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},
    {8, "q8_0", 32, 34},       {9, "q8_1", 32, 36},       {10, "q2_K", 256, 84},    {11, "q3_K", 256, 110},
    {12, "q4_K", 256, 144},    {13, "q5_K", 256, 176},    {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},
    {16, "iq2_xxs", 256, 66},  {17, "iq2_xs", 256, 74},   {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},
    {20, "iq4_nl", 32, 18},    {21, "iq3_s", 256, 110},   {22, "iq2_s", 256, 82},   {23, "iq4_xs", 256, 136},
    {24, "i8", 1, 1},          {25, "i16", 1, 2},         {26, "i32", 1, 4},        {27, "i64", 1, 8},
    {28, "f64", 1, 8},         {29, "iq1_m", 256, 56},    {30, "bf16", 1, 2},       {31, "q4_0_4_4", 0, 0},
    {32, "q4_0_4_8", 0, 0},    {33, "q4_0_8_8", 0, 0},    {34, "tq1_0", 256, 54},   {35, "tq2_0", 256, 66},
    {36, "iq4_nl_4_4", 0, 0},  {37, "iq4_nl_4_8", 0, 0},  {38, "iq4_nl_8_8", 0, 0}, {39, "mxfp4", 32, 17},
    {40, "nvfp4", 64, 36},     {41, "q1_0", 128, 18},     {42, "q2_0", 64, 18},
};
static_assert(std::size(type_table) == tensor_type_count);

TEST(TypeTraits, AllIds) {
    for (const type_row& row : type_table) {
        SCOPED_TRACE(row.name);
        const type_traits* t = traits(row.id);
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(t->name, row.name);
        EXPECT_EQ(t->block_elems, row.block_elems);
        EXPECT_EQ(t->block_bytes, row.block_bytes);
        EXPECT_EQ(t->removed(), row.block_elems == 0);
        EXPECT_EQ(t->replaced_by.empty(), !t->removed());
        EXPECT_EQ(to_string(static_cast<tensor_type>(row.id)), row.name);
        EXPECT_EQ(tensor_type_from_name(row.name), static_cast<tensor_type>(row.id));
        EXPECT_EQ(traits(static_cast<tensor_type>(row.id)), t);
    }
    EXPECT_EQ(traits(43u), nullptr);
    EXPECT_EQ(traits(0xFFFFFFFFu), nullptr);
    EXPECT_EQ(to_string(static_cast<tensor_type>(43)), "unknown");
}

TEST(TypeTraits, EnumeratorsMatchIds) {
    EXPECT_EQ(id(tensor_type::q4_0), 2u);
    EXPECT_EQ(id(tensor_type::q8_0), 8u);
    EXPECT_EQ(id(tensor_type::q4_k), 12u);
    EXPECT_EQ(id(tensor_type::q8_k), 15u);
    EXPECT_EQ(id(tensor_type::bf16), 30u);
    EXPECT_EQ(id(tensor_type::tq2_0), 35u);
    EXPECT_EQ(id(tensor_type::mxfp4), 39u);
    EXPECT_EQ(id(tensor_type::q2_0), 42u);
}

TEST(TypeTraits, NamesParseCaseInsensitively) {
    EXPECT_EQ(tensor_type_from_name("Q4_0"), tensor_type::q4_0);
    EXPECT_EQ(tensor_type_from_name("Q4_K"), tensor_type::q4_k);
    EXPECT_EQ(tensor_type_from_name("q6_K"), tensor_type::q6_k);
    EXPECT_EQ(tensor_type_from_name("BF16"), tensor_type::bf16);
    EXPECT_EQ(tensor_type_from_name("F32"), tensor_type::f32);
    EXPECT_EQ(tensor_type_from_name("q4"), std::nullopt);
    EXPECT_EQ(tensor_type_from_name(""), std::nullopt);
    EXPECT_EQ(tensor_type_from_name("q4_0 "), std::nullopt);
}

TEST(TypeTraits, ValueTypes) {
    const char* names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                           "bool", "string", "array", "u64", "i64", "f64"};
    const std::uint32_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    for (std::uint32_t i = 0; i < value_type_count; ++i) {
        EXPECT_EQ(to_string(static_cast<value_type>(i)), names[i]);
        EXPECT_EQ(value_size(static_cast<value_type>(i)), sizes[i]);
    }
    EXPECT_EQ(to_string(static_cast<value_type>(13)), "invalid");
    EXPECT_EQ(value_size(static_cast<value_type>(13)), 0u);
}

// ---- strides and sizes -----------------------------------------------------------------------

// ggml's formulas, written out independently: nb[0] = type size, nb[1] = nb[0] * ne[0] / block,
// nb[i] = nb[i-1] * ne[i-1]; ggml_nbytes = ne[0] * nb[0] / block + sum (ne[i] - 1) * nb[i].
void expect_ggml_geometry(tensor_type type, std::array<std::int64_t, 4> ne, std::uint32_t n_dims) {
    const type_row& row = type_table[id(type)];
    SCOPED_TRACE(std::string(row.name) + " (" + std::to_string(ne[0]) + "," + std::to_string(ne[1]) + "," +
                 std::to_string(ne[2]) + "," + std::to_string(ne[3]) + ")");
    std::array<std::uint64_t, 4> nb{};
    nb[0] = row.block_bytes;
    nb[1] = nb[0] * static_cast<std::uint64_t>(ne[0] / row.block_elems);
    nb[2] = nb[1] * static_cast<std::uint64_t>(ne[1]);
    nb[3] = nb[2] * static_cast<std::uint64_t>(ne[2]);
    std::uint64_t nbytes = static_cast<std::uint64_t>(ne[0]) * nb[0] / row.block_elems;
    for (std::size_t i = 1; i < 4; ++i) nbytes += static_cast<std::uint64_t>(ne[i] - 1) * nb[i];
    std::uint64_t n = 1;
    for (std::int64_t d : ne) n *= static_cast<std::uint64_t>(d);

    gguf_bytes g;
    g.header(3, 1, 0).str("t").u32(n_dims);
    for (std::uint32_t d = 0; d < n_dims; ++d) g.i64(ne[d]);
    g.u32(id(type)).u64(0).pad(32).zeros(static_cast<std::size_t>(nbytes));
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    const tensor_info& t = r->tensors()[0];
    EXPECT_EQ(t.type, type);
    EXPECT_EQ(t.nb, nb);
    EXPECT_EQ(t.n_bytes, nbytes);
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(ggml_strides(*traits(type), t.ne), nb);
    EXPECT_EQ(r->tensor_data(t).size(), nbytes);
    auto facts = check_shape(id(type), std::span(ne.data(), n_dims));
    ASSERT_TRUE(facts);
    EXPECT_EQ(facts->nb, nb);
    EXPECT_EQ(facts->n_bytes, nbytes);
}

TEST(Strides, MatchGgmlForSeveralTypesAndShapes) {
    expect_ggml_geometry(tensor_type::f32, {7, 3, 2, 5}, 4);
    expect_ggml_geometry(tensor_type::f32, {1, 1, 1, 1}, 0);
    expect_ggml_geometry(tensor_type::f16, {896, 2, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::bf16, {3, 1, 1, 9}, 4);
    expect_ggml_geometry(tensor_type::q4_0, {896, 3, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::q4_0, {64, 3, 2, 1}, 3);
    expect_ggml_geometry(tensor_type::q8_0, {32, 1, 1, 1}, 1);
    expect_ggml_geometry(tensor_type::q4_k, {512, 2, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::q6_k, {256, 3, 2, 2}, 4);
    expect_ggml_geometry(tensor_type::q8_k, {256, 1, 1, 1}, 1);
    expect_ggml_geometry(tensor_type::iq2_xxs, {768, 2, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::mxfp4, {64, 5, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::nvfp4, {128, 2, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::q1_0, {128, 3, 1, 1}, 2);
    expect_ggml_geometry(tensor_type::q2_0, {192, 1, 1, 1}, 1);
    expect_ggml_geometry(tensor_type::i64, {5, 4, 3, 2}, 4);
    expect_ggml_geometry(tensor_type::f32, {16, 0, 3, 1}, 3);  // an empty tensor
}

TEST(Strides, CheckShapeRejectsWhatTheParserRejects) {
    const std::int64_t neg[] = {4, -1};
    EXPECT_TRUE(error_is(error_of(check_shape(0, neg)),
                         {.code = errc::bad_dim, .where = section::tensor_info, .expected = 1,
                          .found = static_cast<std::uint64_t>(-1)}));
    const std::int64_t five[] = {1, 1, 1, 1, 1};
    EXPECT_TRUE(error_is(error_of(check_shape(0, five)),
                         {.code = errc::bad_n_dims, .where = section::tensor_info, .expected = 4, .found = 5}));
    const std::int64_t row[] = {33};
    EXPECT_EQ(error_of(check_shape(id(tensor_type::q4_0), row)).code, errc::not_block_multiple);
    EXPECT_EQ(error_of(check_shape(4, row)).code, errc::removed_tensor_type);
    EXPECT_EQ(error_of(check_shape(43, row)).code, errc::bad_tensor_type);
}

}  // namespace
