// page_advice.hpp: madvise on the whole pages of a range (rounded outward for read-ahead, inward
// for release, so that a page holding bytes outside the range is never dropped).
#include "minfer/gguf/page_advice.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace minfer::gguf {
namespace {

std::uintptr_t page_size() noexcept {
    static const long page = ::sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::uintptr_t>(page) : 4096;
}

void advise(std::uintptr_t lo, std::uintptr_t hi, int advice) noexcept {
    if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, advice);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace

void advise_sequential(std::span<const std::byte> bytes) noexcept {
    if (bytes.empty()) return;
    const std::uintptr_t page = page_size();
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
    advise(begin / page * page, (begin + bytes.size() + page - 1) / page * page, MADV_SEQUENTIAL);
}

void release_pages(std::span<const std::byte> bytes) noexcept {
    if (bytes.empty()) return;
    const std::uintptr_t page = page_size();
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
    advise((begin + page - 1) / page * page, (begin + bytes.size()) / page * page, MADV_DONTNEED);
}

}  // namespace minfer::gguf
