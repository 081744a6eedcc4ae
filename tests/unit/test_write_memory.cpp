// Bounded memory: a model of more than 1 GiB whose tensors come from file ranges and a callback is
// written by a forked child whose peak RSS must stay far below the model size. The input is a
// sparse file (holes with a few data islands), so the test costs no disk for its input; the output
// is compared with the input byte for byte by re-reading both.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t half = std::uint64_t{512} << 20;     // each file-range tensor
constexpr std::uint64_t generated = std::uint64_t{64} << 20;  // the callback tensor
constexpr long rss_bound_kib = 64 * 1024;

std::byte pattern(std::uint64_t i) { return static_cast<std::byte>((i * 2654435761u) >> 11); }

// A 1 GiB sparse file with 4 KiB islands of random bytes every 61 MiB (and at both ends).
fs::path sparse_input(const fs::path& p) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("create input");
    if (::ftruncate(fd, static_cast<off_t>(2 * half)) != 0) throw std::runtime_error("size input");
    std::vector<std::uint64_t> at{0, 2 * half - 4096};
    for (std::uint64_t o = 12345; o + 4096 < 2 * half; o += std::uint64_t{61} << 20) at.push_back(o);
    for (std::size_t i = 0; i < at.size(); ++i) {
        const bytes island = random_bytes(4096, static_cast<std::uint32_t>(i + 1));
        if (::pwrite(fd, island.data(), island.size(), static_cast<off_t>(at[i])) != 4096)
            throw std::runtime_error("write input");
    }
    ::close(fd);
    return p;
}

// Reads [off, off + n) of two files in 4 MiB pieces and says where they first differ.
::testing::AssertionResult same_range(const fs::path& a, std::uint64_t a_off, const fs::path& b, std::uint64_t b_off,
                                      std::uint64_t n) {
    const int fa = ::open(a.c_str(), O_RDONLY | O_CLOEXEC), fb = ::open(b.c_str(), O_RDONLY | O_CLOEXEC);
    bytes x(4 << 20), y(4 << 20);
    std::uint64_t done = 0;
    bool same = fa >= 0 && fb >= 0;
    while (same && done < n) {
        const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, x.size()));
        same = ::pread(fa, x.data(), k, static_cast<off_t>(a_off + done)) == static_cast<ssize_t>(k) &&
               ::pread(fb, y.data(), k, static_cast<off_t>(b_off + done)) == static_cast<ssize_t>(k) &&
               std::memcmp(x.data(), y.data(), k) == 0;
        if (same) done += k;
    }
    if (fa >= 0) ::close(fa);
    if (fb >= 0) ::close(fb);
    if (same) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "differ in the 4 MiB piece at " << done;
}

TEST(WriteMemory, AGigabyteModelIsWrittenWithBoundedMemory) {
    temp_dir dir;
    const fs::path input = sparse_input(dir / "input.bin");
    for (bool kernel : {true, false}) {
        SCOPED_TRACE(kernel ? "copy_file_range" : "pread/pwrite");
        const fs::path out = dir / "out.gguf";
        const pid_t pid = ::fork();
        if (pid == 0) {
            // the child builds the writer itself: nothing of it is in the parent's memory
            const int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
            writer w;
            w.set_string("general.architecture", "big").set_u32("general.alignment", 4096);
            const std::int64_t ne_half[] = {static_cast<std::int64_t>(half / 4)};
            const std::int64_t ne_gen[] = {static_cast<std::int64_t>(generated)};
            w.add_tensor("by_path", tensor_type::f32, ne_half, tensor_source::file_range(input, 0, half));
            w.add_tensor("generated", tensor_type::i8, ne_gen,
                         tensor_source::callback(generated, [](std::uint64_t off, std::span<std::byte> o) {
                             for (std::size_t i = 0; i < o.size(); ++i) o[i] = pattern(off + i);
                             return result<void>{};
                         }));
            w.add_tensor("by_fd", tensor_type::f32, ne_half, tensor_source::file_range(fd, half, half));
            write_options opts;
            opts.kernel_copy = kernel;
            ::_exit(w.write(out, opts) ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
        rusage ru{};
        ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &ru), 0);
        EXPECT_LT(ru.ru_maxrss, rss_bound_kib) << "peak RSS of the writing child, KiB";
        std::printf("peak RSS of the writing child (%s): %ld KiB\n", kernel ? "copy_file_range" : "pread/pwrite",
                    ru.ru_maxrss);

        auto m = model::open(out);
        ASSERT_TRUE(m) << m.error().message();
        const std::uint64_t base = m->metadata().data_offset();
        const tensor_ref* a = m->find_tensor("by_path");
        const tensor_ref* g = m->find_tensor("generated");
        const tensor_ref* b = m->find_tensor("by_fd");
        ASSERT_TRUE(a && g && b);
        EXPECT_GE(fs::file_size(out), 2 * half + generated);
        EXPECT_TRUE(same_range(out, base + a->info->offset, input, 0, half));
        EXPECT_TRUE(same_range(out, base + b->info->offset, input, half, half));
        const auto gen = m->tensor_data(*g);
        std::uint64_t bad = generated;
        for (std::uint64_t i = 0; i < generated && bad == generated; ++i)
            if (gen[i] != pattern(i)) bad = i;
        EXPECT_EQ(bad, generated) << "first wrong byte of the generated tensor";
        m = model{};
        fs::remove(out);
    }
}

}  // namespace
