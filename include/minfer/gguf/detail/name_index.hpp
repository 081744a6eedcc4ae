#pragma once
// name_index (internal: a member of file_view and model, used only by the library's sources): an
// open-addressing hash index from names to ordinals. The names themselves are not stored; they live
// in the file's pages and are reached through a caller-supplied name_of(ordinal). The hash and the
// template bodies live in src/gguf/name_index_impl.hpp, out of the public headers: the seed and the
// hash function are not part of the API.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace minfer::gguf::detail {

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
    std::int64_t insert(std::string_view name, std::uint32_t id, NameOf&& name_of);
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

}  // namespace minfer::gguf::detail
