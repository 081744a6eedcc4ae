// Cross-checks against llama.cpp's own ggml/gguf library, loaded by the shared binding
// (tests/support/llama_ref) from $MINFER_LLAMA_LIB (scripts/llama-ref.sh installs it and prints the
// path). Every test skips when no library is named, and fails when one is named but unusable.
// The library may predate the newest type ids: only ids it knows are compared.
#include <gtest/gtest.h>

#include "gguf_bytes.hpp"
#include "llama_ref/llama_ref.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

using minfer::llama_ref::gguf_context;
using minfer::llama_ref::llama_lib;
namespace part = minfer::llama_ref::part;

// What these tests use: the reader and ggml's type functions.
constexpr unsigned needed = part::gguf_read | part::ggml_types;

// The library's C API; only called once SetUp found every part of `needed`.
const minfer::llama_ref::llama_api& api() { return llama_lib::get()->api(); }

// A gguf_context of llama.cpp's metadata-only parse, freed on scope exit.
struct ctx_guard {
    gguf_context* ctx;
    ~ctx_guard() {
        if (ctx != nullptr) api().gguf_free(ctx);
    }
};
ctx_guard llama_open(const fs::path& p) { return {api().gguf_init_from_file(p.c_str(), {true, nullptr})}; }

class Reference : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        if (llama_lib::require(needed, why) != nullptr) return;
        // A library named (by $MINFER_LLAMA_LIB or the cache variable) but unusable is a failure here.
        if (llama_lib::configured()) FAIL() << why;
        MINFER_SKIP_REFERENCE(why);
    }
    temp_dir dir;
};


// The number of type ids the library knows: 1 + the largest id of ours that its gguf parser accepts
// in a file. Ids below it are inside its type table, so its type functions may be called for them.
std::uint32_t known_type_count(const temp_dir& dir) {
    std::uint32_t count = 0;
    for (std::uint32_t id = 0; id < tensor_type_count; ++id) {
        if (traits(id)->removed()) continue;
        gguf_bytes g;
        g.header(3, 1, 0).tensor_info("t", {256}, id, 0).pad(32).zeros(4096);
        const fs::path p = dir / ("type" + std::to_string(id) + ".gguf");
        write_file(p, g.span());
        if (llama_open(p).ctx != nullptr) count = id + 1;
    }
    return count;
}

TEST_F(Reference, TypeTableMatchesGgml) {
    const std::uint32_t known = known_type_count(dir);
    ASSERT_GE(known, 31u) << "the library knows fewer types than bf16 (30)";
    RecordProperty("ggml_type_count", static_cast<int>(known));
    for (std::uint32_t id = 0; id < known; ++id) {
        const type_traits* t = traits(id);
        const int i = static_cast<int>(id);
        SCOPED_TRACE(std::to_string(id) + " " + std::string(t->name));
        if (api().ggml_blck_size(i) == 0) {
            EXPECT_TRUE(t->removed()) << "ggml calls it " << api().ggml_type_name(i);
            continue;
        }
        EXPECT_FALSE(t->removed());
        EXPECT_EQ(static_cast<std::int64_t>(t->block_elems), api().ggml_blck_size(i));
        EXPECT_EQ(static_cast<std::size_t>(t->block_bytes), api().ggml_type_size(i));
        // the same spelling as ggml, "q4_K" included
        EXPECT_EQ(std::string(t->name), api().ggml_type_name(i));
    }
}

// The binding's own facts (tests/support/llama_ref): what it learns lazily and what it reads
// through the struct layouts it declares agree with ggml's type functions and with the files.
TEST_F(Reference, BindingAgreesWithGgml) {
    const llama_lib* lib = llama_lib::get();
    const std::uint32_t known = known_type_count(dir);
    ASSERT_GE(lib->type_count(), known) << "GGML_TYPE_COUNT learned from the reader's log";
    EXPECT_TRUE(lib->has(part::type_count));
    for (std::uint32_t id = 0; id < lib->type_count(); ++id)
        EXPECT_EQ(lib->knows_type(id), api().ggml_blck_size(static_cast<int>(id)) > 0) << id;
    EXPECT_FALSE(lib->knows_type(lib->type_count()));
    EXPECT_EQ(lib->missing(part::gguf_read | part::ggml_types), "");
    if (lib->has(part::type_traits)) {
        ASSERT_NE(lib->type_traits(2), nullptr) << "struct ggml_type_traits does not have the declared layout";
        EXPECT_EQ(lib->type_traits(lib->type_count()), nullptr);
        for (std::uint32_t id = 0; id < lib->type_count(); ++id) {
            const minfer::llama_ref::ggml_type_traits* t = lib->type_traits(id);
            ASSERT_NE(t, nullptr) << id;
            const int i = static_cast<int>(id);
            EXPECT_EQ(t->blck_size, api().ggml_blck_size(i)) << id;
            EXPECT_EQ(t->type_size, api().ggml_type_size(i)) << id;
            EXPECT_STREQ(t->type_name, api().ggml_type_name(i)) << id;
        }
    } else {
        RecordProperty("ggml_get_type_traits", "absent");
    }
    if (lib->has(part::quantize_chunk | part::quant_ref)) {
        // Two rows of 64 into q8_0 (type 8): ggml_quantize_chunk gives the reference quantizer's bytes.
        std::vector<float> x(128);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.37f - 3.0f;
        std::vector<unsigned char> chunk(2 * 2 * 34, 0xa5), rows(chunk.size(), 0x5a);
        EXPECT_EQ(api().ggml_quantize_chunk(8, x.data(), chunk.data(), 0, 2, 64, nullptr), chunk.size());
        api().quantize_row_q8_0_ref(x.data(), rows.data(), 128);
        EXPECT_EQ(chunk, rows);
    } else {
        RecordProperty("ggml_quantize_chunk", "absent");
    }
}

TEST_F(Reference, LlamaCppReadsWhatTheWriterWritesTheSameWay) {
    const std::uint32_t known = known_type_count(dir);
    for (std::uint32_t align : {1u, 32u, 64u}) {
        SCOPED_TRACE(align);
        writer w;
        const std::uint16_t u16s[] = {1, 2, 3};
        const std::string_view strs[] = {"a", "", "ccc"};
        w.set_u32("general.alignment", align)
            .set_string("general.architecture", "llama")
            .set_u8("v.u8", 1)
            .set_i8("v.i8", -1)
            .set_u16("v.u16", 2)
            .set_i16("v.i16", -2)
            .set_i32("v.i32", -3)
            .set_f32("v.f32", 0.5f)
            .set_bool("v.bool", true)
            .set_u64("v.u64", 4)
            .set_i64("v.i64", -4)
            .set_f64("v.f64", 0.25)
            .set_array("v.arr", value_type::u16, std::span<const std::uint16_t>(u16s))
            .set_strings("v.strs", std::span<const std::string_view>(strs));
        for (std::uint32_t id = 0; id < known; ++id) {
            const type_traits* t = traits(id);
            if (t->removed()) continue;
            const std::int64_t ne[] = {2 * static_cast<std::int64_t>(t->block_elems), 3, 2};
            w.add_tensor("t." + std::string(t->name), static_cast<tensor_type>(id), ne,
                         random_bytes(12u * t->block_bytes, id));
        }
        const std::int64_t scalar_ne[] = {1};
        w.add_tensor("scalar", tensor_type::f32, std::span<const std::int64_t>(scalar_ne, 0), random_bytes(4, 1));
        const fs::path p = dir / ("all" + std::to_string(align) + ".gguf");
        ASSERT_TRUE(w.write(p));

        auto m = model::open(p);
        ASSERT_TRUE(m) << m.error().message();
        ctx_guard c = llama_open(p);
        ASSERT_NE(c.ctx, nullptr) << "llama.cpp refuses a file our writer made";
        const file_view& v = m->metadata();
        EXPECT_EQ(api().gguf_get_alignment(c.ctx), v.alignment());
        EXPECT_EQ(api().gguf_get_data_offset(c.ctx), v.data_offset());
        ASSERT_EQ(api().gguf_get_n_kv(c.ctx), static_cast<std::int64_t>(v.metadata().size()));
        for (std::int64_t k = 0; k < api().gguf_get_n_kv(c.ctx); ++k) {
            const kv& e = v.metadata()[static_cast<std::size_t>(k)];
            EXPECT_EQ(api().gguf_get_key(c.ctx, k), e.key);
            EXPECT_EQ(api().gguf_get_kv_type(c.ctx, k), static_cast<int>(e.type)) << e.key;
            if (e.is_array()) {
                EXPECT_EQ(api().gguf_get_arr_type(c.ctx, k), static_cast<int>(e.element_type));
                EXPECT_EQ(api().gguf_get_arr_n(c.ctx, k), e.count);
            }
        }
        ASSERT_EQ(api().gguf_get_n_tensors(c.ctx), static_cast<std::int64_t>(v.tensors().size()));
        for (std::int64_t k = 0; k < api().gguf_get_n_tensors(c.ctx); ++k) {
            const tensor_info& t = v.tensors()[static_cast<std::size_t>(k)];
            SCOPED_TRACE(std::string(t.name));
            EXPECT_EQ(api().gguf_get_tensor_name(c.ctx, k), t.name);
            EXPECT_EQ(api().gguf_get_tensor_type(c.ctx, k), static_cast<int>(t.type));
            EXPECT_EQ(api().gguf_get_tensor_offset(c.ctx, k), t.offset);
            EXPECT_EQ(api().gguf_get_tensor_size(c.ctx, k), t.n_bytes);  // ggml_nbytes
        }
    }
}

// Corruptions both parsers must refuse (checks ggml also makes; ggml aborts on some others, e.g. a
// general.alignment of the wrong type, so those are not tried here).
TEST_F(Reference, BothRefuseTheSameCorruptions) {
    struct c {
        const char* what;
        errc ours;
        std::function<void(gguf_bytes&)> build;
    };
    const std::string long_name(64, 'n');
    const c cases[] = {
        {"bad magic", errc::bad_magic, [](gguf_bytes& g) { g.raw("GGUX").u32(3).i64(0).i64(0); }},
        {"v1", errc::version_unsupported, [](gguf_bytes& g) { g.header(1, 0, 0); }},
        {"v4", errc::version_too_new, [](gguf_bytes& g) { g.header(4, 0, 0); }},
        {"byte swapped", errc::byte_swapped, [](gguf_bytes& g) { g.header(0x03000000u, 0, 0); }},
        {"short header", errc::truncated, [](gguf_bytes& g) { g.magic().u32(3).u32(0); }},
        {"huge n_kv", errc::count_too_large, [](gguf_bytes& g) { g.header(3, 0, 1ll << 62); }},
        {"duplicate key", errc::duplicate_key, [](gguf_bytes& g) { g.header(3, 0, 2).kv_u8("k", 1).kv_u8("k", 2); }},
        {"bad value type", errc::bad_value_type, [](gguf_bytes& g) { g.header(3, 0, 1).str("k").u32(13).u32(0); }},
        {"nested array", errc::nested_array,
         [](gguf_bytes& g) { g.header(3, 0, 1).kv_array("k", value_type::array, 1).type(value_type::u8).u64(0); }},
        {"string too long", errc::string_too_long,
         [](gguf_bytes& g) { g.header(3, 0, 1).key("k", value_type::string).str_len(~0ull).zeros(8); }},
        {"string exceeds file", errc::string_exceeds_file,
         [](gguf_bytes& g) { g.header(3, 0, 1).key("k", value_type::string).str_len(100, "abc"); }},
        {"alignment 48", errc::bad_alignment, [](gguf_bytes& g) { g.header(3, 0, 1).kv_u32("general.alignment", 48); }},
        {"alignment 0", errc::bad_alignment, [](gguf_bytes& g) { g.header(3, 0, 1).kv_u32("general.alignment", 0); }},
        {"duplicate tensor", errc::duplicate_tensor,
         [](gguf_bytes& g) {
             g.header(3, 2, 0).tensor_info("a", {8}, tensor_type::f32, 0).tensor_info("a", {8}, tensor_type::f32, 32);
             g.pad(32).zeros(64);
         }},
        {"64-byte name", errc::bad_name_length,
         [&](gguf_bytes& g) { g.header(3, 1, 0).tensor_info(long_name, {8}, tensor_type::f32, 0).pad(32).zeros(32); }},
        {"n_dims 5", errc::bad_n_dims,
         [](gguf_bytes& g) {
             g.header(3, 1, 0).tensor_info("a", {1, 1, 1, 1, 1}, tensor_type::f32, 0).pad(32).zeros(32);
         }},
        {"negative dim", errc::bad_dim,
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {8, -1}, tensor_type::f32, 0).pad(32).zeros(32); }},
        {"type 1000", errc::bad_tensor_type,
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {32}, 1000u, 0).pad(32).zeros(64); }},
        {"removed type 31", errc::removed_tensor_type,
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {32}, 31u, 0).pad(32).zeros(64); }},
        {"not a block multiple", errc::not_block_multiple,
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {895}, tensor_type::q4_0, 0).pad(32).zeros(1024); }},
        {"offset mismatch", errc::offset_mismatch,
         [](gguf_bytes& g) {
             g.header(3, 2, 0).tensor_info("a", {3}, tensor_type::f32, 0).tensor_info("b", {3}, tensor_type::f32, 12);
             g.pad(32).zeros(64);
         }},
        {"data start past the end", errc::data_truncated,
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {3}, tensor_type::f32, 0); }},
    };
    for (const c& x : cases) {
        SCOPED_TRACE(x.what);
        gguf_bytes g;
        x.build(g);
        EXPECT_EQ(parse_error(g).code, x.ours) << describe(parse_error(g));
        const fs::path p = dir / "corrupt.gguf";
        write_file(p, g.span());
        EXPECT_EQ(llama_open(p).ctx, nullptr) << "llama.cpp accepts it";
    }
}

// Where llama.cpp is weaker. Not asserted on its side (a newer build may fix it), only recorded.
TEST_F(Reference, WeRefuseShapesWhoseElementCountOverflows) {
    // ne = (2^32, 2^32): the element count does not fit in int64. The llama.cpp build this was
    // written against accepts the file and reports ggml_nbytes = 0 (the product wrapped).
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("a", {1ll << 32, 1ll << 32}, tensor_type::f32, 0).pad(32);
    EXPECT_EQ(parse_error(g).code, errc::shape_overflow);
    const fs::path p = dir / "overflow.gguf";
    write_file(p, g.span());
    ctx_guard c = llama_open(p);
    RecordProperty("llama_cpp_accepts_element_overflow", c.ctx != nullptr ? "yes" : "no");
    if (c.ctx != nullptr) {
        RecordProperty("llama_cpp_nbytes", std::to_string(api().gguf_get_tensor_size(c.ctx, 0)));
    }
}

TEST_F(Reference, BothAcceptTheSameEdgeCases) {
    struct c {
        const char* what;
        std::function<void(gguf_bytes&)> build;
    };
    const c cases[] = {
        {"header only", [](gguf_bytes& g) { g.header(3, 0, 0); }},
        {"v2", [](gguf_bytes& g) { g.header(2, 0, 1).kv_u32("a", 1); }},
        {"tensor-less, unpadded end", [](gguf_bytes& g) { g.header(3, 0, 1).kv_str("general.name", "odd"); }},
        {"scalar tensor",
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("s", {}, tensor_type::f32, 0).pad(32).zeros(4); }},
        {"empty tensor",
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("e", {0, 4}, tensor_type::f32, 0).pad(32); }},
        {"alignment 1", [](gguf_bytes& g) {
             g.header(3, 2, 1).kv_u32("general.alignment", 1).tensor_info("a", {3}, tensor_type::i8, 0).tensor_info(
                 "b", {1}, tensor_type::i8, 3);
             g.zeros(4);
         }},
        {"no trailing padding",
         [](gguf_bytes& g) { g.header(3, 1, 0).tensor_info("a", {3}, tensor_type::f32, 0).pad(32).zeros(12); }},
        {"63-byte name",
         [](gguf_bytes& g) {
             g.header(3, 1, 0).tensor_info(std::string(63, 'n'), {8}, tensor_type::f32, 0).pad(32).zeros(32);
         }},
    };
    for (const c& x : cases) {
        SCOPED_TRACE(x.what);
        gguf_bytes g;
        x.build(g);
        auto ours = file_view::parse(g.span());
        EXPECT_TRUE(ours) << (ours ? "" : ours.error().message());
        const fs::path p = dir / "edge.gguf";
        write_file(p, g.span());
        ctx_guard c = llama_open(p);
        ASSERT_NE(c.ctx, nullptr) << "llama.cpp refuses it";
        if (ours) {
            EXPECT_EQ(api().gguf_get_data_offset(c.ctx), ours->data_offset());
        }
    }
}

}  // namespace
