#pragma once
// Test support: replaces the global operator new/delete to record the largest single allocation
// made while a probe is active, so tests can prove that hostile counts and lengths in a tiny file
// never turn into large allocations. Include this header in exactly ONE translation unit of a test
// executable (it defines the replacement functions).
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace minfer::test {

inline std::atomic<bool> alloc_probe_active{false};
inline std::atomic<std::size_t> alloc_probe_max{0};
inline std::atomic<std::size_t> alloc_probe_total{0};

/// RAII: while alive, records the largest and the total bytes requested from operator new.
class alloc_probe {
public:
    alloc_probe() noexcept {
        alloc_probe_max = 0;
        alloc_probe_total = 0;
        alloc_probe_active = true;
    }
    ~alloc_probe() { alloc_probe_active = false; }
    alloc_probe(const alloc_probe&) = delete;
    alloc_probe& operator=(const alloc_probe&) = delete;
    std::size_t largest() const noexcept { return alloc_probe_max; }
    std::size_t total() const noexcept { return alloc_probe_total; }
};

inline void alloc_probe_record(std::size_t n) noexcept {
    if (!alloc_probe_active.load(std::memory_order_relaxed)) return;
    alloc_probe_total += n;
    std::size_t cur = alloc_probe_max.load();
    while (n > cur && !alloc_probe_max.compare_exchange_weak(cur, n)) {
    }
}

}  // namespace minfer::test

void* operator new(std::size_t n) {
    minfer::test::alloc_probe_record(n);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    minfer::test::alloc_probe_record(n);
    return std::malloc(n == 0 ? 1 : n);
}
// These operator new replacements allocate with malloc, so free is the matching release; GCC 12 at
// -O2/-O3 inlines a `new` from the standard library into a caller and then flags the free here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
