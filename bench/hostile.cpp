#include "hostile.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "alloc_count.hpp"
#include "minfer/gguf/file_view.hpp"

namespace minfer::bench {
namespace {

struct bytes {
    std::vector<std::byte> b;
    template <class T>
    bytes& put(T v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        b.insert(b.end(), p, p + sizeof v);
        return *this;
    }
    bytes& str(std::string_view s) {
        put<std::uint64_t>(s.size());
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        b.insert(b.end(), p, p + s.size());
        return *this;
    }
    bytes& header(std::int64_t n_tensors, std::int64_t n_kv) {
        put<std::uint32_t>(0x46554747u).put<std::uint32_t>(3).put(n_tensors).put(n_kv);
        return *this;
    }
    bytes& pad_to(std::size_t n) {
        b.resize(n);
        return *this;
    }
};

struct hostile_case {
    const char* name;
    std::vector<std::byte> file;
};

std::vector<hostile_case> cases() {
    std::vector<hostile_case> out;
    // A 100-byte file whose one string value claims 1 GiB (the cap): refused before any copy.
    out.push_back({"string_1GiB_in_100B", bytes().header(0, 1).str("k").put<std::uint32_t>(8).put<std::uint64_t>(1ull << 30).pad_to(100).b});
    // A string length of 2^64-1.
    out.push_back({"string_2^64-1", bytes().header(0, 1).str("k").put<std::uint32_t>(8).put<std::uint64_t>(~0ull).pad_to(100).b});
    // n_kv = 2^62 and n_tensors = 2^62 in a 100-byte file.
    out.push_back({"n_kv_2^62", bytes().header(0, 1ll << 62).pad_to(100).b});
    out.push_back({"n_tensors_2^62", bytes().header(1ll << 62, 0).pad_to(100).b});
    // Arrays of 2^30 u8 and of 2^30 strings.
    out.push_back({"u8_array_2^30", bytes().header(0, 1).str("k").put<std::uint32_t>(9).put<std::uint32_t>(0).put<std::uint64_t>(1ull << 30).pad_to(100).b});
    out.push_back({"string_array_2^30", bytes().header(0, 1).str("k").put<std::uint32_t>(9).put<std::uint32_t>(8).put<std::uint64_t>(1ull << 30).pad_to(100).b});
    // A tensor whose byte size overflows, and one whose data lies past the end of the file.
    out.push_back({"tensor_size_overflow", bytes().header(1, 0).str("t").put<std::uint32_t>(2).put<std::int64_t>(1ll << 40).put<std::int64_t>(1ll << 40).put<std::uint32_t>(0).put<std::uint64_t>(0).pad_to(100).b});
    out.push_back({"tensor_data_past_end", bytes().header(1, 0).str("t").put<std::uint32_t>(1).put<std::int64_t>(1ll << 40).put<std::uint32_t>(0).put<std::uint64_t>(0).pad_to(100).b});
    return out;
}

void bm_hostile(benchmark::State& state, const hostile_case* c) {
    const std::span<const std::byte> in(c->file);
    alloc_totals a;
    bool refused = true;
    for (auto _ : state) {
        alloc_count_start();
        auto v = gguf::file_view::parse(in);
        a = alloc_count_stop();
        refused = refused && !v.has_value();
        benchmark::DoNotOptimize(v);
    }
    if (!refused) state.SkipWithError("a hostile file was accepted");
    state.counters["file_bytes"] = static_cast<double>(c->file.size());
    state.counters["alloc_bytes"] = static_cast<double>(a.bytes);
    state.counters["allocs"] = static_cast<double>(a.calls);
}

}  // namespace

void register_hostile_benchmarks() {
    static const std::vector<hostile_case> all = cases();
    for (const hostile_case& c : all)
        benchmark::RegisterBenchmark(("hostile_open/" + std::string(c.name)).c_str(), bm_hostile, &c)
            ->Unit(benchmark::kNanosecond);
}

}  // namespace minfer::bench
