#pragma once
// A small JSON document in memory: what json_value views. Built from nlohmann's events
// (json_events.hpp) with every value's offset, duplicate keys refused, and caps on depth and on the
// number of values, so a hostile text costs a bounded amount of memory. Nodes are kept in document
// order; a container's children are contiguous in `children` (filled when the container closes), so
// item i is O(1) and a member lookup is a scan of the object's own members.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json_events.hpp"
#include "minfer/convert/json_value.hpp"

namespace minfer::convert::detail {

enum class number_kind : std::uint8_t { none, unsigned_integer, signed_integer, floating };

// 48 bytes: a number's value is one 64-bit field read by its kind.
struct json_node {
    json_kind kind = json_kind::null;
    number_kind number = number_kind::none;
    bool boolean = false;
    std::uint32_t key_begin = 0;     // the member's key in `text` (objects' children only)
    std::uint32_t key_size = 0;
    std::uint32_t text_begin = 0;    // a string's decoded bytes in `text`
    std::uint32_t text_size = 0;
    std::uint32_t first_child = 0;   // into `children`
    std::uint32_t child_count = 0;
    std::uint64_t offset = 0;        // absolute, in the document's file
    std::uint64_t bits = 0;          // unsigned_integer: the value; signed_integer: its two's complement;
                                     // floating: the double's bits
};

struct json_tree {
    std::vector<json_node> nodes;            // nodes[0] is the root
    std::vector<std::uint32_t> children;
    std::string text;                        // keys and strings, decoded, back to back

    std::string_view key(const json_node& n) const noexcept { return {text.data() + n.key_begin, n.key_size}; }
    std::string_view string(const json_node& n) const noexcept { return {text.data() + n.text_begin, n.text_size}; }
};

struct json_tree_limits {
    std::size_t max_depth = 64;
    std::size_t max_values = std::size_t{1} << 19;  // 24 MiB of nodes at most
};

/// Read `text` (at most 4 GiB) into `tree`; `base_offset` is the text's offset in its file (added to
/// every node's offset and to the failure's). False with `failure` set when the text is not one JSON
/// value, repeats a key within an object, or exceeds a limit. Never throws.
bool build_json_tree(std::string_view text, std::uint64_t base_offset, const json_tree_limits& limits,
                     json_tree& tree, json_failure& failure) noexcept;

}  // namespace minfer::convert::detail

namespace minfer::convert {

/// How the library makes views of its trees (json_value's constructor is private).
struct json_access {
    static json_value view(const detail::json_tree* tree, std::uint32_t node) noexcept { return {tree, node}; }
};

}  // namespace minfer::convert
