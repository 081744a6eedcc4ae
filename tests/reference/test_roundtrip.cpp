// Differential round trip (docs/DIFFERENTIAL.md, part a): random valid content is written by our
// writer and by llama.cpp's, each file is read by our parser and by llama.cpp's, and all four
// readings must equal the content (computed independently in content.cpp) — version, alignment,
// data offset, every KV in order with its type and value (floats bitwise), every tensor's name,
// type, shape, strides, offset, size and bytes. The two writers' bytes are compared too.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <iostream>
#include <sstream>

#include "content.hpp"
#include "harness.hpp"
#include "llama_ref.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "snapshot.hpp"

namespace minfer::reference {
namespace {

namespace gg = minfer::gguf;

// Both readers on one file; "" when both report `want` and the tensor bytes of `c`.
std::string check_file(const llama_lib& lib, const std::filesystem::path& path, const snapshot& want, const content& c) {
    std::ostringstream o;
    auto m = gg::model::open(path);
    if (!m) {
        o << "our parser refuses it: " << m.error().message() << "\n";
    } else {
        const std::string d = diff(want, snapshot_of(m->metadata()), "expected", "ours");
        if (!d.empty()) o << "our parser disagrees with the content:\n" << d;
        const auto ts = m->tensors();
        for (std::size_t i = 0; i < ts.size() && i < c.tensors.size(); ++i) {
            const auto bytes = m->tensor_data(ts[i]);
            if (bytes.size() != c.tensors[i].data.size() ||
                (!bytes.empty() && std::memcmp(bytes.data(), c.tensors[i].data.data(), bytes.size()) != 0))
                o << "our parser: tensor " << i << " '" << show(c.tensors[i].name) << "' has other bytes\n";
        }
    }
    const ref_verdict r = ref_read(lib, path, /*read_data=*/true);
    if (!r.accepted) {
        o << "llama.cpp refuses it:\n" << r.log;
    } else {
        const std::string d = diff(want, r.content, "expected", "llama.cpp");
        if (!d.empty()) o << "llama.cpp disagrees with the content:\n" << d;
        if (!r.notes.empty()) o << "llama.cpp's ggml context disagrees with its gguf context:\n" << r.notes;
        for (std::size_t i = 0; i < r.data.size() && i < c.tensors.size(); ++i)
            if (r.data[i] != c.tensors[i].data)
                o << "llama.cpp: tensor " << i << " '" << show(c.tensors[i].name) << "' has other bytes\n";
    }
    return o.str();
}

TEST(RoundTrip, BothWritersBothReaders) {
    MINFER_REQUIRE_LLAMA(lib);
    scratch_dir dir;
    const std::uint64_t n = run_files(), seed = run_seed();
    generator_options opt;
    opt.p_noncanonical = 0.05;
    std::uint64_t kvs = 0, tensors = 0, identical = 0, padded_only = 0, noncanonical = 0, failed = 0;
    for (std::uint64_t i = 0; i < n && failed < 10; ++i) {
        std::mt19937_64 rng(file_seed(seed, i));
        const content c = generate(rng, *lib, opt);
        kvs += c.kvs.size();
        tensors += c.tensors.size();
        const std::string where = "file " + std::to_string(i) + " of MINFER_DIFF_SEED=" + std::to_string(seed) + ": ";

        const std::vector<std::byte> ours = write_ours(c);
        const auto path_ours = dir / "ours.gguf", path_llama = dir / "llama.gguf";
        std::string why;
        dir.forget("ours.gguf");
        dir.forget("llama.gguf");
        ASSERT_FALSE(ours.empty()) << where << "our writer failed";
        ASSERT_TRUE(write_ours(c, path_ours, why)) << where << why;
        EXPECT_EQ(read_bytes(path_ours), ours) << where << "writer::write and writer::to_bytes differ";
        ASSERT_TRUE(write_llama(*lib, c, path_llama, /*alignment_workaround=*/true, why)) << where << why;
        const std::vector<std::byte> theirs = read_bytes(path_llama);

        const std::string a = check_file(*lib, path_ours, expected_snapshot(c, *lib, false), c);
        const std::string b = check_file(*lib, path_llama, expected_snapshot(c, *lib, true), c);
        if (!a.empty()) ADD_FAILURE() << where << "file of our writer:\n" << a << hex_dump(ours);
        if (!b.empty()) ADD_FAILURE() << where << "file of llama.cpp's writer:\n" << b << hex_dump(theirs);

        // Same content, same bytes — except that llama.cpp pads the end of the tensor table to the
        // alignment even when there are no tensors (we end the file at the table), and that llama.cpp
        // always writes ggml_n_dims dimensions.
        if (!c.canonical_dims) {
            ++noncanonical;
        } else if (c.tensors.empty()) {
            std::vector<std::byte> padded = ours;
            padded.resize((ours.size() + c.alignment - 1) / c.alignment * c.alignment);
            if (theirs == padded) {
                ++padded_only;
            } else {
                ADD_FAILURE() << where << "without tensors llama.cpp's file should be ours padded to " << c.alignment
                              << "\nours:\n" << hex_dump(ours) << "\nllama.cpp:\n" << hex_dump(theirs);
            }
        } else if (theirs == ours) {
            ++identical;
        } else {
            ADD_FAILURE() << where << "the two writers' bytes differ\nours:\n" << hex_dump(ours, 1024) << "\nllama.cpp:\n"
                          << hex_dump(theirs, 1024);
        }
        if (!a.empty() || !b.empty()) ++failed;
    }
    std::cout << "[ round trip ] " << n << " contents (" << kvs << " KVs, " << tensors << " tensors), 4 readings each; "
              << "byte-identical files: " << identical << ", identical but for llama.cpp's trailing padding (no tensors): "
              << padded_only << ", with a trailing-1 dimension (not compared): " << noncanonical << "\n";
}

// A file of llama.cpp's writer whose general.alignment was set through gguf_set_val_u32: the
// context keeps its alignment of 32, so the tensors are laid out for 32 while the file says
// otherwise. Both readers must agree on every such file (whatever they make of it).
TEST(LlamaWriter, IgnoresGeneralAlignmentSetThroughTheApi) {
    MINFER_REQUIRE_LLAMA(lib);
    scratch_dir dir;
    for (const std::uint32_t align : {1u, 8u, 64u, 256u}) {
        content c;
        c.alignment = align;
        value a;
        a.type = a.elem = 4;
        a.fixed.resize(4);
        std::memcpy(a.fixed.data(), &align, 4);
        c.kvs.push_back({"general.alignment", a});
        // 8 and 40 bytes: padded sizes differ between an alignment of 32 and any other.
        c.tensors.push_back({"a", 0, {2}, std::vector<std::byte>(8, std::byte{1})});
        c.tensors.push_back({"b", 0, {10}, std::vector<std::byte>(40, std::byte{2})});
        const auto naive = dir / "naive.gguf", fixed = dir / "fixed.gguf";
        std::string why;
        ASSERT_TRUE(write_llama(*lib, c, naive, false, why)) << why;
        ASSERT_TRUE(write_llama(*lib, c, fixed, true, why)) << why;

        const auto bytes = read_bytes(naive);
        const ref_verdict r = ref_read(*lib, naive);
        auto ours = gg::file_view::parse(bytes);
        EXPECT_EQ(r.accepted, ours.has_value()) << "alignment " << align << ": readers disagree on llama.cpp's own file\n"
                                                << r.log << (ours ? "" : ours.error().message());
        // The tensor offsets were computed for 32: b sits at 32, not at pad(8, align).
        EXPECT_FALSE(r.accepted) << "alignment " << align << ": llama.cpp accepted a file laid out for 32";
        if (!ours) {
            EXPECT_EQ(ours.error().code, gg::errc::offset_mismatch) << ours.error().message();
        }
        std::cout << "[ llama.cpp writer ] general.alignment=" << align << " via gguf_set_val_u32: llama.cpp reads back: "
                  << (r.accepted ? "accepted" : "refused") << ", ours: "
                  << (ours ? std::string("accepted") : std::string(gg::to_string(ours.error().code))) << "\n";
        EXPECT_EQ(check_file(*lib, fixed, expected_snapshot(c, *lib, true), c), "") << "alignment " << align;
    }
}

// Setting a key a second time: gguf_set_* removes it and appends it (it moves to the end); our
// writer replaces the value in place. Both are valid files; the order of keys differs.
TEST(LlamaWriter, SettingAKeyAgainMovesItToTheEnd) {
    MINFER_REQUIRE_LLAMA(lib);
    scratch_dir dir;
    const llama_api& a = lib->api();
    gguf_context* ctx = a.gguf_init_empty();
    a.gguf_set_val_u32(ctx, "first", 1);
    a.gguf_set_val_u32(ctx, "second", 2);
    a.gguf_set_val_u32(ctx, "first", 3);
    const auto path = dir / "again.gguf";
    ASSERT_TRUE(a.gguf_write_to_file(ctx, path.c_str(), false));
    a.gguf_free(ctx);
    gg::writer w;
    w.set_u32("first", 1).set_u32("second", 2).set_u32("first", 3);
    const auto ours_bytes = w.to_bytes();
    ASSERT_TRUE(ours_bytes.has_value());
    auto ours = gg::file_view::parse(*ours_bytes);
    const auto theirs_bytes = read_bytes(path);
    auto theirs = gg::file_view::parse(theirs_bytes);
    ASSERT_TRUE(ours && theirs);
    ASSERT_EQ(ours->metadata().size(), 2u);
    ASSERT_EQ(theirs->metadata().size(), 2u);
    EXPECT_EQ(ours->metadata()[0].key, "first");
    EXPECT_EQ(theirs->metadata()[0].key, "second") << "llama.cpp now keeps the key in place: update docs/DIFFERENTIAL.md";
    EXPECT_EQ(*ours->get<std::uint32_t>("first"), 3u);
    EXPECT_EQ(*theirs->get<std::uint32_t>("first"), 3u);
}

// Tensors with a zero dimension are valid (zero bytes). Both readers must agree on our writer's
// files. llama.cpp's writer stores n_dims = ggml_n_dims, which counts only dimensions > 1, so a
// trailing zero dimension is dropped: (4, 0) is written as (4), 16 bytes, while the next tensor's
// offset was computed from 0 bytes, and llama.cpp refuses its own file (offset mismatch).
TEST(ZeroSizeTensors, ReadersAgreeAndLlamaWriterDropsTrailingZero) {
    MINFER_REQUIRE_LLAMA(lib);
    scratch_dir dir;
    content c;
    c.tensors.push_back({"empty.rows", 0, {4, 0}, {}});
    c.tensors.push_back({"middle.zero", 1, {8, 0, 3}, {}});
    c.tensors.push_back({"after", 0, {2}, std::vector<std::byte>(8, std::byte{7})});
    const auto path = dir / "zero.gguf";
    std::string why;
    ASSERT_TRUE(write_ours(c, path, why)) << why;
    EXPECT_EQ(check_file(*lib, path, expected_snapshot(c, *lib, false), c), "");

    const auto lpath = dir / "zero-llama.gguf";
    ASSERT_TRUE(write_llama(*lib, c, lpath, false, why)) << why;
    const auto bytes = read_bytes(lpath);
    const ref_verdict r = ref_read(*lib, lpath);
    auto ours = gg::file_view::parse(bytes);
    EXPECT_EQ(r.accepted, ours.has_value()) << r.log;
    EXPECT_FALSE(r.accepted) << "llama.cpp now reads back its own zero-size tensors: update docs/DIFFERENTIAL.md";
    if (!ours) {
        EXPECT_EQ(ours.error().code, gg::errc::offset_mismatch) << ours.error().message();
    }
    // The first tensor record of llama.cpp's file: name "empty.rows", then n_dims = 1, not 2.
    std::uint32_t n_dims = 0;
    std::memcpy(&n_dims, bytes.data() + 24 + 8 + 10, 4);
    EXPECT_EQ(n_dims, 1u);
    std::cout << "[ zero-size ] llama.cpp's writer on (4,0),(8,0,3),(2): stores n_dims " << n_dims
              << " for (4,0); llama.cpp reads it back: " << (r.accepted ? "accepted" : "refused") << ", ours: "
              << (ours ? std::string("accepted") : std::string(gg::to_string(ours.error().code))) << "\n";
}

// Our type table against ggml's: block size, bytes per block and name of every id ggml knows.
TEST(TypeTable, AgreesWithGgml) {
    MINFER_REQUIRE_LLAMA(lib);
    const llama_api& a = lib->api();
    EXPECT_GE(lib->type_count(), 30u);
    for (std::uint32_t id = 0; id < lib->type_count(); ++id) {
        const gg::type_traits* t = gg::traits(id);
        ASSERT_NE(t, nullptr) << "ggml knows type " << id << ", we do not";
        const auto blck = a.ggml_blck_size(static_cast<int>(id));
        if (blck == 0) {
            EXPECT_TRUE(t->removed()) << "type " << id << " is removed in ggml but not in our table";
            continue;
        }
        EXPECT_FALSE(t->removed()) << "type " << id;
        EXPECT_EQ(static_cast<std::int64_t>(t->block_elems), blck) << "type " << id;
        EXPECT_EQ(t->block_bytes, a.ggml_type_size(static_cast<int>(id))) << "type " << id;
        // the same spelling as ggml, "q4_K" included
        std::string theirs(a.ggml_type_name(static_cast<int>(id)));
        EXPECT_EQ(t->name, theirs) << "type " << id;
        const auto back = gg::tensor_type_from_name(theirs);
        EXPECT_TRUE(back && static_cast<std::uint32_t>(*back) == id) << "tensor_type_from_name(\"" << theirs << "\")";
    }
    std::cout << "[ types ] ggml of the reference knows " << lib->type_count() << " type ids; ours " << gg::tensor_type_count
              << "\n";
}

TEST(LlamaLib, TensorLayoutIsReadable) {
    MINFER_REQUIRE_LLAMA(lib);
    EXPECT_TRUE(lib->strides_readable()) << "struct ggml_tensor's ne/nb layout differs: strides are not compared";
}

}  // namespace
}  // namespace minfer::reference
