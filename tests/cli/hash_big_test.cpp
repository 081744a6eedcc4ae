// `minfer hash` on a tensor of more than 4 GiB (a sparse file: holes, with bytes planted at its
// start, across the 4 GiB mark and at its end): the SHA-1 and the UUID cover every byte. Expected
// values come from the independent reference (hashlib). llama-gguf-hash's SHA-1 takes a 32-bit
// length, so it would hash only the tensor's first nbytes mod 2^32 bytes; this test would catch that.
// Slow (two SHA-1 streams over 4 GiB in each program): label `slow`.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include "hash_support.hpp"

namespace minfer_cli_test {
namespace {

TEST(HashBig, TensorOver4GiBSha1AndUuid) {
    MINFER_NEED_REFERENCE();
    const fs::path dir = fs::absolute(temp_root() / "hash_big");
    fs::create_directories(dir);
    constexpr std::int64_t big = (std::int64_t{1} << 32) + 4099;  // i8: bytes = elements
    {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        const std::array<std::int64_t, 1> n5{5}, nbig{big}, n3{3};
        w.add_tensor("head.weight", gguf::tensor_type::f32, n5, noise(20, 1));
        w.add_zero_tensor("big.weight", gguf::tensor_type::i8, nbig);
        w.add_tensor("tail.weight", gguf::tensor_type::f16, n3, noise(6, 2));
        must_write(w, dir / "big.gguf");
    }
    std::uint64_t at = 0;
    {
        auto m = gguf::model::open(dir / "big.gguf");
        ASSERT_TRUE(m) << m.error().message();
        const gguf::tensor_ref* t = m->find_tensor("big.weight");
        ASSERT_NE(t, nullptr);
        at = m->metadata().data_offset() + t->info->offset;
    }
    // Plant bytes: the first 64, 16 across the 4 GiB mark, the last 100 (a truncated length misses
    // the last two).
    {
        const int fd = ::open((dir / "big.gguf").c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        const auto put = [&](std::uint64_t off, std::size_t n, std::uint64_t seed) {
            const auto b = noise(n, seed);
            ASSERT_EQ(::pwrite(fd, b.data(), n, static_cast<off_t>(at + off)), static_cast<ssize_t>(n));
        };
        put(0, 64, 3);
        put((std::uint64_t{1} << 32) - 8, 16, 4);
        put(static_cast<std::uint64_t>(big) - 100, 100, 5);
        ::close(fd);
    }
    const run_result ref = reference({"--sha1", "--no-layer", "--uuid", "big.gguf"}, dir);
    ASSERT_EQ(ref.rc, 0) << ref.err;
    ASSERT_EQ(lines_of(ref.out).size(), 2u) << ref.out;
    const run_result ours = tool({"hash", "--sha1", "--no-layer", "--uuid", "big.gguf"}, dir);
    EXPECT_EQ(ours.rc, 0) << ours.err;
    EXPECT_EQ(ours.out, ref.out);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace minfer_cli_test
