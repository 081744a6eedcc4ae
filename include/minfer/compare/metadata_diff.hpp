#pragma once
// The differences between two files' metadata, key by key (`minfer diff`, minfer.diff). Values are
// compared as stored (bytes for numbers, so 0.1f and 0.1f are equal and two NaNs with the same bits
// too); arrays item by item, so a 150k-token vocabulary with one changed token says which.
#include <cstdint>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::compare {

struct metadata_difference {
    enum class kind {
        added,          ///< only in B
        removed,        ///< only in A
        type_changed,   ///< a different type (for arrays: element type, or array vs scalar)
        value_changed,  ///< same scalar or string type, another value
        array_changed,  ///< same element type; items or length differ
    };
    kind what;
    const gguf::kv* a = nullptr;  ///< nullptr for added
    const gguf::kv* b = nullptr;  ///< nullptr for removed
    /// array_changed: the first item that differs; equal to the shorter length when one array is
    /// a prefix of the other.
    std::uint64_t first_index = 0;
};

/// Every difference: A's keys in A's order (removed or changed), then B's new keys in B's order.
/// The entries point into `a` and `b`. Throws std::bad_alloc as any vector.
std::vector<metadata_difference> diff_metadata(const gguf::file_view& a, const gguf::file_view& b);

/// "added", "removed", "type_changed", "value_changed", "array_changed".
const char* to_string(metadata_difference::kind k) noexcept;

}  // namespace minfer::compare
