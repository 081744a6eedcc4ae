// A full disk: edit, split, merge and quantize writing to a 256 KiB tmpfs from an input on the normal
// disk whose output is larger than that, and an in-place edit whose undo journal cannot be written. Each must exit 3
// (I/O), say on stderr that the disk is full, leave the output directory as it was (no output, no
// temporary, no earlier split part) and the input unchanged. Needs root (to mount the tmpfs): skipped
// otherwise, with the reason.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <array>
#include <cctype>
#include <fstream>
#include <span>
#include <stdexcept>

#include "../convert/checkpoint_writer.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "toolbox_support.hpp"

namespace minfer_toolbox_test {
namespace {

constexpr const char* tmpfs_size = "256k";

using minfer::test_support::small_tmpfs;  // tests/support/scratch_dir.hpp

#define MINFER_REQUIRE_TMPFS(t)                                                                  \
    if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot mount a small tmpfs to fill: skipped"; \
    small_tmpfs t(tmpfs_size);                                                                   \
    if (!t.mounted()) GTEST_SKIP() << t.why() << ": skipped"

// Non-zero bytes (a hole would take no space on the tmpfs): a cheap pseudo-random pattern.
std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<std::byte> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = static_cast<std::byte>(x | 1);
    }
    return v;
}

// A model of `n` f32 tensors of `floats` values each, all bytes non-zero. With split_count > 0,
// written as that many parts laid out like gguf-split (tensors distributed evenly) to prefix-0000k-of-….
void write_model(const fs::path& path, int n, std::int64_t floats, std::uint32_t split_count = 0) {
    const std::array<std::int64_t, 1> ne{floats};
    if (split_count == 0) {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_string("general.name", "full-disk");
        for (int i = 0; i < n; ++i)
            w.add_tensor(std::string(1, 't').append(std::to_string(i)).append(".weight"), gguf::tensor_type::f32, ne,
                         pattern(static_cast<std::size_t>(floats) * 4, static_cast<std::uint32_t>(i)));
        auto r = w.write(path);
        if (!r) throw std::runtime_error("write " + path.string() + ": " + r.error().message());
        return;
    }
    const int per_part = (n + static_cast<int>(split_count) - 1) / static_cast<int>(split_count);
    for (std::uint32_t k = 0; k < split_count; ++k) {
        gguf::writer w;
        if (k == 0) {
            w.set_string("general.architecture", "llama");
            w.set_string("general.name", "full-disk");
        }
        w.set_u16("split.no", static_cast<std::uint16_t>(k));
        w.set_u16("split.count", static_cast<std::uint16_t>(split_count));
        w.set_i32("split.tensors.count", n);
        // Names built by appending: GCC 12 -O3 reports a false -Wrestrict on `"t" + std::string`.
        for (int i = static_cast<int>(k) * per_part; i < std::min(n, static_cast<int>(k + 1) * per_part); ++i)
            w.add_tensor(std::string(1, 't').append(std::to_string(i)).append(".weight"), gguf::tensor_type::f32, ne,
                         pattern(static_cast<std::size_t>(floats) * 4, static_cast<std::uint32_t>(i)));
        const fs::path p = gguf::split_file_name(path.string(), k, split_count);
        auto r = w.write(p);
        if (!r) throw std::runtime_error("write " + p.string() + ": " + r.error().message());
    }
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The message names the condition: strerror(ENOSPC), or the errno's name, or "disk full".
void expect_says_disk_full(const std::string& err) {
    const std::string l = lower(err);
    EXPECT_TRUE(l.find("no space left on device") != std::string::npos || l.find("enospc") != std::string::npos ||
                l.find("disk full") != std::string::npos || l.find("disk is full") != std::string::npos)
        << "stderr does not name the full disk:\n" << err;
}

// 8 tensors of 96 KiB: 768 KiB, three times the tmpfs.
constexpr int n_tensors = 8;
constexpr std::int64_t tensor_floats = 24576;

TEST(OutOfSpace, EditToAFullDisk) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path in = t.disk() / "in.gguf";
    write_model(in, n_tensors, tensor_floats);
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());

    const run_result r = run({"edit", in.string(), "-o", (t.path() / "out.gguf").string(), "--name", "X", "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

TEST(OutOfSpace, SplitToAFullDiskRemovesTheEarlierParts) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path in = t.disk() / "in.gguf";
    write_model(in, n_tensors, tensor_floats);
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());

    // 2 tensors (192 KiB) a part: part 1 fits in 256 KiB, part 2 does not.
    const run_result r = run({"split", in.string(), (t.path() / "out").string(), "--split-max-tensors", "2", "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

TEST(OutOfSpace, PruneToAFullDiskWritesNothing) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path in = t.disk() / "in.gguf";
    write_model(in, n_tensors, tensor_floats);
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());
    // 7 of the 8 tensors (672 KiB) into a 256 KiB tmpfs, as one file and as a split set
    for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--split-max-tensors", "2"}}) {
        std::vector<std::string> args{"prune", in.string(), "-o", (t.path() / "out.gguf").string(), "--tensors", "^t0\\.weight$", "--quiet"};
        args.insert(args.end(), extra.begin(), extra.end());
        const run_result r = run(args);
        EXPECT_EQ(r.rc, 3) << r.err;
        expect_says_disk_full(r.err);
        EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    }
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

TEST(OutOfSpace, AssembleToAFullDiskWritesNothing) {
    MINFER_REQUIRE_TMPFS(t);
    // One block of 8 finite f32 tensors (768 KiB): a passthrough copies them, a linear merge
    // dequantizes, merges and writes them back through its streaming source.
    const fs::path in = t.disk() / "in.gguf";
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 1);
        const std::array<std::int64_t, 1> ne{tensor_floats};
        std::vector<float> v(static_cast<std::size_t>(tensor_floats));
        for (int i = 0; i < n_tensors; ++i) {
            for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 7 + static_cast<std::size_t>(i)) % 101) / 50.0f - 1.0f;
            w.add_tensor("blk.0.t" + std::to_string(i) + ".weight", gguf::tensor_type::f32, ne, std::as_bytes(std::span<const float>(v)));
        }
        auto r = w.write(in);
        ASSERT_TRUE(r.has_value()) << r.error().message();
    }
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());
    for (const std::string& yaml : {"merge_method: passthrough\nslices:\n  - sources:\n      - model: " + in.string() +
                                        "\n        layer_range: [0, 1]\n",
                                    "merge_method: linear\nmodels:\n  - model: " + in.string() + "\n    parameters:\n      weight: 1\n"}) {
        const fs::path cfg = t.disk() / "config.yaml";
        std::ofstream(cfg) << yaml;
        const run_result r = run({"assemble", cfg.string(), "-o", (t.path() / "out.gguf").string(), "--quiet"});
        EXPECT_EQ(r.rc, 3) << yaml << r.err;
        expect_says_disk_full(r.err);
        EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    }
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

TEST(OutOfSpace, MergeToAFullDisk) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path prefix = t.disk() / "in";
    write_model(prefix, n_tensors, tensor_floats, 4);
    const auto parts = part_paths(prefix, 4);
    std::vector<std::uint64_t> sums;
    for (const fs::path& p : parts) sums.push_back(checksum(p));
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());

    const run_result r = run({"merge", parts.front().string(), (t.path() / "out.gguf").string(), "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    for (std::size_t i = 0; i < parts.size(); ++i) EXPECT_EQ(checksum(parts[i]), sums[i]) << parts[i] << " changed";
}

TEST(OutOfSpace, InPlaceEditCannotWriteItsJournal) {
    MINFER_REQUIRE_TMPFS(t);
    // A 32 KiB model on the tmpfs, then the tmpfs filled to the last byte.
    const fs::path model = t.path() / "model.gguf";
    write_model(model, 2, 4096);
    const std::uint64_t sum = checksum(model);
    {
        const std::vector<std::byte> chunk = pattern(4096, 99);
        std::FILE* f = std::fopen((t.path() / "filler").c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::setvbuf(f, nullptr, _IONBF, 0);
        while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size()) {
        }
        for (char c = 1; std::fwrite(&c, 1, 1, f) == 1;) {  // the last partial block
        }
        std::fclose(f);
    }
    const auto before = list_dir(t.path());

    // "full-disk" -> "full-DISK": the same length, so it fits in place whatever the layout; only the
    // undo journal needs new space.
    const run_result r = run({"edit", model.string(), "--in-place", "--name", "full-DISK", "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    EXPECT_EQ(checksum(model), sum) << "the model changed";
    EXPECT_EQ(file_problem(model), "");
}

// quantize's input: 8 f32 matrices [256, 256] (256 KiB each, 2 MiB) with finite values, llama-shaped
// names. As Q8_0 each is 68 KiB (34 bytes per 32 values): 544 KiB in all, twice the tmpfs.
void write_quantize_model(const fs::path& path) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "full-disk");
    w.set_u32("llama.block_count", 8);
    const std::array<std::int64_t, 2> ne{256, 256};
    std::uint32_t x = 0x9e3779b9u;
    for (int i = 0; i < 8; ++i) {
        std::vector<float> v(256 * 256);
        for (float& f : v) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            f = static_cast<float>(x >> 8) / 8388608.0f - 1.0f;  // [-1, 1): a NaN would stop it before the disk
        }
        w.add_tensor(std::string("blk.").append(std::to_string(i)).append(".ffn_up.weight"), gguf::tensor_type::f32, ne,
                     std::as_bytes(std::span<const float>(v)));
    }
    auto r = w.write(path);
    if (!r) throw std::runtime_error("write " + path.string() + ": " + r.error().message());
}

TEST(OutOfSpace, QuantizeToAFullDisk) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path in = t.disk() / "in.gguf";
    write_quantize_model(in);
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());

    const fs::path out = t.path() / "out-Q8_0.gguf";
    const run_result r = run({"quantize", in.string(), out.string(), "Q8_0", "1", "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    EXPECT_NE(r.err.find(out.string()), std::string::npos) << "stderr does not name the output:\n" << r.err;
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

TEST(OutOfSpace, QuantizeSplitToAFullDiskLeavesNoPart) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path in = t.disk() / "in.gguf";
    write_quantize_model(in);
    const std::uint64_t sum = checksum(in);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());

    // 2 tensors (136 KiB) a part, 4 parts, each written whole to an unnamed temporary before any is
    // named (toolbox::write_parts): the 256 KiB disk fills while the second part is written.
    const fs::path out = t.path() / "out-Q8_0.gguf";
    const run_result r =
        run({"quantize", in.string(), out.string(), "Q8_0", "1", "--split-max-tensors", "2", "--quiet"});
    EXPECT_EQ(r.rc, 3) << r.err;
    expect_says_disk_full(r.err);
    const fs::path part2 = gguf::split_file_name((t.path() / "out-Q8_0").string(), 1, 4);
    EXPECT_NE(r.err.find(part2.string()), std::string::npos) << "stderr does not name the part it could not write:\n"
                                                             << r.err;
    EXPECT_EQ(list_dir(t.path()), before) << "left behind: " << joined(list_dir(t.path()));
    EXPECT_EQ(checksum(in), sum) << "the input changed";
}

}  // namespace

// convert: the checkpoint on the real disk, the output on the full one (4 MB into 256 KiB).
TEST(OutOfSpace, ConvertToAFullDiskWritesNothing) {
    MINFER_REQUIRE_TMPFS(t);
    const fs::path ckpt = minfer::test::write_llama_checkpoint(t.disk() / "Tiny-Llama", false);
    std::ofstream(t.path() / "keep.txt") << "was here\n";
    const auto before = list_dir(t.path());
    for (const char* type : {"f16", "Q4_K_M"}) {
        const fs::path out = t.path() / "out.gguf";
        const run_result r = run({"convert", ckpt.string(), "-o", out.string(), "--outtype", type, "--quiet"});
        EXPECT_EQ(r.rc, 3) << type << ": " << r.err;
        expect_says_disk_full(r.err);
        EXPECT_EQ(list_dir(t.path()), before) << type << ": left behind: " << joined(list_dir(t.path()));
    }
}

}  // namespace minfer_toolbox_test
