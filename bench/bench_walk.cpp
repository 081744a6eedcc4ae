// minfer-bench-walk MODEL [REPS]: how fast the bytes of a model's tensors can be brought to a
// consumer, the choice behind minfer::check's walker (src/check/data_walk.cpp). Each row reads every
// tensor byte once and XXH3-hashes it (a consumer that costs little, as verify's scans do):
//   map      XXH3 over a fresh mapping of the loader, tensor by tensor (4 KiB pages faulted in)
//   pread    one thread: pread 2 MiB into a buffer, XXH3 it, repeat (read and work in turn)
//   walk     walk_model_data with an XXH3 job per window (the next window read while one is hashed)
// scripts/bench-hash.sh runs it beside `cat FILE > /dev/null` on the same file. Best of REPS (3).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <xxhash.h>

#include "minfer/check/data_walk.hpp"

namespace {

using minfer::gguf::model;
namespace ck = minfer::check;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A fresh mapping each time: a mapping whose pages were touched before would not fault again.
// User + system time of the process (all threads).
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::uint64_t by_map(const char* path) {
    auto opened = model::open(path);
    if (!opened) return 0;
    const model& m = *opened;
    std::uint64_t acc = 0;
    for (const auto& t : m.tensors()) {
        const auto b = m.tensor_data(t);
        acc ^= XXH3_64bits(b.data(), b.size());
    }
    return acc;
}

// The same with the pages of each 16 MiB dropped once hashed (a bounded resident set).
std::uint64_t by_map_dropped(const char* path) {
    auto opened = model::open(path);
    if (!opened) return 0;
    const model& m = *opened;
    constexpr std::size_t window = std::size_t{16} << 20;
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    std::uint64_t acc = 0;
    for (const auto& t : m.tensors()) {
        const auto b = m.tensor_data(t);
        for (std::size_t off = 0; off < b.size(); off += window) {
            const std::size_t n = std::min(window, b.size() - off);
            acc ^= XXH3_64bits(b.data() + off, n);
            const auto lo = (reinterpret_cast<std::uintptr_t>(b.data() + off) + page - 1) / page * page;
            const auto hi = reinterpret_cast<std::uintptr_t>(b.data() + off + n) / page * page;
            if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
        }
    }
    return acc;
}

std::uint64_t by_pread(const model& m, const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    constexpr std::size_t chunk = std::size_t{2} << 20;
    std::unique_ptr<char[]> buf(new char[chunk]);
    std::uint64_t acc = 0;
    for (const auto& t : m.tensors()) {
        std::uint64_t off = m.parts()[t.part].view.data_offset() + t.info->offset;
        std::uint64_t left = t.info->n_bytes;
        while (left > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk));
            const ssize_t got = ::pread(fd, buf.get(), n, static_cast<off_t>(off));
            if (got <= 0) break;
            acc ^= XXH3_64bits(buf.get(), static_cast<std::size_t>(got));
            off += static_cast<std::uint64_t>(got);
            left -= static_cast<std::uint64_t>(got);
        }
    }
    ::close(fd);
    return acc;
}

struct xxh3_consumer final : ck::data_consumer {
    std::uint64_t acc = 0;
    void schedule(const ck::window& w, std::vector<ck::job>& jobs) override {
        jobs.emplace_back([this, pieces = w.tensors] {
            for (const auto& p : pieces) acc ^= XXH3_64bits(p.bytes.data(), p.bytes.size());
        });
    }
};

std::uint64_t by_walk(const model& m, std::size_t window, unsigned threads) {
    xxh3_consumer c;
    ck::data_consumer* cs[] = {&c};
    ck::walk_options o;
    o.window_bytes = window;
    o.threads = threads;
    if (!ck::walk_model_data(m, cs, o)) return 0;
    return c.acc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: minfer-bench-walk MODEL [REPS]\n");
        return 2;
    }
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    auto m = model::open(argv[1]);
    if (!m) {
        std::fprintf(stderr, "%s\n", m.error().message().c_str());
        return 1;
    }
    std::uint64_t bytes = 0;
    for (const auto& t : m->tensors()) bytes += t.info->n_bytes;
    struct row {
        std::string name;
        std::function<std::uint64_t()> run;
    };
    std::vector<row> rows{{"map", [&] { return by_map(argv[1]); }},
                          {"map, dropped", [&] { return by_map_dropped(argv[1]); }}, {"pread", [&] { return by_pread(*m, argv[1]); }}};
    for (std::size_t w : {std::size_t{2} << 20, std::size_t{16} << 20})
        for (unsigned th : {1u, 2u})
            rows.push_back({"walk " + std::to_string(w >> 20) + " MiB x" + std::to_string(th),
                            [&m, w, th] { return by_walk(*m, w, th); }});
    std::printf("%-20s %9s %9s %9s\n", "row", "seconds", "GB/s", "cpu s");
    for (const auto& r : rows) {
        double best = 1e30, best_cpu = 1e30;
        std::uint64_t check = 0;
        for (int i = 0; i < reps; ++i) {
            const double c0 = cpu_seconds();
            const auto t0 = std::chrono::steady_clock::now();
            check = r.run();
            best = std::min(best, seconds_since(t0));
            best_cpu = std::min(best_cpu, cpu_seconds() - c0);
        }
        std::printf("%-20s %9.3f %9.2f %9.3f   (xor of hashes %016llx)\n", r.name.c_str(), best,
                    static_cast<double>(bytes) / best / 1e9, best_cpu, static_cast<unsigned long long>(check));
    }
    return 0;
}
