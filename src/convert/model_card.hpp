#pragma once
// README.md's YAML front matter as PyYAML's safe_load gives it to gguf-py's Metadata.load_model_card: a
// tree of Python values (None, bool, int, float, str, date, list, dict) built from yaml-cpp's events with
// every cap enforced as they arrive. Internal to minfer::convert; only model_card.cpp includes yaml-cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minfer::convert::detail {

/// The most front matter read (real ones are a few KiB; yaml-cpp queues an open flow collection's
/// tokens, about 100 bytes each, so the text is capped well below the file's cap).
inline constexpr std::size_t model_card_max_yaml_bytes = std::size_t{1} << 20;
inline constexpr std::size_t model_card_max_depth = 32;
inline constexpr std::size_t model_card_max_nodes = std::size_t{1} << 18;

struct py_node {
    enum class kind : std::uint8_t { none, boolean, integer, floating, string, date, list, dict };
    kind k = kind::none;
    bool truthy = false;          ///< Python's bool() of the value
    bool int_fits = false;        ///< an integer within int64 (`integer` holds it)
    std::int64_t integer = 0;
    std::uint64_t offset = 0;     ///< the value's first byte in the front matter text
    std::string text;             ///< a string's value
    std::vector<std::uint32_t> items;  ///< a list's items; a dict's key, value, key, value (keys unique)
};

struct py_tree {
    std::vector<py_node> nodes;  ///< nodes[root]; empty: no document (None)
    std::uint32_t root = 0;
    const py_node* root_node() const noexcept { return nodes.empty() ? nullptr : &nodes[root]; }
    /// dict.get(key) for a str key; nullptr when absent (or `d` is not a dict).
    const py_node* get(const py_node& d, std::string_view key) const noexcept;
};

struct card_failure {
    std::uint64_t offset = 0;  ///< in the front matter text
    std::string subject;       ///< the key path
    std::string detail;
};

/// The front matter of README.md's text (already checked UTF-8, newlines as Python's universal newlines
/// give them) as Metadata.load_model_card extracts and hacks it. `yaml_start` is set to the front matter's
/// first byte in `text` (0 when there is none). False with `why` set when PyYAML would fail (or a cap or an
/// unsupported construct is met). An absent front matter gives an empty tree. Throws std::bad_alloc only.
bool parse_model_card(std::string_view text, py_tree& out, card_failure& why);

}  // namespace minfer::convert::detail
