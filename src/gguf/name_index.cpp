// name_index: the seeded name hash and the table's sizing and growth.
#include <chrono>
#include <cstring>
#include <sys/random.h>

#include "name_index_impl.hpp"

namespace minfer::gguf {

namespace detail {
namespace {
constexpr std::uint64_t mix(std::uint64_t x) noexcept {  // murmur3's finaliser
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}
}  // namespace

// A per-process seed from the kernel's random pool (getrandom, GRND_NONBLOCK so that an early-boot
// pool never blocks a load), so that a file cannot be crafted offline to make all its names collide
// and turn the linear-probing indexes quadratic. Without getrandom (an old kernel, a seccomp filter)
// the fallback mixes the clock, the address of a local and of this function: weaker, but still
// unknown to whoever made the file. (Earlier versions copied AT_RANDOM, whose bytes are also glibc's
// stack-protector canary: a hash reachable through timings must not leak the canary.)
std::uint64_t hash_seed() noexcept {
    static const std::uint64_t seed = [] {
        std::uint64_t v = 0;
        if (::getrandom(&v, sizeof v, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof v)) return v;
        const int local = 0;
        const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        return mix(now ^ mix(reinterpret_cast<std::uintptr_t>(&local)) ^
                   (reinterpret_cast<std::uintptr_t>(&hash_seed) << 17));
    }();
    return seed;
}

std::uint32_t hash_name(std::string_view s) noexcept {
    // One multiply per 8-byte word, the full finaliser once: names are short, lookups are hot.
    std::uint64_t h = hash_seed() ^ (s.size() * 0x9E3779B97F4A7C15ull);
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    std::uint64_t w = 0;
    if (n > 0) std::memcpy(&w, p, n);  // an empty view may have a null data()
    return static_cast<std::uint32_t>(mix(h ^ w ^ (static_cast<std::uint64_t>(n) << 56)));
}

void name_index::reset(std::size_t n) {
    std::size_t cap = 8;
    while (cap < n * 2) cap <<= 1;  // load factor <= 1/2
    slots_.assign(cap, slot{0, 0});
    mask_ = cap - 1;
    count_ = 0;
}

void name_index::grow() {
    std::vector<slot> old = std::move(slots_);
    const std::size_t n = count_;
    reset(2 * (n + 1));
    for (const slot s : old) {  // the stored hashes place every slot again: no name is read
        if (s.id1 == 0) continue;
        std::size_t i = s.hash & mask_;
        while (slots_[i].id1 != 0) i = (i + 1) & mask_;
        slots_[i] = s;
    }
    count_ = n;
}
}  // namespace detail

}  // namespace minfer::gguf
