#pragma once
// name_index (internal, used by file_view and model): an open-addressing hash index from names to
// ordinals. The names themselves are not stored; they live in the file's pages and are reached
// through a caller-supplied name_of(ordinal).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace minfer::gguf::detail {

/// The index's hash of a name, seeded per process so that a file cannot be crafted offline to make
/// its names collide and turn the linear probing quadratic.
std::uint32_t hash_name(std::string_view s) noexcept;

/// Each slot keeps the name's hash beside its ordinal: probes compare hashes first, and growth
/// re-places slots without touching (or re-hashing) the names. The index grows as names are
/// inserted, so a count declared by a file never sizes it (only names actually read do).
class name_index {
public:
    /// Empty the index and size it for about `n` names. May throw std::bad_alloc (caught at the
    /// API boundary).
    void reset(std::size_t n);
    /// Insert `name` (whose hash_name is `h`) as ordinal `id` unless present. Returns the ordinal
    /// already stored, or -1. May throw std::bad_alloc when the table grows.
    template <class NameOf>
    std::int64_t insert(std::string_view name, std::uint32_t h, std::uint32_t id, NameOf&& name_of);
    template <class NameOf>
    std::int64_t insert(std::string_view name, std::uint32_t id, NameOf&& name_of) {
        return insert(name, hash_name(name), id, name_of);
    }
    template <class NameOf>
    std::int64_t find(std::string_view name, NameOf&& name_of) const noexcept;
    /// Start loading the slot where a name of hash `h` would go (a hint; no effect on contents).
    void prefetch(std::uint32_t h) const noexcept {
        if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_], 1);
    }

private:
    struct slot {
        std::uint32_t id1;   // ordinal + 1; 0 = empty
        std::uint32_t hash;  // the name's hash_name
    };
    void grow();
    std::vector<slot> slots_;
    std::size_t mask_ = 0;
    std::size_t count_ = 0;
};

template <class NameOf>
std::int64_t name_index::insert(std::string_view name, std::uint32_t h, std::uint32_t id, NameOf&& name_of) {
    if (2 * (count_ + 1) > slots_.size()) grow();  // keep the load factor <= 1/2
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
        const slot s = slots_[i];
        if (s.id1 == 0) {
            slots_[i] = {id + 1, h};
            ++count_;
            return -1;
        }
        if (s.hash == h && name_of(s.id1 - 1) == name) return static_cast<std::int64_t>(s.id1 - 1);
    }
}

template <class NameOf>
std::int64_t name_index::find(std::string_view name, NameOf&& name_of) const noexcept {
    if (slots_.empty()) return -1;
    const std::uint32_t h = hash_name(name);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
        const slot s = slots_[i];
        if (s.id1 == 0) return -1;
        if (s.hash == h && name_of(s.id1 - 1) == name) return static_cast<std::int64_t>(s.id1 - 1);
    }
}

}  // namespace minfer::gguf::detail
