#include "minfer/compare/metadata_diff.hpp"

#include <algorithm>
#include <cstring>
#include <span>

namespace minfer::compare {
namespace {

bool same_type(const gguf::kv& a, const gguf::kv& b) noexcept {
    return a.type == b.type && (!a.is_array() || a.element_type == b.element_type);
}

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) noexcept {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// The first item where two arrays of the same element type differ; min(lengths) when one is a
// prefix of the other (then lengths differ); UINT64_MAX when they are equal.
std::uint64_t first_difference(const gguf::kv& a, const gguf::kv& b) {
    auto av = a.get<gguf::array_view>();
    auto bv = b.get<gguf::array_view>();
    if (!av || !bv) return same_bytes(a.payload, b.payload) ? UINT64_MAX : 0;
    const std::uint64_t common = std::min(av->size(), bv->size());
    std::uint64_t i = 0;
    if (a.element_type == gguf::value_type::string) {
        auto ia = av->strings().begin();
        auto ib = bv->strings().begin();
        for (; i < common && *ia == *ib; ++i, ++ia, ++ib) {
        }
    } else {
        const std::uint64_t size = gguf::value_size(a.element_type);
        const std::byte* pa = av->raw().data();
        const std::byte* pb = bv->raw().data();
        // memcmp finds equal runs fast; the item is then the first whose bytes differ.
        if (common > 0 && std::memcmp(pa, pb, static_cast<std::size_t>(common * size)) == 0) {
            i = common;
        } else {
            for (; i < common && std::memcmp(pa + i * size, pb + i * size, static_cast<std::size_t>(size)) == 0; ++i) {
            }
        }
    }
    if (i < common || av->size() != bv->size()) return i;
    return UINT64_MAX;
}

}  // namespace

std::vector<metadata_difference> diff_metadata(const gguf::file_view& a, const gguf::file_view& b) {
    using k = metadata_difference::kind;
    std::vector<metadata_difference> out;
    for (const gguf::kv& ea : a.metadata()) {
        const gguf::kv* eb = b.find(ea.key);
        if (eb == nullptr) {
            out.push_back({k::removed, &ea, nullptr, 0});
        } else if (!same_type(ea, *eb)) {
            out.push_back({k::type_changed, &ea, eb, 0});
        } else if (ea.is_array()) {
            const std::uint64_t i = first_difference(ea, *eb);
            if (i != UINT64_MAX) out.push_back({k::array_changed, &ea, eb, i});
        } else if (!same_bytes(ea.payload, eb->payload)) {
            out.push_back({k::value_changed, &ea, eb, 0});
        }
    }
    for (const gguf::kv& eb : b.metadata())
        if (a.find(eb.key) == nullptr) out.push_back({k::added, nullptr, &eb, 0});
    return out;
}

const char* to_string(metadata_difference::kind k) noexcept {
    switch (k) {
        case metadata_difference::kind::added: return "added";
        case metadata_difference::kind::removed: return "removed";
        case metadata_difference::kind::type_changed: return "type_changed";
        case metadata_difference::kind::value_changed: return "value_changed";
        case metadata_difference::kind::array_changed: return "array_changed";
    }
    return "?";
}

}  // namespace minfer::compare
