#pragma once
// The differences between two files' metadata, key by key: what `minfer diff` reports. Values are
// compared as stored (bytes for numbers, so 0.1f and 0.1f are equal and two NaNs with the same bits
// too); arrays item by item, so a 150k-token vocabulary with one changed token says which.
#include <cstdint>
#include <string>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::cli {

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
std::vector<metadata_difference> diff_metadata(const gguf::file_view& a, const gguf::file_view& b);

/// "added", "removed", "type_changed", "value_changed", "array_changed".
const char* to_string(metadata_difference::kind k) noexcept;

/// The type as shown: "u32", "string", "array[u32]".
std::string type_text(const gguf::kv& e);

/// Item i of an array as text (a string quoted, cut at `limit` bytes; a number plainly); "" when i
/// is past the end.
std::string array_item_text(const gguf::kv& e, std::uint64_t i, std::size_t limit);

}  // namespace minfer::cli
