#pragma once
// Internal: inserts names into a name_index in file order, a fixed number of names late. Each
// name's slot is prefetched when the name is queued and written `depth` names later, so on tables
// larger than the caches the memory misses of consecutive inserts overlap instead of adding up.
// Duplicates are still found in file order: flush() before reporting any other failure, and the
// first repeated name in the file is the one reported, exactly as with immediate inserts.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "name_index_impl.hpp"

namespace minfer::gguf::detail {

class insert_window {
public:
    static constexpr std::size_t depth = 16;  // ~16 records of parsing covers one memory miss

    struct duplicate {
        std::string_view name;
        std::uint64_t offset;  // of the record that repeats the name
        std::uint32_t id;      // its ordinal
        std::uint32_t first;   // the ordinal of the earlier record with the same name
    };

    explicit insert_window(name_index& index) noexcept : index_(index) {}

    /// Queue `name` of record `id` (at `offset`). Inserts the oldest queued name if the window is
    /// full; name_of must know every ordinal below the oldest queued one.
    template <class NameOf>
    std::optional<duplicate> push(std::string_view name, std::uint32_t id, std::uint64_t offset, NameOf&& name_of) {
        std::optional<duplicate> d;
        if (size_ == depth) d = pop(name_of);
        const std::uint32_t h = hash_name(name);
        index_.prefetch(h);
        ring_[(head_ + size_) % depth] = {name, offset, h, id};
        ++size_;
        return d;
    }
    /// Insert everything queued, in order; stops at (and returns) the first duplicate.
    template <class NameOf>
    std::optional<duplicate> flush(NameOf&& name_of) {
        while (size_ > 0)
            if (auto d = pop(name_of)) return d;
        return std::nullopt;
    }

private:
    struct pending {
        std::string_view name;
        std::uint64_t offset;
        std::uint32_t hash;
        std::uint32_t id;
    };
    template <class NameOf>
    std::optional<duplicate> pop(NameOf&& name_of) {
        const pending p = ring_[head_];
        head_ = (head_ + 1) % depth;
        --size_;
        const std::int64_t first = index_.insert(p.name, p.hash, p.id, name_of);
        if (first < 0) return std::nullopt;
        return duplicate{p.name, p.offset, p.id, static_cast<std::uint32_t>(first)};
    }

    name_index& index_;
    std::array<pending, depth> ring_{};
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

}  // namespace minfer::gguf::detail
