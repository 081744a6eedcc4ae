#pragma once
// Internal: the seeded name hash and the probing loops of name_index (declared in
// include/minfer/gguf/detail/name_index.hpp). Only the library's sources instantiate them.
#include <cstdint>
#include <string_view>

#include "minfer/gguf/detail/name_index.hpp"

namespace minfer::gguf::detail {

/// The index's hash of a name, seeded per process (getrandom) so that a file cannot be crafted
/// offline to make its names collide and turn the linear probing quadratic.
std::uint32_t hash_name(std::string_view s) noexcept;
/// The per-process seed of hash_name (exposed for the test that proves where it comes from).
std::uint64_t hash_seed() noexcept;

template <class NameOf>
std::int64_t name_index::insert(std::string_view name, std::uint32_t id, NameOf&& name_of) {
    return insert(name, hash_name(name), id, name_of);
}

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
