// Writer round trips: what the writer writes, the loader reads back byte for byte; and what the
// loader would refuse, the writer refuses first.
#include <gtest/gtest.h>

#include <cerrno>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

// The writer's temporaries are "<name>.tmp.<pid>.<serial>": none may be left behind.
bool temp_left(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
    return false;
}

constexpr std::uint64_t vt(value_type t) { return static_cast<std::uint64_t>(t); }

TEST(WriterRoundTrip, EveryScalarType) {
    writer w;
    w.set_u8("u8", 250)
        .set_i8("i8", -7)
        .set_u16("u16", 65535)
        .set_i16("i16", -32768)
        .set_u32("u32", 0xFFFFFFFFu)
        .set_i32("i32", std::numeric_limits<std::int32_t>::min())
        .set_f32("f32", -1.25f)
        .set_bool("bool.t", true)
        .set_bool("bool.f", false)
        .set_string("string", "multi\nline \xE2\x96\x81 text")
        .set_string("empty", "")
        .set_u64("u64", ~0ull)
        .set_i64("i64", std::numeric_limits<std::int64_t>::min())
        .set_f64("f64", 1e300);
    EXPECT_EQ(w.kv_count(), 14u);
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->metadata().size(), 14u);
    const char* order[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool.t", "bool.f", "string", "empty",
                           "u64", "i64", "f64"};
    for (std::size_t i = 0; i < 14; ++i) EXPECT_EQ(r->metadata()[i].key, order[i]);
    EXPECT_EQ(r->get<std::uint8_t>("u8").value_or(0), 250);
    EXPECT_EQ(r->get<std::int8_t>("i8").value_or(0), -7);
    EXPECT_EQ(r->get<std::uint16_t>("u16").value_or(0), 65535);
    EXPECT_EQ(r->get<std::int16_t>("i16").value_or(0), -32768);
    EXPECT_EQ(r->get<std::uint32_t>("u32").value_or(0), 0xFFFFFFFFu);
    EXPECT_EQ(r->get<std::int32_t>("i32").value_or(0), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(r->get<float>("f32").value_or(0.f), -1.25f);
    EXPECT_EQ(r->get<bool>("bool.t").value_or(false), true);
    EXPECT_EQ(r->get<bool>("bool.f").value_or(true), false);
    EXPECT_EQ(r->get<std::string_view>("string").value_or(""), "multi\nline \xE2\x96\x81 text");
    EXPECT_EQ(r->get<std::string_view>("empty").value_or("x"), "");
    EXPECT_EQ(r->get<std::uint64_t>("u64").value_or(0), ~0ull);
    EXPECT_EQ(r->get<std::int64_t>("i64").value_or(0), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(r->get<double>("f64").value_or(0.0), 1e300);
    // the stored type tags are the ones set
    EXPECT_EQ(r->find("bool.t")->type, value_type::boolean);
    EXPECT_EQ(r->find("u64")->type, value_type::u64);
    EXPECT_EQ(r->version(), 3u);
    EXPECT_EQ(r->data_offset(), b.size());  // no tensors, no padding
}

template <class T>
void roundtrip_array(value_type t, std::vector<T> values) {
    SCOPED_TRACE(std::string(to_string(t)));
    writer w;
    w.set_array("arr", t, std::span<const T>(values));
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("arr");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->element_type(), t);
    ASSERT_EQ(a->size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        auto v = a->template at<T>(i);
        ASSERT_TRUE(v);
        EXPECT_EQ(std::memcmp(&*v, &values[i], sizeof(T)), 0) << i;
    }
}

TEST(WriterRoundTrip, EveryArrayType) {
    roundtrip_array<std::uint8_t>(value_type::u8, {1, 2, 255});
    roundtrip_array<std::int8_t>(value_type::i8, {-1, 0, 127});
    roundtrip_array<std::uint16_t>(value_type::u16, {1, 65535});
    roundtrip_array<std::int16_t>(value_type::i16, {-5, 5});
    roundtrip_array<std::uint32_t>(value_type::u32, {7, 8, 9, 10});
    roundtrip_array<std::int32_t>(value_type::i32, {-1, -2});
    roundtrip_array<float>(value_type::f32, {0.5f, -0.f, std::numeric_limits<float>::infinity()});
    roundtrip_array<std::uint64_t>(value_type::u64, {~0ull});
    roundtrip_array<std::int64_t>(value_type::i64, {-9, 9});
    roundtrip_array<double>(value_type::f64, {2.5, -1e-300});
    roundtrip_array<std::uint32_t>(value_type::u32, {});
    // bool arrays read back as bool
    writer w;
    const std::uint8_t flags[] = {0, 1};
    w.set_array("b", value_type::boolean, std::span<const std::uint8_t>(flags));
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r);
    auto a = r->get<array_view>("b");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->at<bool>(1).value_or(false), true);
}

TEST(WriterRoundTrip, StringArrays) {
    const std::string owned[] = {"<unk>", "", "▁the", std::string("nul\0inside", 10)};
    const std::string_view views[] = {"a", "bb", "ccc"};
    writer w;
    w.set_strings("tokens", std::span<const std::string>(owned));
    w.set_strings("merges", std::span<const std::string_view>(views));
    w.set_strings("none", std::span<const std::string_view>());
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r) << r.error().message();
    auto t = r->get<array_view>("tokens");
    ASSERT_TRUE(t);
    auto table = t->string_table();
    ASSERT_TRUE(table);
    ASSERT_EQ(table->size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ((*table)[i], owned[i]);
    auto m = r->get<array_view>("merges");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->string_at(2).value_or(""), "ccc");
    auto n = r->get<array_view>("none");
    ASSERT_TRUE(n);
    EXPECT_EQ(n->element_type(), value_type::string);
    EXPECT_TRUE(n->empty());
}

TEST(WriterRoundTrip, SettingAKeyAgainReplacesInPlace) {
    writer w;
    w.set_u32("a", 1).set_string("b", "x").set_u32("c", 3);
    w.set_string("a", "now a string");
    w.erase("b").erase("not-there");
    EXPECT_EQ(w.kv_count(), 2u);
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->metadata().size(), 2u);
    EXPECT_EQ(r->metadata()[0].key, "a");
    EXPECT_EQ(r->metadata()[0].type, value_type::string);
    EXPECT_EQ(r->metadata()[1].key, "c");
}

// Every type ggml still accepts, with random bytes of exactly the right size.
TEST(WriterRoundTrip, EveryTensorType) {
    writer w;
    struct expect {
        std::string name;
        tensor_type type;
        std::array<std::int64_t, 4> ne;
        bytes data;
    };
    std::vector<expect> want;
    for (std::uint32_t id = 0; id < tensor_type_count; ++id) {
        const type_traits* tt = traits(id);
        if (tt->removed()) continue;
        const std::int64_t ne[] = {2 * static_cast<std::int64_t>(tt->block_elems), 3};
        const std::size_t size = 2u * tt->block_bytes * 3u;
        expect e{"t." + std::string(tt->name), static_cast<tensor_type>(id), {ne[0], 3, 1, 1},
                 random_bytes(size, id)};
        w.add_tensor(e.name, e.type, ne, e.data);
        want.push_back(std::move(e));
    }
    EXPECT_EQ(want.size(), 35u);
    EXPECT_EQ(w.tensor_count(), 35u);
    const bytes b = to_bytes(w);
    auto r = file_view::parse(b);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->tensors().size(), want.size());
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const tensor_info& t = r->tensors()[i];
        SCOPED_TRACE(want[i].name);
        EXPECT_EQ(t.name, want[i].name);
        EXPECT_EQ(t.type, want[i].type);
        EXPECT_EQ(t.n_dims, 2u);
        EXPECT_EQ(t.ne, want[i].ne);
        EXPECT_EQ(t.offset, offset);
        EXPECT_EQ(t.n_bytes, want[i].data.size());
        const auto d = r->tensor_data(t);
        EXPECT_TRUE(std::equal(d.begin(), d.end(), want[i].data.begin(), want[i].data.end()));
        offset += (t.n_bytes + 31) / 32 * 32;
    }
    EXPECT_EQ(r->data_size(), offset);
    EXPECT_EQ(r->data_offset() + r->data_size(), b.size());  // the writer pads the last tensor too
}

TEST(WriterRoundTrip, AlignmentIsHonoured) {
    for (std::uint32_t a : {1u, 32u, 64u, 4096u}) {
        SCOPED_TRACE(a);
        writer w;
        w.set_u32("general.alignment", a).set_string("general.name", "aligned");
        const std::int64_t n1[] = {3}, n2[] = {5, 7}, n3[] = {32};
        const bytes d1 = random_bytes(12, 1), d2 = random_bytes(35, 2), d3 = random_bytes(34, 3);
        w.add_tensor("a", tensor_type::f32, n1, d1).add_tensor("b", tensor_type::i8, n2, d2).add_tensor(
            "c", tensor_type::q8_0, n3, d3);
        const bytes b = to_bytes(w);
        auto r = file_view::parse(b);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->alignment(), a);
        EXPECT_EQ(r->data_offset() % a, 0u);
        for (const tensor_info& t : r->tensors()) EXPECT_EQ(t.offset % a, 0u) << t.name;
        auto pad = [a](std::uint64_t x) { return (x + a - 1) / a * a; };
        EXPECT_EQ(r->tensors()[1].offset, pad(12));
        EXPECT_EQ(r->tensors()[2].offset, pad(12) + pad(35));
        EXPECT_EQ(b.size(), r->data_offset() + pad(12) + pad(35) + pad(34));
        const auto c = r->tensor_data(r->tensors()[2]);
        EXPECT_TRUE(std::equal(c.begin(), c.end(), d3.begin(), d3.end()));
        // the padding bytes are zeros
        for (std::size_t i = static_cast<std::size_t>(r->data_offset() + 12);
             i < static_cast<std::size_t>(r->data_offset() + r->tensors()[1].offset); ++i)
            ASSERT_EQ(b[i], std::byte{0});
    }
}

TEST(WriterRoundTrip, WriteEqualsToBytesAndLeavesNoTemp) {
    temp_dir dir;
    writer w;
    w.set_string("general.architecture", "llama");
    const std::int64_t ne[] = {64};
    w.add_tensor("w", tensor_type::q4_0, ne, random_bytes(36, 7));
    w.add_zero_tensor("z", tensor_type::f32, ne);
    const fs::path p = dir / "m.gguf";
    auto r = w.write(p);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(temp_left(dir.path()));
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
    EXPECT_EQ(entries, 1u);
    EXPECT_EQ(read_file(p), to_bytes(w));
    // and the file opens as a model whose zero tensor is zeros
    auto m = model::open(p);
    ASSERT_TRUE(m) << m.error().message();
    for (std::byte x : m->tensor_data(*m->find_tensor("z"))) ASSERT_EQ(x, std::byte{0});
}

TEST(WriterRoundTrip, WriteReplacesAtomically) {
    // write() renames a complete temp file into place: a reader holding the old file keeps seeing
    // the old bytes (the old inode), never a half-written mix.
    temp_dir dir;
    const fs::path p = dir / "m.gguf";
    writer old_w;
    old_w.set_string("version", "old");
    ASSERT_TRUE(old_w.write(p));
    auto old_model = model::open(p);
    ASSERT_TRUE(old_model);
    struct stat before {};
    ASSERT_EQ(::stat(p.c_str(), &before), 0);

    writer new_w;
    new_w.set_string("version", "new").set_u32("extra", 1);
    ASSERT_TRUE(new_w.write(p));
    struct stat after {};
    ASSERT_EQ(::stat(p.c_str(), &after), 0);
    EXPECT_NE(before.st_ino, after.st_ino);  // a new file took the name
    EXPECT_EQ(old_model->get<std::string_view>("version").value_or(""), "old");
    auto new_model = model::open(p);
    ASSERT_TRUE(new_model);
    EXPECT_EQ(new_model->get<std::string_view>("version").value_or(""), "new");
    EXPECT_FALSE(temp_left(dir.path()));
}

TEST(WriterRoundTrip, WriteToAMissingDirectory) {
    temp_dir dir;
    writer w;
    const fs::path p = dir / "no" / "such" / "m.gguf";
    const error e = error_of(w.write(p));
    EXPECT_TRUE(error_is(e, {.code = errc::io_error, .where = section::file}));
    EXPECT_EQ(e.sys_errno, ENOENT);
    EXPECT_EQ(e.file, (dir / "no" / "such").string()) << e.file;  // the directory that could not be opened
    EXPECT_FALSE(e.detail.empty());
}

TEST(WriterRoundTrip, ZeroTensorsAreSparse) {
    temp_dir dir;
    writer w;
    const std::int64_t ne[] = {16 << 20};  // 64 MiB of f32 zeros
    w.set_u32("general.alignment", 4096);
    w.add_zero_tensor("zeros", tensor_type::f32, ne);
    const fs::path p = dir / "sparse.gguf";
    ASSERT_TRUE(w.write(p));
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), 4096u + (64u << 20));
    // far fewer blocks than the size (st_blocks counts 512-byte units); a filesystem without holes
    // would still pass the size check above
    if (st.st_blocks * 512 < st.st_size) {
        EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512u, 1u << 20);
    }
    auto m = model::open(p);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->tensor_data(m->tensors()[0]).size(), 64u << 20);
}

TEST(WriterRoundTrip, ParsedFileRewritesToTheSameBytes) {
    // read a file, feed every KV and tensor back into a new writer: the bytes are identical
    writer w;
    const std::uint32_t u[] = {1, 2};
    const std::string_view s[] = {"x", "yz"};
    w.set_string("general.architecture", "llama").set_array("u", value_type::u32, std::span<const std::uint32_t>(u));
    w.set_strings("s", std::span<const std::string_view>(s)).set_f64("f", 0.25).set_u32("general.alignment", 64);
    const std::int64_t ne[] = {32, 2};
    w.add_tensor("a", tensor_type::q8_0, ne, random_bytes(68, 1)).add_tensor("b", tensor_type::f16, ne,
                                                                             random_bytes(128, 2));
    const bytes original = to_bytes(w);
    auto r = file_view::parse(original);
    ASSERT_TRUE(r);
    writer copy;
    for (const kv& e : r->metadata()) {
        switch (e.type) {
            case value_type::string: copy.set_string(e.key, *e.get<std::string_view>()); break;
            case value_type::u32: copy.set_u32(e.key, *e.get<std::uint32_t>()); break;
            case value_type::f64: copy.set_f64(e.key, *e.get<double>()); break;
            case value_type::array: {
                auto a = e.get<array_view>();
                if (a->element_type() == value_type::string) {
                    auto t = a->string_table();
                    copy.set_strings(e.key, std::span<const std::string_view>(*t));
                } else {
                    copy.set_array(e.key, a->element_type(), a->raw());
                }
                break;
            }
            default: FAIL() << "unexpected type";
        }
    }
    for (const tensor_info& t : r->tensors())
        copy.add_tensor(t.name, t.type, std::span<const std::int64_t>(t.ne.data(), t.n_dims), r->tensor_data(t));
    EXPECT_EQ(to_bytes(copy), original);
}

// ---- what the writer refuses ---------------------------------------------------------------

TEST(WriterRefuses, BadTensorNames) {
    const std::int64_t ne[] = {4};
    const bytes d(16);
    {
        writer w;
        w.add_tensor("", tensor_type::f32, ne, d);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::bad_name_length, .where = section::tensor_info,
                                                      .expected = 63, .found = 0, .index = 0}));
    }
    {
        writer w;
        w.add_tensor(std::string(63, 'a'), tensor_type::f32, ne, d);
        EXPECT_TRUE(w.to_bytes());
        w.add_tensor(std::string(64, 'b'), tensor_type::f32, ne, d);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::bad_name_length, .where = section::tensor_info,
                                                      .expected = 63, .found = 64, .subject = std::string(64, 'b'),
                                                      .index = 1}));
    }
    {
        writer w;
        w.add_tensor("dup", tensor_type::f32, ne, d).add_tensor("x", tensor_type::f32, ne, d).add_tensor(
            "dup", tensor_type::f32, ne, d);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::duplicate_tensor, .where = section::tensor_info,
                                                      .found = 2, .subject = "dup", .index = 2}));
    }
}

TEST(WriterRefuses, BadShapesTypesAndSizes) {
    const bytes d(64);
    struct c {
        const char* what;
        tensor_type type;
        std::vector<std::int64_t> ne;
        std::size_t bytes;
        errc code;
    };
    const c cases[] = {
        {"negative dim", tensor_type::f32, {4, -1}, 16, errc::bad_dim},
        {"five dims", tensor_type::f32, {1, 1, 1, 1, 1}, 4, errc::bad_n_dims},
        {"row not a block multiple", tensor_type::q4_0, {48}, 18, errc::not_block_multiple},
        {"removed type", tensor_type::q4_0_4_4, {32}, 18, errc::removed_tensor_type},
        {"unknown type", static_cast<tensor_type>(43), {32}, 18, errc::bad_tensor_type},
        {"element overflow", tensor_type::f32, {1ll << 32, 1ll << 32}, 0, errc::shape_overflow},
        {"byte overflow", tensor_type::f32, {1ll << 62}, 0, errc::size_overflow},
        {"too few bytes", tensor_type::f32, {17}, 64, errc::data_truncated},
        {"too many bytes", tensor_type::f32, {15}, 64, errc::data_truncated},
    };
    for (const c& x : cases) {
        SCOPED_TRACE(x.what);
        writer w;
        w.add_tensor("t", x.type, x.ne, std::span<const std::byte>(d.data(), x.bytes));
        const error e = error_of(w.to_bytes());
        EXPECT_EQ(e.code, x.code) << describe(e);
        EXPECT_EQ(e.subject, "t");
        EXPECT_EQ(e.index, 0);
        // write() refuses the same way and leaves nothing behind
        temp_dir dir;
        EXPECT_EQ(error_of(w.write(dir / "t.gguf")).code, x.code);
        EXPECT_FALSE(fs::exists(dir / "t.gguf"));
        EXPECT_FALSE(temp_left(dir.path()));
    }
    writer w;
    const std::int64_t ne[] = {17};
    w.add_tensor("t", tensor_type::f32, ne, d);
    EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::data_truncated, .where = section::data,
                                                  .expected = 68, .found = 64, .subject = "t"}));
}

TEST(WriterRefuses, BadAlignment) {
    {
        writer w;
        w.set_u32("general.alignment", 48);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::bad_alignment, .where = section::metadata,
                                                      .found = 48, .subject = "general.alignment"}));
    }
    {
        writer w;
        w.set_u32("general.alignment", 0);
        EXPECT_EQ(error_of(w.to_bytes()).code, errc::bad_alignment);
    }
    {
        writer w;
        w.set_u64("general.alignment", 32);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()), {.code = errc::alignment_wrong_type, .where = section::metadata,
                                                      .expected = vt(value_type::u32), .found = vt(value_type::u64)}));
        temp_dir dir;
        EXPECT_EQ(error_of(w.write(dir / "a.gguf")).code, errc::alignment_wrong_type);
        EXPECT_FALSE(temp_left(dir.path()));
    }
}

TEST(WriterRefuses, MetadataTheLoaderWouldRefuse) {
    {
        writer w;
        w.set_u32("ok", 1).set_u32("", 2);
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::empty_key, .where = section::metadata, .index = 1}));
    }
    {
        writer w;
        w.set_array("nest", value_type::array, std::span<const std::byte>());
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::nested_array, .where = section::metadata, .subject = "nest"}));
    }
    {
        writer w;
        w.set_array("bad", static_cast<value_type>(99), std::span<const std::byte>());
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::bad_value_type, .where = section::metadata, .found = 99,
                              .subject = "bad"}));
    }
}

// set_array used to store a string-typed array as an empty one and to reinterpret elements of
// another C++ type (int32 bytes as u32, float bits as i32) without a word.
TEST(WriterRefuses, ArraysWhoseElementsAreNotTheirTag) {
    const std::vector<std::int32_t> ints{1, -2, 3};
    const std::vector<float> floats{1.5f};
    const std::vector<std::byte> five(5);
    {
        writer w;
        w.set_array("s", value_type::string, std::span<const std::byte>());
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::bad_value_type, .where = section::metadata, .found = 8, .subject = "s"}));
    }
    {
        writer w;
        w.set_array("u", value_type::u32, std::span<const std::int32_t>(ints));
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::type_mismatch, .where = section::metadata, .expected = 4, .found = 5,
                              .subject = "u"}));
    }
    {
        writer w;
        w.set_array("i", value_type::i32, std::span<const float>(floats));
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::type_mismatch, .where = section::metadata, .expected = 5, .found = 6,
                              .subject = "i"}));
    }
    {
        writer w;
        w.set_array("p", value_type::u32, std::span<const std::byte>(five));
        EXPECT_TRUE(error_is(error_of(w.to_bytes()),
                             {.code = errc::buffer_size_mismatch, .where = section::metadata, .expected = 4,
                              .found = 5, .subject = "p"}));
    }
    {
        // The matching types still write, and 0/1 bytes fill a boolean array.
        writer w;
        const std::vector<std::uint8_t> flags{0, 1};
        w.set_array("i", value_type::i32, std::span<const std::int32_t>(ints))
            .set_array("b", value_type::boolean, std::span<const std::uint8_t>(flags));
        EXPECT_TRUE(w.to_bytes().has_value());
    }
}

}  // namespace

TEST(WriterKeys, SetAgainReplacesInPlaceAndEraseKeepsOrder) {
    writer w;
    w.set_u32("a", 1).set_u32("b", 2).set_u32("c", 3);
    w.erase("b").erase("no.such.key");
    w.set_u32("d", 4).set_u32("a", 10).set_u32("c", 30);
    EXPECT_EQ(w.kv_count(), 3u);
    const auto bytes = w.to_bytes();
    ASSERT_TRUE(bytes) << bytes.error().message();
    auto v = file_view::parse(*bytes);
    ASSERT_TRUE(v) << v.error().message();
    ASSERT_EQ(v->metadata().size(), 3u);
    EXPECT_EQ(v->metadata()[0].key, "a");
    EXPECT_EQ(v->metadata()[1].key, "c");
    EXPECT_EQ(v->metadata()[2].key, "d");
    EXPECT_EQ(v->get<std::uint32_t>("a").value_or(0), 10u);
    EXPECT_EQ(v->get<std::uint32_t>("c").value_or(0), 30u);
    EXPECT_EQ(v->get<std::uint32_t>("d").value_or(0), 4u);
}
