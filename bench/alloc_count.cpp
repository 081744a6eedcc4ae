#include "alloc_count.hpp"

#include <cstdlib>
#include <new>

namespace {
bool counting = false;  // the benchmarks are single-threaded
minfer::bench::alloc_totals totals;

void* allocate(std::size_t n) {
    if (counting) {
        ++totals.calls;
        totals.bytes += n;
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
}  // namespace

namespace minfer::bench {
void alloc_count_start() noexcept {
    totals = {};
    counting = true;
}
alloc_totals alloc_count_stop() noexcept {
    counting = false;
    return totals;
}
}  // namespace minfer::bench

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
