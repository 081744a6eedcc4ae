// minfer-bench-copy: how fast the streaming writer copies a model's tensors through file-range
// sources (copy_file_range, and the pread/pwrite fallback) compared with `cp` of the same file, in
// the same run, on the same (warm) page cache. Every copy ends with an fsync, as the writer's does.
//
//   minfer-bench-copy DIR [MiB=2048] [repetitions=3]
//
// Writes DIR/input.gguf (MiB of incompressible tensor data, no holes), then alternates the three
// copies `repetitions` times, prints each time and the medians, and the ratios to cp. Each output is
// checked equal to the input (the writer reproduces the file byte for byte); everything is removed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"

extern char** environ;

namespace {
namespace fs = std::filesystem;
namespace gg = minfer::gguf;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "minfer-bench-copy: %s\n", what.c_str());
    std::exit(1);
}

// xorshift64*: fast, incompressible enough that no layer can shortcut it.
void fill_random(std::uint64_t seed, std::span<std::byte> out) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    std::size_t i = 0;
    for (; i + 8 <= out.size(); i += 8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        const std::uint64_t v = x * 0x2545F4914F6CDD1Dull;
        std::memcpy(out.data() + i, &v, 8);
    }
    for (; i < out.size(); ++i) out[i] = static_cast<std::byte>(x >> (i % 8 * 8));
}

void make_input(const fs::path& p, std::uint64_t mib) {
    constexpr std::uint64_t tensor_mib = 128;
    gg::writer w;
    w.set_string("general.architecture", "bench").set_string("general.name", "copy benchmark");
    const std::uint64_t n = std::max<std::uint64_t>(1, mib / tensor_mib);
    const std::int64_t ne[] = {static_cast<std::int64_t>(tensor_mib << 20) / 4};
    for (std::uint64_t i = 0; i < n; ++i)
        w.add_tensor("blk." + std::to_string(i) + ".weight", gg::tensor_type::f32, ne,
                     gg::tensor_source::callback(tensor_mib << 20, [i](std::uint64_t off, std::span<std::byte> o) {
                         fill_random(i * 1000003 + off, o);
                         return gg::result<void>{};
                     }));
    if (auto r = w.write(p); !r) die(r.error().message());
}

// The writer's copy: metadata copied record by record, each tensor a range of the input file.
double writer_copy(const fs::path& in, const fs::path& out, bool kernel) {
    const auto t0 = clock_type::now();
    auto m = gg::model::open(in);
    if (!m) die(m.error().message());
    gg::writer w;
    for (const gg::kv& e : m->metadata().metadata()) w.set(e);
    const std::uint64_t base = m->metadata().data_offset();
    for (const gg::tensor_ref& t : m->tensors())
        w.add_tensor(t.info->name, t.info->type, std::span<const std::int64_t>(t.info->ne.data(), t.info->n_dims),
                     gg::tensor_source::file_range(in, base + t.info->offset, t.info->n_bytes));
    gg::write_options o;
    o.kernel_copy = kernel;
    if (auto r = w.write(out, o); !r) die(r.error().message());
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double cp_copy(const fs::path& in, const fs::path& out) {
    const auto t0 = clock_type::now();
    std::string a = in.string(), b = out.string();
    char cp[] = "cp";
    char* argv[] = {cp, a.data(), b.data(), nullptr};
    pid_t pid = 0;
    if (::posix_spawnp(&pid, "cp", nullptr, nullptr, argv, environ) != 0) die("cannot run cp");
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("cp failed");
    const int fd = ::open(out.c_str(), O_RDONLY | O_CLOEXEC);  // durable, like the writer's output
    if (fd < 0 || ::fsync(fd) != 0) die("fsync of cp's output failed");
    ::close(fd);
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

bool same_file(const fs::path& a, const fs::path& b) {
    if (fs::file_size(a) != fs::file_size(b)) return false;
    const int fa = ::open(a.c_str(), O_RDONLY | O_CLOEXEC), fb = ::open(b.c_str(), O_RDONLY | O_CLOEXEC);
    std::vector<char> x(8 << 20), y(8 << 20);
    bool same = fa >= 0 && fb >= 0;
    for (off_t off = 0; same;) {
        const ssize_t n = ::pread(fa, x.data(), x.size(), off);
        same = n >= 0 && ::pread(fb, y.data(), y.size(), off) == n && std::memcmp(x.data(), y.data(), static_cast<std::size_t>(std::max<ssize_t>(n, 0))) == 0;
        if (n <= 0) break;
        off += n;
    }
    ::close(fa);
    ::close(fb);
    return same;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) die("usage: minfer-bench-copy DIR [MiB=2048] [repetitions=3]");
    const fs::path dir(argv[1]);
    const std::uint64_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2048;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
    fs::create_directories(dir);
    const fs::path in = dir / "input.gguf", out = dir / "out.gguf";
    make_input(in, mib);
    const double gib = static_cast<double>(fs::file_size(in)) / (1 << 30);
    std::printf("input: %s, %.3f GiB\n", in.c_str(), gib);
    std::vector<double> kernel, fallback, cp;
    for (int r = 0; r < std::max(1, reps); ++r) {
        cp.push_back(cp_copy(in, out));
        fs::remove(out);
        kernel.push_back(writer_copy(in, out, true));
        if (!same_file(in, out)) die("copy_file_range output differs from the input");
        fs::remove(out);
        fallback.push_back(writer_copy(in, out, false));
        if (!same_file(in, out)) die("pread/pwrite output differs from the input");
        fs::remove(out);
        std::printf("rep %d: cp %.3f s, writer copy_file_range %.3f s, writer pread/pwrite %.3f s\n", r + 1,
                    cp.back(), kernel.back(), fallback.back());
    }
    const double c = median(cp), k = median(kernel), f = median(fallback);
    std::printf("median: cp %.3f s (%.2f GiB/s), writer copy_file_range %.3f s (%.2f GiB/s), writer pread/pwrite "
                "%.3f s (%.2f GiB/s)\n",
                c, gib / c, k, gib / k, f, gib / f);
    std::printf("ratio to cp (time): copy_file_range %.2f, pread/pwrite %.2f\n", k / c, f / c);
    fs::remove(in);
    return 0;
}
