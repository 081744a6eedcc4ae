// Cross-checks against llama.cpp's own ggml/gguf library, loaded with dlopen from $MINFER_LLAMA_LIB
// (scripts/llama-ref.sh installs it and prints the path). Every test skips when it is not available.
// The library may predate the newest type ids: only ids it knows are compared.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

struct gguf_init_params {
    bool no_alloc;
    void** ctx;
};

struct ggml_lib {
    void* handle = nullptr;
    const char* (*type_name)(int) = nullptr;
    std::int64_t (*blck_size)(int) = nullptr;
    std::size_t (*type_size)(int) = nullptr;
    void* (*init_from_file)(const char*, gguf_init_params) = nullptr;
    void (*free_ctx)(void*) = nullptr;
    std::int64_t (*n_kv)(const void*) = nullptr;
    std::int64_t (*n_tensors)(const void*) = nullptr;
    std::size_t (*alignment)(const void*) = nullptr;
    std::size_t (*data_offset)(const void*) = nullptr;
    const char* (*key)(const void*, std::int64_t) = nullptr;
    int (*kv_type)(const void*, std::int64_t) = nullptr;
    int (*arr_type)(const void*, std::int64_t) = nullptr;
    std::size_t (*arr_n)(const void*, std::int64_t) = nullptr;
    const char* (*tensor_name)(const void*, std::int64_t) = nullptr;
    std::size_t (*tensor_offset)(const void*, std::int64_t) = nullptr;
    std::size_t (*tensor_size)(const void*, std::int64_t) = nullptr;
    int (*tensor_type_of)(const void*, std::int64_t) = nullptr;
    void (*log_set)(void (*)(int, const char*, void*), void*) = nullptr;
};

template <class F>
bool bind(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(h, name));
    return f != nullptr;
}

const ggml_lib* lib() {
    static const ggml_lib* loaded = [] () -> const ggml_lib* {
        const char* path = std::getenv("MINFER_LLAMA_LIB");
#ifdef MINFER_LLAMA_LIB_DEFAULT
        if (path == nullptr || *path == '\0') path = MINFER_LLAMA_LIB_DEFAULT;
#endif
        if (path == nullptr || *path == '\0') return nullptr;
        auto* l = new ggml_lib;
        l->handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (l->handle == nullptr) {
            ADD_FAILURE() << "MINFER_LLAMA_LIB=" << path << " cannot be loaded: " << ::dlerror();
            return nullptr;
        }
        void* h = l->handle;
        const bool ok = bind(h, l->type_name, "ggml_type_name") && bind(h, l->blck_size, "ggml_blck_size") &&
                        bind(h, l->type_size, "ggml_type_size") && bind(h, l->init_from_file, "gguf_init_from_file") &&
                        bind(h, l->free_ctx, "gguf_free") && bind(h, l->n_kv, "gguf_get_n_kv") &&
                        bind(h, l->n_tensors, "gguf_get_n_tensors") && bind(h, l->alignment, "gguf_get_alignment") &&
                        bind(h, l->data_offset, "gguf_get_data_offset") && bind(h, l->key, "gguf_get_key") &&
                        bind(h, l->kv_type, "gguf_get_kv_type") && bind(h, l->arr_type, "gguf_get_arr_type") &&
                        bind(h, l->arr_n, "gguf_get_arr_n") && bind(h, l->tensor_name, "gguf_get_tensor_name") &&
                        bind(h, l->tensor_offset, "gguf_get_tensor_offset") &&
                        bind(h, l->tensor_size, "gguf_get_tensor_size") &&
                        bind(h, l->tensor_type_of, "gguf_get_tensor_type");
        if (!ok) {
            ADD_FAILURE() << path << " lacks a ggml/gguf symbol this test needs";
            return nullptr;
        }
        if (bind(h, l->log_set, "ggml_log_set") && std::getenv("MINFER_REFERENCE_VERBOSE") == nullptr)
            l->log_set([](int, const char*, void*) {}, nullptr);  // llama.cpp logs every refusal
        return l;
    }();
    return loaded;
}

// A gguf_context of llama.cpp's metadata-only parse, freed on scope exit.
struct ctx_guard {
    void* ctx;
    ~ctx_guard() {
        if (ctx != nullptr) lib()->free_ctx(ctx);
    }
};
ctx_guard llama_open(const fs::path& p) { return {lib()->init_from_file(p.c_str(), {true, nullptr})}; }

class Reference : public ::testing::Test {
protected:
    void SetUp() override {
        if (lib() == nullptr) GTEST_SKIP() << "set MINFER_LLAMA_LIB (scripts/llama-ref.sh prints it)";
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
        if (lib()->blck_size(i) == 0) {
            EXPECT_TRUE(t->removed()) << "ggml calls it " << lib()->type_name(i);
            continue;
        }
        EXPECT_FALSE(t->removed());
        EXPECT_EQ(static_cast<std::int64_t>(t->block_elems), lib()->blck_size(i));
        EXPECT_EQ(static_cast<std::size_t>(t->block_bytes), lib()->type_size(i));
        // the same spelling as ggml, "q4_K" included
        EXPECT_EQ(std::string(t->name), lib()->type_name(i));
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
        EXPECT_EQ(lib()->alignment(c.ctx), v.alignment());
        EXPECT_EQ(lib()->data_offset(c.ctx), v.data_offset());
        ASSERT_EQ(lib()->n_kv(c.ctx), static_cast<std::int64_t>(v.metadata().size()));
        for (std::int64_t k = 0; k < lib()->n_kv(c.ctx); ++k) {
            const kv& e = v.metadata()[static_cast<std::size_t>(k)];
            EXPECT_EQ(lib()->key(c.ctx, k), e.key);
            EXPECT_EQ(lib()->kv_type(c.ctx, k), static_cast<int>(e.type)) << e.key;
            if (e.is_array()) {
                EXPECT_EQ(lib()->arr_type(c.ctx, k), static_cast<int>(e.element_type));
                EXPECT_EQ(lib()->arr_n(c.ctx, k), e.count);
            }
        }
        ASSERT_EQ(lib()->n_tensors(c.ctx), static_cast<std::int64_t>(v.tensors().size()));
        for (std::int64_t k = 0; k < lib()->n_tensors(c.ctx); ++k) {
            const tensor_info& t = v.tensors()[static_cast<std::size_t>(k)];
            SCOPED_TRACE(std::string(t.name));
            EXPECT_EQ(lib()->tensor_name(c.ctx, k), t.name);
            EXPECT_EQ(lib()->tensor_type_of(c.ctx, k), static_cast<int>(t.type));
            EXPECT_EQ(lib()->tensor_offset(c.ctx, k), t.offset);
            EXPECT_EQ(lib()->tensor_size(c.ctx, k), t.n_bytes);  // ggml_nbytes
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
        RecordProperty("llama_cpp_nbytes", std::to_string(lib()->tensor_size(c.ctx, 0)));
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
            EXPECT_EQ(lib()->data_offset(c.ctx), ours->data_offset());
        }
    }
}

}  // namespace
