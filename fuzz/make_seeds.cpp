// Writes the seed corpus with the project's writer: one folder per fuzz target.
//   make_seeds <out-dir>   →  <out-dir>/parse/*.gguf, <out-dir>/access/*, <out-dir>/split/*,
//                             <out-dir>/journal/*, <out-dir>/quant/*, <out-dir>/importance/*
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "journal_model.hpp"

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;

namespace {
std::vector<std::byte> bytes_of(const gguf::writer& w) {
    auto b = w.to_bytes();
    if (!b) {
        std::fprintf(stderr, "make_seeds: %s\n", b.error().message().c_str());
        std::exit(1);
    }
    return std::move(*b);
}

void save(const fs::path& p, const std::vector<std::byte>& b, std::string_view prefix = {}) {
    std::ofstream out(p, std::ios::binary);
    out.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<std::byte> pattern(std::size_t n) {
    std::vector<std::byte> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 131 + 7) & 0xFF);
    return b;
}

gguf::writer all_values() {
    gguf::writer w;
    w.set_u8("t.u8", 200).set_i8("t.i8", -5).set_u16("t.u16", 65000).set_i16("t.i16", -300);
    w.set_u32("t.u32", 4000000000u).set_i32("t.i32", -7).set_f32("t.f32", 1.5f).set_bool("t.bool", true);
    w.set_u64("t.u64", 1ull << 40).set_i64("t.i64", -(1ll << 40)).set_f64("t.f64", 2.25).set_string("t.str", "hello");
    const std::array<std::uint32_t, 3> u{1, 2, 3};
    const std::array<float, 2> f{0.5f, -1.0f};
    const std::array<std::uint8_t, 3> bools{0, 1, 1};
    w.set_array("t.arr.u32", gguf::value_type::u32, std::span<const std::uint32_t>(u));
    w.set_array("t.arr.f32", gguf::value_type::f32, std::span<const float>(f));
    w.set_array("t.arr.bool", gguf::value_type::boolean, std::span<const std::uint8_t>(bools));
    const std::array<std::string_view, 3> s{"a", "", "ccc"};
    w.set_strings("t.arr.str", std::span<const std::string_view>(s));
    return w;
}

gguf::writer with_tensors(std::uint32_t alignment) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    if (alignment != 32) w.set_u32("general.alignment", alignment);
    const std::array<std::int64_t, 2> ne32{32, 2};
    const std::array<std::int64_t, 1> ne256{256};
    w.add_tensor("a.f32", gguf::tensor_type::f32, ne32, pattern(32 * 2 * 4));
    w.add_tensor("b.f16", gguf::tensor_type::f16, ne32, pattern(32 * 2 * 2));
    w.add_tensor("c.q4_0", gguf::tensor_type::q4_0, ne32, pattern(2 * 18));
    w.add_tensor("d.q8_0", gguf::tensor_type::q8_0, ne32, pattern(2 * 34));
    w.add_tensor("e.q4_k", gguf::tensor_type::q4_k, ne256, pattern(144));
    w.add_tensor("f.q8_k", gguf::tensor_type::q8_k, ne256, pattern(292));
    return w;
}

std::vector<std::byte> split_input(std::uint32_t n) {
    std::vector<std::byte> all;
    for (std::uint32_t i = 0; i < n; ++i) {
        gguf::writer w;
        if (i == 0) w.set_string("general.architecture", "llama");
        w.set_u16("split.no", static_cast<std::uint16_t>(i)).set_u16("split.count", static_cast<std::uint16_t>(n));
        if (i == 0) w.set_i32("split.tensors.count", static_cast<std::int32_t>(n));
        const std::array<std::int64_t, 1> ne{8};
        std::string name(1, 't');  // appended: GCC 12 -O3 reports a false -Wrestrict on `"t" + std::string`
        name += std::to_string(i);
        w.add_tensor(name, gguf::tensor_type::f32, ne, pattern(32));
        auto b = bytes_of(w);
        if (i > 0) {
            for (char c : std::string_view("\n~~\n")) all.push_back(static_cast<std::byte>(c));
        }
        all.insert(all.end(), b.begin(), b.end());
    }
    return all;
}
// fuzz_quant's seeds: for the k-th convertible type (in id order, fuzz_quant's rule) the byte k,
// then a few blocks of the byte pattern, and blocks whose every even-offset u16 is f16 1.0 (so the
// values are finite and the fuzzer starts from ordinary scales as well as odd ones).
void quant_seeds(const fs::path& dir) {
    unsigned k = 0;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
        const auto t = static_cast<gguf::tensor_type>(id);
        if (!minfer::quant::can_dequantize(t)) continue;
        const std::string selector(1, static_cast<char>(k++));
        const std::size_t block = gguf::traits(t)->block_bytes;
        std::string name(gguf::to_string(t));
        save(dir / (name + "-pattern.bin"), pattern(3 * block), selector);
        std::vector<std::byte> ones(2 * block);
        for (std::size_t i = 0; i + 1 < ones.size(); i += 2) ones[i + 1] = std::byte{0x3c};
        save(dir / (name + "-ones.bin"), ones, selector);
    }
}

// fuzz_importance's seeds: importance matrices in both of llama-imatrix's formats (GGUF: in_sum2
// [ne0, n_mat] and counts [1, n_mat] per entry, with the three keys llama-quantize needs; legacy
// .dat: i32 n_entries, per entry i32 len, name, i32 ncall, i32 nval, nval f32, then the optional
// trailer i32 chunks, i32 len, dataset), then each cut short at a few places.
std::vector<std::byte> imatrix_gguf(bool dataset_array) {
    gguf::writer w;
    w.set_string("general.type", "imatrix");
    if (dataset_array) {
        const std::array<std::string_view, 2> ds{"calibration.txt", "second.txt"};
        w.set_strings("imatrix.datasets", std::span<const std::string_view>(ds));
    } else {
        w.set_string("imatrix.datasets", "one.txt");
    }
    w.set_u32("imatrix.chunk_count", 100).set_u32("imatrix.chunk_size", 512);
    auto f32s = [](std::initializer_list<float> v) {
        const auto* p = reinterpret_cast<const std::byte*>(v.begin());
        return std::vector<std::byte>(p, p + v.size() * sizeof(float));
    };
    const std::array<std::int64_t, 2> q_ne{4, 1}, q_c{1, 1}, e_ne{4, 2}, e_c{1, 2};
    w.add_tensor("blk.0.attn_q.weight.in_sum2", gguf::tensor_type::f32, q_ne, f32s({1, 2, 3, 4}));
    w.add_tensor("blk.0.attn_q.weight.counts", gguf::tensor_type::f32, q_c, f32s({2}));
    w.add_tensor("blk.0.attn_q.weight.in_sum", gguf::tensor_type::f32, q_ne, f32s({1, 1, 1, 1}));  // ignored
    w.add_tensor("blk.0.ffn_down_exps.weight.in_sum2", gguf::tensor_type::f32, e_ne, f32s({1, 2, 3, 4, 5, 6, 7, 8}));
    w.add_tensor("blk.0.ffn_down_exps.weight.counts", gguf::tensor_type::f32, e_c, f32s({3, 0}));  // an idle expert
    return bytes_of(w);
}

std::vector<std::byte> imatrix_dat(bool trailer, bool repeat) {
    std::vector<std::byte> b;
    auto put = [&](const void* p, std::size_t n) {
        const auto* c = static_cast<const std::byte*>(p);
        b.insert(b.end(), c, c + n);
    };
    auto i32 = [&](std::int32_t v) { put(&v, 4); };
    auto entry = [&](std::string_view name, std::int32_t ncall, std::initializer_list<float> sums) {
        i32(static_cast<std::int32_t>(name.size()));
        put(name.data(), name.size());
        i32(ncall);
        i32(static_cast<std::int32_t>(sums.size()));
        put(sums.begin(), sums.size() * sizeof(float));
    };
    i32(repeat ? 3 : 2);
    entry("blk.0.attn_k.weight", 4, {1, 2, 3, 4});
    entry("output.weight", 0, {0.5f, 0.25f});  // ncall 0: the sums as they are
    if (repeat) entry("blk.0.attn_k.weight", 2, {8, 9});  // replaces the first whole
    if (trailer) {
        i32(42);
        const std::string_view ds = "wiki.train.raw";
        i32(static_cast<std::int32_t>(ds.size()));
        put(ds.data(), ds.size());
    }
    return b;
}

void importance_seeds(const fs::path& dir) {
    const std::vector<std::pair<std::string, std::vector<std::byte>>> files{
        {"gguf-datasets.gguf", imatrix_gguf(true)},
        {"gguf-dataset-string.gguf", imatrix_gguf(false)},
        {"legacy-trailer.dat", imatrix_dat(true, false)},
        {"legacy-plain.dat", imatrix_dat(false, false)},
        {"legacy-repeat.dat", imatrix_dat(true, true)},
    };
    for (const auto& [name, b] : files) {
        save(dir / name, b);
        for (const std::size_t cut : {std::size_t{3}, std::size_t{9}, b.size() / 2, b.size() - 1})
            save(dir / (name + ".cut" + std::to_string(cut)),
                 std::vector<std::byte>(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(cut)));
    }
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds <out-dir>\n");
        return 2;
    }
    const fs::path out(argv[1]);
    for (const char* d : {"parse", "access", "split", "journal", "quant", "importance"})
        fs::create_directories(out / d);
    const std::vector<std::pair<std::string, std::vector<std::byte>>> files{
        {"empty", bytes_of(gguf::writer{})},
        {"values", bytes_of(all_values())},
        {"tensors", bytes_of(with_tensors(32))},
        {"tensors-align64", bytes_of(with_tensors(64))},
        {"tensors-align1", bytes_of(with_tensors(1))},
    };
    for (const auto& [name, b] : files) {
        save(out / "parse" / (name + ".gguf"), b);
        save(out / "access" / (name + ".bin"), b, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f");
        save(out / "split" / (name + ".bin"), b);
    }
    save(out / "split" / "two-parts.bin", split_input(2));
    save(out / "split" / "three-parts.bin", split_input(3));
    // Journals of fuzz_journal's model: its own head as old, a renamed head as new (same size when
    // the name has the same length), with each flag combination.
    {
        const auto old_head = bytes_of(minfer::fuzz::journal_model("fuzz"));
        const auto new_head = bytes_of(minfer::fuzz::journal_model("zzuf"));
        auto d = old_head.begin() + static_cast<std::ptrdiff_t>(old_head.size() - 64);  // data: 64 bytes
        const std::vector<std::byte> oh(old_head.begin(), d);
        const std::vector<std::byte> nh(new_head.begin(), new_head.begin() + static_cast<std::ptrdiff_t>(oh.size()));
        const auto j = minfer::fuzz::journal_bytes(old_head.size(), oh, nh);
        for (char flags : {'\0', '\1', '\2', '\3'})
            save(out / "journal" / ("journal-" + std::to_string(int(flags)) + ".bin"), j, std::string_view(&flags, 1));
        save(out / "journal" / "short.bin", std::vector<std::byte>(12), std::string_view("\1", 1));
    }
    quant_seeds(out / "quant");
    importance_seeds(out / "importance");
    std::printf("make_seeds: wrote %zu files per target to %s\n", files.size(), out.c_str());
    return 0;
}
